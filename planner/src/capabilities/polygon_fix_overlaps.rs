//! `polygon_fix_overlaps`: every overlap between the layer's polygons given to one feature.

use schemars::JsonSchema;
use serde::Deserialize;

use super::checks::require_columns;
use super::{CapabilityParams, CommonParams, Group, LowerContext};
use crate::error::Problem;
use crate::plan::operator::{CleanOp, Operator, OverlapOwner};

/// Remove the overlaps between the layer's polygons: an area covered by several features is
/// kept by one of them and cut from all the others. The owner is chosen by `owner`: `largest`
/// (default: the feature of the largest area before cleaning), `smallest`, or `first` (the
/// lowest value of the field `order_by`, NULLs last; without `order_by`, the earliest row).
/// Equal areas or values go to the earlier row. Put otherwise: the features are ranked by the
/// rule, and each is replaced by its difference with the union of the higher-ranked features
/// (GEOS overlay), so the result has no overlaps and the same union as the input. A feature
/// wholly covered by higher-ranked ones keeps its row with an empty polygon. Areas are planar,
/// in CRS units (of `work_crs` when given). Invalid polygons are made valid first (GEOS `MakeValid`, polygonal parts);
/// a cut feature becomes one Polygon or a MultiPolygon (only its polygonal parts), the others
/// keep their geometry unchanged. NULL and empty geometries, points and lines pass through
/// unchanged and take no part. Runs on the native backend (GEOS) in every engine mode.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct PolygonFixOverlaps {
    /// Which feature keeps an overlap: `largest` (default), `smallest` or `first`.
    #[serde(default = "largest")]
    pub owner: OverlapOwner,
    /// With `owner: first`, the field ranking the features (lowest first); only with `first`.
    #[serde(default)]
    pub order_by: Option<String>,
    /// Clean in this projected CRS (`"EPSG:3857"`; `"auto"` or `"auto:angular"`: GISPulse v2's
    /// choice): the geometry is transformed to it, cleaned there (areas and lengths in its
    /// units), and transformed back. Default: the data's CRS.
    #[serde(default)]
    pub work_crs: Option<String>,
    #[serde(flatten)]
    pub common: CommonParams,
}

fn largest() -> OverlapOwner {
    OverlapOwner::Largest
}

impl CapabilityParams for PolygonFixOverlaps {
    const NAME: &'static str = "polygon_fix_overlaps";
    const GROUP: Group = Group::Topology;

    fn common(&self) -> &CommonParams {
        &self.common
    }

    fn lower(&self, ctx: &LowerContext<'_>) -> Result<Vec<Operator>, Vec<Problem>> {
        super::work_crs::within(
            self.work_crs.as_deref(),
            super::work_crs::Output::Geometry,
            ctx,
            |ctx| self.lower_here(ctx),
        )
    }
}

impl PolygonFixOverlaps {
    fn lower_here(&self, ctx: &LowerContext<'_>) -> Result<Vec<Operator>, Vec<Problem>> {
        if let Some(field) = &self.order_by {
            if self.owner != OverlapOwner::First {
                return Err(vec![Problem::new(
                    ctx.at("order_by"),
                    format!(
                        "ranks features only with owner `first` (owner is `{}`)",
                        self.owner.as_str()
                    ),
                )]);
            }
            require_columns(ctx.input, std::slice::from_ref(field), ctx.at("order_by"))?;
        }
        Ok(vec![Operator::owned(CleanOp::FixOverlaps {
            owner: self.owner,
            order_by: self.order_by.clone(),
        })])
    }
}
