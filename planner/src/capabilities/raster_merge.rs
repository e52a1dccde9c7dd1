//! `raster_merge`: rasters combined on one grid covering them all.

use schemars::JsonSchema;
use serde::Deserialize;

use super::raster_common::{finite, resolve, target};
use super::{CapabilityParams, CommonParams, Group, LowerContext, Tier};
use crate::error::Problem;
use crate::plan::operator::Operator;
use crate::plan::ops::raster::{MergeMethod, RasterTask, RasterWriteOp};

/// Merge rasters as rasterio's `merge` does: on the grid of the first raster's cell size over
/// the union of their bounds, each cell combined by `method` from the rasters holding data
/// there: first (default: the first of them, in the order given), last, min, max, sum, count
/// (how many); cells none covers are nodata (`nodata`, else the first raster's, else 0). The
/// rasters share a CRS and their band count. The result is a new raster dataset named `output`
/// (default: the step's id), written as a Cloud-Optimised GeoTIFF; the step answers one row:
/// `output_path` and `raster` (that name), `n_sources`, and the merged raster's bounds as the
/// geometry. The input layer is not read. Runs on the native backend whatever the engine.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct RasterMerge {
    /// The raster datasets in order, by id or name (paths, as GISPulse's `raster_paths`, are
    /// matched by their file names); at least two, at most 64.
    #[schemars(length(min = 2, max = 64))]
    pub rasters: Vec<String>,
    /// The name of the raster dataset written (a path, as GISPulse's `output_path`: its file
    /// name without the extension; default: the step's id).
    #[serde(default)]
    pub output: Option<String>,
    /// first, last, min, max, sum or count (default first).
    #[serde(default = "first")]
    #[schemars(regex(pattern = "^(first|last|min|max|sum|count)$"))]
    pub method: String,
    /// The value of cells no raster covers (default: the first raster's nodata, else 0).
    #[serde(default)]
    pub nodata: Option<f64>,
    #[serde(flatten)]
    pub common: CommonParams,
}

fn first() -> String {
    "first".into()
}

impl CapabilityParams for RasterMerge {
    const NAME: &'static str = "raster_merge";
    const GROUP: Group = Group::RasterNetwork;
    const TIER: Tier = Tier::Pro;

    fn common(&self) -> &CommonParams {
        &self.common
    }

    fn lower(&self, ctx: &LowerContext<'_>) -> Result<Vec<Operator>, Vec<Problem>> {
        finite(ctx, "nodata", self.nodata)?;
        if !(2..=64).contains(&self.rasters.len()) {
            return Err(vec![Problem::new(
                ctx.at("rasters"),
                format!(
                    "a merge takes from 2 to 64 rasters, got {}",
                    self.rasters.len()
                ),
            )]);
        }
        let method = MergeMethod::parse(&self.method).ok_or_else(|| {
            vec![Problem::new(
                ctx.at("method"),
                format!(
                    "unknown merge method {:?} (first, last, min, max, sum, count)",
                    self.method
                ),
            )]
        })?;
        let mut rasters = Vec::with_capacity(self.rasters.len());
        let mut problems = Vec::new();
        for (i, named) in self.rasters.iter().enumerate() {
            match resolve(ctx, &format!("rasters[{i}]"), named, &[]) {
                Ok(raster) => rasters.push(raster),
                Err(found) => problems.extend(found),
            }
        }
        if !problems.is_empty() {
            return Err(problems);
        }
        Ok(vec![Operator::owned(RasterWriteOp {
            task: RasterTask::Merge {
                rasters,
                method,
                nodata: self.nodata,
            },
            target: target(ctx, self.output.as_deref()),
        })])
    }
}
