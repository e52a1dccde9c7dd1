//! `spatial_aggregate`: summarise, for each feature, the `ref_layer` features that match it.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::Deserialize;

use super::checks::require_columns;
use super::dissolve::output_name;
use super::spatial_join::{check_distance, default_predicate};
use super::{CapabilityParams, CommonParams, Group, LowerContext};
use crate::error::Problem;
use crate::plan::operator::{AggFunc, AggItem, Operator, SpatialAggregateOp, SpatialPredicate};
use crate::schema::GEOM;

/// For each input feature, aggregate the features `r` of `ref_layer` for which
/// `predicate(r.geom, input.geom)` holds: with `predicate: within` and `agg: {"*": "count"}`,
/// count the points within each polygon. `agg` maps a `ref_layer` field to a function (`count`,
/// `sum`, `avg` or its synonym `mean`, `min`, `max`), giving the field `<field>_<function>`
/// (`{"pop": "sum"}` gives `pop_sum`); the key `*` with `count` counts the matching features
/// into `count`. Every input feature is kept with all its attributes: counts are 0 (not NULL)
/// when nothing matches, the other aggregates NULL. `distance` (in CRS units) is required by,
/// and only allowed with, `predicate: dwithin`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct SpatialAggregate {
    /// The step or dataset layer whose features are aggregated.
    #[schemars(length(min = 1))]
    pub ref_layer: String,
    /// Spatial relation `predicate(ref.geom, input.geom)` a reference feature must satisfy.
    #[serde(default = "default_predicate")]
    pub predicate: SpatialPredicate,
    /// Distance in CRS units, for `predicate: dwithin`.
    #[serde(default)]
    pub distance: Option<f64>,
    /// `ref_layer` field (or `*` with `count`) → aggregate function.
    #[schemars(length(min = 1))]
    pub agg: BTreeMap<String, AggFunc>,
    #[serde(flatten)]
    pub common: CommonParams,
}

impl CapabilityParams for SpatialAggregate {
    const NAME: &'static str = "spatial_aggregate";
    const GROUP: Group = Group::CrossLayer;

    fn common(&self) -> &CommonParams {
        &self.common
    }

    fn other_inputs(&self) -> Vec<(&'static str, String)> {
        vec![("ref_layer", self.ref_layer.clone())]
    }

    fn lower(&self, ctx: &LowerContext<'_>) -> Result<Vec<Operator>, Vec<Problem>> {
        let mut problems = Vec::new();
        if let Err(found) = check_distance(self.predicate, self.distance, ctx) {
            problems.extend(found);
        }
        if self.agg.is_empty() {
            problems.push(Problem::new(
                ctx.at("agg"),
                "needs at least one field → function entry",
            ));
        }
        let fields: Vec<String> = self.agg.keys().filter(|k| *k != "*").cloned().collect();
        if let Err(found) = require_columns(
            ctx.others.first().copied().flatten(),
            &fields,
            ctx.at("agg"),
        ) {
            problems.extend(found);
        }
        let mut aggregates = Vec::new();
        for (field, func) in &self.agg {
            let path = ctx.at(&format!("agg.{field}"));
            let (output, column) = match (field.as_str(), func) {
                (_, AggFunc::First) => {
                    problems.push(Problem::new(
                        path,
                        "first is not an aggregate of matches (they have no order)",
                    ));
                    continue;
                }
                ("*", AggFunc::Count) => ("count".to_owned(), None),
                ("*", _) => {
                    problems.push(Problem::new(path, "only count applies to *"));
                    continue;
                }
                (GEOM, AggFunc::Count) => (output_name(field, *func), Some(field.clone())),
                (GEOM, _) => {
                    problems.push(Problem::new(path, "only count applies to the geometry"));
                    continue;
                }
                _ => (output_name(field, *func), Some(field.clone())),
            };
            if ctx.input.is_some_and(|s| s.has(&output)) {
                problems.push(Problem::new(
                    path,
                    format!("output field {output} already exists in the input"),
                ));
                continue;
            }
            aggregates.push(AggItem {
                output,
                func: *func,
                column,
            });
        }
        if !problems.is_empty() {
            return Err(problems);
        }
        Ok(vec![Operator::SpatialAggregate(SpatialAggregateOp {
            predicate: self.predicate,
            distance: self.distance,
            aggregates,
        })])
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::schema::{Column, FieldType, Schema};

    #[test]
    fn star_count_and_field_aggregates() {
        let params: SpatialAggregate = serde_json::from_value(json!({
            "ref_layer": "places",
            "predicate": "within",
            "agg": {"*": "count", "pop": "max"}
        }))
        .unwrap();
        let places = Schema {
            columns: vec![Column {
                name: "pop".into(),
                ty: FieldType::Integer,
            }],
            crs: None,
        };
        let others = [Some(&places)];
        let ctx = LowerContext {
            step_id: "a",
            path: "p",
            input: None,
            others: &others,
            rasters: None,
        };
        let ops = params.lower(&ctx).unwrap();
        let [Operator::SpatialAggregate(op)] = ops.as_slice() else {
            panic!("{ops:?}")
        };
        assert_eq!(op.predicate, SpatialPredicate::Within);
        assert_eq!(
            op.aggregates,
            [
                AggItem {
                    output: "count".into(),
                    func: AggFunc::Count,
                    column: None
                },
                AggItem {
                    output: "pop_max".into(),
                    func: AggFunc::Max,
                    column: Some("pop".into())
                },
            ]
        );
    }

    #[test]
    fn bad_entries_are_all_reported() {
        let params: SpatialAggregate = serde_json::from_value(json!({
            "ref_layer": "places",
            "distance": 5,
            "agg": {"*": "sum", "missing": "avg"}
        }))
        .unwrap();
        let places = Schema {
            columns: Vec::new(),
            crs: None,
        };
        let others = [Some(&places)];
        let ctx = LowerContext {
            step_id: "a",
            path: "p",
            input: None,
            others: &others,
            rasters: None,
        };
        let problems = params.lower(&ctx).unwrap_err();
        let paths: Vec<&str> = problems.iter().map(|p| p.path.as_str()).collect();
        assert_eq!(paths, ["p.distance", "p.agg", "p.agg.*"]);
    }
}
