//! `work_crs`: a step computed in another CRS — the geometry transformed to it, the step run
//! there (its distances and areas in that CRS's units), and transformed back. GISPulse measures
//! this way (its `crs_meters`, EPSG:3857 by default); native steps measure true metres unless
//! a step asks for it.

use crate::error::Problem;
use crate::plan::operator::{GeoExpr, Operator};
use crate::schema::Schema;

use super::LowerContext;
use super::common::replace_geometry;

/// The CRS data of unknown CRS is taken to be in (as everywhere in the planner).
const ASSUMED_CRS: &str = "EPSG:4326";

/// `lower` run in `work_crs` when one is given (an `EPSG:<code>`), else as is.
pub fn within(
    work_crs: Option<&str>,
    ctx: &LowerContext<'_>,
    lower: impl FnOnce(&LowerContext<'_>) -> Result<Vec<Operator>, Vec<Problem>>,
) -> Result<Vec<Operator>, Vec<Problem>> {
    let Some(work_crs) = work_crs else {
        return lower(ctx);
    };
    let code = work_crs
        .strip_prefix("EPSG:")
        .or_else(|| work_crs.strip_prefix("epsg:"))
        .filter(|c| !c.is_empty() && c.len() <= 6 && c.bytes().all(|b| b.is_ascii_digit()));
    let Some(code) = code else {
        return Err(vec![Problem::new(
            ctx.at("work_crs"),
            format!("must be an EPSG code such as \"EPSG:3857\", got {work_crs:?}"),
        )]);
    };
    let work_crs = format!("EPSG:{code}");
    let input_crs = ctx.crs().unwrap_or(ASSUMED_CRS).to_owned();
    let mut schema: Schema = ctx.input.cloned().unwrap_or_default();
    schema.crs = Some(work_crs.clone());
    let inner = LowerContext {
        input: Some(&schema),
        ..*ctx
    };
    let mut operators = replace_geometry(GeoExpr::Transform {
        from: input_crs.clone(),
        to: work_crs.clone(),
    });
    operators.extend(lower(&inner)?);
    operators.extend(replace_geometry(GeoExpr::Transform {
        from: work_crs,
        to: input_crs,
    }));
    Ok(operators)
}
