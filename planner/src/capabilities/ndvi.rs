//! `ndvi`: the normalised difference vegetation index of a multi-band raster.

use schemars::JsonSchema;
use serde::Deserialize;

use super::raster_common::{resolve, target};
use super::{CapabilityParams, CommonParams, Group, LowerContext, Tier};
use crate::error::Problem;
use crate::plan::operator::Operator;
use crate::plan::ops::raster::{RasterTask, RasterWriteOp};

/// NDVI = (NIR − red) / (NIR + red) of a multi-band raster, computed in float32 as numpy does:
/// NaN where either band holds the raster's nodata value or the sum is 0. The result is a new
/// one-band float32 raster dataset named `output` (default: the step's id; nodata NaN), written
/// as a Cloud-Optimised GeoTIFF; the step answers one row: `output_path` and `raster` (that
/// name), `ndvi_min`, `ndvi_max` and `ndvi_mean` over the cells that are not NaN (NaN when
/// none is), and the raster's bounds as the geometry. The input layer is not read. Runs on the
/// native backend whatever the engine, block by block.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct Ndvi {
    /// The raster dataset: its id or its name (a path, as GISPulse's `raster_path`, is matched
    /// by its file name).
    #[schemars(length(min = 1))]
    pub raster: String,
    /// The name of the raster dataset written (a path, as GISPulse's `output_path`: its file
    /// name without the extension; default: the step's id).
    #[serde(default)]
    pub output: Option<String>,
    /// The red band, from 1 (default 3).
    #[serde(default = "red")]
    #[schemars(range(min = 1, max = 65535))]
    pub red_band: u32,
    /// The near-infrared band, from 1 (default 4).
    #[serde(default = "nir")]
    #[schemars(range(min = 1, max = 65535))]
    pub nir_band: u32,
    #[serde(flatten)]
    pub common: CommonParams,
}

fn red() -> u32 {
    3
}

fn nir() -> u32 {
    4
}

impl CapabilityParams for Ndvi {
    const NAME: &'static str = "ndvi";
    const GROUP: Group = Group::RasterNetwork;
    const TIER: Tier = Tier::Pro;

    fn common(&self) -> &CommonParams {
        &self.common
    }

    fn lower(&self, ctx: &LowerContext<'_>) -> Result<Vec<Operator>, Vec<Problem>> {
        let (red_band, nir_band) = (self.red_band as usize, self.nir_band as usize);
        let raster = resolve(
            ctx,
            "raster",
            &self.raster,
            &[("red_band", red_band), ("nir_band", nir_band)],
        )?;
        Ok(vec![Operator::owned(RasterWriteOp {
            task: RasterTask::Ndvi {
                raster,
                red_band,
                nir_band,
            },
            target: target(ctx, self.output.as_deref()),
        })])
    }
}
