//! The SELECTs of the attribute operators: projections, joins on key fields and on time,
//! pivots, unpivots and per-field summaries (`t` is the main input, `r` the other).

use super::dialect::Dialect;
use super::explode::explode_sql;
use super::parts::{Input, NEEDS_COLUMNS};
use super::quote::{ident, json_literal, number, string};
use crate::plan::operator::{
    JoinHow, JoinOp, PivotGeometry, PivotOp, ReshapeOp, TimeDirection, UnpivotOp,
};
use crate::plan::relational::{DESCRIBE_COLUMNS, common_type};
use crate::schema::{FieldType, GEOM, Schema};

fn type_of(schema: Option<&Schema>, name: &str) -> FieldType {
    schema
        .and_then(|s| s.columns.iter().find(|c| c.name == name))
        .map_or(FieldType::Unknown, |c| c.ty)
}

fn idents(names: &[String]) -> String {
    names
        .iter()
        .map(|n| ident(n))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `SELECT "a", "b" FROM ...`: exactly the listed columns.
pub fn project_sql(columns: &[String], main: Input<'_>) -> Result<String, String> {
    if columns.is_empty() {
        return Err("the step would leave no columns".into());
    }
    Ok(format!(
        "SELECT {} FROM {} AS t",
        idents(columns),
        main.from
    ))
}

/// `CAST(x AS TIMESTAMP)`: times compared as timestamps whatever their stored type (a date is
/// its midnight).
fn timestamp(column: &str) -> String {
    format!("CAST({column} AS TIMESTAMP)")
}

/// The join condition: keys equal, and times within the tolerance.
fn join_condition(j: &JoinOp) -> Result<String, String> {
    let mut parts: Vec<String> =
        j.on.iter()
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
            .collect();
    if let Some(time) = &j.time {
        let left = timestamp(&format!("t.{}", ident(&time.left)));
        let right = timestamp(&format!("r.{}", ident(&time.right)));
        let window = match time.tolerance_seconds {
            Some(seconds) => Some(format!(
                "INTERVAL {}",
                string(&format!("{} seconds", number(seconds)?))
            )),
            None => None,
        };
        parts.push(match (time.direction, window) {
            (TimeDirection::Both, Some(w)) => {
                format!("{right} BETWEEN {left} - {w} AND {left} + {w}")
            }
            (TimeDirection::Backward, Some(w)) => {
                format!("{right} BETWEEN {left} - {w} AND {left}")
            }
            (TimeDirection::Forward, Some(w)) => format!("{right} BETWEEN {left} AND {left} + {w}"),
            (TimeDirection::Both, None) => format!("{right} IS NOT NULL AND {left} IS NOT NULL"),
            (TimeDirection::Backward, None) => format!("{right} <= {left}"),
            (TimeDirection::Forward, None) => format!("{right} >= {left}"),
        });
    }
    if parts.is_empty() {
        return Err("the join has no condition".into());
    }
    Ok(parts.join(" AND "))
}

/// A join on key fields (and time): every first-input column, then the brought ones.
pub fn join_sql(
    j: &JoinOp,
    main: Input<'_>,
    other: Input<'_>,
    dialect: Dialect,
) -> Result<String, String> {
    let brought: Option<Vec<String>> = j.brought(main.schema, other.schema).map(|columns| {
        columns
            .iter()
            .map(|(name, output)| format!("r.{} AS {}", ident(name), ident(output)))
            .collect()
    });
    let brought = match brought {
        Some(list) => list,
        None if dialect == Dialect::Duckdb => {
            let mut excluded = vec![ident(GEOM)];
            excluded.extend(
                j.on.iter()
                    .filter(|k| k.left == k.right)
                    .map(|k| ident(&k.right)),
            );
            vec![format!("r.* EXCLUDE ({})", excluded.join(", "))]
        }
        None => return Err(NEEDS_COLUMNS.into()),
    };
    let condition = join_condition(j)?;
    let join = match j.how {
        JoinHow::Inner => "JOIN",
        JoinHow::Left => "LEFT JOIN",
    };
    let nearest = j.time.as_ref().filter(|t| t.nearest);
    let Some(time) = nearest else {
        let list: String = brought.iter().map(|c| format!(", {c}")).collect();
        return Ok(format!(
            "SELECT t.*{list} FROM {} AS t {join} {} AS r ON {condition}",
            main.from, other.from
        ));
    };
    // The nearest match in time, per first-input row: a lateral subquery both engines run.
    let epoch = |c: &str| format!("EXTRACT(EPOCH FROM {})", timestamp(c));
    let (right, left) = (
        epoch(&format!("r.{}", ident(&time.right))),
        epoch(&format!("t.{}", ident(&time.left))),
    );
    // Equal distances: the earlier time first, as pandas' merge_asof `nearest`.
    let mut order = format!("abs({right} - {left}), {right}");
    if other.schema.is_none_or(|s| s.has(GEOM)) {
        order.push_str(&format!(
            ", md5({})",
            dialect.wkb_hex(&format!("r.{}", ident(GEOM)))
        ));
    }
    let (inner, outer) = if brought.is_empty() {
        ("1 AS \"__geomill_match\"".to_owned(), String::new())
    } else {
        (brought.join(", "), ", n.*".to_owned())
    };
    Ok(format!(
        "SELECT t.*{outer} FROM {} AS t {join} LATERAL (SELECT {inner} FROM {} AS r WHERE {condition} ORDER BY {order} LIMIT 1) AS n ON true",
        main.from, other.from
    ))
}

/// `(array_agg(geom ORDER BY md5(wkb)))[1]`: the geometry whose WKB hashes lowest, a choice
/// both engines make alike.
fn first_geometry(dialect: Dialect) -> String {
    let g = ident(GEOM);
    format!("(array_agg({g} ORDER BY md5({})))[1]", dialect.wkb_hex(&g))
}

/// A pivot over listed values: one filtered aggregate per value, NULL cells filled; a pivot
/// whose columns come from the data has no SQL (the native kernel computes it).
fn pivot_sql(p: &PivotOp, main: Input<'_>, dialect: Dialect) -> Result<String, String> {
    let Some(outputs) = &p.outputs else {
        return Err("pivot with columns found in the data runs on the native backend".into());
    };
    let Some(func) = p.func.sql() else {
        return Err(format!(
            "pivot {} runs on the native backend (columns found in the data)",
            p.func.as_str()
        ));
    };
    let fill = p.fill.as_ref().map(json_literal).transpose()?;
    let mut items: Vec<String> = p.index.iter().map(|c| ident(c)).collect();
    for (value, output) in outputs {
        let cell = format!(
            "{func}({}) FILTER (WHERE {} = {value})",
            ident(&p.values),
            ident(&p.columns),
        );
        let cell = match &fill {
            Some(fill) => format!("coalesce({cell}, {fill})"),
            None => cell,
        };
        items.push(format!("{cell} AS {}", ident(output)));
    }
    let position = "\"__geomill_position\"";
    let mut from = main.from.to_owned();
    if main.schema.is_none_or(|s| s.has(GEOM)) {
        let geometry = match p.geometry {
            PivotGeometry::Hash => first_geometry(dialect),
            PivotGeometry::First => {
                from = format!("(SELECT p.*, row_number() OVER () AS {position} FROM {from} AS p)");
                format!("(array_agg({} ORDER BY {position}))[1]", ident(GEOM))
            }
        };
        items.push(format!("{geometry} AS {}", ident(GEOM)));
    }
    Ok(format!(
        "SELECT {} FROM {from} AS t GROUP BY {}",
        items.join(", "),
        idents(&p.index)
    ))
}

fn unpivot_sql(u: &UnpivotOp, main: Input<'_>, dialect: Dialect) -> Result<String, String> {
    let kept = match main.schema {
        Some(schema) => {
            let kept: Vec<String> = schema
                .names()
                .into_iter()
                .filter(|n| !u.fields.iter().any(|f| f == n))
                .map(ident)
                .collect();
            kept.iter().map(|c| format!("{c}, ")).collect::<String>()
        }
        None if dialect == Dialect::Duckdb => format!("* EXCLUDE ({}), ", idents(&u.fields)),
        None => return Err(NEEDS_COLUMNS.into()),
    };
    let types: Vec<FieldType> = u.fields.iter().map(|f| type_of(main.schema, f)).collect();
    let ty = common_type(&types).sql();
    Ok(u.fields
        .iter()
        .map(|field| {
            format!(
                "SELECT {kept}{} AS {}, CAST({} AS {ty}) AS {} FROM {} AS t",
                string(field),
                ident(&u.name_field),
                ident(field),
                ident(&u.value_field),
                main.from
            )
        })
        .collect::<Vec<_>>()
        .join(" UNION ALL "))
}

/// One row per field, in the order given (a position column sorts the union, then is left
/// out).
fn describe_sql(fields: &[String], main: Input<'_>) -> Result<String, String> {
    let fields = ReshapeOp::described(fields, main.schema)
        .ok_or("describe needs the input's columns: plan with a catalog, or name the fields")?;
    if fields.is_empty() {
        return Err("the input has no attributes to describe".into());
    }
    let double = FieldType::Double.sql();
    let rows: Vec<String> = fields
        .iter()
        .enumerate()
        .map(|(position, field)| {
            let ty = type_of(main.schema, field);
            let c = ident(field);
            let numeric = |agg: &str| {
                if matches!(ty, FieldType::Integer | FieldType::Double) {
                    format!("CAST({agg}({c}) AS {double})")
                } else {
                    format!("CAST(NULL AS {double})")
                }
            };
            let type_name = serde_json::to_value(ty)
                .ok()
                .and_then(|v| v.as_str().map(str::to_owned))
                .unwrap_or_default();
            format!(
                "SELECT {position} AS \"__geomill_position\", {} AS \"field\", {} AS \"type\", count({c}) AS \"count\", count(*) - count({c}) AS \"nulls\", count(DISTINCT {c}) AS \"distinct\", {} AS \"min\", {} AS \"max\", {} AS \"mean\", {} AS \"stddev\" FROM {} AS t",
                string(field),
                string(&type_name),
                numeric("min"),
                numeric("max"),
                numeric("avg"),
                numeric("stddev_samp"),
                main.from
            )
        })
        .collect();
    let columns: Vec<String> = DESCRIBE_COLUMNS.iter().map(|(n, _)| ident(n)).collect();
    Ok(format!(
        "SELECT {} FROM ({}) AS d ORDER BY \"__geomill_position\"",
        columns.join(", "),
        rows.join(" UNION ALL ")
    ))
}

/// The SELECT of a reshaping operator.
pub fn reshape_sql(r: &ReshapeOp, main: Input<'_>, dialect: Dialect) -> Result<String, String> {
    match r {
        ReshapeOp::Pivot(p) => pivot_sql(p, main, dialect),
        ReshapeOp::Unpivot(u) => unpivot_sql(u, main, dialect),
        ReshapeOp::Describe { fields } => describe_sql(fields, main),
        ReshapeOp::Explode {
            kind,
            index,
            row_index,
        } => explode_sql(*kind, index, row_index.as_deref(), main, dialect),
    }
}
