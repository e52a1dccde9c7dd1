//! `kde_heatmap`: the kernel density of a layer's points on a square grid.

use schemars::JsonSchema;
use serde::Deserialize;

use super::checks::{DistanceUnit, require_columns, resolve_distance};
use super::grid_create::lower_grid;
use super::{CapabilityParams, CommonParams, Group, LowerContext};
use crate::error::Problem;
use crate::plan::operator::{DensityKernel, GenerateOp, GridShape, Operator};

/// The kernel's shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum KernelParam {
    /// `3/π (1 − u²)²` inside the bandwidth (QGIS's heatmap default).
    #[default]
    Quartic,
    /// `1/(2π) e^(−u²/2)`, the bandwidth its standard deviation (cut at 8 bandwidths).
    Gaussian,
    /// `2/π (1 − u²)` inside the bandwidth.
    Epanechnikov,
}

/// A heatmap: the kernel density estimate of the points (centroids of other geometries) at
/// the centre of each cell of a square grid (`grid_create`'s cells, over the layer's extent
/// grown by the kernel's reach, or over `bbox`). `density` = Σ wᵢ K(dᵢ / h) / h², with h the
/// bandwidth, dᵢ the distance from the cell's centre to point i and wᵢ its `weight` (1
/// without a weight field; NULL weights count 0): points (or weight) per square unit of the
/// grid's coordinates (square metres on longitude/latitude with a metric unit, the CRS's unit
/// squared on projected data) — scikit-learn's `KernelDensity` value times the number of
/// points. On longitude/latitude the grid is laid in metres in a
/// local azimuthal equidistant frame around the extent's centre and distances are measured in
/// that frame. Cells of zero density are dropped unless `keep_empty`. Columns: `cell_id`, `i`,
/// `j`, `density`, `geom`. Runs on the native backend whatever the engine.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct KdeHeatmap {
    /// The kernel's radius (quartic, epanechnikov) or standard deviation (gaussian).
    pub bandwidth: f64,
    /// The side of a cell (default: a quarter of the bandwidth).
    #[serde(default)]
    pub cell_size: Option<f64>,
    /// Unit of `bandwidth` and `cell_size` (default metres).
    #[serde(default)]
    pub unit: DistanceUnit,
    /// The kernel (default `quartic`).
    #[serde(default)]
    pub kernel: KernelParam,
    /// A numeric field weighting each point.
    #[serde(default)]
    pub weight: Option<String>,
    /// The extent of the grid, `[xmin, ymin, xmax, ymax]` in the layer's CRS.
    #[serde(default)]
    pub bbox: Option<[f64; 4]>,
    /// Keep the cells whose density is 0.
    #[serde(default)]
    pub keep_empty: bool,
    #[serde(flatten)]
    pub common: CommonParams,
}

impl CapabilityParams for KdeHeatmap {
    const NAME: &'static str = "kde_heatmap";
    const GROUP: Group = Group::Statistics;

    fn common(&self) -> &CommonParams {
        &self.common
    }

    fn lower(&self, ctx: &LowerContext<'_>) -> Result<Vec<Operator>, Vec<Problem>> {
        if !(self.bandwidth.is_finite() && self.bandwidth > 0.0) {
            return Err(vec![Problem::new(
                ctx.at("bandwidth"),
                "must be a number above 0",
            )]);
        }
        if let Some(weight) = &self.weight {
            require_columns(ctx.input, std::slice::from_ref(weight), ctx.at("weight"))?;
        }
        let bandwidth = resolve_distance(self.bandwidth, self.unit, ctx, "bandwidth")?;
        let cell = self.cell_size.unwrap_or(self.bandwidth / 4.0);
        let grid = lower_grid(GridShape::Square, cell, self.unit, self.bbox, ctx, "cell_size")?;
        Ok(vec![Operator::Generate(GenerateOp::Density {
            grid,
            kernel: match self.kernel {
                KernelParam::Quartic => DensityKernel::Quartic,
                KernelParam::Gaussian => DensityKernel::Gaussian,
                KernelParam::Epanechnikov => DensityKernel::Epanechnikov,
            },
            bandwidth: bandwidth.value,
            weight: self.weight.clone(),
            keep_empty: self.keep_empty,
        })])
    }
}
