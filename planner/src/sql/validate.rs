//! The SELECT of a validation step: one row per problem (`feature`, `related`, `problem`,
//! `field`, `reason`, `geom`) as the union of one SELECT per kind of problem, or its counts
//! per kind. Duplicates and attribute rules here; topology in `validate_topology`.

use super::dialect::Dialect;
use super::parts::Input;
use super::quote::{ident, number, string};
use super::validate_completeness::completeness_sql;
use super::validate_context::{Context, NULL_GEOMETRY, ProblemRow};
use super::validate_topology::topology_sql;
use crate::plan::validate::{
    AllowedValue, AttributeRule, COUNT, FIELD, FeatureKey, POSITION, PROBLEM, ValidateCheck,
    ValidateOp,
};
use crate::schema::{FieldType, Schema};

/// The SELECT reporting the problems `op` finds in `input`.
pub fn validate_sql(
    op: &ValidateOp,
    input: Input<'_>,
    reference: Option<Input<'_>>,
    dialect: Dialect,
) -> Result<String, String> {
    let numbered;
    let input = match op.key {
        FeatureKey::Field(_) => input,
        FeatureKey::Position => {
            numbered = format!(
                "(SELECT t.*, CAST(row_number() OVER () - 1 AS BIGINT) AS {} FROM {} AS t)",
                ident(POSITION),
                input.from
            );
            Input {
                from: &numbered,
                schema: input.schema,
            }
        }
    };
    let ctx = Context {
        input,
        key: op.key.column(),
        key_type: op.key_type(input.schema),
        dialect,
    };
    let (ctes, parts) = match &op.check {
        _ if op.native_only() => {
            return Err(format!("{} runs on the native backend", op.describe()));
        }
        ValidateCheck::Topology {
            checks, tolerance, ..
        } => topology_sql(&ctx, checks, *tolerance)?,
        ValidateCheck::Duplicates { tolerance, .. } => {
            (Vec::new(), vec![duplicates_sql(&ctx, *tolerance)?])
        }
        ValidateCheck::Attributes { rules } => (Vec::new(), attributes_sql(&ctx, rules)?),
        ValidateCheck::PythonAttributes { .. } => {
            return Err("attribute rules as Python checks them run on the native backend".into());
        }
        ValidateCheck::Completeness(check) => {
            let reference = reference.ok_or("completeness_check needs its ref_layer")?;
            let related = op.related_type(input.schema, reference.schema);
            (
                Vec::new(),
                completeness_sql(&ctx, check, reference, related)?,
            )
        }
    };
    let with = if ctes.is_empty() {
        String::new()
    } else {
        format!("WITH {}\n", ctes.join(",\n"))
    };
    let problems = if parts.is_empty() {
        // Nothing to check: the report's columns and no row.
        ProblemRow {
            feature: ctx.null_key(),
            related: ctx.null_key(),
            problem: "",
            field: None,
            reason: "CAST(NULL AS TEXT)".into(),
            geom: NULL_GEOMETRY.into(),
        }
        .select("WHERE FALSE")
    } else {
        parts.join("\nUNION ALL\n")
    };
    if op.summary {
        Ok(format!(
            "{with}SELECT p.{problem} AS {problem}, p.{field} AS {field}, count(*) AS {count} FROM ({problems}) AS p GROUP BY p.{problem}, p.{field}",
            problem = ident(PROBLEM),
            field = ident(FIELD),
            count = ident(COUNT),
        ))
    } else {
        Ok(format!("{with}{problems}"))
    }
}

/// Pairs of features whose geometries are the same: equal well-known binary after GEOS's
/// normalisation, or (with a tolerance) within `tolerance` of each other by the discrete
/// Hausdorff distance (PostGIS's `ST_HausdorffDistance`; on DuckDB, which has none, the same
/// measure: the farthest vertex of either from the other's linework). The pair is reported
/// once, on the feature of the lower key; NULL and empty geometries are left out.
fn duplicates_sql(ctx: &Context<'_>, tolerance: f64) -> Result<String, String> {
    let (a, b) = (ctx.geom_of("a"), ctx.geom_of("b"));
    let present = |g: &str| format!("{g} IS NOT NULL AND NOT ST_IsEmpty({g})");
    let (condition, reason, problem) = if tolerance == 0.0 {
        let normalized = |g: &str| ctx.dialect.wkb(&format!("ST_Normalize({g})"));
        (
            format!("{} = {}", normalized(&a), normalized(&b)),
            string("the same geometry as the related feature"),
            "duplicate",
        )
    } else {
        let tol = number(tolerance)?;
        (
            format!(
                "ST_DWithin({a}, {b}, {tol}) AND {} <= {tol}",
                ctx.dialect.hausdorff(&a, &b)
            ),
            string(&format!(
                "within {tol} of the related feature (discrete Hausdorff distance)"
            )),
            "near_duplicate",
        )
    };
    let row = ProblemRow {
        feature: ctx.key_of("a"),
        related: ctx.key_of("b"),
        problem,
        field: None,
        reason,
        geom: a.clone(),
    };
    Ok(row.select(&format!(
        "FROM {from} AS a JOIN {from} AS b ON {} < {} AND {condition} WHERE {} AND {}",
        ctx.key_of("a"),
        ctx.key_of("b"),
        present(&a),
        present(&b),
        from = ctx.input.from,
    )))
}

/// The rows breaking each rule, one SELECT per rule and kind.
fn attributes_sql(ctx: &Context<'_>, rules: &[AttributeRule]) -> Result<Vec<String>, String> {
    let mut parts = Vec::new();
    for rule in rules {
        let value = format!("t.{}", ident(&rule.field));
        let text = format!("CAST({value} AS TEXT)");
        let row = |problem, reason: String| ProblemRow {
            feature: ctx.key_of("t"),
            related: ctx.null_key(),
            problem,
            field: Some(&rule.field),
            reason,
            geom: ctx.geom_of("t"),
        };
        let from = format!("FROM {} AS t", ctx.input.from);
        if rule.not_null {
            parts.push(
                row("not_null", string("NULL where a value is required"))
                    .select(&format!("{from} WHERE {value} IS NULL")),
            );
        }
        if let Some(min) = rule.min {
            let min = number(min)?;
            parts.push(
                row("range", string(&format!("below the minimum {min}")))
                    .select(&format!("{from} WHERE {value} < {min}")),
            );
        }
        if let Some(max) = rule.max {
            let max = number(max)?;
            parts.push(
                row("range", string(&format!("above the maximum {max}")))
                    .select(&format!("{from} WHERE {value} > {max}")),
            );
        }
        if let Some(regex) = &rule.regex {
            let matches = match ctx.dialect {
                Dialect::Duckdb => format!("regexp_full_match({text}, {})", string(regex)),
                Dialect::Postgis => format!("{text} ~ {}", string(&format!("^(?:{regex})$"))),
            };
            parts.push(
                row("regex", string(&format!("does not match {regex}"))).select(&format!(
                    "{from} WHERE {value} IS NOT NULL AND NOT ({matches})"
                )),
            );
        }
        if !rule.allowed.is_empty() {
            let in_list = allowed_condition(&value, &rule.allowed, field_type(ctx, &rule.field))?;
            parts.push(
                row("allowed", string("not one of the allowed values")).select(&format!(
                    "{from} WHERE {value} IS NOT NULL AND NOT ({in_list})"
                )),
            );
        }
        if rule.unique {
            parts.push(
                row("unique", string("the same value as another feature")).select(&format!(
                    "{from} WHERE {value} IN (SELECT u.{f} FROM {} AS u WHERE u.{f} IS NOT NULL GROUP BY u.{f} HAVING count(*) > 1)",
                    ctx.input.from,
                    f = ident(&rule.field)
                )),
            );
        }
    }
    Ok(parts)
}

fn field_type(ctx: &Context<'_>, field: &str) -> FieldType {
    ctx.input
        .schema
        .and_then(|s: &Schema| s.columns.iter().find(|c| c.name == field))
        .map_or(FieldType::Unknown, |c| c.ty)
}

/// Whether `value` is one of `allowed`: as numbers when the field is numeric and every
/// allowed value is a number, otherwise as text (numbers written as JSON writes them).
fn allowed_condition(
    value: &str,
    allowed: &[AllowedValue],
    ty: FieldType,
) -> Result<String, String> {
    let numeric = matches!(ty, FieldType::Integer | FieldType::Double)
        && allowed.iter().all(|v| matches!(v, AllowedValue::Number(_)));
    let literals: Vec<String> = allowed
        .iter()
        .map(|v| match v {
            AllowedValue::Number(n) if numeric => number(*n),
            AllowedValue::Number(n) => Ok(string(&serde_json::json!(n).to_string())),
            AllowedValue::Text(t) => Ok(string(t)),
        })
        .collect::<Result<_, String>>()?;
    Ok(if numeric {
        format!("{value} IN ({})", literals.join(", "))
    } else {
        format!("CAST({value} AS TEXT) IN ({})", literals.join(", "))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::validate::DuplicateMatch;

    fn op(check: ValidateCheck, summary: bool) -> ValidateOp {
        ValidateOp {
            key: FeatureKey::Field("id".into()),
            check,
            summary,
        }
    }

    fn sql(op: &ValidateOp, dialect: Dialect) -> String {
        let input = Input {
            from: "\"layer\"",
            schema: None,
        };
        validate_sql(op, input, None, dialect).unwrap()
    }

    #[test]
    fn near_duplicates_use_each_engines_hausdorff_distance() {
        let near = op(
            ValidateCheck::Duplicates {
                tolerance: 0.5,
                rule: DuplicateMatch::Normalized,
            },
            false,
        );
        let postgis = sql(&near, Dialect::Postgis);
        assert!(
            postgis.contains("ST_HausdorffDistance(a.\"geom\", b.\"geom\") <= 0.5"),
            "{postgis}"
        );
        let duckdb = sql(&near, Dialect::Duckdb);
        assert!(
            duckdb.contains("greatest(list_max(list_transform(ST_Dump(ST_Points(a.\"geom\"))"),
            "{duckdb}"
        );
        let exact = sql(
            &op(
                ValidateCheck::Duplicates {
                    tolerance: 0.0,
                    rule: DuplicateMatch::Normalized,
                },
                false,
            ),
            Dialect::Duckdb,
        );
        assert!(
            exact.contains(
                "ST_AsWKB(ST_Normalize(a.\"geom\")) = ST_AsWKB(ST_Normalize(b.\"geom\"))"
            ),
            "{exact}"
        );
    }

    #[test]
    fn summaries_count_problems_per_kind_and_field_and_empty_checks_give_no_row() {
        let summary = sql(
            &op(ValidateCheck::Attributes { rules: Vec::new() }, true),
            Dialect::Postgis,
        );
        assert!(
            summary.starts_with(
                "SELECT p.\"problem\" AS \"problem\", p.\"field\" AS \"field\", count(*)"
            ),
            "{summary}"
        );
        assert!(summary.contains("WHERE FALSE) AS p GROUP BY"), "{summary}");
    }

    #[test]
    fn regular_expressions_match_whole_values_on_both_engines() {
        let rule = AttributeRule {
            field: "code".into(),
            not_null: false,
            min: None,
            max: None,
            regex: Some("[A-Z]{3}".into()),
            allowed: Vec::new(),
            unique: false,
        };
        let check = op(ValidateCheck::Attributes { rules: vec![rule] }, false);
        // Without the input's schema, a NULL key takes the key's type from the input.
        assert!(
            sql(&check, Dialect::Postgis).contains(
                "(SELECT n.\"id\" FROM \"layer\" AS n WHERE FALSE LIMIT 1) AS \"related\""
            )
        );
        assert!(
            sql(&check, Dialect::Duckdb)
                .contains("regexp_full_match(CAST(t.\"code\" AS TEXT), '[A-Z]{3}')")
        );
        assert!(
            sql(&check, Dialect::Postgis).contains("CAST(t.\"code\" AS TEXT) ~ '^(?:[A-Z]{3})$'")
        );
    }
}
