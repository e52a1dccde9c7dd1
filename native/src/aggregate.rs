//! Point-in-polygon aggregation (`spatial_aggregate` of points per polygon): count, sum, avg,
//! min, max of the points' attributes, rayon-parallel over point batches, points decoded
//! straight from their WKB bytes.

use std::sync::Arc;

use arrow::array::{Array, ArrayRef, Float64Array, Int64Array, RecordBatch};
use arrow::compute::cast;
use arrow::datatypes::{DataType, Field, Schema};
use geomill_planner::plan::operator::{AggFunc, AggItem, SpatialPredicate};
use rayon::prelude::*;

use super::layer::{Layer, Wkb};
use super::polygons::{Location, PreparedPolygons};
use super::{NativeError, prepare_polygons, wkb};

/// Which point locations count as a match for `P(point, polygon)`; `None`: not a native
/// predicate for points in polygons.
pub fn point_matches(predicate: SpatialPredicate) -> Option<fn(Location) -> bool> {
    match predicate {
        SpatialPredicate::Within => Some(|l| l == Location::Inside),
        SpatialPredicate::Intersects | SpatialPredicate::CoveredBy => {
            Some(|l| l != Location::Outside)
        }
        SpatialPredicate::Touches => Some(|l| l == Location::Boundary),
        _ => None,
    }
}

/// An aggregated column of the points, per batch, as integers or floats (`None`: `count(*)`).
enum Values {
    Rows,
    /// `count(column)` of a column of any other type: its non-NULL values.
    Present(Vec<ArrayRef>),
    Int(Vec<Int64Array>),
    Float(Vec<Float64Array>),
}

/// What an aggregate reads of the points: rows, non-NULL values of any type, or numbers it
/// accumulates as integers or floats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValueKind {
    Rows,
    Present,
    Int,
    Float,
}

/// How `item` reads a layer of `schema`: the column's position and kind (no position for
/// `count(*)`); declined for `first` and for sums of non-numbers.
pub fn value_kind(
    schema: &Schema,
    item: &AggItem,
) -> Result<(Option<usize>, ValueKind), NativeError> {
    let Some(column) = &item.column else {
        return Ok((None, ValueKind::Rows));
    };
    let index = schema.index_of(column).map_err(|_| NativeError::Column {
        column: column.clone(),
        problem: "is not in the joined layer".into(),
    })?;
    let ty = schema.field(index).data_type();
    if item.func == AggFunc::First {
        return Err(NativeError::Declined(format!("first({column})")));
    }
    let kind = if item.func == AggFunc::Count && !ty.is_integer() && !ty.is_floating() {
        ValueKind::Present
    } else if ty.is_integer() {
        ValueKind::Int
    } else if ty.is_floating() || item.func == AggFunc::Count {
        ValueKind::Float
    } else {
        return Err(NativeError::Declined(format!(
            "{}({column}) of a {ty} column",
            item.func.sql()
        )));
    };
    Ok((Some(index), kind))
}

fn values(points: &Layer, item: &AggItem) -> Result<Values, NativeError> {
    let (index, kind) = value_kind(&points.schema, item)?;
    let Some(index) = index else {
        return Ok(Values::Rows);
    };
    let column = item.column.clone().unwrap_or_default();
    let to = match kind {
        ValueKind::Rows => return Ok(Values::Rows),
        ValueKind::Present => {
            let arrays = points
                .batches
                .iter()
                .map(|b| b.column(index).clone())
                .collect();
            return Ok(Values::Present(arrays));
        }
        ValueKind::Int => DataType::Int64,
        ValueKind::Float => DataType::Float64,
    };
    let cast_all = |batch: &RecordBatch| {
        cast(batch.column(index), &to).map_err(|e| NativeError::Column {
            column: column.clone(),
            problem: e.to_string(),
        })
    };
    let arrays = points
        .batches
        .iter()
        .map(cast_all)
        .collect::<Result<Vec<_>, _>>()?;
    let downcast = |a: &ArrayRef| a.as_any().downcast_ref::<Int64Array>().cloned();
    let downcast_f = |a: &ArrayRef| a.as_any().downcast_ref::<Float64Array>().cloned();
    Ok(if to == DataType::Int64 {
        Values::Int(arrays.iter().filter_map(downcast).collect())
    } else {
        Values::Float(arrays.iter().filter_map(downcast_f).collect())
    })
}

/// One aggregate's running state for one polygon.
#[derive(Debug, Clone, Copy)]
pub struct Acc {
    n: i64,
    int_sum: i128,
    float_sum: f64,
    min: f64,
    max: f64,
    int_min: i64,
    int_max: i64,
}

impl Default for Acc {
    fn default() -> Self {
        Self {
            n: 0,
            int_sum: 0,
            float_sum: 0.0,
            min: f64::INFINITY,
            max: f64::NEG_INFINITY,
            int_min: i64::MAX,
            int_max: i64::MIN,
        }
    }
}

impl Acc {
    /// The state of `n` values (or rows) counted elsewhere, of integers summing to `sum`
    /// between `min` and `max`.
    pub fn of_ints(n: i64, sum: i128, min: i64, max: i64) -> Self {
        Self {
            n,
            int_sum: sum,
            int_min: min,
            int_max: max,
            ..Self::default()
        }
    }

    /// The state of `n` floats summing to `sum` between `min` and `max` (or of `n` rows).
    pub fn of_floats(n: i64, sum: f64, min: f64, max: f64) -> Self {
        Self {
            n,
            float_sum: sum,
            min,
            max,
            ..Self::default()
        }
    }

    fn merge(&mut self, o: &Acc) {
        self.n += o.n;
        self.int_sum += o.int_sum;
        self.float_sum += o.float_sum;
        self.min = self.min.min(o.min);
        self.max = self.max.max(o.max);
        self.int_min = self.int_min.min(o.int_min);
        self.int_max = self.int_max.max(o.int_max);
    }
}

/// For each row of `polygons`, aggregates the points of `points` where
/// `predicate(point, polygon)` holds; the outputs are appended to the polygons' columns
/// (`count` gives 0 and the others NULL where nothing matches, as in SQL).
pub fn spatial_aggregate(
    polygons: &Layer,
    points: &Layer,
    predicate: SpatialPredicate,
    aggregates: &[AggItem],
) -> Result<Layer, NativeError> {
    let matches = point_matches(predicate).ok_or_else(|| {
        NativeError::Declined(format!("spatial_aggregate with predicate {predicate:?}"))
    })?;
    let prepared = prepare_polygons(polygons)?;
    let n_rows = polygons.num_rows();
    let n_aggs = aggregates.len();
    let columns: Vec<Values> = aggregates
        .iter()
        .map(|item| values(points, item))
        .collect::<Result<_, _>>()?;
    let geom = points.geometry_index()?;
    let totals = points
        .batches
        .par_iter()
        .enumerate()
        .map(|(b, batch)| {
            let mut accs = vec![Acc::default(); n_rows * n_aggs];
            let wkbs = Wkb::of(batch, geom)?;
            let mut hits: Vec<(u32, Location)> = Vec::new();
            for i in 0..wkbs.len() {
                let Some(bytes) = wkbs.get(i) else { continue };
                let point = match wkb::read_point(bytes) {
                    Ok(point) => point,
                    // Lines or polygons to aggregate: the SQL engine's step, not an error.
                    Err(wkb::WkbError::Unexpected { found, .. }) => {
                        return Err(NativeError::Declined(format!(
                            "spatial_aggregate of features that are not points ({found})"
                        )));
                    }
                    Err(e) => {
                        return Err(NativeError::Geometry {
                            row: i,
                            reason: e.to_string(),
                        });
                    }
                };
                let Some((x, y)) = point else {
                    continue;
                };
                locate_rows(&prepared, x, y, &mut hits);
                for &(row, location) in &hits {
                    if matches(location) {
                        let slot = &mut accs[row as usize * n_aggs..][..n_aggs];
                        for (acc, column) in slot.iter_mut().zip(&columns) {
                            add(acc, column, b, i);
                        }
                    }
                }
            }
            Ok(accs)
        })
        .try_reduce(
            || vec![Acc::default(); n_rows * n_aggs],
            |mut a, b| {
                a.iter_mut().zip(&b).for_each(|(x, y)| x.merge(y));
                Ok(a)
            },
        )?;
    let ints: Vec<bool> = columns
        .iter()
        .map(|c| matches!(c, Values::Int(_)))
        .collect();
    aggregated_polygons(polygons, aggregates, &ints, &totals)
}

/// The rows whose polygon holds `(x, y)`, with the location (best of a row's parts).
pub fn locate_rows(prepared: &PreparedPolygons, x: f64, y: f64, hits: &mut Vec<(u32, Location)>) {
    hits.clear();
    for part in prepared.candidates_at(x, y) {
        let location = prepared.locate(part, x, y);
        if location == Location::Outside {
            continue;
        }
        let row = prepared.row(part);
        match hits.iter_mut().find(|(r, _)| *r == row) {
            Some((_, best)) if *best == Location::Boundary => *best = location,
            Some(_) => {}
            None => hits.push((row, location)),
        }
    }
}

fn add(acc: &mut Acc, column: &Values, batch: usize, i: usize) {
    match column {
        Values::Rows => acc.n += 1,
        Values::Present(arrays) => {
            if arrays[batch].is_valid(i) {
                acc.n += 1;
            }
        }
        Values::Int(arrays) => {
            let a = &arrays[batch];
            if a.is_valid(i) {
                let v = a.value(i);
                acc.n += 1;
                acc.int_sum += i128::from(v);
                acc.int_min = acc.int_min.min(v);
                acc.int_max = acc.int_max.max(v);
            }
        }
        Values::Float(arrays) => {
            let a = &arrays[batch];
            if a.is_valid(i) {
                let v = a.value(i);
                acc.n += 1;
                acc.float_sum += v;
                acc.min = acc.min.min(v);
                acc.max = acc.max.max(v);
            }
        }
    }
}

/// The output column of one aggregate over all polygon rows (`int`: of integer values).
fn output(func: AggFunc, int: bool, accs: impl Iterator<Item = Acc>) -> ArrayRef {
    match func {
        AggFunc::Count => Arc::new(accs.map(|a| Some(a.n)).collect::<Int64Array>()),
        AggFunc::Sum if int => Arc::new(
            accs.map(|a| (a.n > 0).then(|| i64::try_from(a.int_sum).unwrap_or(i64::MAX)))
                .collect::<Int64Array>(),
        ),
        AggFunc::Min if int => Arc::new(
            accs.map(|a| (a.n > 0).then_some(a.int_min))
                .collect::<Int64Array>(),
        ),
        AggFunc::Max if int => Arc::new(
            accs.map(|a| (a.n > 0).then_some(a.int_max))
                .collect::<Int64Array>(),
        ),
        AggFunc::Sum => Arc::new(
            accs.map(|a| (a.n > 0).then_some(a.float_sum))
                .collect::<Float64Array>(),
        ),
        AggFunc::Min => Arc::new(
            accs.map(|a| (a.n > 0).then_some(a.min))
                .collect::<Float64Array>(),
        ),
        AggFunc::Max => Arc::new(
            accs.map(|a| (a.n > 0).then_some(a.max))
                .collect::<Float64Array>(),
        ),
        // Refused when the values are read.
        AggFunc::First => Arc::new(Int64Array::new_null(0)),
        AggFunc::Avg | AggFunc::Mean => Arc::new(
            accs.map(|a| {
                (a.n > 0).then(|| {
                    if int {
                        a.int_sum as f64 / a.n as f64
                    } else {
                        a.float_sum / a.n as f64
                    }
                })
            })
            .collect::<Float64Array>(),
        ),
    }
}

/// The polygons' batches with one column appended per aggregate, from each polygon row's
/// states (`totals[row * aggregates + a]`); `ints[a]`: aggregate `a` reads integers.
pub fn aggregated_polygons(
    polygons: &Layer,
    aggregates: &[AggItem],
    ints: &[bool],
    totals: &[Acc],
) -> Result<Layer, NativeError> {
    let n_aggs = aggregates.len();
    let mut fields: Vec<Arc<Field>> = polygons.schema.fields().iter().cloned().collect();
    let mut batches = Vec::with_capacity(polygons.batches.len());
    let mut first_row = 0;
    let mut schema = Arc::new(Schema::new(fields.clone()));
    for (k, batch) in polygons.batches.iter().enumerate() {
        let rows = first_row..first_row + batch.num_rows();
        let mut arrays = batch.columns().to_vec();
        for (a, (item, int)) in aggregates.iter().zip(ints).enumerate() {
            let accs = rows.clone().map(|r| totals[r * n_aggs + a]);
            let array = output(item.func, *int, accs);
            if k == 0 {
                fields.push(Arc::new(Field::new(
                    &item.output,
                    array.data_type().clone(),
                    true,
                )));
            }
            arrays.push(array);
        }
        if k == 0 {
            schema = Arc::new(Schema::new(fields.clone()));
        }
        batches.push(RecordBatch::try_new(schema.clone(), arrays).map_err(NativeError::arrow)?);
        first_row = rows.end;
    }
    if polygons.batches.is_empty() {
        for (item, int) in aggregates.iter().zip(ints) {
            let ty = output(item.func, *int, std::iter::empty())
                .data_type()
                .clone();
            fields.push(Arc::new(Field::new(&item.output, ty, true)));
        }
        schema = Arc::new(Schema::new(fields));
    }
    Layer::new(schema, batches, &polygons.geometry, polygons.crs.clone())
}
