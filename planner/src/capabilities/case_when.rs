//! `case_when`: set a field from the first of a list of conditions that holds.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use super::checks::parse_expr;
use super::{CapabilityParams, CommonParams, Group, LowerContext};
use crate::error::Problem;
use crate::expr::SqlExpr;
use crate::plan::operator::{MapOp, Operator, ValueExpr};
use crate::schema::{FieldType, GEOM};
use crate::sql::quote::json_literal;

/// Set the field `field` (created, or replaced if it exists) of each feature to the `then`
/// value of the first entry of `cases` whose SQL condition `when` is true, or to `else` (default
/// NULL) when none is, e.g. `{"field": "size", "cases": [{"when": "pop_est > 100000000", "then":
/// "large"}, {"when": "pop_est > 1000000", "then": "medium"}], "else": "small"}`. Conditions are
/// written as for `filter` (a NULL condition counts as false); the values are literals (a
/// string, number, boolean or null), all of the same kind apart from nulls.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct CaseWhen {
    /// The field to set.
    #[schemars(length(min = 1))]
    pub field: String,
    /// Condition → value entries, tried in order.
    #[schemars(length(min = 1))]
    pub cases: Vec<CaseBranch>,
    /// Value when no condition holds (default null).
    #[serde(rename = "else", default)]
    #[schemars(extend("type" = ["string", "number", "boolean", "null"]))]
    pub otherwise: Value,
    #[serde(flatten)]
    pub common: CommonParams,
}

/// One entry: when `when` holds, the field gets `then`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CaseBranch {
    /// The SQL condition.
    #[schemars(length(min = 1))]
    pub when: String,
    /// The value (a string, number, boolean or null).
    #[schemars(extend("type" = ["string", "number", "boolean", "null"]))]
    pub then: Value,
}

/// The kind of a JSON scalar, for checking that every value has the same one (`None`: null,
/// or not a scalar).
fn kind(value: &Value) -> Option<&'static str> {
    match value {
        Value::Bool(_) => Some("boolean"),
        Value::Number(_) => Some("number"),
        Value::String(_) => Some("string"),
        Value::Null | Value::Array(_) | Value::Object(_) => None,
    }
}

/// The value at `param` as an SQL literal; `first` is the first non-null value's parameter and
/// kind, which every other non-null value must share.
fn literal(
    value: &Value,
    param: &str,
    first: &mut Option<(String, &'static str)>,
    ctx: &LowerContext<'_>,
    problems: &mut Vec<Problem>,
) -> Option<String> {
    let literal = match json_literal(value) {
        Ok(literal) => literal,
        Err(message) => {
            problems.push(Problem::new(ctx.at(param), message));
            return None;
        }
    };
    match (kind(value), first.as_ref()) {
        (Some(this), Some((first_param, first_kind))) if this != *first_kind => {
            problems.push(Problem::new(
                ctx.at(param),
                format!("is a {this} but {first_param} is a {first_kind}: give every value the same kind"),
            ));
            return None;
        }
        (Some(this), None) => *first = Some((param.to_owned(), this)),
        _ => {}
    }
    Some(literal)
}

impl CapabilityParams for CaseWhen {
    const NAME: &'static str = "case_when";
    const GROUP: Group = Group::Attributes;

    fn common(&self) -> &CommonParams {
        &self.common
    }

    fn lower(&self, ctx: &LowerContext<'_>) -> Result<Vec<Operator>, Vec<Problem>> {
        let mut problems = Vec::new();
        if self.field == GEOM || self.field.trim().is_empty() {
            problems.push(Problem::new(
                ctx.at("field"),
                "cannot be used as a field name",
            ));
        }
        if self.cases.is_empty() {
            problems.push(Problem::new(
                ctx.at("cases"),
                "needs at least one condition",
            ));
        }
        let mut first = None;
        let mut sql = String::from("CASE");
        for (i, branch) in self.cases.iter().enumerate() {
            let condition = match parse_expr(&branch.when, ctx, &format!("cases[{i}].when")) {
                Ok(condition) => Some(condition),
                Err(found) => {
                    problems.extend(found);
                    None
                }
            };
            let value = literal(
                &branch.then,
                &format!("cases[{i}].then"),
                &mut first,
                ctx,
                &mut problems,
            );
            if let (Some(condition), Some(value)) = (condition, value) {
                sql.push_str(&format!(" WHEN {} THEN {value}", condition.to_sql()));
            }
        }
        if let Some(value) = literal(&self.otherwise, "else", &mut first, ctx, &mut problems) {
            sql.push_str(&format!(" ELSE {value} END"));
        }
        if !problems.is_empty() {
            return Err(problems);
        }
        let expr = SqlExpr::parse(&sql).map_err(|m| vec![Problem::new(ctx.at("cases"), m)])?;
        Ok(vec![Operator::Map(MapOp {
            set: vec![(self.field.clone(), ValueExpr::Sql(expr), FieldType::Unknown)],
            ..MapOp::default()
        })])
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::schema::{Column, Schema};

    fn schema() -> Schema {
        Schema {
            columns: vec![
                Column {
                    name: "pop_est".into(),
                    ty: FieldType::Integer,
                },
                Column {
                    name: GEOM.into(),
                    ty: FieldType::Geometry,
                },
            ],
            crs: None,
        }
    }

    fn lower(params: Value) -> Result<Vec<Operator>, Vec<Problem>> {
        let params: CaseWhen = serde_json::from_value(params).unwrap();
        let schema = schema();
        let ctx = LowerContext {
            step_id: "c",
            path: "p",
            input: Some(&schema),
            others: &[],
            rasters: None,
        };
        params.lower(&ctx)
    }

    #[test]
    fn builds_a_case_expression() {
        let ops = lower(json!({
            "field": "size",
            "cases": [
                {"when": "pop_est > 100000000", "then": "large"},
                {"when": "pop_est > 1000000", "then": "it's medium"}
            ],
            "else": "small"
        }))
        .unwrap();
        let [Operator::Map(map)] = ops.as_slice() else {
            panic!("{ops:?}")
        };
        let [(field, ValueExpr::Sql(expr), FieldType::Unknown)] = map.set.as_slice() else {
            panic!("{map:?}")
        };
        assert_eq!(field, "size");
        assert_eq!(
            expr.to_sql(),
            "CASE WHEN \"pop_est\" > 100000000 THEN 'large' WHEN \"pop_est\" > 1000000 THEN 'it''s medium' \
             ELSE 'small' END"
        );
        let ops = lower(json!({"field": "big", "cases": [{"when": "pop_est > 5", "then": true}]}))
            .unwrap();
        let [Operator::Map(map)] = ops.as_slice() else {
            panic!("{ops:?}")
        };
        assert_eq!(map.set[0].1.columns(), ["pop_est"]);
    }

    #[test]
    fn every_problem_is_reported() {
        let problems = lower(json!({
            "field": "size",
            "cases": [
                {"when": "pop > 1", "then": "large"},
                {"when": "pop_est > 1; DROP TABLE t", "then": [1]},
                {"when": "pop_est > 0", "then": 3}
            ],
            "else": null
        }))
        .unwrap_err();
        let paths: Vec<&str> = problems.iter().map(|p| p.path.as_str()).collect();
        assert_eq!(
            paths,
            [
                "p.cases[0].when",
                "p.cases[1].when",
                "p.cases[1].then",
                "p.cases[2].then"
            ]
        );
        assert_eq!(
            problems[3].message,
            "is a number but cases[0].then is a string: give every value the same kind"
        );
    }
}
