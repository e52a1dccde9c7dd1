//! The kernel of `GridSummary`: the points' minimum corner, then each point's cell (NumPy's
//! floor division) found in parallel over a window of batches and its height added, window by
//! window, in point order, so every cell's statistics are pandas' to the bit; one row per
//! occupied cell, sorted by row then column.

use std::collections::HashMap;
use std::sync::Arc;

use arrow::array::{ArrayRef, BinaryBuilder, Float64Array, Int64Array, RecordBatch};
use arrow::datatypes::{DataType, Field, Schema};
use geomill_geometry::wkb::write_ring_polygon;
use geomill_planner::plan::ops::pointcloud::{COL, GridSummaryOp, HeightStat, ROW};
use rayon::prelude::*;

use crate::NativeError;
use crate::height_stats::{Running, batch_points, needs_values, statistics};
use crate::layer::Layer;

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

/// One occupied cell: its running statistics and, for quantiles, its heights in point order.
#[derive(Default)]
struct Cell {
    running: Running,
    heights: Vec<f64>,
}

pub fn run(op: &GridSummaryOp, inputs: &[&Layer]) -> Result<Layer, NativeError> {
    let points = super::first(op, inputs)?;
    let geom = points.geometry_index()?;
    let corner = points
        .batches
        .par_iter()
        .map(|batch| {
            let found = batch_points(batch, geom, WHAT)?;
            Ok(found.into_iter().flatten().fold(None, |low: Option<(f64, f64)>, (x, y, _)| {
                Some(low.map_or((x, y), |(lx, ly)| (lx.min(x), ly.min(y))))
            }))
        })
        .try_reduce(
            || None,
            |a, b| {
                Ok(match (a, b) {
                    (Some((ax, ay)), Some((bx, by))) => Some((ax.min(bx), ay.min(by))),
                    (a, b) => a.or(b),
                })
            },
        )?;
    let keep_heights = needs_values(&op.stats);
    let size = op.cell_size;
    let mut cells: HashMap<CellKey, Cell> = HashMap::new();
    if let Some((x0, y0)) = corner {
        let window = rayon::current_num_threads().max(1) * 2;
        for batches in points.batches.chunks(window) {
            let keyed: Vec<Vec<(CellKey, Option<f64>)>> = batches
                .par_iter()
                .map(|batch| {
                    batch_points(batch, geom, WHAT)?
                        .into_iter()
                        .flatten()
                        .map(|(x, y, z)| {
                            Ok(((cell_index(y - y0, size)?, cell_index(x - x0, size)?), z))
                        })
                        .collect::<Result<Vec<_>, NativeError>>()
                })
                .collect::<Result<_, _>>()?;
            for (key, z) in keyed.into_iter().flatten() {
                let cell = cells.entry(key).or_default();
                if let Some(z) = z {
                    cell.running.add(z);
                    if keep_heights {
                        cell.heights.push(z);
                    }
                }
            }
        }
    }
    let mut occupied: Vec<(CellKey, Cell)> = cells.into_iter().collect();
    occupied.sort_unstable_by_key(|(key, _)| *key);
    let values: Vec<Vec<Option<f64>>> = occupied
        .par_iter_mut()
        .map(|(_, cell)| {
            if keep_heights {
                statistics(&mut cell.heights, &op.stats)
            } else {
                op.stats.iter().map(|s| cell.running.get(*s)).collect()
            }
        })
        .collect();
    let (x0, y0) = corner.unwrap_or_default();
    grid_layer(op, points, &occupied, &values, (x0, y0))
}

/// The cells as a layer: row, col, the statistics, the cell's square (counter-clockwise from its
/// lower-left corner).
#[allow(clippy::cast_precision_loss, clippy::cast_possible_truncation)]
fn grid_layer(
    op: &GridSummaryOp,
    points: &Layer,
    occupied: &[(CellKey, Cell)],
    values: &[Vec<Option<f64>>],
    (x0, y0): (f64, f64),
) -> Result<Layer, NativeError> {
    let size = op.cell_size;
    let mut fields = vec![
        Field::new(ROW, DataType::Int64, true),
        Field::new(COL, DataType::Int64, true),
    ];
    let mut arrays: Vec<ArrayRef> = vec![
        Arc::new(occupied.iter().map(|((row, _), _)| Some(*row)).collect::<Int64Array>()),
        Arc::new(occupied.iter().map(|((_, col), _)| Some(*col)).collect::<Int64Array>()),
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
    for ((row, col), _) in occupied {
        let (left, bottom) = (x0 + *col as f64 * size, y0 + *row as f64 * size);
        let (right, top) = (left + size, bottom + size);
        wkb.clear();
        write_ring_polygon(
            &[[left, bottom], [right, bottom], [right, top], [left, top], [left, bottom]],
            &mut wkb,
        );
        squares.append_value(&wkb);
    }
    fields.push(Field::new(&points.geometry, DataType::Binary, true));
    arrays.push(Arc::new(squares.finish()));
    let schema = Arc::new(Schema::new(fields));
    let batch = RecordBatch::try_new(schema.clone(), arrays).map_err(NativeError::arrow)?;
    Layer::new(schema, vec![batch], &points.geometry, points.crs.clone())
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
