//! `delaunay_triangulation`: the Delaunay triangles (or edges) of every vertex of the layer.

use schemars::JsonSchema;
use serde::Deserialize;

use super::{CapabilityParams, CommonParams, Group, LowerContext};
use crate::error::Problem;
use crate::plan::operator::{Operator, TessellateOp};

/// What `delaunay_triangulation` outputs.
#[derive(Debug, Clone, Copy, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DelaunayOutput {
    /// One Polygon per triangle.
    #[default]
    Polygons,
    /// One two-point LineString per edge (each shared edge once).
    Edges,
}

/// The Delaunay triangulation of every vertex of every feature of the layer: a new layer of
/// triangles (or of their edges), with only an `id` numbering them by their bounding box's
/// lower-left corner (ties by the normalized geometry), the input's attributes not kept.
/// Repeated vertices count once. Without `tolerance` it is the triangulation GEOS 3.12+ (and
/// Shapely 2's `delaunay_triangles`) makes, computed natively on every engine (PostGIS 3.3's
/// GEOS 3.11 leaves out slivers along the convex hull). With `tolerance`, vertices closer
/// than it are merged first, as GEOS 3.11 merges them (PostGIS's `ST_DelaunayTriangles`;
/// GEOS 3.12+ merges differently). NULL and empty geometries are left out; fewer than three
/// vertices off one line give no triangle. Coordinates are planar (in CRS units, also on
/// longitude/latitude). For a triangulation of each feature on its own, run it on one feature
/// at a time.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct DelaunayTriangulation {
    /// `polygons` (default) or `edges`.
    #[serde(default)]
    pub output: DelaunayOutput,
    /// Snapping distance for vertices, in CRS units (default 0: none).
    #[serde(default)]
    pub tolerance: f64,
    #[serde(flatten)]
    pub common: CommonParams,
}

impl CapabilityParams for DelaunayTriangulation {
    const NAME: &'static str = "delaunay_triangulation";
    const GROUP: Group = Group::VectorGeometry;

    fn common(&self) -> &CommonParams {
        &self.common
    }

    fn lower(&self, ctx: &LowerContext<'_>) -> Result<Vec<Operator>, Vec<Problem>> {
        if !(self.tolerance.is_finite() && self.tolerance >= 0.0) {
            return Err(vec![Problem::new(
                ctx.at("tolerance"),
                "must be a number of at least 0",
            )]);
        }
        Ok(vec![Operator::owned(TessellateOp::Delaunay {
            edges: matches!(self.output, DelaunayOutput::Edges),
            tolerance: self.tolerance,
        })])
    }
}
