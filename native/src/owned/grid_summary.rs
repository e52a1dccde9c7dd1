//! The kernel of `GridSummary`: the points' minimum corner, then each point's cell (NumPy's
//! floor division) found in parallel over a window of points and its height added, window by
//! window, by the band of rows holding the cell (bands filled in parallel, each small enough for
//! a core's cache), every cell's heights in point order, so its statistics are pandas' to the
//! bit; one row per occupied cell, sorted by row then column. The points are a layer's, or a
//! LAS/LAZ file's read as they stream ([`run_on_cloud`]).

use std::collections::HashMap;
use std::sync::Arc;

use arrow::array::{Array, ArrayRef, BinaryBuilder, Float64Array, Int64Array, RecordBatch};
use arrow::compute::cast;
use arrow::datatypes::{DataType, Field, Schema};
use geomill_geometry::wkb::write_ring_polygon;
use geomill_planner::plan::ops::pointcloud::{COL, ClassFilter, GridSummaryOp, HeightStat, ROW};
use rayon::prelude::*;

use crate::NativeError;
use crate::height_stats::{PointZ, RunningGroups, batch_points, needs_values, statistics};
use crate::layer::Layer;
use crate::pointcloud_scan::scan;

const WHAT: &str = "pointcloud_grid_summary";

/// NumPy's `a // b` (`npy_divmod`): `fmod`, the quotient of what remains, rounded as NumPy
/// rounds it; not `floor(a / b)`, which differs where `a / b` rounds up to a whole number.
#[inline(always)]
pub fn numpy_floor_divide(a: f64, b: f64) -> f64 {
    // `a / b` not a whole number: its floor is the exact quotient's, which NumPy gives too (a
    // whole number between the exact quotient and its rounding would be the rounding).
    let quotient = a / b;
    if a >= 0.0 && b > 0.0 && quotient.is_finite() && quotient.fract() != 0.0 {
        return quotient.floor();
    }
    npy_divmod_quotient(a, b)
}

/// NumPy's `npy_divmod` quotient, step by step.
fn npy_divmod_quotient(a: f64, b: f64) -> f64 {
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
#[inline(always)]
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

/// A point's cell and height.
type Keyed = (CellKey, Option<f64>);

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

    /// The cell of `(x, y)` on the grid anchored at the lowest corner.
    fn cell(&self, (x, y): (f64, f64), size: f64) -> Result<CellKey, NativeError> {
        Ok((cell_index(y - self.low.1, size)?, cell_index(x - self.low.0, size)?))
    }
}

/// The most cells a grid holds whole (about 210 MB for a mean and a count); a grid over more
/// cells than this, or more than four for each point, holds its occupied cells in a map.
const DENSE_CELLS: i64 = 1 << 23;

/// How a band's cells are numbered: by their place in the band's rows (every cell of them has
/// its statistics, and a flag says which are occupied), or in the order first met (a map of
/// the occupied cells only, for a grid too large to hold whole).
enum Slots {
    Dense { cols: i64, occupied: Vec<bool> },
    Sparse {
        numbers: HashMap<CellKey, usize>,
        keys: Vec<CellKey>,
    },
}

/// The cells of a band of rows with their heights' running statistics and, for quantiles, the
/// heights themselves in point order.
struct Band {
    first_row: i64,
    slots: Slots,
    running: RunningGroups,
    heights: Option<Vec<Vec<f64>>>,
}

impl Band {
    /// A band of `rows` rows of `cols` cells from `first_row`, all held.
    fn dense(first_row: i64, rows: i64, cols: i64, stats: &[HeightStat]) -> Self {
        let cells = usize::try_from(rows * cols).unwrap_or(0);
        let mut running = RunningGroups::new(stats);
        running.extend(cells);
        Self {
            first_row,
            slots: Slots::Dense {
                cols,
                occupied: vec![false; cells],
            },
            running,
            heights: needs_values(stats).then(|| vec![Vec::new(); cells]),
        }
    }

    /// The occupied cells of every row, in a map.
    fn sparse(stats: &[HeightStat]) -> Self {
        Self {
            first_row: 0,
            slots: Slots::Sparse {
                numbers: HashMap::new(),
                keys: Vec::new(),
            },
            running: RunningGroups::new(stats),
            heights: needs_values(stats).then(Vec::new),
        }
    }

    /// The number of the cell `key`, occupied from now on.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    #[inline(always)]
    fn number(&mut self, key: CellKey) -> usize {
        match &mut self.slots {
            Slots::Dense { cols, occupied } => {
                let number = ((key.0 - self.first_row) * *cols + key.1) as usize;
                occupied[number] = true;
                number
            }
            Slots::Sparse { numbers, keys } => *numbers.entry(key).or_insert_with(|| {
                keys.push(key);
                self.running.extend(1);
                if let Some(heights) = &mut self.heights {
                    heights.push(Vec::new());
                }
                keys.len() - 1
            }),
        }
    }

    /// Adds a point's height (`None`: a point without one, which still occupies its cell).
    #[inline(always)]
    fn add(&mut self, key: CellKey, z: Option<f64>) {
        let number = self.number(key);
        if let Some(z) = z {
            self.running.add(number, z);
            if let Some(heights) = &mut self.heights {
                heights[number].push(z);
            }
        }
    }

    /// The band's occupied cells sorted by row then column, each with the statistics `stats`.
    #[allow(clippy::cast_possible_wrap)]
    fn finish(self, stats: &[HeightStat]) -> Finished {
        let (order, keys): (Vec<usize>, Vec<CellKey>) = match &self.slots {
            Slots::Dense { cols, occupied } => occupied
                .iter()
                .enumerate()
                .filter(|(_, o)| **o)
                .map(|(n, _)| {
                    let n_signed = n as i64;
                    (n, (self.first_row + n_signed / cols, n_signed % cols))
                })
                .unzip(),
            Slots::Sparse { keys, .. } => {
                let mut order: Vec<usize> = (0..keys.len()).collect();
                order.sort_unstable_by_key(|n| keys[*n]);
                let sorted = order.iter().map(|n| keys[*n]).collect();
                (order, sorted)
            }
        };
        let running = &self.running;
        let columns = match &self.heights {
            Some(heights) => {
                let cells: Vec<Vec<Option<f64>>> = order
                    .par_iter()
                    .map(|n| statistics(&mut heights[*n].clone(), stats))
                    .collect();
                (0..stats.len())
                    .map(|s| cells.iter().map(|cell| cell[s]).collect())
                    .collect()
            }
            None => stats
                .iter()
                .map(|stat| order.iter().map(|n| running.get(*n, *stat)).collect())
                .collect(),
        };
        Finished { keys, columns }
    }
}

/// The occupied cells sorted by row then column, and a column of values for each statistic.
#[derive(Default)]
struct Finished {
    keys: Vec<CellKey>,
    columns: Vec<Vec<Option<f64>>>,
}

/// The occupied cells of the grid: over a small enough extent, dense bands of rows, each small
/// enough to stay in a core's cache, filled in parallel (each point added by the band holding
/// its row, every cell's points in point order); otherwise one map.
struct Cells {
    bands: Vec<Band>,
    /// Rows per band (the last may hold fewer).
    band_rows: i64,
}

/// About how many bytes of slots and statistics a band holds: a core's cache.
const BAND_BYTES: i64 = 1 << 20;

impl Cells {
    fn new(
        extent: &Extent,
        size: f64,
        points: usize,
        stats: &[HeightStat],
    ) -> Result<Self, NativeError> {
        let (last_row, last_col) = extent.cell(extent.high, size)?;
        let (rows, cols) = (last_row + 1, last_col + 1);
        let dense = rows.checked_mul(cols).is_some_and(|n| {
            n <= DENSE_CELLS
                && n <= i64::try_from(points)
                    .unwrap_or(i64::MAX)
                    .saturating_mul(4)
                    .max(1 << 16)
                && u32::try_from(points).is_ok()
        });
        if !dense {
            return Ok(Self {
                bands: vec![Band::sparse(stats)],
                band_rows: i64::MAX,
            });
        }
        // A cell's flag and statistics: about 25 bytes for a mean and a count.
        let band_rows = (BAND_BYTES / (cols * 25)).clamp(1, rows);
        let bands: Vec<Band> = (0..rows)
            .step_by(usize::try_from(band_rows).unwrap_or(1))
            .map(|first| Band::dense(first, band_rows.min(rows - first), cols, stats))
            .collect();
        Ok(Self { bands, band_rows })
    }

    /// Adds points' heights in order: sorted into their bands (stably), then each band on a
    /// core of its own.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    fn add(&mut self, keyed: &[(CellKey, Option<f64>)]) {
        if let [band] = self.bands.as_mut_slice() {
            for (key, z) in keyed {
                band.add(*key, *z);
            }
            return;
        }
        // Each core sorts a stretch of the points; a band then takes its points stretch by
        // stretch, in order.
        let count = self.bands.len();
        let band_rows = self.band_rows;
        let stretch = keyed.len().div_ceil(rayon::current_num_threads().max(1)).max(1);
        let stretches: Vec<Vec<Vec<Keyed>>> = keyed
            .par_chunks(stretch)
            .map(|points| {
                let mut by_band = vec![Vec::new(); count];
                for point in points {
                    by_band[(point.0.0 / band_rows) as usize].push(*point);
                }
                by_band
            })
            .collect();
        self.bands.par_iter_mut().enumerate().for_each(|(b, band)| {
            for by_band in &stretches {
                for (key, z) in &by_band[b] {
                    band.add(*key, *z);
                }
            }
        });
    }

    /// The cells sorted by row then column, with their statistics.
    fn finish(self, stats: &[HeightStat]) -> Finished {
        let bands: Vec<Finished> = self
            .bands
            .into_par_iter()
            .map(|band| band.finish(stats))
            .collect();
        let mut all = Finished {
            keys: Vec::with_capacity(bands.iter().map(|b| b.keys.len()).sum()),
            columns: vec![Vec::new(); stats.len()],
        };
        for band in bands {
            all.keys.extend(band.keys);
            for (column, values) in all.columns.iter_mut().zip(band.columns) {
                column.extend(values);
            }
        }
        all
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
                .map(|(x, y, _)| Some(Extent::of((x, y))))
                .fold(None, Extent::merge))
        })
        .try_reduce(|| None, |a, b| Ok(Extent::merge(a, b)))?;
    let Some(extent) = extent else {
        return grid_layer(op, &points.geometry, points.crs.clone(), Finished::default(), (0.0, 0.0));
    };
    let size = op.cell_size;
    let mut cells = Cells::new(&extent, size, points.num_rows(), &op.stats)?;
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
        cells.add(&keyed.concat());
    }
    let finished = cells.finish(&op.stats);
    grid_layer(op, &points.geometry, points.crs.clone(), finished, extent.low)
}

/// Points of a scan added to the cells at a time (their cells held meanwhile: 8 MB).
const POINTS_AT_ONCE: usize = 1 << 18;

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
    let Some((low, high)) = scanned.bounds() else {
        return grid_layer(op, geometry, crs, Finished::default(), (0.0, 0.0));
    };
    let extent = Extent { low, high };
    let size = op.cell_size;
    let transforms = scanned.transforms;
    let mut cells = Cells::new(&extent, size, scanned.len(), &op.stats)?;
    // Each part of the points let go once added.
    for window in scanned.points.chunks(POINTS_AT_ONCE) {
        let keyed: Vec<(CellKey, Option<f64>)> = window
            .par_iter()
            .map(|p| {
                let (x, y, z) = transforms.apply(*p);
                Ok((extent.cell((x, y), size)?, Some(z)))
            })
            .collect::<Result<_, NativeError>>()?;
        cells.add(&keyed);
    }
    drop(scanned);
    let finished = cells.finish(&op.stats);
    grid_layer(op, geometry, crs, finished, extent.low)
}

/// The cells as a layer: row, col, the statistics, the cell's square (counter-clockwise from its
/// lower-left corner).
#[allow(clippy::cast_precision_loss, clippy::cast_possible_truncation)]
fn grid_layer(
    op: &GridSummaryOp,
    geometry: &str,
    crs: Option<String>,
    finished: Finished,
    (x0, y0): (f64, f64),
) -> Result<Layer, NativeError> {
    let size = op.cell_size;
    let Finished {
        keys: occupied,
        columns,
    } = finished;
    let mut fields = vec![
        Field::new(ROW, DataType::Int64, true),
        Field::new(COL, DataType::Int64, true),
    ];
    let mut arrays: Vec<ArrayRef> = vec![
        Arc::new(Int64Array::from_iter_values(occupied.iter().map(|(row, _)| *row))),
        Arc::new(Int64Array::from_iter_values(occupied.iter().map(|(_, col)| *col))),
    ];
    // Each column let go once it is an array.
    let mut columns = columns.into_iter();
    for stat in &op.stats {
        let name = GridSummaryOp::stat_column(*stat);
        let cells = columns.next().unwrap_or_default().into_iter();
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
    for (row, col) in &occupied {
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

    #[test]
    fn the_shortcut_of_floor_division_is_numpys_step_by_step_answer() {
        // A seeded walk over offsets and sizes, whole quotients among them.
        let mut state = 0x9e37_79b9_7f4a_7c15_u64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            #[allow(clippy::cast_precision_loss)]
            let unit = (state >> 11) as f64 / (1u64 << 53) as f64;
            unit
        };
        for _ in 0..200_000 {
            let size = [0.1, 0.25, 1.0, 3.0, 0.3, 2.5][(next() * 6.0) as usize % 6];
            let offset = (next() * 5000.0).round() * [0.01, 0.1, 0.05][(next() * 3.0) as usize % 3];
            assert_eq!(
                numpy_floor_divide(offset, size).to_bits(),
                npy_divmod_quotient(offset, size).to_bits(),
                "{offset} // {size}"
            );
        }
    }
}

