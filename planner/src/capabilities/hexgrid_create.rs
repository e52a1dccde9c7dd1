//! `hexgrid_create`: a layer of hexagonal cells over an extent.

use schemars::JsonSchema;
use serde::Deserialize;

use super::checks::DistanceUnit;
use super::grid_create::{grid_step, lower_grid};
use super::{CapabilityParams, CommonParams, Group, LowerContext};
use crate::error::Problem;
use crate::plan::operator::{GridAnchor, GridShape, Operator};

/// How the hexagons are laid out.
#[derive(Debug, Clone, Copy, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum HexLayout {
    /// PostGIS's tessellation (the default).
    #[default]
    Tessellation,
    /// GISPulse's rows (see the capability): hexagons that overlap.
    OffsetRows,
}

/// A grid of flat-topped hexagons of edge `size` over the input layer's extent (or `bbox`),
/// the cells of PostGIS's `ST_HexagonGrid`: cell (i, j) is centred at `(1.5·i·size,
/// h·(2j + |i mod 2|))` with `h = size·√3/2`, and every cell whose box meets the extent is
/// made. With `touching`, only the cells that intersect a feature are kept. Columns: `cell_id`,
/// `i`, `j`, `geom`. Units as `grid_create`'s. Runs on the native backend whatever the engine.
///
/// With `layout: offset_rows`, GISPulse's hexagons, which do not tile: from the extent's
/// lower-left corner `(x0, y0)`, with `h = √3·size`, row `j` starts at `y = y0 + j·h` (summed
/// row by row) while `y < ymax + h`; its hexagons start at `x = x0` (`x0 + 0.75·size` on odd
/// rows) and step `1.5·size` (summed) while `x < xmax + 1.5·size`; hexagon `i` of the row is
/// centred at `(x + size, y + h/2)` (`y + h` on odd rows), its six vertices at angles `k·π/3`
/// from the east, counter-clockwise. Neighbours in a row overlap. `work_crs` lays the grid in
/// another projected CRS and carries the cells back.
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
    /// `tessellation` (default) or `offset_rows`.
    #[serde(default)]
    pub layout: HexLayout,
    /// Lay the grid in this projected CRS (`"EPSG:3857"`; `"auto"` or `"auto:angular"`:
    /// GISPulse v2's choice) and carry the cells back. Default: the data's CRS.
    #[serde(default)]
    pub work_crs: Option<String>,
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
        grid_step(ctx, self.work_crs.as_deref(), self.touching, |ctx| {
            let mut grid =
                lower_grid(GridShape::Hexagon, self.size, self.unit, self.bbox, ctx, "size")?;
            if let HexLayout::OffsetRows = self.layout {
                grid.anchor = GridAnchor::OffsetRows;
            }
            Ok(grid)
        })
    }
}
