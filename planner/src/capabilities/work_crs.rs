//! `work_crs`: a step computed in another CRS — the geometry transformed to it, the step run
//! there (its distances and areas in that CRS's units), and transformed back. GISPulse measures
//! this way (its `crs_meters`, EPSG:3857 by default); native steps measure true metres unless
//! a step asks for it. `auto` is GISPulse v2's choice where geomill can make it: EPSG:3857 on
//! projected data (on lon/lat data GISPulse picks a UTM zone from the layer's extent, which is
//! refused for now); `auto:angular` is the same choice for steps that, on projected data, stay
//! in the data's CRS. `angular:EPSG:<code>` works in that CRS only when the data is in
//! longitude/latitude (GISPulse's graph tools reproject only such data).

use crate::error::Problem;
use crate::plan::operator::{GeoExpr, Operator, ValueExpr};
use crate::schema::{CrsUnits, Schema, crs_units};

use super::LowerContext;
use super::common::replace_geometry;

/// The CRS data of unknown CRS is taken to be in (as everywhere in the planner).
const ASSUMED_CRS: &str = "EPSG:4326";

/// What a step does to the geometry, which decides how it comes back from the work CRS.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Output {
    /// The step makes a new geometry: transformed back to the input's CRS.
    Geometry,
    /// The step only measures (its maps compute numbers of `geom`): they measure the
    /// transformed geometry, which is left as it was (a round trip would move vertices and wrap
    /// parts across the antimeridian).
    Measures,
}

/// [`within`] for a step of one operator that makes new geometry.
pub fn operator_within(
    work_crs: Option<&str>,
    ctx: &LowerContext<'_>,
    operator: Operator,
) -> Result<Vec<Operator>, Vec<Problem>> {
    within(work_crs, Output::Geometry, ctx, |_| Ok(vec![operator]))
}

/// [`within`] for a step that searches a second layer (nearest features, lines to locate
/// along): `lower` is also given the transform that brings the second layer's geometries into
/// the work CRS (`(from, to)`; none without a work CRS or when the two CRSs agree).
pub fn within_searching(
    work_crs: Option<&str>,
    ctx: &LowerContext<'_>,
    lower: impl FnOnce(
        &LowerContext<'_>,
        Option<(String, String)>,
    ) -> Result<Vec<Operator>, Vec<Problem>>,
) -> Result<Vec<Operator>, Vec<Problem>> {
    let reference_crs = ctx
        .others
        .first()
        .copied()
        .flatten()
        .and_then(|s| s.crs.clone());
    within(work_crs, Output::Geometry, ctx, |inner| {
        let transform = work_crs.and_then(|_| {
            let to = inner.crs()?.to_owned();
            let from = reference_crs.unwrap_or_else(|| ASSUMED_CRS.into());
            (from != to).then_some((from, to))
        });
        lower(inner, transform)
    })
}

/// `lower` run in `work_crs` when one is given (an `EPSG:<code>`), else as is.
pub fn within(
    work_crs: Option<&str>,
    output: Output,
    ctx: &LowerContext<'_>,
    lower: impl FnOnce(&LowerContext<'_>) -> Result<Vec<Operator>, Vec<Problem>>,
) -> Result<Vec<Operator>, Vec<Problem>> {
    let Some(mut work_crs) = work_crs else {
        return lower(ctx);
    };
    let angular = !matches!(ctx.crs().and_then(crs_units), Some(CrsUnits::Linear { .. }));
    if let Some(crs) = work_crs.strip_prefix("angular:") {
        if !angular {
            return lower(ctx);
        }
        work_crs = crs;
    }
    if work_crs == "auto:angular" && !angular {
        // GISPulse v2 steps whose own default is the data's CRS choose only for lon/lat data.
        return lower(ctx);
    }
    if work_crs == "auto:angular" || (work_crs == "auto" && angular) {
        return Err(vec![Problem::new(
            ctx.at("work_crs"),
            "auto on lon/lat data (GISPulse v2's UTM zone or Lambert-93 chosen from the layer's extent) is not supported yet: give the CRS (GISPulse: crs_meters)",
        )]);
    }
    if work_crs == "auto" {
        work_crs = "EPSG:3857";
    }
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
    if output == Output::Measures {
        // The measures taken of the transformed geometry; the geometry stays as it was.
        let mut operators = lower(&inner)?;
        for operator in &mut operators {
            if let Operator::Map(map) = operator {
                for (_, value, _) in &mut map.set {
                    if let ValueExpr::Geo(measure) = value {
                        *measure = GeoExpr::MeasuredIn {
                            measure: Box::new(measure.clone()),
                            from: input_crs.clone(),
                            to: work_crs.clone(),
                        };
                    }
                }
            }
        }
        return Ok(operators);
    }
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
