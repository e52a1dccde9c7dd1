//! `voronoi_polygons`: each feature's geometry replaced by the Voronoi cell of its site.

use schemars::JsonSchema;
use serde::Deserialize;

use super::{CapabilityParams, CommonParams, Group, LowerContext};
use crate::error::Problem;
use crate::plan::operator::{Operator, TessellateOp};

/// Replace every feature's geometry by its Voronoi cell among all the layer's features: the
/// part of the plane nearer its site than any other site, attributes kept. A point feature is
/// its own site; any other geometry's site is its centroid. The diagram is GEOS's: it reaches
/// the sites' bounding box grown by its larger side on every side, and `envelope` when that is
/// larger. With `clip` the cells are cut to `envelope`, or without one to the sites' bounding
/// box (a cell wholly outside becomes NULL). Features at the same site share its cell. A NULL
/// or empty geometry gets a NULL cell, as does every feature when the layer has fewer than two
/// distinct sites. Coordinates are planar (in CRS units, also on longitude/latitude).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct VoronoiPolygons {
    /// `[xmin, ymin, xmax, ymax]` in the layer's CRS: the extent the diagram reaches at least
    /// (and, with `clip`, is cut to).
    #[serde(default)]
    pub envelope: Option<[f64; 4]>,
    /// Cut the cells to `envelope` (or to the sites' bounding box); default false.
    #[serde(default)]
    pub clip: bool,
    #[serde(flatten)]
    pub common: CommonParams,
}

impl CapabilityParams for VoronoiPolygons {
    const NAME: &'static str = "voronoi_polygons";
    const GROUP: Group = Group::VectorGeometry;

    fn common(&self) -> &CommonParams {
        &self.common
    }

    fn lower(&self, ctx: &LowerContext<'_>) -> Result<Vec<Operator>, Vec<Problem>> {
        if let Some(b) = self.envelope
            && !(b.iter().all(|v| v.is_finite()) && b[0] < b[2] && b[1] < b[3])
        {
            return Err(vec![Problem::new(
                ctx.at("envelope"),
                "must be [xmin, ymin, xmax, ymax] with xmin < xmax and ymin < ymax",
            )]);
        }
        Ok(vec![Operator::owned(TessellateOp::Voronoi {
            envelope: self.envelope,
            clip: self.clip,
        })])
    }
}
