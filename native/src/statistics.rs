//! A layer's spatial weights and the statistics over them, on Arrow layers: each feature's
//! neighbour count, Moran's I and Getis-Ord G (global on every row, local per feature), and
//! the neighbours as a table. The weights and the statistics themselves are in
//! [`super::weights`] and [`super::autocorrelation`].

use std::sync::Arc;

use arrow::array::{ArrayRef, BinaryArray, Float64Array, Int64Array, RecordBatch, StringArray};
use arrow::datatypes::{DataType, Field, Schema};
use geomill_planner::plan::operator::{
    StatisticKind, StatisticOp, WeightsKind, WeightsSpec, WeightsTransform,
};
use geomill_planner::schema::GEOM;

use super::autocorrelation::{getis_ord_global, getis_ord_local, moran, moran_local};
use super::classify::{numbers, with_columns};
use super::clusters::{self, EARTH_RADIUS};
use super::layer::{Layer, Wkb};
use super::weights::{Metric, Weights, contiguity, distance_band, knn};
use super::{NativeError, wkb};
use geomill_geometry::wkb::write_line;

/// Every ring's vertices of each polygon feature (`None`: a NULL or empty geometry).
type Rings = Option<Vec<Vec<[f64; 2]>>>;

/// Each row's polygon rings, for contiguity; other geometry types are an error naming the row.
fn rings(layer: &Layer) -> Result<Vec<Rings>, NativeError> {
    let geom = layer.geometry_index()?;
    let mut out = Vec::with_capacity(layer.num_rows());
    for batch in &layer.batches {
        let wkbs = Wkb::of(batch, geom)?;
        for i in 0..wkbs.len() {
            let row = out.len();
            let bad = |reason: String| NativeError::Geometry { row, reason };
            let Some(bytes) = wkbs.get(i) else {
                out.push(None);
                continue;
            };
            let code = wkb::geometry_type(bytes).map_err(|e| bad(e.to_string()))?;
            if code != 3 && code != 6 {
                return Err(NativeError::Input(format!(
                    "contiguity weights need polygons, but row {row} holds WKB type {code}: use method knn, distance_band or inverse_distance"
                )));
            }
            let shape = wkb::read_polygonal(bytes).map_err(|e| bad(e.to_string()))?;
            let all: Vec<Vec<[f64; 2]>> = shape
                .0
                .iter()
                .flat_map(|p| std::iter::once(p.exterior()).chain(p.interiors()))
                .map(|ring| ring.0.iter().map(|c| [c.x, c.y]).collect())
                .collect();
            out.push((!all.is_empty()).then_some(all));
        }
    }
    Ok(out)
}

/// Each row's point (centroids of lines and polygons), in row order.
fn row_points(layer: &Layer) -> Result<Vec<Option<[f64; 2]>>, NativeError> {
    Ok(clusters::points(layer)?.into_iter().flatten().collect())
}

/// The weights of `spec` between the rows `keep` names (positions in `keep` index the
/// weights), built from all rows' geometries.
fn weights_of(layer: &Layer, spec: &WeightsSpec, keep: &[usize]) -> Result<Weights, NativeError> {
    let weights = match &spec.kind {
        WeightsKind::Queen | WeightsKind::Rook => {
            let all = rings(layer)?;
            let kept: Vec<Rings> = keep.iter().map(|&r| all[r].clone()).collect();
            contiguity(&kept, spec.kind == WeightsKind::Rook)
        }
        WeightsKind::Knn { k, geodesic } => {
            let all = row_points(layer)?;
            let kept: Vec<Option<[f64; 2]>> = keep.iter().map(|&r| all[r]).collect();
            knn(&kept, *k as usize, metric(*geodesic))
        }
        WeightsKind::Band {
            distance,
            power,
            geodesic,
        } => {
            let all = row_points(layer)?;
            let kept: Vec<Option<[f64; 2]>> = keep.iter().map(|&r| all[r]).collect();
            distance_band(&kept, *distance, power.map(|p| -p), metric(*geodesic))
        }
    };
    Ok(match spec.transform {
        WeightsTransform::Original => weights,
        WeightsTransform::Row => weights.row_standardised(),
        WeightsTransform::Binary => weights.binary(),
    })
}

fn metric(geodesic: bool) -> Metric {
    if geodesic {
        Metric::GreatCircle {
            radius: EARTH_RADIUS,
        }
    } else {
        Metric::Euclidean
    }
}

/// The rows that take part: a geometry, and a value of `field` when there is one; with the
/// values (`y`) of those rows.
fn taking_part(layer: &Layer, field: Option<&str>) -> Result<(Vec<usize>, Vec<f64>), NativeError> {
    let points = row_points(layer)?;
    let values: Vec<Option<f64>> = match field {
        Some(field) => numbers(layer, field)?
            .iter()
            .flat_map(|a| a.iter().collect::<Vec<_>>())
            .collect(),
        None => vec![Some(0.0); points.len()],
    };
    let keep: Vec<usize> = (0..points.len())
        .filter(|&r| points[r].is_some() && values.get(r).copied().flatten().is_some())
        .collect();
    let y = keep.iter().filter_map(|&r| values[r]).collect();
    Ok((keep, y))
}

/// Per-row columns from per-participant values: NULL for the rows that took no part (and for
/// NaN values).
struct Scatter<'a> {
    rows: usize,
    keep: &'a [usize],
}

impl Scatter<'_> {
    fn doubles(&self, values: impl Iterator<Item = f64>) -> ArrayRef {
        let mut out = vec![None; self.rows];
        for (&row, v) in self.keep.iter().zip(values) {
            out[row] = (!v.is_nan()).then_some(v);
        }
        Arc::new(Float64Array::from(out))
    }

    fn constant(&self, value: f64) -> ArrayRef {
        self.doubles(std::iter::repeat_n(value, self.keep.len()))
    }
}

/// `op` over the layer: its columns added to every row.
pub fn statistic(layer: &Layer, op: &StatisticOp) -> Result<Layer, NativeError> {
    let (keep, y) = taking_part(layer, op.field.as_deref())?;
    let weights = weights_of(layer, &op.weights, &keep)?;
    let scatter = Scatter {
        rows: layer.num_rows(),
        keep: &keep,
    };
    let invalid = |e: super::weights::WeightsError| NativeError::Input(e.to_string());
    let arrays: Vec<ArrayRef> = match &op.kind {
        StatisticKind::NeighbourCount => {
            let mut counts = vec![None; scatter.rows];
            for (&row, neighbours) in keep.iter().zip(&weights.neighbours) {
                counts[row] = i64::try_from(neighbours.len()).ok();
            }
            vec![Arc::new(Int64Array::from(counts))]
        }
        StatisticKind::Moran { permutations, seed } => {
            let permutations = *permutations as usize;
            let global = moran(&y, &weights, permutations, *seed).map_err(invalid)?;
            let local = moran_local(&y, &weights, permutations, *seed).map_err(invalid)?;
            let mut quadrants = vec![None; scatter.rows];
            for (&row, l) in keep.iter().zip(&local) {
                quadrants[row] = match l.quadrant {
                    1 => Some("HH"),
                    2 => Some("LH"),
                    3 => Some("LL"),
                    4 => Some("HL"),
                    _ => None,
                };
            }
            vec![
                scatter.doubles(local.iter().map(|l| l.ii)),
                Arc::new(StringArray::from(quadrants)),
                scatter.doubles(local.iter().map(|l| l.p_sim)),
                scatter.constant(global.i),
                scatter.constant(global.expected),
                scatter.constant(global.variance),
                scatter.constant(global.z),
                scatter.constant(global.p_norm),
                scatter.constant(global.p_sim),
            ]
        }
        StatisticKind::GetisOrd {
            star,
            binary_local,
            permutations,
            seed,
        } => {
            let permutations = *permutations as usize;
            let global = getis_ord_global(&y, &weights, permutations, *seed).map_err(invalid)?;
            let local = getis_ord_local(&y, &weights, *star, *binary_local, permutations, *seed)
                .map_err(invalid)?;
            vec![
                scatter.doubles(local.iter().map(|l| l.g)),
                scatter.doubles(local.iter().map(|l| l.z)),
                scatter.doubles(local.iter().map(|l| l.p_norm)),
                scatter.doubles(local.iter().map(|l| l.p_sim)),
                scatter.constant(global.g),
                scatter.constant(global.expected),
                scatter.constant(global.variance),
                scatter.constant(global.z),
                scatter.constant(global.p_norm),
                scatter.constant(global.p_sim),
            ]
        }
    };
    let outputs: Vec<(String, DataType)> = op
        .outputs()
        .into_iter()
        .map(|(name, ty)| (name, arrow_type(ty)))
        .collect();
    let whole = single_batch(layer)?;
    with_columns(&whole, &outputs, |_| arrays.clone())
}

fn arrow_type(ty: geomill_planner::schema::FieldType) -> DataType {
    match ty {
        geomill_planner::schema::FieldType::Integer => DataType::Int64,
        geomill_planner::schema::FieldType::Text => DataType::Utf8,
        _ => DataType::Float64,
    }
}

/// The layer as one batch (columns computed over all rows are added in one piece).
fn single_batch(layer: &Layer) -> Result<Layer, NativeError> {
    if layer.batches.len() == 1 {
        return Ok(layer.clone());
    }
    let batch = arrow::compute::concat_batches(&layer.schema, &layer.batches)
        .map_err(NativeError::arrow)?;
    Layer::new(
        layer.schema.clone(),
        vec![batch],
        &layer.geometry,
        layer.crs.clone(),
    )
}

/// The neighbours of each feature as rows: `focal`, `neighbor` (row positions), `weight`,
/// with `id_field`'s values as text, and a line from the focal point to the neighbour's; an
/// island (or a feature without geometry) has one row with no neighbour.
pub fn neighbours_table(
    layer: &Layer,
    spec: &WeightsSpec,
    id_field: Option<&str>,
) -> Result<Layer, NativeError> {
    let all: Vec<usize> = (0..layer.num_rows()).collect();
    let weights = weights_of(layer, spec, &all)?;
    let points = row_points(layer)?;
    let ids = id_field.map(|field| layer.texts(field)).transpose()?;
    let (mut focal, mut neighbor, mut weight, mut lines) = (vec![], vec![], vec![], vec![]);
    for (i, row) in weights.neighbours.iter().enumerate() {
        if row.is_empty() {
            focal.push(i64::try_from(i).ok());
            neighbor.push(None);
            weight.push(None);
            lines.push(None);
        }
        for &(j, w) in row {
            focal.push(i64::try_from(i).ok());
            neighbor.push(i64::try_from(j).ok());
            weight.push(Some(w));
            lines.push(match (points[i], points.get(j).copied().flatten()) {
                (Some(a), Some(b)) => {
                    let mut out = Vec::with_capacity(41);
                    write_line(&[a, b], &mut out);
                    Some(out)
                }
                _ => None,
            });
        }
    }
    let mut fields = vec![
        Field::new("focal", DataType::Int64, false),
        Field::new("neighbor", DataType::Int64, true),
        Field::new("weight", DataType::Float64, true),
    ];
    let name_of = |ids: &[Option<String>], n: Option<i64>| {
        n.and_then(|n| usize::try_from(n).ok())
            .and_then(|n| ids.get(n).cloned().flatten())
    };
    let mut columns: Vec<ArrayRef> = Vec::new();
    let id_columns = ids.map(|ids| {
        let focal_ids: StringArray = focal.iter().map(|n| name_of(&ids, *n)).collect();
        let neighbor_ids: StringArray = neighbor.iter().map(|n| name_of(&ids, *n)).collect();
        (focal_ids, neighbor_ids)
    });
    columns.push(Arc::new(Int64Array::from(focal)));
    columns.push(Arc::new(Int64Array::from(neighbor)));
    columns.push(Arc::new(Float64Array::from(weight)));
    if let Some((focal_ids, neighbor_ids)) = id_columns {
        fields.push(Field::new("focal_id", DataType::Utf8, true));
        fields.push(Field::new("neighbor_id", DataType::Utf8, true));
        columns.push(Arc::new(focal_ids));
        columns.push(Arc::new(neighbor_ids));
    }
    fields.push(Field::new(GEOM, DataType::Binary, true));
    let lines: BinaryArray = lines.iter().map(Option::as_deref).collect();
    columns.push(Arc::new(lines));
    let schema = Arc::new(Schema::new(fields));
    let batch = RecordBatch::try_new(schema.clone(), columns).map_err(NativeError::arrow)?;
    Layer::new(schema, vec![batch], GEOM, layer.crs.clone())
}
