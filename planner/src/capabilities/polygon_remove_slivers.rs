//! `polygon_remove_slivers`: small or thin polygons merged into their neighbour.

use schemars::JsonSchema;
use serde::Deserialize;

use super::cleaning_checks::positive;
use super::{CapabilityParams, CommonParams, Group, LowerContext};
use crate::error::Problem;
use crate::plan::operator::{CleanOp, Operator};

/// Merge slivers into their neighbours: a sliver is a polygonal feature below every threshold
/// given (at least one is required): its area under `max_area`, its thinness `4πA/P²` (1 for
/// a circle, near 0 for a thin strip; A the area, P the perimeter of every ring) under
/// `max_thinness`. Each sliver is unioned into the non-sliver feature sharing the longest
/// border with it (the length of the sliver's boundary the feature covers; equal lengths go to
/// the earlier row) and its row is removed; the receiving feature keeps its attributes. A
/// sliver sharing no border with a non-sliver feature is kept (`keep_isolated`, default true)
/// or removed. The layer's union is unchanged unless isolated slivers are removed. A
/// MultiPolygon is measured as one feature. Areas and lengths are planar, in CRS units.
/// Invalid polygons are made valid first (GEOS `MakeValid`, polygonal parts); a feature that
/// receives a sliver becomes one Polygon or a MultiPolygon, the others keep their geometry
/// unchanged. NULL and empty geometries, points and lines pass through unchanged and are
/// never slivers. Runs on the native backend (GEOS) in every engine mode.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct PolygonRemoveSlivers {
    /// A sliver's area is below this (square CRS units, above 0).
    #[serde(default)]
    pub max_area: Option<f64>,
    /// A sliver's thinness `4πA/P²` is below this (between 0 and 1).
    #[serde(default)]
    pub max_thinness: Option<f64>,
    /// Keep a sliver that has no neighbour to merge into (default true); false removes it.
    #[serde(default = "yes")]
    pub keep_isolated: bool,
    #[serde(flatten)]
    pub common: CommonParams,
}

fn yes() -> bool {
    true
}

impl CapabilityParams for PolygonRemoveSlivers {
    const NAME: &'static str = "polygon_remove_slivers";
    const GROUP: Group = Group::Topology;

    fn common(&self) -> &CommonParams {
        &self.common
    }

    fn lower(&self, ctx: &LowerContext<'_>) -> Result<Vec<Operator>, Vec<Problem>> {
        if self.max_area.is_none() && self.max_thinness.is_none() {
            return Err(vec![Problem::new(
                ctx.path.to_owned(),
                "give max_area, max_thinness or both",
            )]);
        }
        if let Some(area) = self.max_area {
            positive(area, ctx, "max_area")?;
        }
        if let Some(thinness) = self.max_thinness {
            positive(thinness, ctx, "max_thinness")?;
            if thinness > 1.0 {
                return Err(vec![Problem::new(
                    ctx.at("max_thinness"),
                    format!("must be at most 1 (a circle's thinness), not {thinness}"),
                )]);
            }
        }
        Ok(vec![Operator::owned(CleanOp::RemoveSlivers {
            max_area: self.max_area,
            max_thinness: self.max_thinness,
            keep_isolated: self.keep_isolated,
        })])
    }
}
