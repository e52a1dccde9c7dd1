//! How point distances are measured ([`Metric`]) and the k-d tree the neighbour searches run in.

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

    /// The point in the space the tree searches: the plane, or the unit sphere.
    pub(super) fn embed(self, p: [f64; 2]) -> [f64; 3] {
        match self {
            Self::Euclidean => [p[0], p[1], 0.0],
            Self::GreatCircle { .. } => {
                let (lon, lat) = (p[0].to_radians(), p[1].to_radians());
                [lat.cos() * lon.cos(), lat.cos() * lon.sin(), lat.sin()]
            }
        }
    }

    /// The embedded length at which the metric distance is `d` (at least; never an
    /// underestimate).
    pub(super) fn reach(self, d: f64) -> f64 {
        let exact = match self {
            Self::Euclidean => d,
            Self::GreatCircle { radius } => {
                let half_angle = (d / (2.0 * radius)).min(std::f64::consts::FRAC_PI_2);
                2.0 * half_angle.sin()
            }
        };
        exact * (1.0 + 1e-9)
    }

    /// The metric distance at embedded length `c`.
    pub(super) fn distance_at(self, c: f64) -> f64 {
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

/// The point, if both its coordinates are finite.
pub(super) fn usable(p: Option<[f64; 2]>) -> Option<[f64; 2]> {
    p.filter(|p| p[0].is_finite() && p[1].is_finite())
}

/// Points at or below this many per subtree are scanned rather than split.
const LEAF: usize = 8;

/// A k-d tree stored implicitly: the subtree over `lo..hi` splits at its middle entry `mid`,
/// whose coordinate on `axes[mid]` separates `lo..mid` (not above) from `mid + 1..hi`.
pub(super) struct KdTree {
    points: Vec<[f64; 3]>,
    ids: Vec<usize>,
    axes: Vec<usize>,
}

impl KdTree {
    /// The tree over the points with finite coordinates, embedded for `metric`.
    pub(super) fn new(points: &[Option<[f64; 2]>], metric: Metric) -> Self {
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

    /// The `k` points nearest `q` other than row `skip`, as `(squared length, row)` ascending
    /// by length, then row.
    pub(super) fn nearest(&self, q: [f64; 3], k: usize, skip: usize) -> Vec<(f64, usize)> {
        let mut best = Vec::with_capacity(k.min(self.ids.len()) + 1);
        self.nearest_in(q, k, skip, 0, self.ids.len(), &mut best);
        best
    }

    /// `(squared length, row)` of every point within squared length `r2` of `q`, in no order.
    pub(super) fn within(&self, q: [f64; 3], r2: f64) -> Vec<(f64, usize)> {
        let mut found = Vec::new();
        self.within_in(q, r2, 0, self.ids.len(), &mut found);
        found
    }

    /// Keeps in `best` (ascending by squared length, then row) the `k` points of the subtree
    /// over `lo..hi` nearest `q`, leaving out row `skip`.
    fn nearest_in(
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
        self.nearest_in(q, k, skip, near.0, near.1, best);
        if best.len() < k || best.last().is_some_and(|&(d2, _)| diff * diff <= d2) {
            self.nearest_in(q, k, skip, far.0, far.1, best);
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

    /// Appends `(squared length, row)` of every point of the subtree over `lo..hi` within
    /// squared length `r2` of `q`.
    fn within_in(&self, q: [f64; 3], r2: f64, lo: usize, hi: usize, found: &mut Vec<(f64, usize)>) {
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
            self.within_in(q, r2, lo, mid, found);
        }
        if diff >= 0.0 || diff * diff <= r2 {
            self.within_in(q, r2, mid + 1, hi, found);
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

    #[test]
    fn great_circle_quarter_meridian() {
        let d = Metric::GreatCircle { radius: 1.0 }.distance([0.0, 0.0], [0.0, 90.0]);
        assert!((d - std::f64::consts::FRAC_PI_2).abs() < 1e-15);
    }

    #[test]
    fn reach_never_underestimates() {
        let metric = Metric::GreatCircle { radius: 6371.0 };
        for d in [0.0, 1.0, 1000.0, 20_000.0, 50_000.0] {
            assert!(metric.distance_at(metric.reach(d)) >= d.min(std::f64::consts::PI * 6371.0));
        }
    }

    #[test]
    fn nearest_and_within_search_the_whole_tree() {
        // A 10 x 10 lattice: enough points for the tree to split several times.
        let points: Vec<Option<[f64; 2]>> = (0..100)
            .map(|i| Some([f64::from(i % 10), f64::from(i / 10)]))
            .collect();
        let tree = KdTree::new(&points, Metric::Euclidean);
        let q = Metric::Euclidean.embed([4.0, 4.0]);
        let nearest = tree.nearest(q, 5, 44);
        let rows: Vec<usize> = nearest.iter().map(|&(_, j)| j).collect();
        assert_eq!(rows, vec![34, 43, 45, 54, 33]);
        let mut within: Vec<usize> = tree.within(q, 1.0).into_iter().map(|(_, j)| j).collect();
        within.sort_unstable();
        assert_eq!(within, vec![34, 43, 44, 45, 54]);
    }
}
