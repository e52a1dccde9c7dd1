//! `change_detection`: polygons where two rasters of one place differ.

use schemars::JsonSchema;
use serde::Deserialize;

use super::raster_common::resolve;
use super::reproject::check_crs;
use super::{CapabilityParams, CommonParams, Group, LowerContext, Tier};
use crate::error::Problem;
use crate::plan::operator::{GeoExpr, MapOp, Operator, ValueExpr};
use crate::plan::ops::raster::ChangeDetectionOp;
use crate::schema::{FieldType, GEOM};

/// Polygons of the cells where |after − before| of `band` (float32, as numpy computes it) is
/// greater than `threshold`, cells holding either raster's nodata value left out: one polygon
/// per 4-connected region of changed cells (as rasterio's `features.shapes` draws them), with
/// `diff_mean`, the mean difference of its cells. The two rasters must share their grid (size
/// and transform): a mismatch is refused. In the rasters' CRS, or `output_crs`. The input
/// layer is not read. Runs on the native backend whatever the engine.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct ChangeDetection {
    /// The earlier raster dataset: its id or name (a GISPulse path is matched by its file name).
    #[schemars(length(min = 1))]
    pub raster_before: String,
    /// The later raster dataset, on the same grid.
    #[schemars(length(min = 1))]
    pub raster_after: String,
    /// The smallest absolute difference that is not a change (default 0).
    #[serde(default)]
    pub threshold: f64,
    /// The band, from 1 (default 1).
    #[serde(default = "first_band")]
    #[schemars(range(min = 1, max = 65535))]
    pub band: u32,
    /// The CRS of the polygons, `EPSG:<code>` (default: the rasters').
    #[serde(default)]
    pub output_crs: Option<String>,
    #[serde(flatten)]
    pub common: CommonParams,
}

fn first_band() -> u32 {
    1
}

impl CapabilityParams for ChangeDetection {
    const NAME: &'static str = "change_detection";
    const GROUP: Group = Group::RasterNetwork;
    const TIER: Tier = Tier::Pro;

    fn common(&self) -> &CommonParams {
        &self.common
    }

    fn lower(&self, ctx: &LowerContext<'_>) -> Result<Vec<Operator>, Vec<Problem>> {
        if !self.threshold.is_finite() {
            return Err(vec![Problem::new(ctx.at("threshold"), "must be a finite number")]);
        }
        let band = self.band as usize;
        let before = resolve(ctx, "raster_before", &self.raster_before, &[("band", band)])?;
        let after = resolve(ctx, "raster_after", &self.raster_after, &[("band", band)])?;
        let mut operators = vec![Operator::owned(ChangeDetectionOp {
            before: before.clone(),
            after,
            band,
            threshold: self.threshold,
        })];
        if let Some(to) = &self.output_crs {
            check_crs(to, ctx, "output_crs").map_err(|p| vec![p])?;
            let from = match (&before.crs, &before.path) {
                (Some(crs), _) => crs.clone(),
                // A preview: the raster is not resolved, its CRS not known yet.
                (None, None) => to.clone(),
                (None, Some(_)) => {
                    return Err(vec![Problem::new(
                        ctx.at("output_crs"),
                        format!(
                            "raster {} has a CRS without an EPSG code: its polygons cannot be reprojected by code",
                            before.name
                        ),
                    )]);
                }
            };
            operators.push(Operator::Map(MapOp {
                set: vec![(
                    GEOM.to_owned(),
                    ValueExpr::Geo(GeoExpr::Transform {
                        from,
                        to: to.clone(),
                    }),
                    FieldType::Geometry,
                )],
                ..MapOp::default()
            }));
        }
        Ok(operators)
    }
}
