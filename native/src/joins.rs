//! Joins of points to polygons: within a distance (or intersecting / within) and the k
//! nearest (with an optional maximum distance). Output columns follow the planner's SQL:
//! the points' columns, then the polygons' requested columns (`ref_` before a clashing name).

use std::sync::Arc;

use arrow::array::{ArrayRef, Float64Array, RecordBatch, UInt32Array, new_null_array};
use arrow::compute::{concat, take};
use arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use geomill_planner::plan::operator::{RefColumns, SpatialPredicate};
use rayon::prelude::*;

use super::layer::{Layer, Wkb};
use super::polygons::{Location, PreparedPolygons};
use super::{NativeError, prepare_polygons, wkb};

/// Matches of one point batch: (row in the batch, polygon row, distance).
type Pairs = Vec<(u32, u32, f64)>;

/// The polygons' columns to bring, as (source index, output name): a name the points or the
/// distance field already have gets `ref_` before it, as the planner's SQL names it.
fn right_columns(
    left: &Layer,
    right: &Layer,
    requested: &RefColumns,
    distance_field: Option<&str>,
) -> Result<Vec<(usize, String)>, NativeError> {
    let names: Vec<String> = match requested {
        RefColumns::All => right
            .schema
            .fields()
            .iter()
            .map(|f| f.name().clone())
            .filter(|n| n != &right.geometry)
            .collect(),
        RefColumns::Only(names) => names.clone(),
    };
    let mut taken: Vec<String> = left
        .schema
        .fields()
        .iter()
        .map(|f| f.name().clone())
        .chain(distance_field.map(str::to_owned))
        .collect();
    names
        .into_iter()
        .map(|name| {
            let index = right
                .schema
                .index_of(&name)
                .map_err(|_| NativeError::Column {
                    column: name.clone(),
                    problem: "is not in the reference layer".into(),
                })?;
            let mut output = name.clone();
            while taken.contains(&output) {
                output = format!("ref_{output}");
            }
            taken.push(output.clone());
            Ok((index, output))
        })
        .collect()
}

/// Runs `per_point` over every point of `points` in parallel, collecting the pairs of each
/// batch (NULL and empty points produce nothing; other geometries are errors).
fn pairs_by_batch<F>(points: &Layer, per_point: F) -> Result<Vec<Pairs>, NativeError>
where
    F: Fn(f64, f64, &mut Vec<(u32, f64)>) + Sync,
{
    let geom = points.geometry_index()?;
    points
        .batches
        .par_iter()
        .map(|batch| {
            let wkbs = Wkb::of(batch, geom)?;
            let mut pairs = Vec::new();
            let mut found = Vec::new();
            for i in 0..wkbs.len() {
                let point = match wkbs.get(i) {
                    Some(bytes) => wkb::read_point(bytes).map_err(|e| NativeError::Geometry {
                        row: i,
                        reason: e.to_string(),
                    })?,
                    None => None,
                };
                found.clear();
                if let Some((x, y)) = point {
                    per_point(x, y, &mut found);
                }
                pairs.extend(found.iter().map(|&(row, d)| (i as u32, row, d)));
            }
            Ok(pairs)
        })
        .collect()
}

/// Inner join of points to the polygons they match: `dwithin` (distance ≤ `distance`, CRS
/// units), `intersects` or `within`.
pub fn points_polygons_join(
    points: &Layer,
    polygons: &Layer,
    predicate: SpatialPredicate,
    distance: Option<f64>,
    columns: &[String],
) -> Result<Layer, NativeError> {
    let reach = match (predicate, distance) {
        (SpatialPredicate::Dwithin, Some(d)) if d >= 0.0 => d,
        (SpatialPredicate::Intersects | SpatialPredicate::Within, None) => 0.0,
        _ => {
            return Err(NativeError::Declined(format!(
                "a point join with predicate {predicate:?} and distance {distance:?}"
            )));
        }
    };
    let prepared = prepare_polygons(polygons)?;
    let pairs = pairs_by_batch(points, |x, y, found| {
        let mut visit = |part: u32| {
            let row = prepared.row(part);
            let hit = match predicate {
                SpatialPredicate::Within => prepared.locate(part, x, y) == Location::Inside,
                SpatialPredicate::Intersects => prepared.locate(part, x, y) != Location::Outside,
                _ => prepared.distance(part, x, y) <= reach,
            };
            if hit && !found.iter().any(|&(r, _)| r == row) {
                found.push((row, 0.0));
            }
        };
        // A point's own cell of the grid when it must touch the polygon; the R-tree within a
        // distance.
        if reach > 0.0 {
            prepared.candidates(x, y, reach).for_each(&mut visit);
        } else {
            prepared.candidates_at(x, y).for_each(&mut visit);
        }
        found.sort_unstable_by_key(|&(r, _)| r);
    })?;
    let columns = RefColumns::requested(columns);
    assemble(points, polygons, &columns, pairs, None, false)
}

/// The `k` nearest polygons of each point, nearest first (ties by polygon row), within
/// `max_distance` when given; a point with none keeps one row with NULLs (a left join).
pub fn nearest(
    points: &Layer,
    polygons: &Layer,
    k: usize,
    max_distance: Option<f64>,
    distance_field: &str,
    columns: &RefColumns,
) -> Result<Layer, NativeError> {
    if k == 0 {
        return Err(NativeError::Declined("nearest with k = 0".into()));
    }
    let prepared = prepare_polygons(polygons)?;
    let ties = tie_keys(polygons)?;
    let pairs = pairs_by_batch(points, |x, y, found| {
        k_nearest(&prepared, &ties, x, y, k, max_distance, found);
    })?;
    assemble(points, polygons, columns, pairs, Some(distance_field), true)
}

/// Per polygon row, the key equal distances are ordered by: the md5 of its WKB in lower-case
/// hex, as the SQL engines break ties (`ORDER BY distance, md5(hex)`), so all three pick the
/// same feature.
pub(super) fn tie_keys(polygons: &Layer) -> Result<Vec<[u8; 16]>, NativeError> {
    use md5::{Digest, Md5};
    use std::fmt::Write;
    let geom = polygons.geometry_index()?;
    let mut keys = Vec::with_capacity(polygons.num_rows());
    let mut hex = String::new();
    for batch in &polygons.batches {
        let wkbs = Wkb::of(batch, geom)?;
        for i in 0..wkbs.len() {
            hex.clear();
            for byte in wkbs.get(i).unwrap_or_default() {
                let _ = write!(hex, "{byte:02x}");
            }
            keys.push(Md5::digest(hex.as_bytes()).into());
        }
    }
    Ok(keys)
}

/// Best-first search over envelope distances (a lower bound), stopped once the next envelope
/// is farther than the k-th exact distance found; equal distances ordered by `ties`.
fn k_nearest(
    prepared: &PreparedPolygons,
    ties: &[[u8; 16]],
    x: f64,
    y: f64,
    k: usize,
    max_distance: Option<f64>,
    found: &mut Vec<(u32, f64)>,
) {
    let limit = max_distance.unwrap_or(f64::INFINITY);
    let mut kth = f64::INFINITY;
    let tie = |row: u32| ties.get(row as usize).copied().unwrap_or_default();
    let order = |a: &(u32, f64), b: &(u32, f64)| a.1.total_cmp(&b.1).then(tie(a.0).cmp(&tie(b.0)));
    for (part, envelope_d2) in prepared.by_envelope_distance(x, y) {
        let bound = envelope_d2.sqrt();
        if bound > limit || (found.len() >= k && bound > kth) {
            break;
        }
        let d = prepared.distance(part, x, y);
        if d > limit {
            continue;
        }
        let row = prepared.row(part);
        match found.iter_mut().find(|(r, _)| *r == row) {
            Some(entry) => entry.1 = entry.1.min(d),
            None => found.push((row, d)),
        }
        if found.len() >= k {
            found.sort_unstable_by(order);
            kth = found[k - 1].1;
        }
    }
    found.sort_unstable_by(order);
    found.truncate(k);
}

/// The output batches: per point batch, its rows repeated per pair, then the distance (when
/// asked) and the polygons' columns; with `keep_unmatched`, points without a pair keep one
/// row of NULLs.
fn assemble(
    points: &Layer,
    polygons: &Layer,
    columns: &RefColumns,
    mut pairs: Vec<Pairs>,
    distance_field: Option<&str>,
    keep_unmatched: bool,
) -> Result<Layer, NativeError> {
    let right = right_columns(points, polygons, columns, distance_field)?;
    let mut fields: Vec<Arc<Field>> = points.schema.fields().iter().cloned().collect();
    if let Some(name) = distance_field {
        fields.push(Arc::new(Field::new(name, DataType::Float64, true)));
    }
    let right_arrays: Vec<ArrayRef> = right
        .iter()
        .map(|(index, _)| {
            let parts: Vec<&dyn arrow::array::Array> = polygons
                .batches
                .iter()
                .map(|b| b.column(*index).as_ref())
                .collect();
            if parts.is_empty() {
                Ok(new_null_array(polygons.schema.field(*index).data_type(), 0))
            } else {
                concat(&parts).map_err(NativeError::arrow)
            }
        })
        .collect::<Result<_, _>>()?;
    for (index, name) in &right {
        let ty = polygons.schema.field(*index).data_type().clone();
        fields.push(Arc::new(Field::new(name, ty, true)));
    }
    let schema: SchemaRef = Arc::new(Schema::new(fields));
    let batches = points
        .batches
        .par_iter()
        .zip(pairs.par_iter_mut())
        .map(|(batch, pairs)| {
            if keep_unmatched {
                let mut matched = vec![false; batch.num_rows()];
                pairs.iter().for_each(|p| matched[p.0 as usize] = true);
                let missing = matched.iter().enumerate().filter(|(_, m)| !**m);
                let missing: Vec<(u32, u32, f64)> = missing
                    .map(|(i, _)| (i as u32, u32::MAX, f64::NAN))
                    .collect();
                pairs.extend(missing);
                pairs.sort_by_key(|p| p.0);
            }
            let left_index: UInt32Array = pairs.iter().map(|p| p.0).collect();
            let right_index: UInt32Array = pairs
                .iter()
                .map(|p| (p.1 != u32::MAX).then_some(p.1))
                .collect();
            let mut arrays = Vec::with_capacity(schema.fields().len());
            for column in batch.columns() {
                arrays.push(take(column, &left_index, None).map_err(NativeError::arrow)?);
            }
            if distance_field.is_some() {
                let d: Float64Array = pairs
                    .iter()
                    .map(|p| (p.1 != u32::MAX).then_some(p.2))
                    .collect();
                arrays.push(Arc::new(d));
            }
            for array in &right_arrays {
                arrays.push(take(array, &right_index, None).map_err(NativeError::arrow)?);
            }
            RecordBatch::try_new(schema.clone(), arrays).map_err(NativeError::arrow)
        })
        .collect::<Result<Vec<_>, _>>()?;
    Layer::new(schema, batches, &points.geometry, points.crs.clone())
}
