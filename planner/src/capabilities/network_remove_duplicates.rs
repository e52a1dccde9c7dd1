//! `network_remove_duplicates`: lines equal to another line dropped.

use schemars::JsonSchema;
use serde::Deserialize;

use super::checks::require_columns;
use super::{CapabilityParams, CommonParams, Group, LowerContext};
use crate::error::Problem;
use crate::plan::operator::{DuplicateRule, LineCleanOp, Operator};

/// Which lines are equal and which is kept.
#[derive(Debug, Clone, Copy, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Sameness {
    /// Normalized geometries on a grid; the first by `order_by` kept (the default).
    #[default]
    Normalized,
    /// GISPulse's rule, in row order (see the capability).
    FirstInRowOrder,
}

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
///
/// With `rule: first_in_row_order` (GISPulse's rule, on the native backend): NULL and empty
/// geometries are dropped; the other rows are taken in order and each is dropped when it
/// equals a row kept before it: vertex for vertex within `tolerance` (GEOS `equals_exact`, any
/// geometry type, same direction), or, both being LineStrings, within a discrete Hausdorff
/// distance of `tolerance` (reversed lines, extra vertices on the same shape). Greedy: a row
/// is only compared with the rows kept. `order_by` does not apply.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct NetworkRemoveDuplicates {
    /// Grid size coordinates are rounded to before comparing, in the CRS's units (default 0:
    /// exact comparison).
    #[serde(default)]
    pub tolerance: f64,
    /// Fields deciding which duplicate is kept (the lowest values), before the geometry.
    #[serde(default)]
    pub order_by: Vec<String>,
    /// `normalized` (default) or `first_in_row_order`.
    #[serde(default)]
    pub rule: Sameness,
    /// Work in this projected CRS (`"EPSG:3857"`; `"auto"` or `"auto:angular"`: GISPulse v2's
    /// choice): the lines are transformed to it, compared there, and transformed back. Default:
    /// the data's CRS.
    #[serde(default)]
    pub work_crs: Option<String>,
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
        let rule = match self.rule {
            Sameness::Normalized => DuplicateRule::Normalized,
            Sameness::FirstInRowOrder => DuplicateRule::FirstInRowOrder,
        };
        if rule == DuplicateRule::FirstInRowOrder && !self.order_by.is_empty() {
            return Err(vec![Problem::new(
                ctx.at("order_by"),
                "rule first_in_row_order keeps the first row in input order: order_by does not apply",
            )]);
        }
        let op = LineCleanOp::RemoveDuplicates {
            tolerance: self.tolerance,
            order_by: self.order_by.clone(),
            rule,
        };
        super::work_crs::operator_within(self.work_crs.as_deref(), ctx, Operator::owned(op))
    }
}
