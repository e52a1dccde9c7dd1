//! The SELECT comparing two versions of a layer by key (`t` is the new version, `r` the old):
//! a full outer join on the keys, each side marked so that an unmatched row is told from a
//! row with NULL values, the rows that differ kept.

use super::{DiffOp, DuplicateKeys, GeometryCompare, merged_type};
use crate::plan::relational::JoinKey;
use crate::schema::{FieldType, GEOM, Schema};
use crate::sql::dialect::Dialect;
use crate::sql::input::Input;
use crate::sql::quote::{ident, number, string};

/// The column marking each side's rows (NULL on the side a row of the other side lacks).
const PRESENT: &str = "__geomill_present";

fn type_of(schema: &Schema, name: &str) -> FieldType {
    schema
        .columns
        .iter()
        .find(|c| c.name == name)
        .map_or(FieldType::Unknown, |c| c.ty)
}

fn numeric(ty: FieldType) -> bool {
    matches!(ty, FieldType::Integer | FieldType::Double)
}

/// `column` of `side` as `ty` when its own type `own` is a known other type.
fn typed(column: &str, own: FieldType, ty: FieldType) -> String {
    if own == ty || own == FieldType::Unknown || ty == FieldType::Unknown {
        column.to_owned()
    } else {
        format!("CAST({column} AS {})", ty.sql())
    }
}

/// Whether the two versions of `field` differ, NULL-safely: numbers compared as numbers,
/// values of other differing types as text.
fn attribute_differs(field: &str, new: &Schema, old: &Schema) -> String {
    let (a, b) = (type_of(new, field), type_of(old, field));
    let (t, r) = (format!("t.{}", ident(field)), format!("r.{}", ident(field)));
    let comparable =
        a == b || a == FieldType::Unknown || b == FieldType::Unknown || (numeric(a) && numeric(b));
    if comparable {
        format!("{t} IS DISTINCT FROM {r}")
    } else {
        format!("CAST({t} AS TEXT) IS DISTINCT FROM CAST({r} AS TEXT)")
    }
}

/// Whether the two versions of the geometry differ, NULL-safely (a NULL geometry equals only a
/// NULL one), by their well-known binary, normalised or not, or by their Hausdorff distance (an
/// empty geometry equals only an empty one).
fn geometry_differs(
    compare: GeometryCompare,
    tolerance: f64,
    dialect: Dialect,
) -> Result<String, String> {
    if compare == GeometryCompare::Hausdorff {
        let (t, r) = (format!("t.{}", ident(GEOM)), format!("r.{}", ident(GEOM)));
        return Ok(format!(
            "CASE WHEN {t} IS NULL OR {r} IS NULL THEN ({t} IS NULL) <> ({r} IS NULL) WHEN ST_IsEmpty({t}) OR ST_IsEmpty({r}) THEN ST_IsEmpty({t}) <> ST_IsEmpty({r}) ELSE {} > {} END",
            dialect.hausdorff(&t, &r),
            number(tolerance)?
        ));
    }
    let side = |q: &str| {
        let g = format!("{q}.{}", ident(GEOM));
        match compare {
            GeometryCompare::Normalized => dialect.wkb(&format!("ST_Normalize({g})")),
            GeometryCompare::Exact | GeometryCompare::Hausdorff | GeometryCompare::Ignore => {
                dialect.wkb(&g)
            }
        }
    };
    Ok(format!("{} IS DISTINCT FROM {}", side("t"), side("r")))
}

fn key_condition(keys: &[JoinKey]) -> String {
    keys.iter()
        .map(|k| {
            let (l, r) = (
                format!("t.{}", ident(&k.left)),
                format!("r.{}", ident(&k.right)),
            );
            if k.as_text {
                format!("CAST({l} AS TEXT) = CAST({r} AS TEXT)")
            } else {
                format!("{l} = {r}")
            }
        })
        .collect::<Vec<_>>()
        .join(" AND ")
}

/// A scalar subquery that fails the statement, naming the key, when a non-NULL key is on
/// several rows of `input` (its key fields `names`); NULL otherwise.
fn unique_keys(names: &[&str], input: Input<'_>, what: &str, dialect: Dialect) -> String {
    let columns: Vec<String> = names.iter().map(|n| ident(n)).collect();
    let values: Vec<String> = columns
        .iter()
        .map(|c| format!("CAST({c} AS TEXT)"))
        .collect();
    let message = format!(
        "{} || concat_ws(', ', {}) || {} || CAST(count(*) AS TEXT) || {}",
        string(&format!(
            "geomill: vector_diff: key ({}) = ",
            names.join(", ")
        )),
        values.join(", "),
        string(" is on "),
        string(&format!(
            " rows of the {what}: each key must name one row of each layer"
        ))
    );
    let not_null: Vec<String> = columns.iter().map(|c| format!("{c} IS NOT NULL")).collect();
    format!(
        "(SELECT {} FROM {} AS k WHERE {} GROUP BY {} HAVING count(*) > 1 LIMIT 1)",
        dialect.raise(&message),
        input.from,
        not_null.join(" AND "),
        columns.join(", ")
    )
}

/// `input` with one row per non-NULL key, the last of its rows in the layer's order (rows with
/// a NULL key field all kept: they match nothing), as a FROM item.
fn last_per_key(names: &[&str], input: Input<'_>, schema: &Schema) -> String {
    let columns: Vec<String> = schema.names().into_iter().map(ident).collect();
    let keys: Vec<String> = names.iter().map(|n| ident(n)).collect();
    let any_null: Vec<String> = keys.iter().map(|k| format!("{k} IS NULL")).collect();
    format!(
        "(SELECT {cols} FROM (SELECT {cols}, row_number() OVER (PARTITION BY {} ORDER BY \"__geomill_position\" DESC) AS \"__geomill_rank\" FROM (SELECT {cols}, row_number() OVER () AS \"__geomill_position\" FROM {} AS p) AS p) AS q WHERE \"__geomill_rank\" = 1 OR {}) AS v",
        keys.join(", "),
        input.from,
        any_null.join(" OR "),
        cols = columns.join(", "),
    )
}

/// The rows added, removed or changed from `old` to `new` (and, kept, the unchanged ones), with
/// the new row's values (the old row's for a removed key), the change and the changed fields; a
/// key on several rows of either layer fails the statement, or its last row stands for it.
pub fn diff_sql(
    d: &DiffOp,
    new: Input<'_>,
    old: Input<'_>,
    dialect: Dialect,
) -> Result<String, String> {
    let (Some(new_schema), Some(old_schema)) = (new.schema, old.schema) else {
        return Err(
            "vector_diff needs the columns of both layers: plan with a catalog (a dataset or a schema)"
                .into(),
        );
    };
    if d.keys.is_empty() {
        return Err("vector_diff needs a key".into());
    }
    let (t_present, r_present) = (
        format!("t.{}", ident(PRESENT)),
        format!("r.{}", ident(PRESENT)),
    );
    let mut items: Vec<String> = Vec::new();
    for column in &new_schema.columns {
        let name = ident(&column.name);
        let old_type = old_schema
            .columns
            .iter()
            .find(|c| c.name == column.name)
            .map(|c| c.ty);
        match old_type {
            Some(old_type) => {
                let ty = merged_type(column.ty, old_type);
                items.push(format!(
                    "CASE WHEN {t_present} IS NULL THEN {} ELSE {} END AS {name}",
                    typed(&format!("r.{name}"), old_type, ty),
                    typed(&format!("t.{name}"), column.ty, ty)
                ));
            }
            None => items.push(format!("t.{name}")),
        }
    }
    items.push(format!(
        "CASE WHEN {r_present} IS NULL THEN 'added' WHEN {t_present} IS NULL THEN 'removed' ELSE 'changed' END AS {}",
        ident(&d.change_field)
    ));
    let mut differences: Vec<String> = d
        .compared(new_schema, old_schema)
        .iter()
        .map(|field| {
            format!(
                "CASE WHEN {} THEN {} END",
                attribute_differs(field, new_schema, old_schema),
                string(field)
            )
        })
        .collect();
    if d.compares_geometry(new_schema, old_schema) {
        differences.push(format!(
            "CASE WHEN {} THEN 'geometry' END",
            geometry_differs(d.geometry, d.tolerance, dialect)?
        ));
    }
    let changed = if differences.is_empty() {
        "''".to_owned()
    } else {
        format!("concat_ws(',', {})", differences.join(", "))
    };
    let changed_fields = ident(&d.changed_fields_field);
    items.push(format!(
        "CASE WHEN {t_present} IS NOT NULL AND {r_present} IS NOT NULL THEN {changed} END AS {changed_fields}"
    ));
    let new_keys: Vec<&str> = d.keys.iter().map(|k| k.left.as_str()).collect();
    let old_keys: Vec<&str> = d.keys.iter().map(|k| k.right.as_str()).collect();
    let mut conditions = Vec::new();
    let (new_from, old_from) = match d.duplicates {
        DuplicateKeys::Fail => {
            conditions.push(format!(
                "{} IS NULL",
                unique_keys(&new_keys, new, "new layer (the step's input)", dialect)
            ));
            conditions.push(format!(
                "{} IS NULL",
                unique_keys(&old_keys, old, "old layer (ref_layer)", dialect)
            ));
            (new.from.to_owned(), old.from.to_owned())
        }
        DuplicateKeys::Last => (
            last_per_key(&new_keys, new, new_schema),
            last_per_key(&old_keys, old, old_schema),
        ),
    };
    let change = ident(&d.change_field);
    let outer = if d.keep_unchanged {
        // An equal pair is `changed` with no changed fields inside: named `unchanged` here.
        let mut list: Vec<String> = new_schema
            .names()
            .into_iter()
            .map(|n| format!("d.{}", ident(n)))
            .collect();
        list.push(format!(
            "CASE WHEN d.{changed_fields} = '' THEN 'unchanged' ELSE d.{change} END AS {change}"
        ));
        list.push(format!("d.{changed_fields}"));
        list.join(", ")
    } else {
        conditions.push(format!(
            "(d.{changed_fields} IS NULL OR d.{changed_fields} <> '')"
        ));
        "*".to_owned()
    };
    let filter = if conditions.is_empty() {
        String::new()
    } else {
        format!(" WHERE {}", conditions.join(" AND "))
    };
    Ok(format!(
        "SELECT {outer} FROM (SELECT {} FROM (SELECT 1 AS {present}, * FROM {new_from}) AS t FULL JOIN (SELECT 1 AS {present}, * FROM {old_from}) AS r ON {}) AS d{filter}",
        items.join(", "),
        key_condition(&d.keys),
        present = ident(PRESENT),
    ))
}
