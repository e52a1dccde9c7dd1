//! Class breaks of a numeric field, computed as PySAL's mapclassify computes them (the same
//! floating-point steps, so the same breaks for the same values), and the class of each row.

use std::sync::Arc;

use arrow::array::{Array, ArrayRef, Float64Array, Int64Array, RecordBatch, StringArray};
use arrow::compute::cast;
use arrow::datatypes::{DataType, Field, Schema};
use geomill_planner::plan::operator::ClassMethod;
use geomill_planner::plan::ops::classify::ClassifyOp;

use super::NativeError;
use super::layer::Layer;
use super::tessellation::arange;

/// A sum as numpy's `add.reduce` computes it over a contiguous array of `T` (`f64` or `f32`):
/// pairwise, in blocks of eight accumulators up to 128 values, halves above (rounding included).
pub(crate) fn numpy_sum<T>(values: &[T]) -> T
where
    T: Copy + Default + std::ops::Add<Output = T> + std::ops::AddAssign,
{
    let n = values.len();
    if n < 8 {
        return values.iter().fold(T::default(), |sum, v| sum + *v);
    }
    if n <= 128 {
        let mut r = [T::default(); 8];
        r.copy_from_slice(&values[..8]);
        let mut i = 8;
        while i < n - n % 8 {
            for (j, slot) in r.iter_mut().enumerate() {
                *slot += values[i + j];
            }
            i += 8;
        }
        let mut sum = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        for v in &values[i..] {
            sum += *v;
        }
        return sum;
    }
    let half = n / 2;
    let half = half - half % 8;
    numpy_sum(&values[..half]) + numpy_sum(&values[half..])
}

pub(super) fn mean(values: &[f64]) -> f64 {
    numpy_sum(values) / values.len() as f64
}

/// `scipy.stats.scoreatpercentile(sorted, percent)`: between ranks `i` and `j = i + 1`, the
/// values weighted `(j - index, index - i)`, summed, and divided by the weights' sum.
fn score_at_percentile(sorted: &[f64], percent: f64) -> f64 {
    let index = percent / 100.0 * (sorted.len() - 1) as f64;
    let i = index.trunc();
    let at = i as usize;
    if i == index {
        return sorted[at.min(sorted.len() - 1)];
    }
    let j = i + 1.0;
    let (a, b) = (sorted[at], sorted[(at + 1).min(sorted.len() - 1)]);
    let (wa, wb) = (j - index, index - i);
    (0.0 + a * wa + b * wb) / (0.0 + wa + wb)
}

/// `mapclassify.Quantiles`: the scores at `100/k, 200/k, ..., 100` percent, distinct.
fn quantiles(sorted: &[f64], k: usize) -> Vec<f64> {
    let width = 100.0 / k as f64;
    let mut percents = arange(width, 100.0 + width, width);
    if let Some(last) = percents.last_mut()
        && *last > 100.0
    {
        *last = 100.0;
    }
    let mut bins: Vec<f64> = percents
        .into_iter()
        .map(|p| score_at_percentile(sorted, p))
        .collect();
    bins.sort_by(f64::total_cmp);
    bins.dedup();
    bins
}

/// pandas' `qcut` upper bounds: numpy's linear quantiles at `linspace(0, 1, k + 1)` (its
/// arithmetic: the fraction `i * (1 / k)`, the last exactly 1, moved up one ulp by pandas where
/// `k * fraction != i`, and numpy's two-sided lerp),
/// distinct, above the minimum (the lowest class's lower edge); the maximum when all values
/// are equal.
fn qcut(sorted: &[f64], k: usize, min: f64) -> Vec<f64> {
    let n = sorted.len();
    let step = 1.0 / k as f64;
    let mut bins: Vec<f64> = (1..=k)
        .map(|i| {
            let mut q = if i == k { 1.0 } else { i as f64 * step };
            if k as f64 * q != i as f64 {
                q = q.next_up();
            }
            let at = q * (n - 1) as f64;
            let below = (at.floor() as usize).min(n - 1);
            let above = (below + 1).min(n - 1);
            let t = at - below as f64;
            let (a, b) = (sorted[below], sorted[above]);
            let diff = b - a;
            if t >= 0.5 {
                b - diff * (1.0 - t)
            } else {
                a + diff * t
            }
        })
        .collect();
    bins.sort_by(f64::total_cmp);
    bins.dedup();
    if bins.len() > 1 {
        bins.retain(|b| *b > min);
    }
    bins
}

/// `mapclassify.EqualInterval`: `k` classes of equal width, the last ending at the maximum.
fn equal_interval(min: f64, max: f64, k: usize) -> Vec<f64> {
    let width = (max - min) / k as f64;
    if width == 0.0 {
        return vec![max];
    }
    let mut cuts = arange(min + width, max + width, width);
    cuts.truncate(k);
    if let Some(last) = cuts.last_mut() {
        *last = max;
    }
    cuts
}

/// `mapclassify.StdMean` with its default multiples (−2, −1, 1, 2): the mean plus those
/// multiples of the sample standard deviation, then the maximum if above the last.
fn std_mean(values: &[f64], max: f64) -> Vec<f64> {
    let m = mean(values);
    let squares: Vec<f64> = values.iter().map(|v| (v - m) * (v - m)).collect();
    let s = (numpy_sum(&squares) / (values.len() as f64 - 1.0)).sqrt();
    let mut cuts: Vec<f64> = [-2.0, -1.0, 1.0, 2.0].iter().map(|w| m + s * w).collect();
    if cuts.last().is_some_and(|last| *last < max) {
        cuts.push(max);
    }
    cuts
}

/// mapclassify's `_pretty_number`.
fn pretty_number(x: f64, rounded: bool) -> f64 {
    let exp = x.log10().floor();
    let f = x / 10_f64.powf(exp);
    let nf = if rounded {
        if f < 1.5 {
            1.0
        } else if f < 3.0 {
            2.0
        } else if f < 7.0 {
            5.0
        } else {
            10.0
        }
    } else if f <= 1.0 {
        1.0
    } else if f <= 2.0 {
        2.0
    } else if f <= 5.0 {
        5.0
    } else {
        10.0
    };
    nf * 10_f64.powf(exp)
}

/// `mapclassify.PrettyBreaks`: round steps covering the range, without the first.
fn pretty(min: f64, max: f64, k: usize) -> Vec<f64> {
    if max == min {
        return vec![max];
    }
    let range = pretty_number(max - min, false);
    let d = pretty_number(range / (k as f64 - 1.0), true);
    let low = (min / d).floor() * d;
    let high = (max / d).ceil() * d;
    arange(low, high + 0.5 * d, d).into_iter().skip(1).collect()
}

/// `mapclassify.HeadTailBreaks` over the values in row order: the mean, then the mean of the
/// values above it, while more than one distinct value is left.
fn head_tail(values: &[f64]) -> Vec<f64> {
    let mut cuts: Vec<f64> = Vec::new();
    let mut head = values.to_vec();
    while !head.is_empty() {
        let m = mean(&head);
        if cuts.last() == Some(&m) {
            break;
        }
        cuts.push(m);
        let first = head[0];
        if head.iter().all(|v| *v == first) {
            break;
        }
        head.retain(|v| *v > m);
    }
    cuts
}

/// Fisher–Jenks natural breaks as mapclassify's `_fisher_jenks_means` computes them: the
/// variance table in single precision, the breaks read back from the sorted values.
fn fisher_jenks(sorted: &[f64], classes: usize) -> Vec<f64> {
    let n = sorted.len();
    let mut lower = vec![vec![0_usize; classes + 1]; n + 1];
    let mut variance = vec![vec![0_f32; classes + 1]; n + 1];
    for slot in lower[1].iter_mut().skip(1) {
        *slot = 1;
    }
    for row in variance.iter_mut().skip(2) {
        for slot in row.iter_mut().skip(1) {
            *slot = f32::INFINITY;
        }
    }
    let mut v = 0_f32;
    for l in 2..=n {
        let (mut s1, mut s2, mut w) = (0_f32, 0_f32, 0_f32);
        for m in 1..=l {
            let i3 = l - m + 1;
            #[allow(clippy::cast_possible_truncation)]
            let value = sorted[i3 - 1] as f32;
            s2 += value * value;
            s1 += value;
            w += 1.0;
            v = s2 - (s1 * s1) / w;
            let i4 = i3 - 1;
            if i4 != 0 {
                for j in 2..=classes {
                    let candidate = v + variance[i4][j - 1];
                    if variance[l][j] >= candidate {
                        lower[l][j] = i3;
                        variance[l][j] = candidate;
                    }
                }
            }
        }
        lower[l][1] = 1;
        variance[l][1] = v;
    }
    let mut breaks = vec![0.0; classes + 1];
    breaks[classes] = sorted[n - 1];
    breaks[0] = sorted[0];
    let mut k = n;
    for count in (2..=classes).rev() {
        let pivot = lower[k][count];
        breaks[count - 1] = sorted[pivot.saturating_sub(2)];
        k = pivot.saturating_sub(1);
    }
    breaks.remove(0);
    breaks
}

/// The upper bound of each class of `values` (in row order, none NULL or NaN) by `method`,
/// ascending. Fewer distinct values than `classes` asks for (Fisher–Jenks) gives one class
/// per distinct value.
pub fn breaks(method: ClassMethod, values: &[f64], classes: usize) -> Vec<f64> {
    if values.is_empty() {
        return Vec::new();
    }
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let (min, max) = (sorted[0], sorted[sorted.len() - 1]);
    match method {
        ClassMethod::Jenks => {
            let mut distinct = sorted.clone();
            distinct.dedup();
            if distinct.len() <= classes {
                distinct
            } else {
                fisher_jenks(&sorted, classes)
            }
        }
        ClassMethod::Quantile => quantiles(&sorted, classes),
        ClassMethod::Qcut => qcut(&sorted, classes, min),
        ClassMethod::EqualInterval => equal_interval(min, max, classes),
        ClassMethod::StdDev => std_mean(values, max),
        ClassMethod::Pretty => pretty(min, max, classes),
        ClassMethod::HeadTailBreaks => head_tail(values),
        ClassMethod::HeadTailRatio => head_tail_ratio(values, classes, min, max),
    }
}

/// The share of the values the head above a mean may hold for head/tail breaks to go on.
const HEAD_RATIO: f64 = 0.4;

/// Head/tail breaks stopped by the head's share (GISPulse's): at most `depth` means, each of
/// the values above the last while they were at most [`HEAD_RATIO`] of them; then the upper
/// bounds: the means above `min`, and `max`.
fn head_tail_ratio(values: &[f64], depth: usize, min: f64, max: f64) -> Vec<f64> {
    let mut means = Vec::new();
    let mut rest = values.to_vec();
    for _ in 0..depth {
        if rest.len() <= 1 {
            break;
        }
        let m = mean(&rest);
        means.push(m);
        let head: Vec<f64> = rest.iter().copied().filter(|v| *v > m).collect();
        if head.is_empty() || head.len() as f64 / rest.len() as f64 > HEAD_RATIO {
            break;
        }
        rest = head;
    }
    means.push(max);
    means.retain(|b| *b > min || *b == max);
    means.sort_by(f64::total_cmp);
    means.dedup();
    means
}

/// The class of `value` (as mapclassify's `bin1d`): the first whose upper bound is at least
/// the value; a value above every bound is in the last class.
pub fn class_of(bins: &[f64], value: f64) -> usize {
    bins.iter()
        .position(|upper| value <= *upper)
        .unwrap_or(bins.len().saturating_sub(1))
}

/// The field's values as f64 per batch (NULL for NULL and NaN).
pub(super) fn numbers(layer: &Layer, field: &str) -> Result<Vec<Float64Array>, NativeError> {
    let index = layer.column_index(field)?;
    layer
        .batches
        .iter()
        .map(|batch| {
            let column = batch.column(index);
            if !column.data_type().is_numeric() {
                return Err(NativeError::Column {
                    column: field.to_owned(),
                    problem: format!("holds {} values, not numbers", column.data_type()),
                });
            }
            let as_f64 = cast(column, &DataType::Float64).map_err(NativeError::arrow)?;
            let array = as_f64
                .as_any()
                .downcast_ref::<Float64Array>()
                .cloned()
                .ok_or_else(|| NativeError::Arrow("a cast to Float64 gave another type".into()))?;
            Ok(array.iter().map(|v| v.filter(|x| !x.is_nan())).collect())
        })
        .collect()
}

/// The colour of each of `classes` classes as `#rrggbb`, when the step colours them.
fn class_colors(op: &ClassifyOp, classes: usize) -> Result<Option<Vec<String>>, NativeError> {
    let Some(colors) = &op.colors else {
        return Ok(None);
    };
    let mut palette = geomill_planner::palettes::colors(&colors.scheme, classes)
        .ok_or_else(|| NativeError::Declined(format!("the colour scheme {:?}", colors.scheme)))?;
    if colors.reverse {
        palette.reverse();
    }
    Ok(Some(
        palette
            .into_iter()
            .map(geomill_planner::palettes::hex)
            .collect(),
    ))
}

/// The most values Fisher–Jenks breaks are computed over: its table grows with the square of
/// the count (30,000 values: seconds; a million: days).
pub const JENKS_MAX_VALUES: usize = 30_000;

/// The layer with the classification's three fields added (or replaced).
pub fn classify(layer: &Layer, op: &ClassifyOp) -> Result<Layer, NativeError> {
    let numbers = numbers(layer, &op.field)?;
    let values: Vec<f64> = numbers.iter().flat_map(|a| a.iter().flatten()).collect();
    if op.method == ClassMethod::Jenks && values.len() > JENKS_MAX_VALUES {
        return Err(NativeError::Column {
            column: op.field.clone(),
            problem: format!(
                "has {} values: natural breaks (jenks) are computed exactly over at most {JENKS_MAX_VALUES} \
                 (the work grows with the square of the count); use quantile, equal_interval or \
                 head_tail_breaks, or filter the layer first",
                values.len()
            ),
        });
    }
    let bins = breaks(op.method, &values, op.classes as usize);
    let min = values.iter().copied().fold(f64::INFINITY, f64::min);
    let palette = class_colors(op, bins.len())?;
    let [class_name, lower_name, upper_name] = op.output_columns();
    let mut outputs = vec![
        (class_name, DataType::Int64),
        (lower_name, DataType::Float64),
        (upper_name, DataType::Float64),
    ];
    if let Some(colors) = &op.colors {
        outputs.push((colors.field.clone(), DataType::Utf8));
    }
    if let Some(count) = &op.count {
        outputs.push((count.clone(), DataType::Int64));
    }
    with_columns(layer, &outputs, |batch_index| {
        let values = &numbers[batch_index];
        let classes: Vec<Option<usize>> = values
            .iter()
            .map(|v| v.filter(|_| !bins.is_empty()).map(|v| class_of(&bins, v)))
            .collect();
        let class = Int64Array::from_iter(classes.iter().map(|c| c.map(|c| c as i64)));
        let lower = Float64Array::from_iter(
            classes
                .iter()
                .map(|c| c.map(|c| if c == 0 { min } else { bins[c - 1] })),
        );
        let upper = Float64Array::from_iter(classes.iter().map(|c| c.map(|c| bins[c])));
        let mut arrays: Vec<ArrayRef> = vec![Arc::new(class), Arc::new(lower), Arc::new(upper)];
        if let Some(palette) = &palette {
            let colors: StringArray = classes
                .iter()
                .map(|c| c.and_then(|c| palette.get(c).cloned()))
                .collect();
            arrays.push(Arc::new(colors));
        }
        if op.count.is_some() {
            arrays.push(Arc::new(Int64Array::from(vec![
                bins.len() as i64;
                values.len()
            ])));
        }
        arrays
    })
}

/// `layer` with the columns `outputs` (name, type) added, or replaced where the name exists;
/// `arrays` gives each batch's arrays (by batch index), in the order of `outputs`.
pub(super) fn with_columns(
    layer: &Layer,
    outputs: &[(String, DataType)],
    arrays: impl Fn(usize) -> Vec<ArrayRef>,
) -> Result<Layer, NativeError> {
    let mut fields: Vec<Arc<Field>> = layer.schema.fields().iter().cloned().collect();
    let mut slots = Vec::new();
    for (name, ty) in outputs {
        let field = Arc::new(Field::new(name, ty.clone(), true));
        match layer.schema.index_of(name) {
            Ok(index) => {
                fields[index] = field;
                slots.push(index);
            }
            Err(_) => {
                fields.push(field);
                slots.push(fields.len() - 1);
            }
        }
    }
    let schema = Arc::new(Schema::new(fields));
    let batches = layer
        .batches
        .iter()
        .enumerate()
        .map(|(index, batch)| {
            let mut columns = batch.columns().to_vec();
            for (slot, array) in slots.iter().zip(arrays(index)) {
                if *slot < columns.len() {
                    columns[*slot] = array;
                } else {
                    columns.push(array);
                }
            }
            RecordBatch::try_new(schema.clone(), columns).map_err(NativeError::arrow)
        })
        .collect::<Result<Vec<_>, _>>()?;
    Layer::new(schema, batches, &layer.geometry, layer.crs.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numpy_sums_pairwise() {
        let values: Vec<f64> = (0..1000).map(|i| 0.1 * f64::from(i)).collect();
        // The same value numpy gives for numpy.arange(1000) * 0.1 summed.
        assert!((numpy_sum(&values) - 49_950.0).abs() < 1e-9);
        assert_eq!(numpy_sum(&[1.0, 2.0]), 3.0);
    }

    #[test]
    fn quantiles_of_a_range_are_mapclassifys() {
        let values: Vec<f64> = (0..1000).map(f64::from).collect();
        assert_eq!(quantiles(&values, 4), [249.75, 499.5, 749.25, 999.0]);
        // mapclassify answers these (its docstring shows them rounded to 333, 666, 999).
        assert_eq!(
            quantiles(&values, 3),
            [333.000_000_000_000_06, 666.000_000_000_000_1, 999.0]
        );
    }

    #[test]
    fn jenks_separates_clear_groups() {
        let values = [1.0, 1.1, 1.2, 5.0, 5.1, 9.0, 9.2, 9.1];
        assert_eq!(breaks(ClassMethod::Jenks, &values, 3), [1.2, 5.1, 9.2]);
        assert_eq!(class_of(&[1.2, 5.1, 9.2], 5.0), 1);
        assert_eq!(breaks(ClassMethod::Jenks, &[2.0, 2.0, 3.0], 5), [2.0, 3.0]);
        // pandas: qcut([1, 1, 1, 1, 2], 5, duplicates="drop") has edges [1, 1.2, 2]: two classes.
        let ones = [1.0, 1.0, 1.0, 1.0, 2.0];
        let quantile = breaks(ClassMethod::Quantile, &ones, 5);
        assert_eq!(quantile.len(), 3);
        assert_eq!(quantile[0], 1.0);
        assert_eq!(breaks(ClassMethod::Qcut, &ones, 5), quantile[1..]);
        assert_eq!(breaks(ClassMethod::Qcut, &[3.0, 3.0], 4), [3.0]);
    }

    #[test]
    fn head_tail_stops_at_one_distinct_value() {
        let values = [1.0, 1.0, 2.0, 10.0];
        assert_eq!(breaks(ClassMethod::HeadTailBreaks, &values, 5), [3.5, 10.0]);
    }

    #[test]
    fn head_tail_ratio_stops_once_the_head_is_too_large() {
        assert_eq!(
            breaks(ClassMethod::HeadTailRatio, &[1.0, 1.0, 2.0, 10.0], 12),
            [3.5, 10.0]
        );
        // The head above 3 holds 40 % (goes on), above 4.5 half (stops after that mean).
        assert_eq!(
            breaks(ClassMethod::HeadTailRatio, &[1.0, 2.0, 3.0, 4.0, 5.0], 12),
            [3.0, 4.5, 5.0]
        );
        assert_eq!(
            breaks(ClassMethod::HeadTailRatio, &[1.0, 2.0, 3.0, 4.0, 5.0], 1),
            [3.0, 5.0]
        );
    }
}
