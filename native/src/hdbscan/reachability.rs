//! Mutual reachability, `max(core(a), core(b), d(a, b))`, as Prim's algorithm measures it:
//! with 2-D Euclidean coordinates (and bounding boxes to skip blocks of points) or with any
//! distance between points given by index.

/// The point added to the tree last.
pub(super) struct Current<A> {
    pub(super) id: usize,
    pub(super) core: f64,
    pub(super) at: A,
}

/// How Prim's algorithm measures mutual reachability.
pub(super) trait Reachability: Sync {
    /// What the distance needs of a point (its coordinates, or its index).
    type At: Copy + Send + Sync;
    /// What bounds the distances to a run of points.
    type Bounds: Copy + Send + Sync;

    fn bounds(&self, at: &[Self::At]) -> Self::Bounds;

    /// Bounds of the union of two runs.
    fn merge(&self, a: &Self::Bounds, b: &Self::Bounds) -> Self::Bounds;

    /// Whether the current point may lower a reachability below `max_reach` in a block
    /// with these bounds: a cheap necessary condition.
    fn block_may_improve(
        &self,
        current: &Current<Self::At>,
        bounds: &Self::Bounds,
        max_reach: f64,
    ) -> bool;

    /// Whether the current point may lower the reachability of any of these frontier
    /// points: a cheap necessary condition.
    fn may_improve(
        &self,
        current: &Current<Self::At>,
        at: &[Self::At],
        cores: &[f64],
        reach: &[f64],
    ) -> bool;

    /// `max(core(current), core, d(current, at))` when it is below `reach`.
    fn improve(
        &self,
        current: &Current<Self::At>,
        at: &Self::At,
        core: f64,
        reach: f64,
    ) -> Option<f64>;
}

/// `max(a, b)` as `b > a ? b : a` (ignoring a NaN `b`).
pub(super) fn max2(a: f64, b: f64) -> f64 {
    if b > a { b } else { a }
}

/// Slack on a squared bound: `d² ≥ bound² · (1 + 2⁻⁵⁰)`, rounding of the products
/// included, implies `sqrt(d²) ≥ bound`.
const SQUARE_SLACK: f64 = 1.0 + 1.0 / (1u64 << 50) as f64;

/// Euclidean distances between 2-D points, `sqrt(dx² + dy²)` as scikit-learn computes them.
pub(super) struct Euclidean;

impl Reachability for Euclidean {
    type At = [f64; 2];
    /// The bounding box, as lower and upper corners.
    type Bounds = [[f64; 2]; 2];

    fn bounds(&self, at: &[[f64; 2]]) -> [[f64; 2]; 2] {
        let mut lo = [f64::INFINITY; 2];
        let mut hi = [f64::NEG_INFINITY; 2];
        for p in at {
            for axis in 0..2 {
                lo[axis] = lo[axis].min(p[axis]);
                hi[axis] = hi[axis].max(p[axis]);
            }
        }
        [lo, hi]
    }

    fn merge(&self, [alo, ahi]: &[[f64; 2]; 2], [blo, bhi]: &[[f64; 2]; 2]) -> [[f64; 2]; 2] {
        [
            [alo[0].min(blo[0]), alo[1].min(blo[1])],
            [ahi[0].max(bhi[0]), ahi[1].max(bhi[1])],
        ]
    }

    /// The current core below `max_reach`, and the squared distance to the box below its
    /// square. Rounding is monotone, so the squared distance to the box, computed the same
    /// way, never exceeds the computed squared distance to a point inside it.
    fn block_may_improve(
        &self,
        current: &Current<[f64; 2]>,
        [lo, hi]: &[[f64; 2]; 2],
        max_reach: f64,
    ) -> bool {
        let gap = |axis: usize| {
            max2(
                max2(lo[axis] - current.at[axis], current.at[axis] - hi[axis]),
                0.0,
            )
        };
        let (gx, gy) = (gap(0), gap(1));
        current.core < max_reach && gx * gx + gy * gy < max_reach * max_reach * SQUARE_SLACK
    }

    /// Both cores below the reachability and the squared distance below its square,
    /// evaluated without branches (no square roots).
    fn may_improve(
        &self,
        current: &Current<[f64; 2]>,
        at: &[[f64; 2]],
        cores: &[f64],
        reach: &[f64],
    ) -> bool {
        let [cx, cy] = current.at;
        let mut any = false;
        for ((p, &core), &r) in at.iter().zip(cores).zip(reach) {
            let dx = cx - p[0];
            let dy = cy - p[1];
            let d2 = dx * dx + dy * dy;
            any |= (max2(current.core, core) < r) & (d2 < r * r * SQUARE_SLACK);
        }
        any
    }

    fn improve(
        &self,
        current: &Current<[f64; 2]>,
        at: &[f64; 2],
        core: f64,
        reach: f64,
    ) -> Option<f64> {
        let cores_allow = max2(current.core, core) < reach;
        if !cores_allow {
            return None;
        }
        let dx = current.at[0] - at[0];
        let dy = current.at[1] - at[1];
        let d2 = dx * dx + dy * dy;
        if d2 >= reach * reach * SQUARE_SLACK {
            return None;
        }
        let d = d2.sqrt();
        (d < reach).then(|| max3(current.core, core, d))
    }
}

/// Any distance between points given by index.
pub(super) struct ByDistance<D>(pub(super) D);

impl<D: Fn(usize, usize) -> f64 + Sync> Reachability for ByDistance<D> {
    type At = usize;
    type Bounds = ();

    fn bounds(&self, _at: &[usize]) {}

    fn merge(&self, _a: &(), _b: &()) {}

    fn block_may_improve(&self, current: &Current<usize>, _bounds: &(), max_reach: f64) -> bool {
        current.core < max_reach
    }

    /// Both cores below the reachability; the distance is left to [`Self::improve`].
    fn may_improve(
        &self,
        current: &Current<usize>,
        _at: &[usize],
        cores: &[f64],
        reach: &[f64],
    ) -> bool {
        cores
            .iter()
            .zip(reach)
            .any(|(&core, &r)| max2(current.core, core) < r)
    }

    fn improve(&self, current: &Current<usize>, at: &usize, core: f64, reach: f64) -> Option<f64> {
        let cores_allow = max2(current.core, core) < reach;
        if !cores_allow {
            return None;
        }
        let d = (self.0)(current.at, *at);
        (d < reach).then(|| max3(current.core, core, d))
    }
}

/// `max(a, b, c)` by comparisons with `>` (Cython's `max` on C doubles).
fn max3(a: f64, b: f64, c: f64) -> f64 {
    let mut m = a;
    if b > m {
        m = b;
    }
    if c > m {
        m = c;
    }
    m
}
