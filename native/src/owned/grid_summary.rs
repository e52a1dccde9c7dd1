//! The kernel of `GridSummary`: the points' minimum corner, then each point's cell (NumPy's
//! floor division) found in parallel over a window of points and its height added, window by
//! window, in point order, so every cell's statistics are pandas' to the bit; one row per
//! occupied cell, sorted by row then column. The points are a layer's, or a LAS/LAZ file's read
//! as they stream ([`run_on_cloud`]).

use std::collections::HashMap;
use std::sync::Arc;

use arrow::array::{Array, ArrayRef, BinaryBuilder, Float64Array, Int64Array, RecordBatch};
use arrow::compute::cast;
use arrow::datatypes::{DataType, Field, Schema};
use geomill_geometry::wkb::write_ring_polygon;
use geomill_planner::plan::ops::pointcloud::{COL, ClassFilter, GridSummaryOp, HeightStat, ROW};
use rayon::prelude::*;

use crate::NativeError;
use crate::height_stats::{PointZ, Running, batch_points, needs_values, statistics};
use crate::layer::Layer;
use crate::pointcloud_scan::{RawXyz, scan};

const WHAT: &str = "pointcloud_grid_summary";

/// NumPy's `a // b` (`npy_divmod`): `fmod`, the quotient of what remains, rounded as NumPy
/// rounds it; not `floor(a / b)`, which differs where `a / b` rounds up to a whole number.
pub fn numpy_floor_divide(a: f64, b: f64) -> f64 {
    let remainder = a % b;
    let mut div = (a - remainder) / b;
    if remainder != 0.0 && ((b < 0.0) != (remainder < 0.0)) {
        div -= 1.0;
    }
    if div == 0.0 {
        return 0.0f64.copysign(a / b);
    }
    let floor = div.floor();
    if div - floor > 0.5 { floor + 1.0 } else { floor }
}

/// A cell index as an integer, refused past 2^53 (a cell size far too small for the extent).
#[allow(clippy::cast_possible_truncation)]
fn cell_index(offset: f64, size: f64) -> Result<i64, NativeError> {
    let index = numpy_floor_divide(offset, size);
    if index.is_finite() && index.abs() < 9.007_199_254_740_992e15 {
        Ok(index as i64)
    } else {
        Err(NativeError::Input(format!(
            "{WHAT}: a cell size of {size} makes more cells than can be numbered across the points' extent"
        )))
    }
}

/// A cell's (row, column).
type CellKey = (i64, i64);

/// The lowest and highest x and y of some points.
#[derive(Debug, Clone, Copy)]
struct Extent {
    low: (f64, f64),
    high: (f64, f64),
}

impl Extent {
    fn of((x, y): (f64, f64)) -> Self {
        Self {
            low: (x, y),
            high: (x, y),
        }
    }

    fn merge(a: Option<Self>, b: Option<Self>) -> Option<Self> {
        match (a, b) {
            (Some(a), Some(b)) => Some(Self {
                low: (a.low.0.min(b.low.0), a.low.1.min(b.low.1)),
                high: (a.high.0.max(b.high.0), a.high.1.max(b.high.1)),
            }),
            (a, b) => a.or(b),
        }
    }

    fn with(self, point: (f64, f64)) -> Self {
        Self::merge(Some(self), Some(Self::of(point))).unwrap_or(self)
    }

    /// The cell of `(x, y)` on the grid anchored at the lowest corner.
    fn cell(&self, (x, y): (f64, f64), size: f64) -> Result<CellKey, NativeError> {
        Ok((cell_index(y - self.low.1, size)?, cell_index(x - self.low.0, size)?))
    }
}

/// The most slots a dense cell table has (128 MB of slot numbers); a grid over more cells
/// than this, or more than eight for each point, is a hash map of its occupied cells.
const DENSE_SLOTS: i64 = 1 << 25;

/// Where each occupied cell's number is: a slot per cell of the extent, row by row (0: empty),
/// or a map of the occupied cells only.
enum Slots {
    Dense { cols: i64, slots: Vec<u32> },
    Sparse(HashMap<CellKey, u32>),
}

/// The occupied cells, in the order first met, with their heights' running statistics and, for
/// quantiles, the heights themselves in point order.
struct Cells {
    slots: Slots,
    keys: Vec<CellKey>,
    running: Vec<Running>,
    heights: Option<Vec<Vec<f64>>>,
}

impl Cells {
    fn new(extent: &Extent, size: f64, points: usize, keep_heights: bool) -> Result<Self, NativeError> {
        let (rows, cols) = extent.cell(extent.high, size)?;
        let slots = (rows + 1).checked_mul(cols + 1).filter(|n| {
            *n <= DENSE_SLOTS
                && *n <= i64::try_from(points).unwrap_or(i64::MAX).saturating_mul(8).max(1 << 20)
                && u32::try_from(points).is_ok()
        });
        let slots = match slots.and_then(|n| usize::try_from(n).ok()) {
            Some(n) => Slots::Dense {
                cols: cols + 1,
                slots: vec![0; n],
            },
            None => Slots::Sparse(HashMap::new()),
        };
        Ok(Self {
            slots,
            keys: Vec::new(),
            running: Vec::new(),
            heights: keep_heights.then(Vec::new),
        })
    }

    /// The number of the cell `key` (made when first met).
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    fn number(&mut self, key: CellKey) -> usize {
        let next = u32::try_from(self.keys.len() + 1).unwrap_or(u32::MAX);
        let slot = match &mut self.slots {
            Slots::Dense { cols, slots } => &mut slots[(key.0 * *cols + key.1) as usize],
            Slots::Sparse(map) => map.entry(key).or_insert(0),
        };
        if *slot == 0 {
            *slot = next;
            self.keys.push(key);
            self.running.push(Running::default());
            if let Some(heights) = &mut self.heights {
                heights.push(Vec::new());
            }
        }
        *slot as usize - 1
    }

    /// Adds a point's height (`None`: a point without one, which still occupies its cell).
    fn add(&mut self, key: CellKey, z: Option<f64>) {
        let number = self.number(key);
        if let Some(z) = z {
            self.running[number].add(z);
            if let Some(heights) = &mut self.heights {
                heights[number].push(z);
            }
        }
    }

    /// The cells sorted by row then column, each with the statistics `stats` of its heights.
    fn finish(self, stats: &[HeightStat]) -> (Vec<CellKey>, Vec<Vec<Option<f64>>>) {
        let order: Vec<usize> = match &self.slots {
            Slots::Dense { slots, .. } => slots
                .iter()
                .filter(|s| **s != 0)
                .map(|s| *s as usize - 1)
                .collect(),
            Slots::Sparse(_) => {
                let mut order: Vec<usize> = (0..self.keys.len()).collect();
                order.sort_unstable_by_key(|n| self.keys[*n]);
                order
            }
        };
        let Self {
            keys,
            running,
            heights,
            ..
        } = self;
        let heights = heights.unwrap_or_default();
        let values = order
            .par_iter()
            .map(|n| match heights.get(*n) {
                Some(h) => statistics(&mut h.clone(), stats),
                None => stats.iter().map(|s| running[*n].get(*s)).collect(),
            })
            .collect();
        (order.iter().map(|n| keys[*n]).collect(), values)
    }
}

/// The points of one batch that pass the class filter, in order (NULL and empty geometries
/// skipped).
fn passing(
    batch: &RecordBatch,
    geom: usize,
    class: Option<(usize, &ClassFilter)>,
) -> Result<Vec<PointZ>, NativeError> {
    let points = batch_points(batch, geom, WHAT)?;
    let Some((column, classes)) = class else {
        return Ok(points.into_iter().flatten().collect());
    };
    let codes = cast(batch.column(column), &DataType::Int64).map_err(NativeError::arrow)?;
    let codes = codes
        .as_any()
        .downcast_ref::<Int64Array>()
        .ok_or_else(|| NativeError::Input(format!("{WHAT}: the class column is not whole numbers")))?;
    Ok(points
        .into_iter()
        .enumerate()
        .filter(|(i, _)| classes.passes(codes.is_valid(*i).then(|| codes.value(*i))))
        .filter_map(|(_, p)| p)
        .collect())
}

pub fn run(op: &GridSummaryOp, inputs: &[&Layer]) -> Result<Layer, NativeError> {
    let points = super::first(op, inputs)?;
    let geom = points.geometry_index()?;
    let class = match &op.classes {
        Some(classes) => Some((points.column_index(&classes.column)?, classes)),
        None => None,
    };
    let extent = points
        .batches
        .par_iter()
        .map(|batch| {
            Ok(passing(batch, geom, class)?
                .into_iter()
                .fold(None, |e: Option<Extent>, (x, y, _)| {
                    Some(e.map_or(Extent::of((x, y)), |e| e.with((x, y))))
                }))
        })
        .try_reduce(|| None, |a, b| Ok(Extent::merge(a, b)))?;
    let Some(extent) = extent else {
        return grid_layer(op, &points.geometry, points.crs.clone(), &[], &[], (0.0, 0.0));
    };
    let size = op.cell_size;
    let mut cells = Cells::new(&extent, size, points.num_rows(), needs_values(&op.stats))?;
    let window = rayon::current_num_threads().max(1) * 2;
    for batches in points.batches.chunks(window) {
        let keyed: Vec<Vec<(CellKey, Option<f64>)>> = batches
            .par_iter()
            .map(|batch| {
                passing(batch, geom, class)?
                    .into_iter()
                    .map(|(x, y, z)| Ok((extent.cell((x, y), size)?, z)))
                    .collect::<Result<Vec<_>, NativeError>>()
            })
            .collect::<Result<_, _>>()?;
        for (key, z) in keyed.into_iter().flatten() {
            cells.add(key, z);
        }
    }
    let (keys, values) = cells.finish(&op.stats);
    grid_layer(op, &points.geometry, points.crs.clone(), &keys, &values, extent.low)
}

/// Points decompressed into cells at a time, their cells found in parallel.
const WINDOW: usize = 1 << 20;

/// The grid of the points of a LAS/LAZ file, read as they stream (only coordinates and class,
/// the class filter applied as they come, 12 bytes held per point that passes), as a layer with
/// geometry column `geometry` in `crs`.
pub fn run_on_cloud(
    op: &GridSummaryOp,
    path: &std::path::Path,
    geometry: &str,
    crs: Option<String>,
) -> Result<Layer, NativeError> {
    let scanned = scan(path, op.classes.as_ref()).map_err(|e| NativeError::Input(e.to_string()))?;
    let transforms = scanned.transforms;
    let xy = |p: &RawXyz| {
        let (x, y, _) = transforms.apply(*p);
        (x, y)
    };
    let extent = scanned
        .points
        .par_chunks(WINDOW)
        .map(|chunk| chunk.iter().map(xy).map(Extent::of).reduce(|a, b| Extent::merge(Some(a), Some(b)).unwrap_or(a)))
        .reduce(|| None, Extent::merge);
    let Some(extent) = extent else {
        return grid_layer(op, geometry, crs, &[], &[], (0.0, 0.0));
    };
    let size = op.cell_size;
    let mut cells = Cells::new(&extent, size, scanned.points.len(), needs_values(&op.stats))?;
    for window in scanned.points.chunks(WINDOW) {
        let keyed: Vec<(CellKey, f64)> = window
            .par_iter()
            .map(|p| {
                let (x, y, z) = transforms.apply(*p);
                Ok((extent.cell((x, y), size)?, z))
            })
            .collect::<Result<_, NativeError>>()?;
        for (key, z) in keyed {
            cells.add(key, Some(z));
        }
    }
    drop(scanned);
    let (keys, values) = cells.finish(&op.stats);
    grid_layer(op, geometry, crs, &keys, &values, extent.low)
}

/// The cells as a layer: row, col, the statistics, the cell's square (counter-clockwise from its
/// lower-left corner).
#[allow(clippy::cast_precision_loss, clippy::cast_possible_truncation)]
fn grid_layer(
    op: &GridSummaryOp,
    geometry: &str,
    crs: Option<String>,
    occupied: &[CellKey],
    values: &[Vec<Option<f64>>],
    (x0, y0): (f64, f64),
) -> Result<Layer, NativeError> {
    let size = op.cell_size;
    let mut fields = vec![
        Field::new(ROW, DataType::Int64, true),
        Field::new(COL, DataType::Int64, true),
    ];
    let mut arrays: Vec<ArrayRef> = vec![
        Arc::new(occupied.iter().map(|(row, _)| Some(*row)).collect::<Int64Array>()),
        Arc::new(occupied.iter().map(|(_, col)| Some(*col)).collect::<Int64Array>()),
    ];
    for (s, stat) in op.stats.iter().enumerate() {
        let name = GridSummaryOp::stat_column(*stat);
        let cells = values.iter().map(|row| row[s]);
        if *stat == HeightStat::Count {
            fields.push(Field::new(name, DataType::Int64, true));
            let counts: Int64Array = cells.map(|v| v.map(|v| v as i64)).collect();
            arrays.push(Arc::new(counts));
        } else {
            fields.push(Field::new(name, DataType::Float64, true));
            arrays.push(Arc::new(cells.collect::<Float64Array>()));
        }
    }
    let mut squares = BinaryBuilder::with_capacity(occupied.len(), occupied.len() * 93);
    let mut wkb = Vec::with_capacity(93);
    for (row, col) in occupied {
        let (left, bottom) = (x0 + *col as f64 * size, y0 + *row as f64 * size);
        let (right, top) = (left + size, bottom + size);
        wkb.clear();
        write_ring_polygon(
            &[[left, bottom], [right, bottom], [right, top], [left, top], [left, bottom]],
            &mut wkb,
        );
        squares.append_value(&wkb);
    }
    fields.push(Field::new(geometry, DataType::Binary, true));
    arrays.push(Arc::new(squares.finish()));
    let schema = Arc::new(Schema::new(fields));
    let batch = RecordBatch::try_new(schema.clone(), arrays).map_err(NativeError::arrow)?;
    Layer::new(schema, vec![batch], geometry, crs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floor_division_is_numpys() {
        assert_eq!(numpy_floor_divide(1.0, 0.1), 9.0);
        assert_eq!((1.0f64 / 0.1).floor(), 10.0);
        assert_eq!(numpy_floor_divide(7.5, 2.5), 3.0);
        assert_eq!(numpy_floor_divide(7.49, 2.5), 2.0);
        assert_eq!(numpy_floor_divide(0.0, 2.0), 0.0);
        assert!(cell_index(1e300, 1e-9).is_err());
    }
}
