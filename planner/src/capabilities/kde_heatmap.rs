//! `kde_heatmap`: the kernel density of a layer's points on a square grid.

use schemars::JsonSchema;
use serde::Deserialize;

use super::checks::{DistanceUnit, require_columns, resolve_distance};
use super::grid_create::lower_grid;
use super::{CapabilityParams, CommonParams, Group, LowerContext};
use crate::error::Problem;
use crate::plan::operator::{DensityKernel, GenerateOp, GridAnchor, GridShape, Operator};

/// Where the density is sampled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Sample {
    /// At the centre of each cell of the grid (the default).
    #[default]
    Cells,
    /// At the nodes of GISPulse's grid, as points (see the capability).
    Nodes,
}

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
    /// `1/π` inside the bandwidth (a disc).
    Tophat,
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
///
/// With `sample: nodes` (GISPulse's grid): the density at points, the nodes `(x_i, y_j)` of
/// numpy's `arange(min − h, max + h + cell_size, cell_size)` along each axis over the extent
/// of the geometries (not of their centroids), every node kept (`i`, `j` from 0 at the
/// lower-left one), and a gaussian kernel not cut (it is summed as far as it is not 0).
/// `normalize` divides by the points' total weight (their count without `weight`): scikit-
/// learn's `KernelDensity(bandwidth, kernel)` density, which integrates to 1. `work_crs`
/// estimates in another projected CRS and carries the result back.
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
    /// `cells` (default) or `nodes`.
    #[serde(default)]
    pub sample: Sample,
    /// Divide by the points' total weight.
    #[serde(default)]
    pub normalize: bool,
    /// Estimate in this projected CRS (`"EPSG:3857"`; `"auto"` or `"auto:angular"`: GISPulse
    /// v2's choice) and carry the result back. Default: the data's CRS.
    #[serde(default)]
    pub work_crs: Option<String>,
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
        super::work_crs::within(
            self.work_crs.as_deref(),
            super::work_crs::Output::Geometry,
            ctx,
            |ctx| self.density(ctx),
        )
    }
}

impl KdeHeatmap {
    fn density(&self, ctx: &LowerContext<'_>) -> Result<Vec<Operator>, Vec<Problem>> {
        let bandwidth = resolve_distance(self.bandwidth, self.unit, ctx, "bandwidth")?;
        let cell = self.cell_size.unwrap_or(self.bandwidth / 4.0);
        let mut grid = lower_grid(GridShape::Square, cell, self.unit, self.bbox, ctx, "cell_size")?;
        if self.sample == Sample::Nodes {
            if self.bbox.is_some() {
                return Err(vec![Problem::new(
                    ctx.at("bbox"),
                    "sample nodes lays its grid over the layer's extent: leave bbox out",
                )]);
            }
            grid.anchor = GridAnchor::PaddedNodes;
        }
        Ok(vec![Operator::owned(GenerateOp::Density {
            grid,
            kernel: match self.kernel {
                KernelParam::Quartic => DensityKernel::Quartic,
                KernelParam::Gaussian => DensityKernel::Gaussian,
                KernelParam::Epanechnikov => DensityKernel::Epanechnikov,
                KernelParam::Tophat => DensityKernel::Tophat,
            },
            bandwidth: bandwidth.value,
            weight: self.weight.clone(),
            keep_empty: self.keep_empty || self.sample == Sample::Nodes,
            normalize: self.normalize,
        })])
    }
}
