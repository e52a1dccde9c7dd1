//! `network_node_lines`: every line split where it crosses or touches another.

use schemars::JsonSchema;
use serde::Deserialize;

use super::{CapabilityParams, CommonParams, Group, LowerContext};
use crate::error::Problem;
use crate::plan::operator::{LineCleanOp, Operator};

/// Splits every line where it crosses or touches another line (and where another line's end
/// lies on it), so that lines meet only at their ends: the union of all the lines (GEOS's
/// noding, `ST_Union`) cut into its pieces, and each piece given, as a LineString, to each line
/// it lies on (its middle within 1e-9 of the lines' extent from that line), with all that
/// line's attributes. A piece is therefore one row per line it belongs to: where lines overlap
/// along a stretch (collinear), the shared stretch is one piece repeated for each of them, and
/// a line repeated in the input keeps its repeated pieces (`network_remove_duplicates` after
/// drops them). Pieces also end at every original end of a line; vertices between nodes are
/// kept. A line crossing itself is split there too. A MultiLineString gives LineStrings. NULL
/// and empty geometries, lines of length 0 and geometries other than lines pass through
/// unchanged. Computed as SQL on both engines (and on the SQL engine in native and hybrid
/// modes).
///
/// With `pieces: true` (GISPulse's answer): the GEOS union of every non-empty geometry, in row
/// order, as a new table of its parts (a LineString each; a result other than lines one row),
/// `id` from 0 in GEOS's order, no attributes, each piece once. Runs on the native backend.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct NetworkNodeLines {
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

impl CapabilityParams for NetworkNodeLines {
    const NAME: &'static str = "network_node_lines";
    const GROUP: Group = Group::Topology;

    fn common(&self) -> &CommonParams {
        &self.common
    }

    fn lower(&self, ctx: &LowerContext<'_>) -> Result<Vec<Operator>, Vec<Problem>> {
        let op = if self.pieces {
            LineCleanOp::Rebuilt { merge: false }
        } else {
            LineCleanOp::NodeLines
        };
        super::work_crs::operator_within(self.work_crs.as_deref(), ctx, Operator::owned(op))
    }
}
