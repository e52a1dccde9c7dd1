//! `raster_clip`: a raster's cells under the input's polygons, written as a raster dataset.

use schemars::JsonSchema;
use serde::Deserialize;

use super::raster_common::{finite, resolve, target};
use super::{CapabilityParams, CommonParams, Group, LowerContext, Tier};
use crate::error::Problem;
use crate::plan::operator::Operator;
use crate::plan::ops::raster::{RasterTask, RasterWriteOp};

/// Clip a raster to the input's polygons, as rasterio's `mask` does: cells whose centre lies
/// inside a polygon (every cell a polygon touches with `all_touched`) keep their values, the
/// others become `nodata` (default: the raster's own, else 0); with `crop` (the default) the
/// result covers only the polygons' bounds. The polygons are reprojected to the raster's CRS
/// when theirs differs. The result is a new raster dataset named `output` (default: the step's
/// id), written as a Cloud-Optimised GeoTIFF; the step answers one row: `output_path` and
/// `raster` (that name) and the clipped raster's bounds as the geometry. Runs on the native
/// backend whatever the engine.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct RasterClip {
    /// The raster dataset: its id or its name (a path, as GISPulse's `raster_path`, is matched
    /// by its file name).
    #[schemars(length(min = 1))]
    pub raster: String,
    /// The name of the raster dataset written (a path, as GISPulse's `output_path`: its file
    /// name without the extension; default: the step's id).
    #[serde(default)]
    pub output: Option<String>,
    /// Every cell a polygon touches rather than those whose centre it contains.
    #[serde(default)]
    pub all_touched: bool,
    /// Cover only the polygons' bounds (default), or the whole raster.
    #[serde(default = "yes")]
    pub crop: bool,
    /// The value of the cells outside the polygons (default: the raster's nodata, else 0).
    #[serde(default)]
    pub nodata: Option<f64>,
    #[serde(flatten)]
    pub common: CommonParams,
}

fn yes() -> bool {
    true
}

impl CapabilityParams for RasterClip {
    const NAME: &'static str = "raster_clip";
    const GROUP: Group = Group::RasterNetwork;
    const TIER: Tier = Tier::Pro;

    fn common(&self) -> &CommonParams {
        &self.common
    }

    fn lower(&self, ctx: &LowerContext<'_>) -> Result<Vec<Operator>, Vec<Problem>> {
        finite(ctx, "nodata", self.nodata)?;
        let raster = resolve(ctx, "raster", &self.raster, &[])?;
        Ok(vec![Operator::owned(RasterWriteOp {
            task: RasterTask::Clip {
                raster,
                all_touched: self.all_touched,
                crop: self.crop,
                nodata: self.nodata,
            },
            target: target(ctx, self.output.as_deref()),
        })])
    }
}
