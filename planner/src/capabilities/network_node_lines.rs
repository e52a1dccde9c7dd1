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
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct NetworkNodeLines {
    #[serde(flatten)]
    pub common: CommonParams,
}

impl CapabilityParams for NetworkNodeLines {
    const NAME: &'static str = "network_node_lines";
    const GROUP: Group = Group::Topology;

    fn common(&self) -> &CommonParams {
        &self.common
    }

    fn lower(&self, _ctx: &LowerContext<'_>) -> Result<Vec<Operator>, Vec<Problem>> {
        Ok(vec![Operator::LineClean(LineCleanOp::NodeLines)])
    }
}
