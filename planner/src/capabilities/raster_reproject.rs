//! `raster_reproject`: a raster warped to another CRS.

use schemars::JsonSchema;
use serde::Deserialize;

use super::raster_common::{resolve, target};
use super::reproject::check_crs;
use super::{CapabilityParams, CommonParams, Group, LowerContext, Tier};
use crate::error::Problem;
use crate::plan::operator::Operator;
use crate::plan::ops::raster::{RasterTask, RasterWriteOp, Resampling};

/// Warp a raster to `target_crs` as rasterio's `calculate_default_transform` and `reproject`
/// do: on the grid GDAL suggests for the raster's extent (the same number of cells across its
/// diagonal), every band, `resampling` one of nearest (default), bilinear, cubic, lanczos,
/// average, mode; cells no source cell reaches are nodata (the raster's value, else 0). The
/// result is a new raster dataset named `output` (default: the step's id), written as a
/// Cloud-Optimised GeoTIFF; the step answers one row: `output_path` and `raster` (that name),
/// `target_crs`, and the warped raster's bounds as the geometry. The input layer is not read.
/// Runs on the native backend whatever the engine.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct RasterReproject {
    /// The raster dataset: its id or its name (a path, as GISPulse's `raster_path`, is matched
    /// by its file name).
    #[schemars(length(min = 1))]
    pub raster: String,
    /// The name of the raster dataset written (a path, as GISPulse's `output_path`: its file
    /// name without the extension; default: the step's id).
    #[serde(default)]
    pub output: Option<String>,
    /// The CRS to warp to, `EPSG:<code>` (default EPSG:4326).
    #[serde(default = "wgs84")]
    pub target_crs: String,
    /// nearest, bilinear, cubic, lanczos, average or mode (default nearest).
    #[serde(default = "nearest")]
    #[schemars(regex(pattern = "^(nearest|bilinear|cubic|lanczos|average|mode)$"))]
    pub resampling: String,
    #[serde(flatten)]
    pub common: CommonParams,
}

fn wgs84() -> String {
    "EPSG:4326".into()
}

fn nearest() -> String {
    "nearest".into()
}

impl CapabilityParams for RasterReproject {
    const NAME: &'static str = "raster_reproject";
    const GROUP: Group = Group::RasterNetwork;
    const TIER: Tier = Tier::Pro;

    fn common(&self) -> &CommonParams {
        &self.common
    }

    fn lower(&self, ctx: &LowerContext<'_>) -> Result<Vec<Operator>, Vec<Problem>> {
        check_crs(&self.target_crs, ctx, "target_crs").map_err(|p| vec![p])?;
        let resampling = Resampling::parse(&self.resampling).ok_or_else(|| {
            vec![Problem::new(
                ctx.at("resampling"),
                format!(
                    "unknown resampling {:?} (nearest, bilinear, cubic, lanczos, average, mode)",
                    self.resampling
                ),
            )]
        })?;
        let raster = resolve(ctx, "raster", &self.raster, &[])?;
        Ok(vec![Operator::owned(RasterWriteOp {
            task: RasterTask::Reproject {
                raster,
                target_crs: self.target_crs.clone(),
                resampling,
            },
            target: target(ctx, self.output.as_deref()),
        })])
    }
}
