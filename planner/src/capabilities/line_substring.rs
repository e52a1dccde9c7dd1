//! `line_substring`: keep the part of every line between two fractions of its length.

use schemars::JsonSchema;
use serde::Deserialize;

use super::{CapabilityParams, CommonParams, Group, LowerContext};
use crate::error::Problem;
use crate::plan::operator::{GeoExpr, MapOp, Operator, ValueExpr};
use crate::schema::{FieldType, GEOM};

/// Keep the part of each LineString between the fractions `start` and `end` of its length (0
/// is its first vertex, 1 its last): `start` 0.25 and `end` 0.75 keep the middle half. Lengths
/// are measured in the data's coordinates (planar, also on lon/lat data). Z and M values are
/// interpolated at the new end points. When `start` equals `end` the result is the point at
/// that fraction; a line of zero length gives its first point. Only LineStrings are cut:
/// MultiLineStrings (join their parts first with `line_merge`), points, polygons and geometry
/// collections give NULL, or with `keep_others` are left as they are. NULL stays NULL; an
/// empty LineString stays empty. Attributes are unchanged.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct LineSubstring {
    /// Where the kept part starts, as a fraction of the line's length (0 to 1).
    #[schemars(range(min = 0.0, max = 1.0))]
    pub start: f64,
    /// Where the kept part ends, as a fraction of the line's length (0 to 1, not below
    /// `start`).
    #[schemars(range(min = 0.0, max = 1.0))]
    pub end: f64,
    /// Leave what is not a LineString as it is (default false: NULL).
    #[serde(default)]
    pub keep_others: bool,
    #[serde(flatten)]
    pub common: CommonParams,
}

impl CapabilityParams for LineSubstring {
    const NAME: &'static str = "line_substring";
    const GROUP: Group = Group::VectorGeometry;

    fn common(&self) -> &CommonParams {
        &self.common
    }

    fn lower(&self, ctx: &LowerContext<'_>) -> Result<Vec<Operator>, Vec<Problem>> {
        let mut problems = Vec::new();
        for (name, value) in [("start", self.start), ("end", self.end)] {
            if !(0.0..=1.0).contains(&value) {
                problems.push(Problem::new(
                    ctx.at(name),
                    format!("must be a fraction from 0 to 1, got {value}"),
                ));
            }
        }
        if problems.is_empty() && self.start > self.end {
            problems.push(Problem::new(
                ctx.at("end"),
                format!("must not be below start ({}), got {}", self.start, self.end),
            ));
        }
        if !problems.is_empty() {
            return Err(problems);
        }
        Ok(vec![Operator::Map(MapOp {
            set: vec![(
                GEOM.to_owned(),
                ValueExpr::Geo(GeoExpr::LineSubstring {
                    start: self.start,
                    end: self.end,
                    keep_others: self.keep_others,
                }),
                FieldType::Geometry,
            )],
            ..MapOp::default()
        })])
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn lower(params: serde_json::Value) -> Result<Vec<Operator>, Vec<Problem>> {
        let params: LineSubstring = serde_json::from_value(params).unwrap();
        let ctx = LowerContext {
            step_id: "s",
            path: "steps[0].params",
            input: None,
            others: &[],
            rasters: None,
        };
        params.lower(&ctx)
    }

    #[test]
    fn fractions_are_checked() {
        assert!(lower(json!({"start": 0.25, "end": 0.75})).is_ok());
        assert!(lower(json!({"start": 0.5, "end": 0.5})).is_ok());
        let problems = lower(json!({"start": 0.75, "end": 0.25})).unwrap_err();
        assert_eq!(problems.len(), 1);
        assert!(
            problems[0].to_string().contains("steps[0].params.end"),
            "{problems:?}"
        );
        let problems = lower(json!({"start": -0.1, "end": 1.5})).unwrap_err();
        assert_eq!(problems.len(), 2, "{problems:?}");
    }
}
