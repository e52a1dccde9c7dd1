//! `polygonize`: the polygons enclosed by the layer's lines.

use schemars::JsonSchema;
use serde::Deserialize;

use super::{CapabilityParams, CommonParams, Group, LowerContext};
use crate::error::Problem;
use crate::plan::operator::{Operator, TessellateOp};

/// The polygons enclosed by the lines of the layer (LineStrings, MultiLineStrings and the
/// rings of polygons), after noding them where they cross or touch (their union): a new layer
/// with one Polygon per face, holes where an enclosed face lies inside another, and only an
/// `id` numbering them by their bounding box's lower-left corner (ties by the normalized
/// geometry); the input's attributes are not kept (join them back with `spatial_join`).
/// Dangling lines and lines enclosing nothing give no polygon. Points, geometry collections,
/// NULL and empty geometries are left out. With `node: false` the lines are taken as given, as
/// GEOS's polygonizer takes them: lines that cross without a shared vertex do not split a face.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct Polygonize {
    /// Node the lines where they cross or touch before polygonizing (default true).
    #[serde(default = "default_node")]
    pub node: bool,
    #[serde(flatten)]
    pub common: CommonParams,
}

fn default_node() -> bool {
    true
}

impl CapabilityParams for Polygonize {
    const NAME: &'static str = "polygonize";
    const GROUP: Group = Group::VectorGeometry;

    fn common(&self) -> &CommonParams {
        &self.common
    }

    fn lower(&self, _ctx: &LowerContext<'_>) -> Result<Vec<Operator>, Vec<Problem>> {
        Ok(vec![Operator::owned(TessellateOp::Polygonize {
            node: self.node,
        })])
    }
}
