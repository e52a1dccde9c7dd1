//! `network_remove_duplicates`: lines equal to another line dropped.

use schemars::JsonSchema;
use serde::Deserialize;

use super::checks::require_columns;
use super::{CapabilityParams, CommonParams, Group, LowerContext};
use crate::error::Problem;
use crate::plan::operator::{LineCleanOp, Operator};

/// Drops the lines whose geometry equals another line's, whichever way they run: two lines are
/// duplicates when their normalized geometries (`ST_Normalize`: each line in its canonical
/// direction, parts in order) are the same, vertex for vertex; with `tolerance` > 0, when they
/// are the same after rounding every coordinate to a grid of that size (GEOS's precision
/// reducer, `ST_ReducePrecision`, as `snap_to_grid` rounds; coordinates on either side of a
/// grid line may round apart). Of each group of duplicates one line is kept, with its
/// attributes: the first by `order_by` (each field ascending, NULLs last, text compared by
/// bytes), then by the geometry's WKB as stored, then by the other attributes in column order.
/// The kept line's geometry is not rounded. LineStrings and MultiLineStrings (a MultiLineString
/// equals only a MultiLineString of the same parts) are compared; NULL and empty geometries,
/// lines of length 0, lines that round to nothing and geometries other than lines are all kept
/// unchanged. Computed as SQL on both engines (and on the SQL engine in native and hybrid
/// modes).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct NetworkRemoveDuplicates {
    /// Grid size coordinates are rounded to before comparing, in the CRS's units (default 0:
    /// exact comparison).
    #[serde(default)]
    pub tolerance: f64,
    /// Fields deciding which duplicate is kept (the lowest values), before the geometry.
    #[serde(default)]
    pub order_by: Vec<String>,
    #[serde(flatten)]
    pub common: CommonParams,
}

impl CapabilityParams for NetworkRemoveDuplicates {
    const NAME: &'static str = "network_remove_duplicates";
    const GROUP: Group = Group::Topology;

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
        require_columns(ctx.input, &self.order_by, ctx.at("order_by"))?;
        Ok(vec![Operator::LineClean(LineCleanOp::RemoveDuplicates {
            tolerance: self.tolerance,
            order_by: self.order_by.clone(),
        })])
    }
}
