//! `hexgrid_create`: a layer of hexagonal cells over an extent.

use schemars::JsonSchema;
use serde::Deserialize;

use super::checks::DistanceUnit;
use super::grid_create::lower_grid;
use super::{CapabilityParams, CommonParams, Group, LowerContext};
use crate::error::Problem;
use crate::plan::operator::{GenerateOp, GridShape, Operator};

/// A grid of flat-topped hexagons of edge `size` over the input layer's extent (or `bbox`),
/// the cells of PostGIS's `ST_HexagonGrid`: cell (i, j) is centred at `(1.5·i·size,
/// h·(2j + |i mod 2|))` with `h = size·√3/2`, and every cell whose box meets the extent is
/// made. With `touching`, only the cells that intersect a feature are kept. Columns: `cell_id`,
/// `i`, `j`, `geom`. Units as `grid_create`'s. Runs on the native backend whatever the engine.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct HexgridCreate {
    /// The edge of a hexagon (its circumradius).
    pub size: f64,
    /// Unit of `size` (default metres).
    #[serde(default)]
    pub unit: DistanceUnit,
    /// The extent to cover, `[xmin, ymin, xmax, ymax]` in the layer's CRS (default: the
    /// layer's extent).
    #[serde(default)]
    pub bbox: Option<[f64; 4]>,
    /// Keep only the cells that intersect a feature of the layer.
    #[serde(default)]
    pub touching: bool,
    #[serde(flatten)]
    pub common: CommonParams,
}

impl CapabilityParams for HexgridCreate {
    const NAME: &'static str = "hexgrid_create";
    const GROUP: Group = Group::Statistics;

    fn common(&self) -> &CommonParams {
        &self.common
    }

    fn lower(&self, ctx: &LowerContext<'_>) -> Result<Vec<Operator>, Vec<Problem>> {
        let grid = lower_grid(GridShape::Hexagon, self.size, self.unit, self.bbox, ctx, "size")?;
        Ok(vec![Operator::Generate(GenerateOp::Grid {
            grid,
            touching: self.touching,
        })])
    }
}
