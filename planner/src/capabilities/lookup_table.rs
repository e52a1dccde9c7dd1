//! `lookup_table`: add a field whose value is looked up from another field's value.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use super::attribute_join::join_keys;
use super::checks::require_columns;
use super::{CapabilityParams, CommonParams, Group, LowerContext};
use crate::error::Problem;
use crate::expr::SqlExpr;
use crate::plan::operator::{JoinHow, JoinOp, MapOp, Operator, ValueExpr};
use crate::schema::{FieldType, GEOM};
use crate::sql::quote::{ident, json_literal, string};

/// Add the field `output` to every feature, looked up from the value of its field `field`:
/// either in `map`, an inline table of value → result (e.g. `{"field": "continent", "output":
/// "region", "map": {"Africa": "EMEA", "Europe": "EMEA"}, "default": "other"}`; a value not in
/// the map gets `default`, NULL when not given), or in `table`, a step or dataset layer, whose
/// row with `key` equal to the feature's `field` gives its field `value` (NULL when no row
/// matches; the table's keys should be unique, as a key found on several rows gives the
/// feature once per row). The map's keys are written as text (JSON object keys) and read as
/// the type of `field` (an integer field's keys must be integers); its results are literals of
/// one kind (strings, numbers or booleans). `output` must be a new field.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct LookupTable {
    /// The field whose value is looked up.
    #[schemars(length(min = 1))]
    pub field: String,
    /// The field added.
    #[schemars(length(min = 1))]
    pub output: String,
    /// Inline lookup: value of `field` → result.
    #[serde(default)]
    pub map: Option<BTreeMap<String, Value>>,
    /// Result for a value not in `map` (default null).
    #[serde(default)]
    #[schemars(extend("type" = ["string", "number", "boolean", "null"]))]
    pub default: Value,
    /// Lookup in a step or dataset layer instead of `map`.
    #[serde(default)]
    pub table: Option<String>,
    /// The table's field matched with `field` (default: `field`).
    #[serde(default)]
    pub key: Option<String>,
    /// The table's field whose value is added (with `table`).
    #[serde(default)]
    pub value: Option<String>,
    #[serde(flatten)]
    pub common: CommonParams,
}

/// A map key as an SQL literal of the looked-up field's type.
pub(super) fn key_literal(key: &str, ty: Option<FieldType>) -> Result<String, String> {
    match ty {
        Some(FieldType::Integer) => key
            .trim()
            .parse::<i64>()
            .map(|n| n.to_string())
            .map_err(|_| format!("key {key:?} is not an integer, as the field is")),
        Some(FieldType::Double) => key
            .trim()
            .parse::<f64>()
            .map_err(|_| format!("key {key:?} is not a number, as the field is"))
            .and_then(crate::sql::quote::number),
        Some(FieldType::Boolean) => match key {
            "true" => Ok("TRUE".into()),
            "false" => Ok("FALSE".into()),
            _ => Err(format!("key {key:?} is not true or false, as the field is")),
        },
        _ => Ok(string(key)),
    }
}

/// The type of the looked-up results, checking that they are of one kind.
fn result_type<'a>(values: impl Iterator<Item = &'a Value>) -> Result<FieldType, String> {
    let mut found: Option<FieldType> = None;
    for value in values {
        let ty = match value {
            Value::Null => continue,
            Value::Bool(_) => FieldType::Boolean,
            Value::Number(n) if n.is_i64() || n.is_u64() => FieldType::Integer,
            Value::Number(_) => FieldType::Double,
            Value::String(_) => FieldType::Text,
            Value::Array(_) | Value::Object(_) => {
                return Err(format!("{value} is not a string, number, boolean or null"));
            }
        };
        found = Some(match (found, ty) {
            (None, ty) => ty,
            (Some(a), b) if a == b => a,
            (Some(FieldType::Integer | FieldType::Double), FieldType::Integer | FieldType::Double) => {
                FieldType::Double
            }
            (Some(a), b) => {
                return Err(format!("results mix {a:?} and {b:?}: give them one kind").to_lowercase());
            }
        });
    }
    Ok(found.unwrap_or(FieldType::Text))
}

impl LookupTable {
    fn lower_map(
        &self,
        map: &BTreeMap<String, Value>,
        ctx: &LowerContext<'_>,
    ) -> Result<Vec<Operator>, Vec<Problem>> {
        let ty = ctx
            .input
            .and_then(|s| s.columns.iter().find(|c| c.name == self.field))
            .map(|c| c.ty);
        let result = result_type(map.values().chain([&self.default]))
            .map_err(|m| vec![Problem::new(ctx.at("map"), m)])?;
        let mut sql = format!("CASE {}", ident(&self.field));
        for (key, value) in map {
            let path = ctx.at(&format!("map.{key}"));
            let key = key_literal(key, ty).map_err(|m| vec![Problem::new(path.clone(), m)])?;
            let value = json_literal(value).map_err(|m| vec![Problem::new(path, m)])?;
            sql.push_str(&format!(" WHEN {key} THEN {value}"));
        }
        let default = json_literal(&self.default)
            .map_err(|m| vec![Problem::new(ctx.at("default"), m)])?;
        // A typed NULL: a CASE of only NULLs would have no type on PostGIS.
        let default = if self.default.is_null() {
            format!("CAST(NULL AS {})", result.sql())
        } else {
            default
        };
        sql.push_str(&format!(" ELSE {default} END"));
        let expr = SqlExpr::parse(&sql).map_err(|m| vec![Problem::new(ctx.at("map"), m)])?;
        Ok(vec![Operator::Map(MapOp {
            set: vec![(self.output.clone(), ValueExpr::Sql(expr), result)],
            ..MapOp::default()
        })])
    }
}

impl CapabilityParams for LookupTable {
    const NAME: &'static str = "lookup_table";
    const GROUP: Group = Group::Attributes;

    fn common(&self) -> &CommonParams {
        &self.common
    }

    fn other_inputs(&self) -> Vec<(&'static str, String)> {
        self.table
            .iter()
            .map(|table| ("table", table.clone()))
            .collect()
    }

    fn lower(&self, ctx: &LowerContext<'_>) -> Result<Vec<Operator>, Vec<Problem>> {
        require_columns(ctx.input, std::slice::from_ref(&self.field), ctx.at("field"))?;
        if self.output == GEOM || ctx.input.is_some_and(|s| s.has(&self.output)) {
            return Err(vec![Problem::new(
                ctx.at("output"),
                format!("field {} already exists: name a new field", self.output),
            )]);
        }
        match (&self.map, &self.table) {
            (Some(map), None) => {
                for param in ["key", "value"] {
                    let given = if param == "key" { &self.key } else { &self.value };
                    if given.is_some() {
                        return Err(vec![Problem::new(ctx.at(param), "only applies with table")]);
                    }
                }
                self.lower_map(map, ctx)
            }
            (None, Some(_)) => {
                let Some(value) = &self.value else {
                    return Err(vec![Problem::new(ctx.at("value"), "is required with table")]);
                };
                if !self.default.is_null() {
                    return Err(vec![Problem::new(ctx.at("default"), "only applies with map")]);
                }
                let key = self.key.clone().unwrap_or_else(|| self.field.clone());
                let on = join_keys(
                    std::slice::from_ref(&self.field),
                    std::slice::from_ref(&key),
                    ctx,
                    ("field", "key"),
                )?;
                require_columns(
                    ctx.others.first().copied().flatten(),
                    std::slice::from_ref(value),
                    ctx.at("value"),
                )?;
                Ok(vec![Operator::Join(JoinOp {
                    how: JoinHow::Left,
                    on,
                    columns: vec![(value.clone(), self.output.clone())],
                    suffix: "_right".to_owned(),
                    time: None,
                })])
            }
            _ => Err(vec![Problem::new(
                ctx.path,
                "give either map or table",
            )]),
        }
    }
}
