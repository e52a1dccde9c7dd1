//! `dissolve`: merge features by field values, unioning geometries and aggregating attributes.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::Deserialize;

use super::checks::require_columns;
use super::invalid::OnInvalid;
use super::{CapabilityParams, CommonParams, Group, LowerContext};
use crate::error::Problem;
use crate::plan::operator::{AggFunc, AggItem, AggregateOp, GeometryAgg, Operator};
use crate::schema::GEOM;

/// Merge the features that share the values of the fields `by` into one feature per
/// combination of values (all features into one when `by` is empty, the default), whose
/// geometry is the union of the group's geometries. The output has the `by` fields and one field
/// per entry of `aggregates`, named `<field>_<function>`: `{"pop_est": "sum"}` gives `pop_est_sum`.
/// Functions: `count` (non-NULL values), `sum`, `avg` (or its synonym `mean`), `min`, `max`,
/// `first` (the first non-NULL value in input order); they skip NULLs. Other attributes are
/// dropped, or with `others: "first"` kept under their own name with their first non-NULL value
/// in input order (GeoPandas' `dissolve`). NULL `by` values form a group of their own.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct Dissolve {
    /// Fields whose values define the groups (default: none, everything in one group).
    #[serde(default)]
    pub by: Vec<String>,
    /// Field → aggregate function; the result is named `<field>_<function>`.
    #[serde(default)]
    pub aggregates: BTreeMap<String, AggFunc>,
    /// The attributes in neither `by` nor `aggregates`: `drop` (default) or `first` (kept, with
    /// their first non-NULL value in input order).
    #[serde(default)]
    pub others: OtherFields,
    /// What to do with invalid geometries: `fix` (default), `skip` or `error`.
    #[serde(default)]
    pub on_invalid: OnInvalid,
    #[serde(flatten)]
    pub common: CommonParams,
}

/// What a grouping step does with the attributes it neither groups by nor aggregates.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum OtherFields {
    #[default]
    Drop,
    /// Kept under their own name, with the group's first non-NULL value in input order.
    First,
}

/// The name of an aggregate function as users write it.
pub(super) fn func_name(func: AggFunc) -> &'static str {
    match func {
        AggFunc::Count => "count",
        AggFunc::Sum => "sum",
        AggFunc::Avg => "avg",
        AggFunc::Mean => "mean",
        AggFunc::Min => "min",
        AggFunc::Max => "max",
        AggFunc::First => "first",
    }
}

/// The output field of `func(field)`: `<field>_<function>`.
pub(super) fn output_name(field: &str, func: AggFunc) -> String {
    format!("{field}_{}", func_name(func))
}

impl CapabilityParams for Dissolve {
    const NAME: &'static str = "dissolve";
    const GROUP: Group = Group::VectorGeometry;

    fn common(&self) -> &CommonParams {
        &self.common
    }

    fn lower(&self, ctx: &LowerContext<'_>) -> Result<Vec<Operator>, Vec<Problem>> {
        Ok(self.on_invalid.before(vec![grouped(
            &self.by,
            "by",
            &self.aggregates,
            self.others,
            GeometryAgg::Union,
            ctx,
        )?]))
    }
}

/// The aggregate of a grouping step: `by` (the parameter `by_param`) checked as group fields,
/// each entry of `aggregates` as `<field>_<function>`, and the geometries made one by
/// `geometry`. Every problem is reported.
pub(super) fn grouped(
    by: &[String],
    by_param: &str,
    aggregates: &BTreeMap<String, AggFunc>,
    others: OtherFields,
    geometry: GeometryAgg,
    ctx: &LowerContext<'_>,
) -> Result<Operator, Vec<Problem>> {
    let mut problems = Vec::new();
    if by.iter().any(|name| name == GEOM) {
        problems.push(Problem::new(ctx.at(by_param), "cannot group by the geometry"));
    }
    if let Err(found) = require_columns(ctx.input, by, ctx.at(by_param)) {
        problems.extend(found);
    }
    let fields: Vec<String> = aggregates.keys().cloned().collect();
    if let Err(found) = require_columns(ctx.input, &fields, ctx.at("aggregates")) {
        problems.extend(found);
    }
    let mut items = Vec::new();
    for (field, func) in aggregates {
        let output = output_name(field, *func);
        if field == GEOM {
            let how = match geometry {
                GeometryAgg::Union => "unioned",
                GeometryAgg::Collect => "collected",
            };
            problems.push(Problem::new(
                ctx.at(&format!("aggregates.{field}")),
                format!("the geometry is {how}, not aggregated"),
            ));
        } else if by.contains(&output) {
            problems.push(Problem::new(
                ctx.at(&format!("aggregates.{field}")),
                format!("output field {output} is also a {by_param} field"),
            ));
        }
        items.push(AggItem {
            output,
            func: *func,
            column: Some(field.clone()),
        });
    }
    if others == OtherFields::First {
        match ctx.input {
            Some(schema) => {
                let kept: Vec<AggItem> = schema
                    .attributes()
                    .filter(|c| !by.contains(&c.name) && !aggregates.contains_key(&c.name))
                    .filter(|c| !items.iter().any(|i| i.output == c.name))
                    .map(|c| AggItem {
                        output: c.name.clone(),
                        func: AggFunc::First,
                        column: Some(c.name.clone()),
                    })
                    .collect();
                items.extend(kept);
            }
            None => problems.push(Problem::new(
                ctx.at("others"),
                "needs the input's columns (plan with a catalog)",
            )),
        }
    }
    if !problems.is_empty() {
        return Err(problems);
    }
    Ok(Operator::Aggregate(AggregateOp {
        group_by: by.to_vec(),
        aggregates: items,
        geometry: Some(geometry),
    }))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::schema::{Column, FieldType, Schema};

    fn schema() -> Schema {
        Schema {
            columns: vec![
                Column {
                    name: "continent".into(),
                    ty: FieldType::Text,
                },
                Column {
                    name: "pop_est".into(),
                    ty: FieldType::Double,
                },
                Column {
                    name: GEOM.into(),
                    ty: FieldType::Geometry,
                },
            ],
            crs: Some("EPSG:4326".into()),
        }
    }

    #[test]
    fn groups_and_names_aggregates() {
        let params: Dissolve = serde_json::from_value(json!({
            "by": ["continent"],
            "aggregates": {"pop_est": "sum", "continent": "count"}
        }))
        .unwrap();
        let schema = schema();
        let ctx = LowerContext {
            step_id: "d",
            path: "steps[0].params",
            input: Some(&schema),
            others: &[],
            rasters: None,
        };
        let ops = params.lower(&ctx).unwrap();
        // Invalid geometries are made valid first (`on_invalid` defaults to `fix`).
        let [Operator::Map(_), Operator::Aggregate(op)] = ops.as_slice() else {
            panic!("{ops:?}")
        };
        assert_eq!(op.group_by, ["continent"]);
        let outputs: Vec<&str> = op.aggregates.iter().map(|a| a.output.as_str()).collect();
        assert_eq!(outputs, ["continent_count", "pop_est_sum"]);
        assert_eq!(op.geometry, Some(GeometryAgg::Union));
        assert_eq!(output_name("pop_est", AggFunc::Mean), "pop_est_mean");
    }

    #[test]
    fn unknown_fields_are_all_reported() {
        let params: Dissolve =
            serde_json::from_value(json!({"by": ["region"], "aggregates": {"pop": "sum"}}))
                .unwrap();
        let schema = schema();
        let ctx = LowerContext {
            step_id: "d",
            path: "p",
            input: Some(&schema),
            others: &[],
            rasters: None,
        };
        let problems = params.lower(&ctx).unwrap_err();
        let paths: Vec<&str> = problems.iter().map(|p| p.path.as_str()).collect();
        assert_eq!(paths, ["p.by", "p.aggregates"]);
    }
}
