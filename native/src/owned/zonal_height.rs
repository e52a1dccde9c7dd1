//! The kernel of `ZonalHeight`: the points located in the polygons' prepared index (batches in
//! parallel), each polygon's heights gathered in point order, their statistics as pandas
//! computes them added to the polygons.

use std::sync::Arc;

use arrow::array::{Array, ArrayRef, Float64Array, Int64Array};
use arrow::datatypes::DataType;
use geomill_planner::plan::ops::pointcloud::{Height, HeightStat, ZonalHeightOp};
use rayon::prelude::*;

use crate::aggregate::locate_rows;
use crate::classify::{numbers, with_columns};
use crate::height_stats::{batch_points, statistics};
use crate::layer::Layer;
use crate::polygons::Location;
use crate::{NativeError, prepare_polygons};

pub fn run(op: &ZonalHeightOp, inputs: &[&Layer]) -> Result<Layer, NativeError> {
    let [polygons, points] = inputs else {
        return Err(NativeError::Declined(
            "ZonalHeight without its polygons and points".into(),
        ));
    };
    let prepared = prepare_polygons(polygons)?;
    let geom = points.geometry_index()?;
    // (polygon row, height) of every point within a polygon, per batch in point order.
    let found: Vec<Vec<(u32, f64)>> = points
        .batches
        .par_iter()
        .map(|batch| {
            let mut hits = Vec::new();
            let mut pairs = Vec::new();
            for (x, y, z) in batch_points(batch, geom, "pointcloud_zonal_height")?
                .into_iter()
                .flatten()
            {
                let Some(z) = z else { continue };
                locate_rows(&prepared, x, y, &mut hits);
                pairs.extend(
                    hits.iter()
                        .filter(|(_, location)| *location == Location::Inside)
                        .map(|(row, _)| (*row, z)),
                );
            }
            Ok(pairs)
        })
        .collect::<Result<_, NativeError>>()?;
    let mut heights: Vec<Vec<f64>> = vec![Vec::new(); polygons.num_rows()];
    for (row, z) in found.into_iter().flatten() {
        heights[row as usize].push(z);
    }
    let values: Vec<Vec<Option<f64>>> = heights
        .into_par_iter()
        .map(|mut h| statistics(&mut h, &op.stats))
        .collect();
    let ground = match &op.height {
        Height::MaxMinusColumn(column) => Some(numbers(polygons, column)?),
        _ => None,
    };
    let position = |stat: HeightStat| op.stats.iter().position(|s| *s == stat);
    let (max, min) = (position(HeightStat::Max), position(HeightStat::Min));
    let outputs: Vec<(String, DataType)> = op
        .outputs()
        .into_iter()
        .map(|(name, ty)| {
            let data_type = if ty == geomill_planner::schema::FieldType::Integer {
                DataType::Int64
            } else {
                DataType::Float64
            };
            (name, data_type)
        })
        .collect();
    let mut columns: Vec<Vec<ArrayRef>> = Vec::with_capacity(polygons.batches.len());
    let mut start = 0;
    for (b, batch) in polygons.batches.iter().enumerate() {
        let part = &values[start..start + batch.num_rows()];
        start += batch.num_rows();
        let mut arrays: Vec<ArrayRef> = op
            .stats
            .iter()
            .enumerate()
            .map(|(s, stat)| -> ArrayRef {
                let cells = part.iter().map(|row| row[s]);
                if *stat == HeightStat::Count {
                    #[allow(clippy::cast_possible_truncation)]
                    let counts: Int64Array = cells.map(|v| v.map(|v| v as i64)).collect();
                    Arc::new(counts)
                } else {
                    Arc::new(cells.collect::<Float64Array>())
                }
            })
            .collect();
        let height: Option<Float64Array> = match (&op.height, max, min, &ground) {
            (Height::MaxMinusMin, Some(max), Some(min), _) => Some(
                part.iter()
                    .map(|row| Some(row[max]? - row[min]?))
                    .collect(),
            ),
            (Height::MaxMinusColumn(_), Some(max), _, Some(ground)) => Some(
                part.iter()
                    .enumerate()
                    .map(|(i, row)| {
                        let g = &ground[b];
                        Some(row[max]? - g.is_valid(i).then(|| g.value(i))?)
                    })
                    .collect(),
            ),
            _ => None,
        };
        if let Some(height) = height {
            arrays.push(Arc::new(height));
        }
        columns.push(arrays);
    }
    with_columns(polygons, &outputs, |batch| columns[batch].clone())
}
