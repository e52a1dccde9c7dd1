//! Coverage-weighted zonal statistics, as exactextract 0.3 computes them: each cell weighted by
//! the fraction of its area a polygon covers (float32, shell fractions less hole fractions,
//! ring by ring), cells outside the raster, nodata or NaN left out; sums in float64, the
//! variance by West's weighted algorithm in row order, quantiles over the distinct values
//! weighted by their coverage, the majority the value of largest coverage (the largest value on
//! ties), results the band's type where exactextract answers it (min, max, quantiles, majority).

use std::collections::BTreeMap;

use geomill_planner::plan::ops::zonal_stats::ZonalStat;

/// A polygon's rings (the first its shell), each a closed list of points.
pub type Rings = Vec<Vec<(f64, f64)>>;

/// A window of a north-up grid: its top-left corner, cell size (`dy` negative) and size.
#[derive(Debug, Clone, Copy)]
pub struct CellWindow {
    pub x0: f64,
    pub y0: f64,
    pub dx: f64,
    pub dy: f64,
    pub cols: usize,
    pub rows: usize,
}

/// The fraction of each cell of `window` (row-major) the polygons cover.
pub fn coverage(polygons: &[Rings], window: &CellWindow) -> Vec<f32> {
    let mut total = vec![0.0_f32; window.cols * window.rows];
    for rings in polygons {
        for (k, ring) in rings.iter().enumerate() {
            let sign = if k == 0 { 1.0_f32 } else { -1.0 };
            ring_fractions(ring, window, |cell, fraction| {
                #[allow(clippy::cast_possible_truncation)]
                let fraction = fraction as f32;
                total[cell] += sign * fraction;
            });
        }
    }
    total
}

/// Calls `add(cell, fraction)` for every cell of `window` the ring covers a part of.
fn ring_fractions(ring: &[(f64, f64)], w: &CellWindow, mut add: impl FnMut(usize, f64)) {
    let (height, width) = (w.dy.abs(), w.dx.abs());
    let cell_area = width * height;
    for row in 0..w.rows {
        #[allow(clippy::cast_precision_loss)]
        let top = w.y0 + row as f64 * w.dy;
        let bottom = top + w.dy;
        let (low, high) = (bottom.min(top), bottom.max(top));
        let strip = clip(ring, |p| p.1 >= low, |p| p.1 <= high, Axis::Y, low, high);
        if strip.len() < 3 {
            continue;
        }
        // The columns an edge of the ring crosses in this row: cut exactly; the others lie
        // wholly inside or outside the ring (told by the row's centre line).
        let mut crossed = vec![false; w.cols];
        let column = |x: f64| ((x - w.x0) / w.dx).floor();
        for pair in strip.windows(2) {
            let ((xa, ya), (xb, yb)) = (pair[0], pair[1]);
            let on_border = ya == yb && (ya == low || ya == high);
            if on_border {
                continue;
            }
            let (c0, c1) = (column(xa.min(xb)), column(xa.max(xb)));
            #[allow(clippy::cast_precision_loss)]
            let last = (w.cols - 1) as f64;
            if c1 < 0.0 || c0 > last {
                continue;
            }
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
            let (first, through) = (c0.max(0.0) as usize, c1.min(last) as usize);
            crossed[first..=through].fill(true);
        }
        let centre = (low + high) / 2.0;
        let crossings = crossings_at(ring, centre);
        for (col, &cut) in crossed.iter().enumerate() {
            #[allow(clippy::cast_precision_loss)]
            let left = w.x0 + col as f64 * w.dx;
            let right = left + w.dx;
            let (xl, xr) = (left.min(right), left.max(right));
            let fraction = if cut {
                let piece = clip(&strip, |p| p.0 >= xl, |p| p.0 <= xr, Axis::X, xl, xr);
                area(&piece, (xl, low)).abs() / cell_area
            } else {
                let x = (xl + xr) / 2.0;
                let inside = crossings.iter().filter(|&&c| c < x).count() % 2 == 1;
                if inside { 1.0 } else { 0.0 }
            };
            if fraction > 0.0 {
                add(row * w.cols + col, fraction);
            }
        }
    }
}

#[derive(Clone, Copy)]
enum Axis {
    X,
    Y,
}

/// The ring clipped to the band `low <= coordinate <= high` on `axis` (Sutherland-Hodgman on
/// each side: the result may have zero-width parts, its signed area is the intersection's).
fn clip(
    ring: &[(f64, f64)],
    above_low: impl Fn(&(f64, f64)) -> bool,
    below_high: impl Fn(&(f64, f64)) -> bool,
    axis: Axis,
    low: f64,
    high: f64,
) -> Vec<(f64, f64)> {
    let once = clip_side(ring, &above_low, axis, low);
    clip_side(&once, &below_high, axis, high)
}

/// The closed ring clipped to the half-plane `keep` whose border is `coordinate = at`.
fn clip_side(
    ring: &[(f64, f64)],
    keep: &impl Fn(&(f64, f64)) -> bool,
    axis: Axis,
    at: f64,
) -> Vec<(f64, f64)> {
    let mut out = Vec::with_capacity(ring.len() + 4);
    if ring.len() < 2 {
        return out;
    }
    let cross = |a: (f64, f64), b: (f64, f64)| match axis {
        Axis::X => {
            let t = (at - a.0) / (b.0 - a.0);
            (at, a.1 + t * (b.1 - a.1))
        }
        Axis::Y => {
            let t = (at - a.1) / (b.1 - a.1);
            (a.0 + t * (b.0 - a.0), at)
        }
    };
    // The ring is closed: its last point repeats the first.
    for pair in ring.windows(2) {
        let (a, b) = (pair[0], pair[1]);
        match (keep(&a), keep(&b)) {
            (true, true) => out.push(b),
            (true, false) => out.push(cross(a, b)),
            (false, true) => {
                out.push(cross(a, b));
                out.push(b);
            }
            (false, false) => {}
        }
    }
    if let Some(&first) = out.first() {
        out.push(first);
    }
    out
}

/// The shoelace area of a closed ring (signed), its points taken from `origin` (a corner of
/// the cell: far from the coordinates' origin, their products would lose the area's digits).
fn area(ring: &[(f64, f64)], (ox, oy): (f64, f64)) -> f64 {
    ring.windows(2)
        .map(|p| (p[0].0 - ox) * (p[1].1 - oy) - (p[1].0 - ox) * (p[0].1 - oy))
        .sum::<f64>()
        / 2.0
}

/// Where the ring's edges cross the line `y`, as x values (half-open: an edge counts when
/// `y` lies in [its lower end, its upper end)).
fn crossings_at(ring: &[(f64, f64)], y: f64) -> Vec<f64> {
    ring.windows(2)
        .filter_map(|p| {
            let ((xa, ya), (xb, yb)) = (p[0], p[1]);
            let (lo, hi) = (ya.min(yb), ya.max(yb));
            (lo <= y && y < hi).then(|| xa + (y - ya) / (yb - ya) * (xb - xa))
        })
        .collect()
}

/// How the band's values are typed, for the statistics exactextract answers in it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CellType {
    Integer,
    Float32,
    Float64,
}

impl CellType {
    /// A value as the band's type holds it (exactextract's `static_cast<T>`).
    fn cast(self, v: f64) -> f64 {
        match self {
            CellType::Integer => v.trunc(),
            #[allow(clippy::cast_possible_truncation)]
            CellType::Float32 => f64::from(v as f32),
            CellType::Float64 => v,
        }
    }
}

/// The statistics `stats` of the cells (`values` with their `coverage`; `valid` false for a
/// cell outside the raster, nodata or NaN), as exactextract names and computes them: `count`
/// Σc, `sum` Σxc, `mean`, `min`, `max`, `std` (exactextract's `stdev`), `median` and
/// `percentile_q` (its weighted quantiles), `majority`, `minority`, `unique` (`variety`),
/// `range`.
pub fn coverage_stats(
    values: &[f64],
    coverage: &[f32],
    valid: &[bool],
    stats: &[ZonalStat],
    cell_type: CellType,
) -> Vec<Option<f64>> {
    let (mut sum_c, mut sum_xc) = (0.0_f64, 0.0_f64);
    let (mut min, mut max) = (f64::INFINITY, f64::NEG_INFINITY);
    let (mut west_w, mut west_mean, mut west_t) = (0.0_f64, 0.0_f64, 0.0_f64);
    // The covered area of each distinct value, for the statistics that need it (a map insert a
    // cell is most of the time of a zone otherwise).
    let by_value = needs_each_value(stats);
    let mut frequencies: BTreeMap<OrderedValue, f64> = BTreeMap::new();
    for ((&x, &c), &ok) in values.iter().zip(coverage).zip(valid) {
        if !ok || c < f32::MIN_POSITIVE {
            continue;
        }
        let c = f64::from(c);
        sum_c += c;
        sum_xc += x * c;
        min = min.min(x);
        max = max.max(x);
        let old = west_mean;
        west_w += c;
        west_mean += (c / west_w) * (x - old);
        west_t += c * (x - old) * (x - west_mean);
        if by_value {
            *frequencies.entry(OrderedValue(x)).or_insert(0.0) += c;
        }
    }
    let empty = sum_c == 0.0;
    stats
        .iter()
        .map(|stat| match stat {
            ZonalStat::Count => Some(sum_c),
            ZonalStat::Sum => Some(sum_xc),
            ZonalStat::Unique => Some(frequencies.len() as f64),
            _ if empty => None,
            ZonalStat::Mean => Some(sum_xc / sum_c),
            ZonalStat::Min => Some(min),
            ZonalStat::Max => Some(max),
            ZonalStat::Range => Some(max - min),
            ZonalStat::Std => Some((west_t / west_w).sqrt()),
            ZonalStat::Median => Some(cell_type.cast(quantile(&frequencies, 0.5))),
            ZonalStat::Percentile(q) => Some(cell_type.cast(quantile(&frequencies, q / 100.0))),
            ZonalStat::Majority => frequencies
                .iter()
                .max_by(|a, b| a.1.total_cmp(b.1).then(a.0.0.total_cmp(&b.0.0)))
                .map(|(v, _)| v.0),
            ZonalStat::Minority => frequencies
                .iter()
                .min_by(|a, b| a.1.total_cmp(b.1).then(a.0.0.total_cmp(&b.0.0)))
                .map(|(v, _)| v.0),
            // Refused before: exactextract has no such statistic.
            ZonalStat::Nodata | ZonalStat::Nan => None,
        })
        .collect()
}

/// Whether `stats` need the zone's values one by one (in order or counted by value), not only
/// their sums and extremes.
pub(crate) fn needs_each_value(stats: &[ZonalStat]) -> bool {
    stats.iter().any(|s| {
        matches!(
            s,
            ZonalStat::Median
                | ZonalStat::Percentile(_)
                | ZonalStat::Majority
                | ZonalStat::Minority
                | ZonalStat::Unique
        )
    })
}

/// A finite value ordered for a map key.
#[derive(Debug, Clone, Copy, PartialEq)]
struct OrderedValue(f64);

impl Eq for OrderedValue {}

impl PartialOrd for OrderedValue {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for OrderedValue {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&other.0)
    }
}

/// exactextract's weighted quantile `q` (0–1) of the distinct values (ascending) weighted by
/// their coverage.
#[allow(clippy::cast_precision_loss)]
fn quantile(frequencies: &BTreeMap<OrderedValue, f64>, q: f64) -> f64 {
    let n = frequencies.len();
    let mut elements: Vec<(f64, f64)> = Vec::with_capacity(n); // (x, s)
    let (mut cumsum, mut sum_w) = (0.0_f64, 0.0_f64);
    for (i, (x, &w)) in frequencies.iter().enumerate() {
        sum_w += w;
        let s = if i == 0 {
            0.0
        } else {
            i as f64 * w + (n as f64 - 1.0) * cumsum
        };
        cumsum += w;
        elements.push((x.0, s));
    }
    let sn = sum_w * (n as f64 - 1.0);
    let target = q * sn;
    let right = elements.partition_point(|e| e.1 <= target);
    let left = right.saturating_sub(1);
    if right >= elements.len() {
        return elements[left].0;
    }
    let ((lx, ls), (rx, rs)) = (elements[left], elements[right]);
    lx + (target - ls) * (rx - lx) / (rs - ls)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn square(x0: f64, y0: f64, x1: f64, y1: f64) -> Vec<(f64, f64)> {
        vec![(x0, y0), (x1, y0), (x1, y1), (x0, y1), (x0, y0)]
    }

    /// exactextract's own test: a 3 × 3 raster of 1..9 (cells of 1) under the square
    /// 0.5..2.5.
    #[test]
    fn exactextracts_three_by_three_example() {
        let window = CellWindow {
            x0: 0.0,
            y0: 3.0,
            dx: 1.0,
            dy: -1.0,
            cols: 3,
            rows: 3,
        };
        let fractions = coverage(&[vec![square(0.5, 0.5, 2.5, 2.5)]], &window);
        assert_eq!(
            fractions,
            vec![0.25, 0.5, 0.25, 0.5, 1.0, 0.5, 0.25, 0.5, 0.25]
        );
        let values: Vec<f64> = (1..=9).map(f64::from).collect();
        let stats = [
            ZonalStat::Count,
            ZonalStat::Mean,
            ZonalStat::Median,
            ZonalStat::Percentile(25.0),
            ZonalStat::Percentile(75.0),
            ZonalStat::Min,
            ZonalStat::Max,
            ZonalStat::Majority,
            ZonalStat::Minority,
            ZonalStat::Unique,
            ZonalStat::Std,
        ];
        // An integer raster: exactextract answers quantiles in its type (3.5 is 3).
        let got = coverage_stats(&values, &fractions, &[true; 9], &stats, CellType::Integer);
        let want = [
            4.0,
            5.0,
            5.0,
            3.0,
            6.0,
            1.0,
            9.0,
            5.0,
            1.0,
            9.0,
            5.0_f64.sqrt(),
        ];
        for ((stat, got), want) in stats.iter().zip(&got).zip(want) {
            assert!(
                (got.unwrap() - want).abs() < 1e-12,
                "{stat:?}: {got:?} against {want}"
            );
        }
    }

    #[test]
    fn holes_are_taken_off_and_the_outside_is_zero() {
        let window = CellWindow {
            x0: 0.0,
            y0: 4.0,
            dx: 1.0,
            dy: -1.0,
            cols: 4,
            rows: 4,
        };
        let polygon = vec![square(0.0, 0.0, 4.0, 4.0), square(1.0, 1.0, 3.0, 3.0)];
        let fractions = coverage(&[polygon], &window);
        assert_eq!(fractions.iter().sum::<f32>(), 12.0);
        assert_eq!(fractions[5], 0.0);
        let triangle = vec![vec![(0.0, 4.0), (4.0, 0.0), (0.0, 0.0), (0.0, 4.0)]];
        let fractions = coverage(&[triangle], &window);
        assert!((fractions.iter().sum::<f32>() - 8.0).abs() < 1e-6);
        assert_eq!(fractions[0], 0.5);
        assert_eq!(fractions[3], 0.0);
        assert_eq!(fractions[12], 1.0);
    }
}
