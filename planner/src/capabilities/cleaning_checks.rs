//! Checks the polygon-cleaning capabilities share: thresholds that must be finite and positive.

use super::LowerContext;
use crate::error::Problem;

/// A problem unless `value` is finite and above zero.
pub fn positive(value: f64, ctx: &LowerContext<'_>, param: &str) -> Result<(), Vec<Problem>> {
    if value.is_finite() && value > 0.0 {
        Ok(())
    } else {
        Err(vec![Problem::new(
            ctx.at(param),
            format!("must be a finite number above 0, not {value}"),
        )])
    }
}
