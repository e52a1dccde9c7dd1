//! `network_remove_pseudo_nodes`: lines meeting two at a node merged into one.

use schemars::JsonSchema;
use serde::Deserialize;

use super::checks::require_columns;
use super::{CapabilityParams, CommonParams, Group, LowerContext};
use crate::error::Problem;
use crate::plan::operator::{LineCleanOp, Operator};

/// Merges lines that meet at a pseudo node: a point where exactly two line ends meet (their
/// coordinates exactly equal, Z ignored) and nothing else ends, so that a chain of such lines
/// becomes one LineString (a closed one when the chain is a loop). With `fields`, two lines
/// are merged at a pseudo node only when their values of every named field are equal (NULL
/// equal to NULL). The merged line keeps the attributes of its *first* line: the one whose
/// bounding box has the lowest x, then the lowest y, then the lowest WKB (bytes), then the
/// lowest other attributes; it runs in that line's direction, and the other lines of the chain
/// are reversed as needed. Only LineStrings are merged; the parts of MultiLineStrings count in
/// the number of ends meeting at a point but are never merged. A line whose two ends meet
/// each other (a ring) is not merged with itself. Rows not merged, NULL and empty geometries
/// and geometries other than lines pass through unchanged. Runs on the native backend on
/// every engine.
///
/// With `pieces: true` (GISPulse's answer): every line part of the layer, in row order, merged
/// by GEOS's LineMerger (at every point two ends meet, whatever the attributes; lines merged
/// with nothing come out too) as a new table: `id` from 0 in GEOS's order and the line, no
/// attributes. A geometry other than a line is an error.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct NetworkRemovePseudoNodes {
    /// Fields whose values must be equal for two lines to be merged (default: none, every
    /// pseudo node is removed).
    #[serde(default)]
    pub fields: Vec<String>,
    /// `true`: a new table of the pieces GEOS gives for the whole layer (`id` from 0 in GEOS's
    /// order and the geometry, no attributes), as GISPulse answers; default `false`.
    #[serde(default)]
    pub pieces: bool,
    /// Work in this projected CRS (`"EPSG:3857"`; `"auto"` or `"auto:angular"`: GISPulse v2's
    /// choice): the lines are transformed to it, cleaned there, and transformed back. Default:
    /// the data's CRS.
    #[serde(default)]
    pub work_crs: Option<String>,
    #[serde(flatten)]
    pub common: CommonParams,
}

impl CapabilityParams for NetworkRemovePseudoNodes {
    const NAME: &'static str = "network_remove_pseudo_nodes";
    const GROUP: Group = Group::Topology;

    fn common(&self) -> &CommonParams {
        &self.common
    }

    fn lower(&self, ctx: &LowerContext<'_>) -> Result<Vec<Operator>, Vec<Problem>> {
        require_columns(ctx.input, &self.fields, ctx.at("fields"))?;
        if self.pieces && !self.fields.is_empty() {
            return Err(vec![Problem::new(
                ctx.at("fields"),
                "pieces merges whatever the attributes: leave fields out",
            )]);
        }
        let op = if self.pieces {
            LineCleanOp::Rebuilt { merge: true }
        } else {
            LineCleanOp::RemovePseudoNodes {
                fields: self.fields.clone(),
            }
        };
        super::work_crs::operator_within(self.work_crs.as_deref(), ctx, Operator::owned(op))
    }
}
