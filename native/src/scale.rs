//! Per-row values computed from a field's values over the whole layer: rescaled values,
//! categories, colours on a ramp, symbol sizes and bivariate classes (`ScaleOp`).

use std::cmp::Ordering;
use std::collections::HashMap;
use std::sync::Arc;

use arrow::array::{Array, ArrayRef, Float64Array, Int64Array, StringArray};
use arrow::compute::cast;
use arrow::datatypes::DataType;
use geomill_planner::palettes;
use geomill_planner::plan::operator::{
    ClassColors, ClassMethod, KMeansMethod, NormalizeMethod, RampColors, RampPosition, RampScale,
    ScaleKind, ScaleOp,
};

use super::classify::{breaks, class_of, mean, numbers, numpy_sum, with_columns};
use super::layer::Layer;
use super::{NativeError, clusters, hdbscan, kmeans_lloyd, kmeans_sklearn};

/// Computes `op` over `layer`.
pub fn scale(layer: &Layer, op: &ScaleOp) -> Result<Layer, NativeError> {
    let outputs: Vec<(String, DataType)> = op
        .outputs()
        .into_iter()
        .map(|(name, ty)| {
            let data_type = match ty {
                geomill_planner::schema::FieldType::Integer => DataType::Int64,
                geomill_planner::schema::FieldType::Text => DataType::Utf8,
                _ => DataType::Float64,
            };
            (name, data_type)
        })
        .collect();
    match &op.kind {
        ScaleKind::Normalize {
            method,
            equal_value,
        } => {
            let columns = numbers(layer, &op.field)?;
            let rescale = normalizer(*method, *equal_value, &present(&columns));
            with_columns(layer, &outputs, |batch| {
                let array: Float64Array = columns[batch]
                    .iter()
                    .map(|v| v.and_then(&rescale))
                    .collect();
                vec![Arc::new(array) as ArrayRef]
            })
        }
        ScaleKind::SymbolSize { min, max, sqrt } => {
            let columns = numbers(layer, &op.field)?;
            let sqrt = *sqrt;
            let transform = move |v: f64| if sqrt { v.sqrt() } else { v };
            let position = positions(&present(&columns), transform);
            with_columns(layer, &outputs, |batch| {
                let array: Float64Array = columns[batch]
                    .iter()
                    .map(|v| v.map(|v| min + (max - min) * position(v)))
                    .collect();
                vec![Arc::new(array) as ArrayRef]
            })
        }
        ScaleKind::ColorRamp { colors, position } => {
            let columns = numbers(layer, &op.field)?;
            let place = ramp_position(position, &present(&columns));
            let color = |v: f64| {
                let t = place(v)?;
                match colors {
                    RampColors::Scheme { name, reverse } => {
                        palettes::at(name, if *reverse { 1.0 - t } else { t })
                    }
                    RampColors::Stops(stops) => palettes::gispulse::along(stops, t),
                }
                .map(palettes::hex)
            };
            with_columns(layer, &outputs, |batch| {
                let array: StringArray = columns[batch].iter().map(|v| v.and_then(color)).collect();
                vec![Arc::new(array) as ArrayRef]
            })
        }
        ScaleKind::Categories {
            max_classes,
            colors,
            first_seen,
        } => categories(
            layer,
            op,
            &outputs,
            (*max_classes as usize, *first_seen),
            colors.as_ref(),
        ),
        ScaleKind::Bivariate {
            other,
            method,
            classes,
            schemes,
            ..
        } => bivariate(
            layer,
            op,
            &outputs,
            other,
            *method,
            *classes as usize,
            schemes,
        ),
        ScaleKind::KMeans {
            k,
            seed,
            max_iter,
            method: KMeansMethod::ScikitLearn,
            distance,
            ..
        } => {
            let points = clusters::points(layer)?;
            let present: Vec<[f64; 2]> = points.iter().flatten().flatten().copied().collect();
            let seed = u32::try_from(*seed)
                .map_err(|_| NativeError::Input("NumPy's seeds are below 2^32".into()))?;
            let fitted = kmeans_sklearn::kmeans(&present, *k as usize, seed, *max_iter as usize);
            labelled_with(
                layer,
                &outputs,
                &points,
                fitted.labels,
                distance.as_ref().map(|_| fitted.distances),
            )
        }
        ScaleKind::KMeans {
            k,
            seed,
            max_iter,
            init,
            distance,
            ..
        } => {
            let points = clusters::points(layer)?;
            let present: Vec<[f64; 2]> = points.iter().flatten().flatten().copied().collect();
            let labels =
                kmeans_lloyd::kmeans(&present, *k as usize, init, *seed, *max_iter as usize);
            let distances = distance
                .as_ref()
                .map(|_| clusters::distances_to_centres(&present, &labels));
            let labels = labels.into_iter().map(|c| c as i64).collect();
            labelled_with(layer, &outputs, &points, labels, distances)
        }
        ScaleKind::Dbscan {
            eps,
            min_samples,
            geodesic,
            time: Some(gate),
        } => {
            let times = super::times::seconds(layer, &gate.field)?;
            clustered_with(layer, &outputs, &times, |points, times| {
                clusters::dbscan_in_time(
                    points,
                    times,
                    (*eps, gate.max_seconds),
                    *min_samples as usize,
                    *geodesic,
                )
            })
        }
        ScaleKind::Dbscan {
            eps,
            min_samples,
            geodesic,
            time: None,
        } => clustered(layer, &outputs, |points| {
            if *geodesic {
                clusters::dbscan_on_sphere(points, *eps, *min_samples as usize)
            } else {
                clusters::dbscan(points, *eps, *min_samples as usize)
            }
        }),
        ScaleKind::Hdbscan {
            min_cluster_size,
            min_samples,
            geodesic,
            probability,
        } => {
            let (size, samples) = (*min_cluster_size as usize, *min_samples as usize);
            let points = clusters::points(layer)?;
            let present: Vec<[f64; 2]> = points.iter().flatten().flatten().copied().collect();
            let found = if *geodesic {
                hdbscan::hdbscan_haversine(&present, size, samples)
            } else {
                hdbscan::hdbscan(&present, size, samples)
            };
            labelled_with(
                layer,
                &outputs,
                &points,
                found.labels,
                probability.as_ref().map(|_| found.probabilities),
            )
        }
    }
}

/// The layer with each row's `labels` and, when given, `values` (one per row that has a point,
/// in order; NULL for the other rows) as the `outputs` columns.
fn labelled_with(
    layer: &Layer,
    outputs: &[(String, DataType)],
    points: &[Vec<Option<[f64; 2]>>],
    labels: Vec<i64>,
    values: Option<Vec<f64>>,
) -> Result<Layer, NativeError> {
    let mut labels = labels.into_iter();
    let mut numbers = values.as_ref().map(|v| v.iter().copied());
    let mut columns: Vec<Vec<ArrayRef>> = Vec::with_capacity(points.len());
    for batch in points {
        let label: Int64Array = batch
            .iter()
            .map(|p| p.and_then(|_| labels.next()))
            .collect();
        let mut out = vec![Arc::new(label) as ArrayRef];
        if let Some(numbers) = numbers.as_mut() {
            let value: Float64Array = batch
                .iter()
                .map(|p| p.and_then(|_| numbers.next()))
                .collect();
            out.push(Arc::new(value) as ArrayRef);
        }
        columns.push(out);
    }
    with_columns(layer, outputs, |batch| columns[batch].clone())
}

/// Each row's cluster from `cluster` (given the points of the rows that have one, in order);
/// NULL for a row without a point.
fn clustered(
    layer: &Layer,
    outputs: &[(String, DataType)],
    cluster: impl Fn(&[[f64; 2]]) -> Vec<i64>,
) -> Result<Layer, NativeError> {
    let points = clusters::points(layer)?;
    let present: Vec<[f64; 2]> = points.iter().flatten().flatten().copied().collect();
    let mut labels = cluster(&present).into_iter();
    let per_batch: Vec<Int64Array> = points
        .iter()
        .map(|batch| {
            batch
                .iter()
                .map(|p| p.and_then(|_| labels.next()))
                .collect()
        })
        .collect();
    with_columns(layer, outputs, |batch| {
        vec![Arc::new(per_batch[batch].clone()) as ArrayRef]
    })
}

/// [`clustered`] where the clustering also reads a per-row value (`per_row`, every row of
/// the layer in order): it is given the values of the rows that have a point.
fn clustered_with<T: Copy>(
    layer: &Layer,
    outputs: &[(String, DataType)],
    per_row: &[T],
    cluster: impl Fn(&[[f64; 2]], &[T]) -> Vec<i64>,
) -> Result<Layer, NativeError> {
    let points = clusters::points(layer)?;
    let values: Vec<T> = points
        .iter()
        .flatten()
        .zip(per_row)
        .filter_map(|(p, v)| p.map(|_| *v))
        .collect();
    clustered(layer, outputs, |present| cluster(present, &values))
}

/// The non-NULL values of `columns`, in row order.
fn present(columns: &[Float64Array]) -> Vec<f64> {
    columns.iter().flat_map(|a| a.iter().flatten()).collect()
}

/// The rescaling of `method` given the layer's values.
fn normalizer(
    method: NormalizeMethod,
    equal_value: f64,
    values: &[f64],
) -> Box<dyn Fn(f64) -> Option<f64>> {
    match method {
        NormalizeMethod::Log1p => Box::new(|v: f64| (v > -1.0).then(|| v.ln_1p())),
        NormalizeMethod::Log => Box::new(|v: f64| (v > 0.0).then(|| v.ln())),
        NormalizeMethod::Minmax => {
            let low = values.iter().copied().fold(f64::INFINITY, f64::min);
            let high = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let position = positions(values, |v| v);
            Box::new(move |v| Some(if high > low { position(v) } else { equal_value }))
        }
        NormalizeMethod::Rank => {
            let ranks = average_ranks(values);
            let n = values.len();
            Box::new(move |v| {
                let rank = ranks(v)?;
                Some(if n <= 1 {
                    1.0
                } else {
                    (rank - 1.0) / (n - 1) as f64
                })
            })
        }
        NormalizeMethod::Percent => {
            let total = numpy_sum(values);
            Box::new(move |v| Some(if total == 0.0 { 0.0 } else { v / total * 100.0 }))
        }
        NormalizeMethod::Zscore => {
            if values.is_empty() {
                return Box::new(|_| None);
            }
            // As scipy.stats.zscore: numpy's mean and population standard deviation.
            let m = mean(values);
            let squares: Vec<f64> = values.iter().map(|v| (v - m) * (v - m)).collect();
            let s = (numpy_sum(&squares) / values.len() as f64).sqrt();
            Box::new(move |v| Some(if s == 0.0 { 0.0 } else { (v - m) / s }))
        }
    }
}

/// The rank of a value among `values` from 1, equal values given the mean of their ranks (as
/// pandas' `rank(method="average")`).
fn average_ranks(values: &[f64]) -> impl Fn(f64) -> Option<f64> + use<> {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    move |v| {
        let below = sorted.partition_point(|x| *x < v);
        let through = sorted.partition_point(|x| *x <= v);
        // Ranks below + 1 ..= through, averaged.
        (through > below).then(|| (below + 1 + through) as f64 / 2.0)
    }
}

/// The position `(f(v) − f(min)) / (f(max) − f(min))` of a value among `values` (0 when they
/// are all equal).
fn positions<F: Fn(f64) -> f64>(values: &[f64], f: F) -> impl Fn(f64) -> f64 + use<F> {
    let low = values.iter().copied().fold(f64::INFINITY, f64::min);
    let high = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let (low, high) = (f(low), f(high));
    move |v| {
        if high > low {
            (f(v) - low) / (high - low)
        } else {
            0.0
        }
    }
}

/// A value's position (0 to 1) along a ramp, `None` where it has none (NaN; out of a log or
/// square-root scale's reach).
fn ramp_position(position: &RampPosition, values: &[f64]) -> impl Fn(f64) -> Option<f64> + use<> {
    let [low, high] = position.domain.unwrap_or_else(|| {
        [
            values.iter().copied().fold(f64::INFINITY, f64::min),
            values.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        ]
    });
    let (scale, equal) = (position.scale, position.equal);
    move |v: f64| {
        if v.is_nan() {
            return None;
        }
        if high == low {
            return Some(equal);
        }
        let t = match scale {
            RampScale::Linear => (v - low) / (high - low),
            RampScale::Log if v <= 0.0 || low <= 0.0 => return None,
            RampScale::Log => (v.ln() - low.ln()) / (high.ln() - low.ln()),
            RampScale::Sqrt if v < 0.0 || low < 0.0 => return None,
            RampScale::Sqrt => (v.sqrt() - low.sqrt()) / (high.sqrt() - low.sqrt()),
        };
        (!t.is_nan()).then(|| t.clamp(0.0, 1.0))
    }
}

/// A category's key: numbers compare as numbers, anything else as its text.
#[derive(Debug, Clone, PartialEq)]
enum Key {
    Number(f64),
    Text(String),
}

impl Key {
    fn order(&self, other: &Self) -> Ordering {
        match (self, other) {
            (Self::Number(a), Self::Number(b)) => a.total_cmp(b),
            (Self::Text(a), Self::Text(b)) => a.cmp(b),
            (Self::Number(_), Self::Text(_)) => Ordering::Less,
            (Self::Text(_), Self::Number(_)) => Ordering::Greater,
        }
    }
}

/// One class per distinct value, most frequent first (ties by value), the rest in `other`.
fn categories(
    layer: &Layer,
    op: &ScaleOp,
    outputs: &[(String, DataType)],
    (max_classes, first_seen): (usize, bool),
    colors: Option<&ClassColors>,
) -> Result<Layer, NativeError> {
    let index = layer.column_index(&op.field)?;
    let numeric = layer.schema.field(index).data_type().is_numeric();
    let mut rows: Vec<Vec<Option<(Key, String)>>> = Vec::new();
    for batch in &layer.batches {
        let column = batch.column(index);
        let text = cast(column, &DataType::Utf8).map_err(NativeError::arrow)?;
        let text = text
            .as_any()
            .downcast_ref::<StringArray>()
            .ok_or_else(|| NativeError::Arrow("a cast to text gave another type".into()))?;
        let values = if numeric {
            Some(cast(column, &DataType::Float64).map_err(NativeError::arrow)?)
        } else {
            None
        };
        let values = values
            .as_ref()
            .and_then(|v| v.as_any().downcast_ref::<Float64Array>());
        rows.push(
            (0..text.len())
                .map(|i| {
                    if text.is_null(i) {
                        return None;
                    }
                    let label = text.value(i).to_owned();
                    let key = match values {
                        Some(values) => Key::Number(values.value(i)),
                        None => Key::Text(label.clone()),
                    };
                    Some((key, label))
                })
                .collect(),
        );
    }
    let mut counts: Vec<(Key, String, usize)> = Vec::new();
    let mut seen: HashMap<String, usize> = HashMap::new();
    for (key, label) in rows.iter().flatten().flatten() {
        match seen.get(label) {
            Some(&at) => counts[at].2 += 1,
            None => {
                seen.insert(label.clone(), counts.len());
                counts.push((key.clone(), label.clone(), 1));
            }
        }
    }
    // `counts` is in first-seen order, which a stable sort keeps among equal counts.
    if first_seen {
        counts.sort_by_key(|c| std::cmp::Reverse(c.2));
    } else {
        counts.sort_by(|a, b| b.2.cmp(&a.2).then_with(|| a.0.order(&b.0)));
    }
    let named = if counts.len() > max_classes {
        max_classes - 1
    } else {
        counts.len()
    };
    let class_of: HashMap<&str, usize> = counts
        .iter()
        .enumerate()
        .map(|(rank, (_, label, _))| (label.as_str(), rank.min(named)))
        .collect();
    let classes = if counts.len() > max_classes {
        max_classes
    } else {
        counts.len()
    };
    let palette: Option<Vec<String>> = match colors {
        Some(colors) => Some(
            palettes::colors(&colors.scheme, classes)
                .ok_or_else(|| NativeError::Declined(format!("the scheme {}", colors.scheme)))?
                .into_iter()
                .map(palettes::hex)
                .collect(),
        ),
        None => None,
    };
    with_columns(layer, outputs, |batch| {
        let assigned: Vec<Option<(usize, &str)>> = rows[batch]
            .iter()
            .map(|row| {
                row.as_ref().and_then(|(_, label)| {
                    let class = *class_of.get(label.as_str())?;
                    Some((
                        class,
                        if class < named {
                            label.as_str()
                        } else {
                            "other"
                        },
                    ))
                })
            })
            .collect();
        let class: Int64Array = assigned.iter().map(|a| a.map(|(c, _)| c as i64)).collect();
        let label: StringArray = assigned.iter().map(|a| a.map(|(_, l)| l)).collect();
        let mut arrays: Vec<ArrayRef> = vec![Arc::new(class), Arc::new(label)];
        if let Some(palette) = &palette {
            let color: StringArray = assigned
                .iter()
                .map(|a| a.and_then(|(c, _)| palette.get(c).cloned()))
                .collect();
            arrays.push(Arc::new(color));
        }
        arrays
    })
}

/// Two classifications and a blended colour per pair of classes.
fn bivariate(
    layer: &Layer,
    op: &ScaleOp,
    outputs: &[(String, DataType)],
    other: &str,
    method: ClassMethod,
    classes: usize,
    (scheme_x, scheme_y): &(String, String),
) -> Result<Layer, NativeError> {
    let xs = numbers(layer, &op.field)?;
    let ys = numbers(layer, other)?;
    // The breaks of each field over the features that have both values (the ones mapped).
    let (both_x, both_y): (Vec<f64>, Vec<f64>) = xs
        .iter()
        .zip(&ys)
        .flat_map(|(x, y)| x.iter().zip(y.iter()))
        .filter_map(|(x, y)| Some((x?, y?)))
        .unzip();
    let (bins_x, bins_y) = (
        breaks(method, &both_x, classes),
        breaks(method, &both_y, classes),
    );
    let colors = |scheme: &str, n: usize| {
        palettes::colors(scheme, n)
            .ok_or_else(|| NativeError::Declined(format!("the scheme {scheme}")))
    };
    let (colors_x, colors_y) = (
        colors(scheme_x, bins_x.len())?,
        colors(scheme_y, bins_y.len())?,
    );
    let side = bins_x.len();
    with_columns(layer, outputs, |batch| {
        let pairs: Vec<Option<(usize, usize)>> = xs[batch]
            .iter()
            .zip(ys[batch].iter())
            .map(|(x, y)| Some((class_of(&bins_x, x?), class_of(&bins_y, y?))))
            .collect();
        let class: Int64Array = pairs
            .iter()
            .map(|p| p.map(|(x, y)| (y * side + x) as i64))
            .collect();
        let x: Int64Array = pairs.iter().map(|p| p.map(|(x, _)| x as i64)).collect();
        let y: Int64Array = pairs.iter().map(|p| p.map(|(_, y)| y as i64)).collect();
        let color: StringArray = pairs
            .iter()
            .map(|p| p.map(|(x, y)| palettes::hex(palettes::multiply(colors_x[x], colors_y[y]))))
            .collect();
        vec![Arc::new(class), Arc::new(x), Arc::new(y), Arc::new(color)]
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_values_share_their_average_rank() {
        let rank = average_ranks(&[3.0, 1.0, 3.0, 2.0, 3.0]);
        assert_eq!(rank(1.0), Some(1.0));
        assert_eq!(rank(2.0), Some(2.0));
        assert_eq!(rank(3.0), Some(4.0));
        assert_eq!(rank(9.0), None);
        let rescale = normalizer(NormalizeMethod::Rank, 0.0, &[3.0, 1.0, 3.0, 2.0, 3.0]);
        assert_eq!(rescale(3.0), Some(0.75));
        let equal = normalizer(NormalizeMethod::Minmax, 0.5, &[7.0, 7.0]);
        assert_eq!(equal(7.0), Some(0.5));
    }
}
