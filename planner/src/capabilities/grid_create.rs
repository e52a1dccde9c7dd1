//! `grid_create`: a layer of square cells over an extent; the lowering both grid
//! capabilities share.

use schemars::JsonSchema;
use serde::Deserialize;

use super::checks::{DistanceUnit, resolve_distance};
use super::{CapabilityParams, CommonParams, Group, LowerContext};
use crate::error::Problem;
use crate::plan::operator::{GenerateOp, GridAnchor, GridShape, GridSpec, Operator};

/// Where the cells lie.
#[derive(Debug, Clone, Copy, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum GridOrigin {
    /// At multiples of `size` (the default).
    #[default]
    Multiples,
    /// From the extent's lower-left corner (see the capability).
    Extent,
}

/// A grid of squares of side `size` over the input layer's extent (or `bbox`), the cells of
/// PostGIS's `ST_SquareGrid`: cell (i, j) spans `[i·size, (i+1)·size] × [j·size,
/// (j+1)·size]`, and every cell whose box meets the extent is made. With `touching`, only the
/// cells that intersect a feature are kept. Columns: `cell_id` (0, 1, … by column then row),
/// `i`, `j`, `geom`. `size` is in metres by default: on projected data converted to the CRS's
/// units; on longitude/latitude the grid is laid in metres in a local azimuthal equidistant
/// frame around the extent's centre and its vertices carried back to lon/lat; unit `crs` takes
/// the CRS's own units. Runs on the native backend whatever the engine.
///
/// With `origin: extent` (GISPulse's grid) the lattice starts at the extent's lower-left
/// corner `(x0, y0)`: along x as many cells as numpy's `arange(x0, xmax, size)` has values
/// (`ceil((xmax − x0) / size)`; none for an extent of no width), cell i from `x0 + i·d` (`d =
/// (x0 + size) − x0`, numpy's step) to that plus `size`; likewise along y. `i` and `j` count
/// from 0 at the corner. `work_crs` lays the grid in another projected CRS (the layer carried
/// there, the cells carried back).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct GridCreate {
    /// The side of a cell.
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
    /// `multiples` (default) or `extent`.
    #[serde(default)]
    pub origin: GridOrigin,
    /// Lay the grid in this projected CRS (`"EPSG:3857"`; `"auto"` or `"auto:angular"`:
    /// GISPulse v2's choice) and carry the cells back. Default: the data's CRS.
    #[serde(default)]
    pub work_crs: Option<String>,
    #[serde(flatten)]
    pub common: CommonParams,
}

/// The most cells a grid given by a bounding box may have when it is planned (a grid over a
/// layer's extent is checked when it is laid).
pub const MAX_CELLS: f64 = 10_000_000.0;

/// The grid of `shape` cells of `size` over `bbox` (or the layer's extent).
pub(super) fn lower_grid(
    shape: GridShape,
    size: f64,
    unit: DistanceUnit,
    bbox: Option<[f64; 4]>,
    ctx: &LowerContext<'_>,
    param: &str,
) -> Result<GridSpec, Vec<Problem>> {
    if !(size.is_finite() && size > 0.0) {
        return Err(vec![Problem::new(ctx.at(param), "must be a number above 0")]);
    }
    let resolved = resolve_distance(size, unit, ctx, param)?;
    if let Some(b) = bbox {
        if !(b.iter().all(|v| v.is_finite()) && b[0] < b[2] && b[1] < b[3]) {
            return Err(vec![Problem::new(
                ctx.at("bbox"),
                "must be [xmin, ymin, xmax, ymax] with xmin < xmax and ymin < ymax",
            )]);
        }
        let cells = ((b[2] - b[0]) / resolved.value + 2.0) * ((b[3] - b[1]) / resolved.value + 2.0);
        if !resolved.geodesic && cells > MAX_CELLS {
            return Err(vec![Problem::new(
                ctx.at(param),
                format!("makes about {cells:.0} cells over bbox (at most {MAX_CELLS:.0}): give a larger size"),
            )]);
        }
    }
    Ok(GridSpec {
        shape,
        size: resolved.value,
        geodesic: resolved.geodesic,
        bbox,
        anchor: GridAnchor::Multiples,
    })
}

/// The grid step of both grid capabilities: the grid `lay` plans (in the work CRS when one is
/// given, the cells carried back), with `touching`.
pub(super) fn grid_step(
    ctx: &LowerContext<'_>,
    work_crs: Option<&str>,
    touching: bool,
    lay: impl FnOnce(&LowerContext<'_>) -> Result<GridSpec, Vec<Problem>>,
) -> Result<Vec<Operator>, Vec<Problem>> {
    super::work_crs::within(work_crs, super::work_crs::Output::Geometry, ctx, |ctx| {
        Ok(vec![Operator::owned(GenerateOp::Grid {
            grid: lay(ctx)?,
            touching,
        })])
    })
}

impl CapabilityParams for GridCreate {
    const NAME: &'static str = "grid_create";
    const GROUP: Group = Group::Statistics;

    fn common(&self) -> &CommonParams {
        &self.common
    }

    fn lower(&self, ctx: &LowerContext<'_>) -> Result<Vec<Operator>, Vec<Problem>> {
        grid_step(ctx, self.work_crs.as_deref(), self.touching, |ctx| {
            let mut grid =
                lower_grid(GridShape::Square, self.size, self.unit, self.bbox, ctx, "size")?;
            if let GridOrigin::Extent = self.origin {
                grid.anchor = GridAnchor::Extent;
            }
            Ok(grid)
        })
    }
}
