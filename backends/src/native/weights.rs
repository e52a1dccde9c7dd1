//! Spatial weights after libpysal's `W`: vertex contiguity (Queen, Rook), k nearest neighbours
//! and distance bands (the last two searched in a k-d tree), with the transformations the
//! autocorrelation statistics apply.

use std::fmt;

use rayon::prelude::*;

/// Sparse spatial weights: row `i` lists its neighbours `(j, w_ij)` strictly ascending by `j`.
/// A row with no neighbours is an island; islands are kept (never dropped), and each statistic
/// documents what it reports for them. A row lists itself only when a self weight is part of
/// the definition (Getis–Ord Gi*, added by the statistic, not by the builders here).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Weights {
    pub neighbours: Vec<Vec<(usize, f64)>>,
}

/// Weights that do not fit the values they are applied to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WeightsError {
    /// The number of values differs from the number of weight rows.
    LengthMismatch { values: usize, rows: usize },
    /// A row names a neighbour past the last row.
    OutOfRange { row: usize, neighbour: usize },
    /// A row's neighbours are not strictly ascending (unsorted or repeated).
    Unsorted { row: usize },
}

impl fmt::Display for WeightsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::LengthMismatch { values, rows } => {
                write!(f, "{values} values for {rows} rows of spatial weights")
            }
            Self::OutOfRange { row, neighbour } => {
                write!(
                    f,
                    "row {row} of the spatial weights names missing row {neighbour}"
                )
            }
            Self::Unsorted { row } => {
                write!(
                    f,
                    "row {row} of the spatial weights is not strictly ascending"
                )
            }
        }
    }
}

impl std::error::Error for WeightsError {}

impl Weights {
    /// Weights from arbitrary rows: each row sorted by neighbour, a repeated neighbour kept once
    /// (its first weight).
    pub fn from_rows(mut rows: Vec<Vec<(usize, f64)>>) -> Self {
        for row in &mut rows {
            row.sort_by_key(|&(j, _)| j);
            row.dedup_by_key(|&mut (j, _)| j);
        }
        Self { neighbours: rows }
    }

    /// Number of rows (features).
    pub fn len(&self) -> usize {
        self.neighbours.len()
    }

    /// True when there are no rows.
    pub fn is_empty(&self) -> bool {
        self.neighbours.is_empty()
    }

    /// Rows with no neighbours, ascending.
    pub fn islands(&self) -> Vec<usize> {
        let rows = self.neighbours.iter().enumerate();
        rows.filter(|(_, row)| row.is_empty())
            .map(|(i, _)| i)
            .collect()
    }

    /// libpysal's `'B'` transformation: every listed neighbour weighs 1.
    pub fn binary(&self) -> Self {
        self.map_rows(|row| row.iter().map(|&(j, _)| (j, 1.0)).collect())
    }

    /// libpysal's `'R'` transformation: each weight divided by its row's sum (islands stay
    /// empty; a listed row summing to zero gives NaN weights, as in libpysal).
    pub fn row_standardised(&self) -> Self {
        self.map_rows(|row| {
            let sum: f64 = row.iter().map(|&(_, w)| w).sum();
            row.iter().map(|&(j, w)| (j, w / sum)).collect()
        })
    }

    /// The spatial lag `sum_j w_ij y_j` of every row (0 for an island). `y` must have one value
    /// per row (see [`Weights::validate`]).
    pub fn lag(&self, y: &[f64]) -> Vec<f64> {
        let lag_of = |row: &Vec<(usize, f64)>| row.iter().map(|&(j, w)| w * y[j]).sum();
        self.neighbours.par_iter().map(lag_of).collect()
    }

    /// Checks that the weights can be applied to `n` values: one row per value, neighbours in
    /// range and strictly ascending.
    pub fn validate(&self, n: usize) -> Result<(), WeightsError> {
        if self.len() != n {
            return Err(WeightsError::LengthMismatch {
                values: n,
                rows: self.len(),
            });
        }
        for (row, list) in self.neighbours.iter().enumerate() {
            if let Some(&(neighbour, _)) = list.iter().find(|&&(j, _)| j >= n) {
                return Err(WeightsError::OutOfRange { row, neighbour });
            }
            if list.windows(2).any(|pair| pair[0].0 >= pair[1].0) {
                return Err(WeightsError::Unsorted { row });
            }
        }
        Ok(())
    }

    /// The weight `w_ij`, 0 when `j` is not a neighbour of `i`.
    pub fn weight(&self, i: usize, j: usize) -> f64 {
        self.find(i, j).unwrap_or(0.0)
    }

    /// The sums libpysal's `W` calls `s0` (all weights), `s1` (half the squared sums
    /// `w_ij + w_ji` over all ordered pairs) and `s2` (squared row plus column sums).
    pub fn sums(&self) -> (f64, f64, f64) {
        let mut column = vec![0.0; self.len()];
        let (mut s0, mut s1) = (0.0, 0.0);
        for (i, row) in self.neighbours.iter().enumerate() {
            for &(j, w) in row {
                s0 += w;
                column[j] += w;
                // Pairs listed both ways are met once from each side; a pair listed one way
                // only stands for both ordered pairs, each contributing w_ij^2.
                s1 += match self.find(j, i) {
                    Some(back) => (w + back) * (w + back),
                    None => 2.0 * w * w,
                };
            }
        }
        let rows = self
            .neighbours
            .iter()
            .map(|row| row.iter().map(|&(_, w)| w).sum::<f64>());
        let s2 = rows
            .zip(column)
            .map(|(r, c): (f64, f64)| (r + c) * (r + c))
            .sum();
        (s0, s1 / 2.0, s2)
    }

    fn find(&self, i: usize, j: usize) -> Option<f64> {
        let row = self.neighbours.get(i)?;
        row.binary_search_by_key(&j, |&(k, _)| k)
            .ok()
            .map(|at| row[at].1)
    }

    fn map_rows(&self, f: impl Fn(&[(usize, f64)]) -> Vec<(usize, f64)> + Sync) -> Self {
        let rows = self.neighbours.par_iter().map(|row| f(row)).collect();
        Self { neighbours: rows }
    }
}

/// Contiguity weights (all 1) from each feature's polygon rings, libpysal's vertex-based
/// `Queen`/`Rook.from_dataframe`: Queen neighbours share at least one vertex (exactly equal
/// coordinates, -0 equal to 0), Rook neighbours at least one edge (two consecutive vertices of
/// a ring, in either direction). Pass every ring of every part of a multipolygon. `None` (no
/// geometry) gives an island; vertices with a NaN coordinate match nothing. Edges are taken
/// within each ring, whereas libpysal also pairs the last vertex of one ring with the first of
/// the next; those spurious edges only matter if two features repeat the same ring junction.
pub fn contiguity(features: &[Option<Vec<Vec<[f64; 2]>>>], rook: bool) -> Weights {
    let rings = features
        .iter()
        .enumerate()
        .filter_map(|(f, rings)| Some((f, rings.as_ref()?)));
    let rows = if rook {
        let edges = rings.flat_map(|(f, rings)| rings.iter().flat_map(move |r| edge_keys(r, f)));
        features_sharing(edges.collect(), features.len())
    } else {
        let vertices = rings.flat_map(|(f, rings)| {
            rings
                .iter()
                .flatten()
                .filter_map(move |&p| Some((vertex_key(p)?, f)))
        });
        features_sharing(vertices.collect(), features.len())
    };
    Weights { neighbours: rows }
}

/// A vertex's identity: its coordinates' bits with -0 folded onto 0; `None` for NaN.
fn vertex_key(p: [f64; 2]) -> Option<[u64; 2]> {
    let bits = |v: f64| if v == 0.0 { 0 } else { v.to_bits() };
    (!p[0].is_nan() && !p[1].is_nan()).then(|| [bits(p[0]), bits(p[1])])
}

/// The undirected edges of a ring, each keyed by its two vertices in ascending key order; a
/// repeated vertex makes no edge (as in libpysal).
fn edge_keys(ring: &[[f64; 2]], feature: usize) -> impl Iterator<Item = ([u64; 4], usize)> + '_ {
    ring.windows(2).filter_map(move |pair| {
        let (a, b) = (vertex_key(pair[0])?, vertex_key(pair[1])?);
        if a == b {
            return None;
        }
        let (lo, hi) = if a <= b { (a, b) } else { (b, a) };
        Some(([lo[0], lo[1], hi[0], hi[1]], feature))
    })
}

/// Neighbour rows (weight 1) linking every two features that carry an equal key.
fn features_sharing<K: Ord + Copy + Send>(
    mut keyed: Vec<(K, usize)>,
    n: usize,
) -> Vec<Vec<(usize, f64)>> {
    keyed.par_sort_unstable();
    keyed.dedup();
    let mut pairs = Vec::new();
    for group in keyed.chunk_by(|a, b| a.0 == b.0).filter(|g| g.len() > 1) {
        for &(_, a) in group {
            pairs.extend(group.iter().filter(|&&(_, b)| b != a).map(|&(_, b)| (a, b)));
        }
    }
    pairs.par_sort_unstable();
    pairs.dedup();
    let mut rows = vec![Vec::new(); n];
    for (a, b) in pairs {
        rows[a].push((b, 1.0));
    }
    rows
}

/// How point distances are measured. Neighbour searches run in a k-d tree over an embedding in
/// which straight-line length grows with the metric distance, so both metrics are exact.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Metric {
    /// Planar distance in coordinate units (libpysal's default Minkowski p = 2).
    Euclidean,
    /// Great-circle distance on a sphere of `radius` (in the unit wanted for distances) for
    /// longitude/latitude degrees, libpysal's `radius=` arc distance; computed as
    /// `2 r asin(chord / 2)`, which is accurate where libpysal's `acos` form loses digits
    /// at short range.
    GreatCircle { radius: f64 },
}

impl Metric {
    /// The distance between two points.
    pub fn distance(self, a: [f64; 2], b: [f64; 2]) -> f64 {
        self.distance_at(chord(self.embed(a), self.embed(b)))
    }

    fn embed(self, p: [f64; 2]) -> [f64; 3] {
        match self {
            Self::Euclidean => [p[0], p[1], 0.0],
            Self::GreatCircle { .. } => {
                let (lon, lat) = (p[0].to_radians(), p[1].to_radians());
                [lat.cos() * lon.cos(), lat.cos() * lon.sin(), lat.sin()]
            }
        }
    }

    /// The embedded length at which the metric distance is `d` (at least; never an underestimate).
    fn reach(self, d: f64) -> f64 {
        let exact = match self {
            Self::Euclidean => d,
            Self::GreatCircle { radius } => {
                let half_angle = (d / (2.0 * radius)).min(std::f64::consts::FRAC_PI_2);
                2.0 * half_angle.sin()
            }
        };
        exact * (1.0 + 1e-9)
    }

    fn distance_at(self, c: f64) -> f64 {
        match self {
            Self::Euclidean => c,
            Self::GreatCircle { radius } => 2.0 * radius * (c / 2.0).min(1.0).asin(),
        }
    }
}

fn chord(a: [f64; 3], b: [f64; 3]) -> f64 {
    squared(a, b).sqrt()
}

fn squared(a: [f64; 3], b: [f64; 3]) -> f64 {
    let d = [a[0] - b[0], a[1] - b[1], a[2] - b[2]];
    d[0] * d[0] + d[1] * d[1] + d[2] * d[2]
}

/// The `k` nearest other points of each point, weight 1 (libpysal `KNN`). Ties in distance go
/// to the lower row index (libpysal breaks them arbitrarily). Coincident points are neighbours
/// at distance 0. `None` or non-finite points are islands and nobody's neighbour; with fewer
/// than `k` other points a row lists them all.
pub fn knn(points: &[Option<[f64; 2]>], k: usize, metric: Metric) -> Weights {
    let tree = KdTree::new(points, metric);
    let rows = points.par_iter().enumerate().map(|(i, p)| {
        let Some(q) = usable(*p) else {
            return Vec::new();
        };
        let mut best = Vec::with_capacity(k.min(tree.ids.len()) + 1);
        tree.nearest(metric.embed(q), k, i, 0, tree.ids.len(), &mut best);
        let mut row: Vec<(usize, f64)> = best.into_iter().map(|(_, j)| (j, 1.0)).collect();
        row.sort_unstable_by_key(|&(j, _)| j);
        row
    });
    Weights {
        neighbours: rows.collect(),
    }
}

/// Neighbours within `threshold` (inclusive), libpysal `DistanceBand`: weight 1 when `alpha`
/// is `None` (`binary=True`), else `d^alpha` (`binary=False`; libpysal's default alpha is -1,
/// inverse distance). As in libpysal, points at distance 0 (coincident) are never neighbours,
/// and a weight that is infinite or 0 is dropped. `None` or non-finite points are islands.
pub fn distance_band(
    points: &[Option<[f64; 2]>],
    threshold: f64,
    alpha: Option<f64>,
    metric: Metric,
) -> Weights {
    let tree = KdTree::new(points, metric);
    let reach = metric.reach(threshold);
    let rows = points.par_iter().enumerate().map(|(i, p)| {
        let Some(q) = usable(*p) else {
            return Vec::new();
        };
        let mut found = Vec::new();
        tree.within(
            metric.embed(q),
            reach * reach,
            0,
            tree.ids.len(),
            &mut found,
        );
        let mut row: Vec<(usize, f64)> = found
            .into_iter()
            .filter(|&(_, j)| j != i)
            .map(|(d2, j)| (j, metric.distance_at(d2.sqrt())))
            .filter(|&(_, d)| d > 0.0 && d <= threshold)
            .map(|(j, d)| (j, alpha.map_or(1.0, |a| d.powf(a))))
            .filter(|&(_, w)| w.is_finite() && w != 0.0)
            .collect();
        row.sort_unstable_by_key(|&(j, _)| j);
        row
    });
    Weights {
        neighbours: rows.collect(),
    }
}

fn usable(p: Option<[f64; 2]>) -> Option<[f64; 2]> {
    p.filter(|p| p[0].is_finite() && p[1].is_finite())
}

/// Points at or below this many per subtree are scanned rather than split.
const LEAF: usize = 8;

/// A k-d tree stored implicitly: the subtree over `lo..hi` splits at its middle entry `mid`,
/// whose coordinate on `axes[mid]` separates `lo..mid` (not above) from `mid + 1..hi`.
struct KdTree {
    points: Vec<[f64; 3]>,
    ids: Vec<usize>,
    axes: Vec<usize>,
}

impl KdTree {
    fn new(points: &[Option<[f64; 2]>], metric: Metric) -> Self {
        let usable = points
            .iter()
            .enumerate()
            .filter_map(|(i, p)| Some((metric.embed(usable(*p)?), i)));
        let mut items: Vec<([f64; 3], usize)> = usable.collect();
        let mut axes = vec![0; items.len()];
        split(&mut items, &mut axes);
        let (points, ids) = items.into_iter().unzip();
        Self { points, ids, axes }
    }

    /// Keeps in `best` (ascending by squared length, then row) the `k` points nearest `q`,
    /// leaving out row `skip`.
    fn nearest(
        &self,
        q: [f64; 3],
        k: usize,
        skip: usize,
        lo: usize,
        hi: usize,
        best: &mut Vec<(f64, usize)>,
    ) {
        if hi - lo <= LEAF {
            (lo..hi).for_each(|at| self.offer(q, k, skip, at, best));
            return;
        }
        let mid = lo + (hi - lo) / 2;
        self.offer(q, k, skip, mid, best);
        let diff = q[self.axes[mid]] - self.points[mid][self.axes[mid]];
        let (near, far) = if diff <= 0.0 {
            ((lo, mid), (mid + 1, hi))
        } else {
            ((mid + 1, hi), (lo, mid))
        };
        self.nearest(q, k, skip, near.0, near.1, best);
        if best.len() < k || best.last().is_some_and(|&(d2, _)| diff * diff <= d2) {
            self.nearest(q, k, skip, far.0, far.1, best);
        }
    }

    fn offer(&self, q: [f64; 3], k: usize, skip: usize, at: usize, best: &mut Vec<(f64, usize)>) {
        let id = self.ids[at];
        if id == skip || k == 0 {
            return;
        }
        let candidate = (squared(q, self.points[at]), id);
        let before = |a: &(f64, usize), b: &(f64, usize)| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1));
        if best.len() == k
            && best
                .last()
                .is_some_and(|last| before(last, &candidate).is_lt())
        {
            return;
        }
        let at = best.partition_point(|e| before(e, &candidate).is_lt());
        best.insert(at, candidate);
        best.truncate(k);
    }

    /// Appends `(squared length, row)` of every point within squared length `r2` of `q`.
    fn within(&self, q: [f64; 3], r2: f64, lo: usize, hi: usize, found: &mut Vec<(f64, usize)>) {
        let mut take = |at: usize| {
            let d2 = squared(q, self.points[at]);
            if d2 <= r2 {
                found.push((d2, self.ids[at]));
            }
        };
        if hi - lo <= LEAF {
            (lo..hi).for_each(take);
            return;
        }
        let mid = lo + (hi - lo) / 2;
        take(mid);
        let diff = q[self.axes[mid]] - self.points[mid][self.axes[mid]];
        if diff <= 0.0 || diff * diff <= r2 {
            self.within(q, r2, lo, mid, found);
        }
        if diff >= 0.0 || diff * diff <= r2 {
            self.within(q, r2, mid + 1, hi, found);
        }
    }
}

/// Arranges `items` as the implicit tree, splitting each subtree on its widest axis.
fn split(items: &mut [([f64; 3], usize)], axes: &mut [usize]) {
    if items.len() <= LEAF {
        return;
    }
    let axis = widest_axis(items);
    let mid = items.len() / 2;
    items.select_nth_unstable_by(mid, |a, b| a.0[axis].total_cmp(&b.0[axis]));
    axes[mid] = axis;
    let (left, right) = items.split_at_mut(mid);
    let (left_axes, right_axes) = axes.split_at_mut(mid);
    split(left, left_axes);
    split(&mut right[1..], &mut right_axes[1..]);
}

fn widest_axis(items: &[([f64; 3], usize)]) -> usize {
    let mut lo = [f64::INFINITY; 3];
    let mut hi = [f64::NEG_INFINITY; 3];
    for (p, _) in items {
        for axis in 0..3 {
            lo[axis] = lo[axis].min(p[axis]);
            hi[axis] = hi[axis].max(p[axis]);
        }
    }
    let spread = |axis: usize| hi[axis] - lo[axis];
    (0..3).fold(0, |best, axis| {
        if spread(axis) > spread(best) {
            axis
        } else {
            best
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn square(x: f64, y: f64) -> Option<Vec<Vec<[f64; 2]>>> {
        Some(vec![vec![
            [x, y],
            [x + 1.0, y],
            [x + 1.0, y + 1.0],
            [x, y + 1.0],
            [x, y],
        ]])
    }

    fn ids(w: &Weights) -> Vec<Vec<usize>> {
        w.neighbours
            .iter()
            .map(|row| row.iter().map(|&(j, _)| j).collect())
            .collect()
    }

    #[test]
    fn queen_and_rook_on_a_two_by_two_grid() {
        // 0 1 / 2 3 from the bottom left; 0 and 3 touch at a corner only; 4 has no geometry.
        let cells = vec![
            square(0.0, 0.0),
            square(1.0, 0.0),
            square(0.0, 1.0),
            square(1.0, 1.0),
            None,
        ];
        let queen = contiguity(&cells, false);
        assert_eq!(
            ids(&queen),
            vec![
                vec![1, 2, 3],
                vec![0, 2, 3],
                vec![0, 1, 3],
                vec![0, 1, 2],
                vec![]
            ]
        );
        let rook = contiguity(&cells, true);
        assert_eq!(
            ids(&rook),
            vec![vec![1, 2], vec![0, 3], vec![0, 3], vec![1, 2], vec![]]
        );
        assert_eq!(rook.islands(), vec![4]);
    }

    #[test]
    fn negative_zero_is_the_same_vertex() {
        let a = Some(vec![vec![[-1.0, 0.0], [0.0, 0.0], [-1.0, 1.0]]]);
        let b = Some(vec![vec![[-0.0, 0.0], [1.0, 0.0], [1.0, -1.0]]]);
        assert_eq!(ids(&contiguity(&[a, b], false)), vec![vec![1], vec![0]]);
    }

    #[test]
    fn knn_on_a_line_breaks_ties_by_row() {
        let points: Vec<Option<[f64; 2]>> = (0..5).map(|i| Some([f64::from(i), 0.0])).collect();
        let w = knn(&points, 2, Metric::Euclidean);
        assert_eq!(
            ids(&w),
            vec![vec![1, 2], vec![0, 2], vec![1, 3], vec![2, 4], vec![2, 3]]
        );
    }

    #[test]
    fn knn_matches_brute_force() {
        let mut state = 7_u64;
        let mut next = || {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (state >> 11) as f64 / (1_u64 << 53) as f64
        };
        let points: Vec<Option<[f64; 2]>> =
            (0..500).map(|_| Some([next() * 10.0, next()])).collect();
        let w = knn(&points, 5, Metric::Euclidean);
        for (i, p) in points.iter().enumerate() {
            let mut all: Vec<(f64, usize)> = points
                .iter()
                .enumerate()
                .filter(|&(j, _)| j != i)
                .map(|(j, o)| (Metric::Euclidean.distance(p.unwrap(), o.unwrap()), j))
                .collect();
            all.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
            let mut expected: Vec<usize> = all[..5].iter().map(|&(_, j)| j).collect();
            expected.sort_unstable();
            assert_eq!(ids(&w)[i], expected);
        }
    }

    #[test]
    fn distance_band_is_inclusive_and_skips_coincident_points() {
        let points = vec![
            Some([0.0, 0.0]),
            Some([3.0, 4.0]),
            Some([0.0, 0.0]),
            None,
            Some([10.0, 0.0]),
        ];
        let w = distance_band(&points, 5.0, None, Metric::Euclidean);
        assert_eq!(ids(&w), vec![vec![1], vec![0, 2], vec![1], vec![], vec![]]);
        let inverse = distance_band(&points, 5.0, Some(-1.0), Metric::Euclidean);
        assert_eq!(inverse.neighbours[1], vec![(0, 0.2), (2, 0.2)]);
    }

    #[test]
    fn great_circle_quarter_meridian() {
        let d = Metric::GreatCircle { radius: 1.0 }.distance([0.0, 0.0], [0.0, 90.0]);
        assert!((d - std::f64::consts::FRAC_PI_2).abs() < 1e-15);
        let points = vec![Some([179.9, 0.0]), Some([-179.9, 0.0]), Some([0.0, 0.0])];
        let w = distance_band(&points, 30.0, None, Metric::GreatCircle { radius: 6371.0 });
        assert_eq!(ids(&w), vec![vec![1], vec![0], vec![]]);
    }

    #[test]
    fn transformations_and_sums() {
        // 0 -> 1 (2.0), 1 -> 0 (1.0), 1 -> 2 (1.0); 3 is an island.
        let w = Weights {
            neighbours: vec![vec![(1, 2.0)], vec![(0, 1.0), (2, 1.0)], vec![], vec![]],
        };
        assert_eq!(w.islands(), vec![2, 3]);
        assert_eq!(w.row_standardised().neighbours[1], vec![(0, 0.5), (2, 0.5)]);
        assert_eq!(w.binary().neighbours[0], vec![(1, 1.0)]);
        // s1 = ((2+1)^2 * 2 + (1+0)^2 * 2) / 2 = 10; rows 2,2,0,0 plus columns 1,2,1,0.
        assert_eq!(w.sums(), (4.0, 10.0, 9.0 + 16.0 + 1.0));
        assert_eq!(w.lag(&[1.0, 2.0, 3.0, 4.0]), vec![4.0, 4.0, 0.0, 0.0]);
        assert!(w.validate(4).is_ok());
        assert_eq!(
            w.validate(3),
            Err(WeightsError::LengthMismatch { values: 3, rows: 4 })
        );
        let unsorted = Weights {
            neighbours: vec![vec![(1, 1.0), (0, 1.0)], vec![]],
        };
        assert_eq!(unsorted.validate(2), Err(WeightsError::Unsorted { row: 0 }));
        assert_eq!(
            Weights::from_rows(unsorted.neighbours).neighbours[0],
            vec![(0, 1.0), (1, 1.0)]
        );
    }
}
