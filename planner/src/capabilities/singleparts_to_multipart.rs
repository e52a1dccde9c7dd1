//! `singleparts_to_multipart`: one feature per group of features, their parts collected into
//! one multi-part geometry.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::Deserialize;

use super::dissolve::grouped;
use super::{CapabilityParams, CommonParams, Group, LowerContext};
use crate::error::Problem;
use crate::plan::operator::{AggFunc, GeometryAgg, Operator};

/// Collect the geometries of the features that share the values of `fields` (all features
/// when `fields` is empty, the default) into one feature per combination of values, the
/// reverse of `multipart_to_singleparts`. The geometry is made of the simple parts of the
/// group's geometries kept as they are, not unioned (overlapping parts stay, shared borders
/// stay): a MultiPolygon, MultiLineString or MultiPoint when every part has that type (one
/// part gives a one-part Multi*), a GeometryCollection of the parts when types are mixed.
/// Multi* and collections given are flattened into their parts, so a Polygon and a
/// MultiPolygon give one MultiPolygon. The parts come in the same order on every engine:
/// feature by feature in the order of the MD5 hash of each geometry's WKB, each feature's
/// parts in their order. NULL and empty geometries (and empty parts of collections) are left
/// out; a group with no other geometry gets a NULL geometry. The output has the `fields` and
/// one field per entry of `aggregates`, named `<field>_<function>` as in `dissolve`
/// (`{"pop_est": "sum"}` gives `pop_est_sum`; `count`, `sum`, `avg`/`mean`, `min`, `max`,
/// skipping NULLs); other attributes are dropped. NULL values of `fields` form a group of
/// their own. With no `fields`, an empty input gives one feature with a NULL geometry.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct SinglepartsToMultipart {
    /// Fields whose values define the groups (default: none, every feature in one group).
    #[serde(default)]
    pub fields: Vec<String>,
    /// Field → aggregate function; the result is named `<field>_<function>`.
    #[serde(default)]
    pub aggregates: BTreeMap<String, AggFunc>,
    /// The attributes in neither `fields` nor `aggregates`: `drop` (default) or `first` (kept,
    /// with their first non-NULL value in input order).
    #[serde(default)]
    pub others: super::dissolve::OtherFields,
    #[serde(flatten)]
    pub common: CommonParams,
}

impl CapabilityParams for SinglepartsToMultipart {
    const NAME: &'static str = "singleparts_to_multipart";
    const GROUP: Group = Group::VectorGeometry;

    fn common(&self) -> &CommonParams {
        &self.common
    }

    fn lower(&self, ctx: &LowerContext<'_>) -> Result<Vec<Operator>, Vec<Problem>> {
        Ok(vec![grouped(
            &self.fields,
            "fields",
            &self.aggregates,
            self.others,
            GeometryAgg::Collect,
            ctx,
        )?])
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::plan::operator::AggregateOp;
    use crate::schema::{Column, FieldType, GEOM, Schema};

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

    fn lower(params: serde_json::Value) -> Result<Vec<Operator>, Vec<Problem>> {
        let params: SinglepartsToMultipart = serde_json::from_value(params).unwrap();
        let schema = schema();
        let ctx = LowerContext {
            step_id: "m",
            path: "p",
            input: Some(&schema),
            others: &[],
            rasters: None,
        };
        params.lower(&ctx)
    }

    #[test]
    fn collects_by_fields_without_union_and_aggregates_like_dissolve() {
        let ops = lower(json!({"fields": ["continent"], "aggregates": {"pop_est": "sum"}})).unwrap();
        let [Operator::Aggregate(AggregateOp {
            group_by,
            aggregates,
            geometry,
        })] = ops.as_slice()
        else {
            panic!("{ops:?}")
        };
        assert_eq!(group_by, &["continent"]);
        assert_eq!(aggregates[0].output, "pop_est_sum");
        assert_eq!(*geometry, Some(GeometryAgg::Collect));
    }

    #[test]
    fn refuses_unknown_fields_and_the_geometry() {
        let problems =
            lower(json!({"fields": ["region", "geom"], "aggregates": {"geom": "count"}}))
                .unwrap_err();
        let messages: Vec<String> = problems
            .iter()
            .map(|p| format!("{}: {}", p.path, p.message))
            .collect();
        assert_eq!(messages.len(), 3, "{messages:?}");
        assert!(messages[0].contains("p.fields: cannot group by the geometry"));
        assert!(messages[1].contains("unknown column(s) region"));
        assert!(messages[2].contains("the geometry is collected, not aggregated"));
    }
}
