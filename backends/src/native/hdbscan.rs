//! HDBSCAN clustering whose labels equal scikit-learn's `sklearn.cluster.HDBSCAN` (1.9) with
//! `metric="euclidean"`, `alpha=1.0`, `cluster_selection_epsilon=0.0`,
//! `cluster_selection_method="eom"` and `allow_single_cluster=False`, numbered the same way.
//!
//! The steps are scikit-learn's, in its order and with its tie rules:
//!
//! 1. **Core distances**: the distance from each point to its `min_samples`-th nearest neighbour,
//!    the point itself counting as the first (so `min_samples = 1` gives 0 everywhere).
//! 2. **Minimum spanning tree** of the mutual reachability graph,
//!    `max(core(a), core(b), d(a, b))`, by Prim's algorithm over the implicit complete graph
//!    (`mst_from_data_matrix`): it starts at point 0; after each step every point outside the
//!    tree keeps its smallest reachability to the tree and the tree point that first gave it
//!    (a later tree point only replaces it when strictly smaller); the next point is the one
//!    with the smallest such reachability, the lowest index among equals. Each edge is
//!    recorded as (tree point, new point, reachability), and its orientation matters below.
//! 3. **Edge order**: the edges are ordered by `np.argsort` of their weights, which is *not* a
//!    stable sort: on x86-64 CPUs with AVX-512 NumPy (2.x) sorts float64 indices with the
//!    vectorised quicksort of x86-simd-sort (bitonic networks for at most 256 elements,
//!    median-of-8 pivots, in-place compressing partitions, `std::sort` once the recursion
//!    budget of `2·⌊log₂ n⌋` levels is spent, and no sorting at all when the weights already
//!    ascend). Equal weights are common (a weight is often some point's core distance, and
//!    grid-like data is full of equal distances), and their order decides the shape of the
//!    single-linkage tree, which points leave a cluster at the very lambda the cluster is born
//!    and so whether they are noise. `numpy_argsort` reproduces that order lane for lane
//!    (the x86-simd-sort bundled with NumPy 2.4). On CPUs without AVX-512 NumPy sorts with
//!    other code (AVX2 networks, or an introsort), so there scikit-learn's own labels can
//!    differ from these where equal weights meet; no other step depends on the CPU.
//! 4. **Single-linkage tree**: the ordered edges are merged with a union-find; merge `i`
//!    creates node `n + i` with the two roots as left and right child, in the edge's
//!    orientation.
//! 5. **Condensed tree**: a breadth-first walk from the root, where `lambda = 1 / distance`
//!    (infinite at distance 0). A merge whose two sides both have at least `min_cluster_size`
//!    points gives two new clusters, numbered in walk order from `n + 1` (the root is `n`);
//!    a smaller side's points leave the cluster at that lambda (listed in breadth-first
//!    order), and a single large side carries on the cluster's number; when both sides are
//!    smaller, all their points leave and the cluster ends.
//! 6. **Stability** of each cluster: `Σ (lambda_leave − lambda_birth) · size` over its rows,
//!    summed in row order in floating point (an infinite lambda at an infinite birth gives
//!    NaN, as it does in scikit-learn, and a NaN stability never loses to its children).
//! 7. **Excess of mass**: clusters in descending number (the root excluded); a cluster whose
//!    children's stabilities sum to strictly more than its own is replaced by them (and
//!    takes that sum as its stability), otherwise it is kept and its descendants dropped.
//! 8. **Labels**: each point gets the number of the nearest kept cluster above it in the
//!    condensed tree, kept clusters numbered 0, 1, … in ascending cluster number; points
//!    with no kept cluster above them are noise (−1). A point that leaves a cluster at the
//!    cluster's birth lambda still belongs to it.
//!
//! Degenerate inputs, which scikit-learn rejects, are answered rather than refused: no
//! points give no labels, a single point is noise, `min_cluster_size` below 2 counts as 2,
//! `min_samples = 0` means `min_samples = min_cluster_size` (scikit-learn's default), and
//! when `min_samples` exceeds the number of points no point is dense enough, so all are
//! noise. Distances must be finite and not NaN for the result to match scikit-learn; other
//! values still give labels, without a guarantee.

use rayon::prelude::*;

/// The HDBSCAN label of each point (−1 noise), equal to scikit-learn's
/// `HDBSCAN(min_cluster_size, min_samples, metric="euclidean").fit(points).labels_`,
/// including the numbering of the clusters and the treatment of equal distances.
///
/// Core distances come from a k-d tree (k nearest neighbours, the point itself included).
/// The minimum spanning tree is Prim's algorithm over all pairs, `O(n²)` at worst, but each
/// step only looks at the points outside the tree whose reachability it may lower: they sit
/// in k-d tree order under a hierarchy of bounding boxes that carry their largest
/// reachability and best point, so a step skips every box it cannot reach and finds the next
/// point at the top. Steps that must examine many points are spread over the rayon thread
/// pool. See the module documentation for the remaining steps and for degenerate
/// parameters.
pub fn hdbscan(points: &[[f64; 2]], min_cluster_size: usize, min_samples: usize) -> Vec<i64> {
    let n = points.len();
    let Some((min_cluster_size, min_samples)) = parameters(n, min_cluster_size, min_samples) else {
        return vec![-1; n];
    };
    let tree = KdTree::new(points);
    let core = tree.core_distances(min_samples);
    let mst = prim_mst(&Euclidean, &core, points, &tree.order);
    labels_from_mst(n, &mst, min_cluster_size)
}

/// The same with any symmetric distance between points `i` and `j` (for instance the
/// great-circle distance between longitude/latitude pairs); `distance(i, i)` is taken as 0
/// and never asked for.
///
/// Core distances are found by evaluating every pair (`O(n²)`, in parallel). Prim's
/// algorithm evaluates `distance(tree point, outside point)` as scikit-learn does, skipping
/// pairs whose core distances already rule out an improvement; without coordinates there is
/// no spatial pruning, so it stays `O(n²)` (in parallel while steps have much to examine).
pub fn hdbscan_by<D: Fn(usize, usize) -> f64 + Sync>(
    n: usize,
    distance: D,
    min_cluster_size: usize,
    min_samples: usize,
) -> Vec<i64> {
    let Some((min_cluster_size, min_samples)) = parameters(n, min_cluster_size, min_samples) else {
        return vec![-1; n];
    };
    let core = brute_core_distances(n, &distance, min_samples);
    let order: Vec<usize> = (0..n).collect();
    let mst = prim_mst(&ByDistance(distance), &core, &order, &order);
    labels_from_mst(n, &mst, min_cluster_size)
}

/// The effective `(min_cluster_size, min_samples)`, or `None` when every point is noise
/// (fewer than two points, or fewer points than `min_samples`).
fn parameters(n: usize, min_cluster_size: usize, min_samples: usize) -> Option<(usize, usize)> {
    let min_cluster_size = min_cluster_size.max(2);
    let min_samples = if min_samples == 0 {
        min_cluster_size
    } else {
        min_samples
    };
    (n >= 2 && min_samples <= n).then_some((min_cluster_size, min_samples))
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

// ---------------------------------------------------------------------------------------
// Core distances
// ---------------------------------------------------------------------------------------

/// The `k`-th smallest of each point's distances to all points (itself included, at 0).
fn brute_core_distances<D: Fn(usize, usize) -> f64 + Sync>(
    n: usize,
    distance: &D,
    k: usize,
) -> Vec<f64> {
    (0..n)
        .into_par_iter()
        .map_init(Vec::new, |row: &mut Vec<f64>, i| {
            row.clear();
            row.extend((0..n).map(|j| if i == j { 0.0 } else { distance(i, j) }));
            kth_smallest(row, k)
        })
        .collect()
}

/// The `k`-th smallest value (1-based, clamped to the slice) of `values`, reordering them.
fn kth_smallest(values: &mut [f64], k: usize) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    let index = k.clamp(1, values.len()) - 1;
    let (_, kth, _) = values.select_nth_unstable_by(index, f64::total_cmp);
    *kth
}

/// Points per k-d tree leaf.
const LEAF_SIZE: usize = 16;

/// A k-d tree node: the bounding box of `order[start..end]` and its children, if split.
struct KdNode {
    lo: [f64; 2],
    hi: [f64; 2],
    start: usize,
    end: usize,
    children: Option<(usize, usize)>,
}

/// A k-d tree over 2-D points: `order` permutes the point indices so each node's points are
/// contiguous.
struct KdTree<'a> {
    points: &'a [[f64; 2]],
    order: Vec<usize>,
    nodes: Vec<KdNode>,
}

impl<'a> KdTree<'a> {
    fn new(points: &'a [[f64; 2]]) -> Self {
        let mut tree = KdTree {
            points,
            order: (0..points.len()).collect(),
            nodes: Vec::new(),
        };
        tree.build(0, points.len());
        tree
    }

    /// Adds the node for `order[start..end]` (and its subtree); returns its position.
    fn build(&mut self, start: usize, end: usize) -> usize {
        let (lo, hi) = self.bounds(start, end);
        let at = self.nodes.len();
        self.nodes.push(KdNode {
            lo,
            hi,
            start,
            end,
            children: None,
        });
        if end - start > LEAF_SIZE {
            let axis = usize::from(hi[1] - lo[1] > hi[0] - lo[0]);
            let mid = start + (end - start) / 2;
            let points = self.points;
            self.order[start..end].select_nth_unstable_by(mid - start, |&a, &b| {
                points[a][axis].total_cmp(&points[b][axis])
            });
            let left = self.build(start, mid);
            let right = self.build(mid, end);
            if let Some(node) = self.nodes.get_mut(at) {
                node.children = Some((left, right));
            }
        }
        at
    }

    fn bounds(&self, start: usize, end: usize) -> ([f64; 2], [f64; 2]) {
        let mut lo = [f64::INFINITY; 2];
        let mut hi = [f64::NEG_INFINITY; 2];
        for &i in &self.order[start..end] {
            let p = self.points[i];
            for axis in 0..2 {
                lo[axis] = lo[axis].min(p[axis]);
                hi[axis] = hi[axis].max(p[axis]);
            }
        }
        (lo, hi)
    }

    /// The squared distance from `q` to the node's bounding box.
    fn box_distance2(node: &KdNode, q: [f64; 2]) -> f64 {
        let gaps = q.iter().zip(node.lo.iter().zip(&node.hi));
        gaps.map(|(&q, (&lo, &hi))| (lo - q).max(q - hi).max(0.0))
            .map(|gap| gap * gap)
            .sum()
    }

    /// The `k` smallest squared distances from `q`, ascending, collected into `best`.
    fn nearest(&self, q: [f64; 2], k: usize, best: &mut Vec<f64>) {
        best.clear();
        let mut stack = vec![0usize];
        while let Some(at) = stack.pop() {
            let Some(node) = self.nodes.get(at) else {
                continue;
            };
            if best.len() == k
                && best
                    .last()
                    .is_some_and(|&worst| Self::box_distance2(node, q) > worst)
            {
                continue;
            }
            match node.children {
                Some((left, right)) => {
                    let near_left = self
                        .nodes
                        .get(left)
                        .map_or(0.0, |c| Self::box_distance2(c, q))
                        <= self
                            .nodes
                            .get(right)
                            .map_or(0.0, |c| Self::box_distance2(c, q));
                    // The nearer child goes on top of the stack.
                    if near_left {
                        stack.extend([right, left]);
                    } else {
                        stack.extend([left, right]);
                    }
                }
                None => {
                    for &i in &self.order[node.start..node.end] {
                        let p = self.points[i];
                        let (dx, dy) = (q[0] - p[0], q[1] - p[1]);
                        insert_bounded(best, dx * dx + dy * dy, k);
                    }
                }
            }
        }
    }
}

/// Inserts `value` into the ascending `best`, keeping at most `k` values.
fn insert_bounded(best: &mut Vec<f64>, value: f64, k: usize) {
    if best.len() == k && best.last().is_none_or(|&worst| value >= worst) {
        return;
    }
    let at = best.partition_point(|&v| v <= value);
    best.insert(at, value);
    best.truncate(k);
}

impl KdTree<'_> {
    /// Euclidean core distances: the `k`-th smallest distance from each point (itself
    /// included). The square root of the k-th smallest squared distance is the k-th
    /// smallest distance, as square roots are monotone.
    fn core_distances(&self, k: usize) -> Vec<f64> {
        self.points
            .par_iter()
            .map_init(Vec::new, |best, &q| {
                self.nearest(q, k, best);
                best.last().map_or(0.0, |d2| d2.sqrt())
            })
            .collect()
    }
}

// ---------------------------------------------------------------------------------------
// Prim's minimum spanning tree
// ---------------------------------------------------------------------------------------

/// A minimum spanning tree edge: (tree point, new point, mutual reachability).
#[derive(Clone, Copy, Debug)]
struct Edge {
    from: usize,
    to: usize,
    weight: f64,
}

/// The point added to the tree last.
struct Current<A> {
    id: usize,
    core: f64,
    at: A,
}

/// How Prim's algorithm measures mutual reachability.
trait Reachability: Sync {
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
fn max2(a: f64, b: f64) -> f64 {
    if b > a { b } else { a }
}

/// Slack on a squared bound: `d² ≥ bound² · (1 + 2⁻⁵⁰)`, rounding of the products
/// included, implies `sqrt(d²) ≥ bound`.
const SQUARE_SLACK: f64 = 1.0 + 1.0 / (1u64 << 50) as f64;

/// Euclidean distances between 2-D points, `sqrt(dx² + dy²)` as scikit-learn computes them.
struct Euclidean;

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
struct ByDistance<D>(D);

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

/// Frontier slots per leaf block of a [`Part`].
const BLOCK: usize = 16;
/// Summaries grouped by each summary one level up.
const FAN: usize = 8;
/// Smallest number of points per [`Part`] when the frontier is split for threads.
const PART_MIN: usize = 4096;
/// Slots examined in a Prim step from which the next step is spread over threads.
const PARALLEL_WORK: usize = 32768;

/// A frontier slot that may come next: smallest reachability, then lowest point index.
#[derive(Clone, Copy)]
struct Candidate {
    reach: f64,
    id: usize,
    slot: usize,
}

impl Candidate {
    const NONE: Candidate = Candidate {
        reach: f64::INFINITY,
        id: usize::MAX,
        slot: usize::MAX,
    };

    /// Whether `self` comes before `other`; a NaN reachability (a slot already in the
    /// tree) never does.
    fn beats(&self, other: &Candidate) -> bool {
        self.reach < other.reach || (self.reach == other.reach && self.id < other.id)
    }

    fn better(self, other: Candidate) -> Candidate {
        if other.beats(&self) { other } else { self }
    }
}

/// What a Prim step needs to know of a run of frontier slots: the bounds of their points,
/// their largest reachability (slots in the tree ignored) and their best slot.
#[derive(Clone, Copy)]
struct Summary<B> {
    bounds: B,
    max_reach: f64,
    best: Candidate,
}

/// The largest reachability and best slot of the slots `offset..offset + reach.len()`.
fn slots_summary(offset: usize, reach: &[f64], ids: &[usize]) -> (f64, Candidate) {
    let slots = reach.iter().zip(ids).enumerate();
    slots.fold(
        (f64::NEG_INFINITY, Candidate::NONE),
        |(max_reach, best), (k, (&reach, &id))| {
            (
                max2(max_reach, reach),
                best.better(Candidate {
                    reach,
                    id,
                    slot: offset + k,
                }),
            )
        },
    )
}

/// The largest reachability and best slot over some summaries.
fn summaries_summary<B>(children: &[Summary<B>]) -> (f64, Candidate) {
    children.iter().fold(
        (f64::NEG_INFINITY, Candidate::NONE),
        |(max_reach, best), c| (max2(max_reach, c.max_reach), best.better(c.best)),
    )
}

/// Part of the points outside the tree, as parallel arrays over slots (in the spatially
/// coherent order they were given): what the distance needs, core distance, smallest
/// mutual reachability to the tree so far (NaN once the point is in the tree), point index
/// and the tree point that gave that reachability. Above the slots, a tree of summaries:
/// level 0 summarises blocks of [`BLOCK`] slots, each higher level groups [`FAN`]
/// summaries of the level below, up to a single root. A Prim step descends only into
/// summaries whose bounds and largest reachability allow an improvement.
struct Part<A, B> {
    at: Vec<A>,
    cores: Vec<f64>,
    reach: Vec<f64>,
    ids: Vec<usize>,
    sources: Vec<usize>,
    levels: Vec<Vec<Summary<B>>>,
}

impl<A: Copy + Send + Sync, B: Copy + Send + Sync> Part<A, B> {
    fn new<R: Reachability<At = A, Bounds = B>>(
        space: &R,
        at: Vec<A>,
        cores: Vec<f64>,
        ids: Vec<usize>,
    ) -> Self {
        let n = at.len().min(cores.len()).min(ids.len());
        let reach = vec![f64::INFINITY; n];
        let leaves: Vec<Summary<B>> = at[..n]
            .chunks(BLOCK)
            .zip(ids.chunks(BLOCK))
            .enumerate()
            .map(|(b, (at, ids))| {
                let (max_reach, best) =
                    slots_summary(b * BLOCK, &reach[b * BLOCK..b * BLOCK + at.len()], ids);
                Summary {
                    bounds: space.bounds(at),
                    max_reach,
                    best,
                }
            })
            .collect();
        let mut levels = vec![leaves];
        while let Some(below) = levels.last().filter(|level| level.len() > 1) {
            let above = below
                .chunks(FAN)
                .filter_map(|children| {
                    let (first, rest) = children.split_first()?;
                    let bounds = rest
                        .iter()
                        .fold(first.bounds, |b, c| space.merge(&b, &c.bounds));
                    let (max_reach, best) = summaries_summary(children);
                    Some(Summary {
                        bounds,
                        max_reach,
                        best,
                    })
                })
                .collect();
            levels.push(above);
        }
        // scikit-learn starts every source at 1; it shows only for infinite distances.
        Part {
            at,
            cores,
            reach,
            ids,
            sources: vec![1; n],
            levels,
        }
    }

    /// The root summary (an empty part has none).
    fn root(&self) -> Option<&Summary<B>> {
        self.levels.last().and_then(|level| level.first())
    }

    /// One Prim step on this part: the best slot afterwards and how many slots were
    /// examined.
    fn relax<R: Reachability<At = A, Bounds = B>>(
        &mut self,
        space: &R,
        current: &Current<A>,
    ) -> (Candidate, usize) {
        let Some(&root) = self.root() else {
            return (Candidate::NONE, 0);
        };
        let mut examined = 0;
        if space.block_may_improve(current, &root.bounds, root.max_reach) {
            let top = self.levels.len() - 1;
            (_, examined) = self.visit(space, current, top, 0);
        }
        (self.root().map_or(Candidate::NONE, |r| r.best), examined)
    }

    /// Descends into summary `index` of level `level`: whether any reachability changed,
    /// and how many slots were examined.
    fn visit<R: Reachability<At = A, Bounds = B>>(
        &mut self,
        space: &R,
        current: &Current<A>,
        level: usize,
        index: usize,
    ) -> (bool, usize) {
        if level == 0 {
            return self.visit_block(space, current, index);
        }
        let (mut changed, mut examined) = (false, 0);
        let children =
            index * FAN..((index + 1) * FAN).min(self.levels.get(level - 1).map_or(0, Vec::len));
        for child in children.clone() {
            let Some(&summary) = self.levels.get(level - 1).and_then(|l| l.get(child)) else {
                continue;
            };
            if space.block_may_improve(current, &summary.bounds, summary.max_reach) {
                let (c, e) = self.visit(space, current, level - 1, child);
                changed |= c;
                examined += e;
            }
        }
        if changed {
            self.refresh(level, index, children);
        }
        (changed, examined)
    }

    /// Examines the slots of leaf block `block`.
    fn visit_block<R: Reachability<At = A, Bounds = B>>(
        &mut self,
        space: &R,
        current: &Current<A>,
        block: usize,
    ) -> (bool, usize) {
        let start = block * BLOCK;
        let end = (start + BLOCK).min(self.reach.len());
        let (Some(at), Some(cores), Some(reach), Some(sources)) = (
            self.at.get(start..end),
            self.cores.get(start..end),
            self.reach.get_mut(start..end),
            self.sources.get_mut(start..end),
        ) else {
            return (false, 0);
        };
        let examined = end - start;
        if !space.may_improve(current, at, cores, reach) {
            return (false, examined);
        }
        let mut changed = false;
        for (((reach, source), at), &core) in
            reach.iter_mut().zip(sources.iter_mut()).zip(at).zip(cores)
        {
            if let Some(lower) = space.improve(current, at, core, *reach) {
                *reach = lower;
                *source = current.id;
                changed = true;
            }
        }
        if changed {
            self.refresh(0, block, start..end);
        }
        (changed, examined)
    }

    /// Recomputes summary `index` of `level` from its slots (level 0) or children.
    fn refresh(&mut self, level: usize, index: usize, below: std::ops::Range<usize>) {
        let summary = if level == 0 {
            match (self.reach.get(below.clone()), self.ids.get(below.clone())) {
                (Some(reach), Some(ids)) => slots_summary(below.start, reach, ids),
                _ => (f64::NEG_INFINITY, Candidate::NONE),
            }
        } else {
            self.levels
                .get(level - 1)
                .and_then(|l| l.get(below))
                .map_or((f64::NEG_INFINITY, Candidate::NONE), summaries_summary)
        };
        if let Some(s) = self.levels.get_mut(level).and_then(|l| l.get_mut(index)) {
            (s.max_reach, s.best) = summary;
        }
    }

    /// Moves slot `slot` into the tree: its point, core, reachability, index and source.
    fn remove(&mut self, slot: usize) -> Option<(A, f64, f64, usize, usize)> {
        let reach = self.reach.get_mut(slot)?;
        if reach.is_nan() {
            return None;
        }
        let taken = (
            *self.at.get(slot)?,
            *self.cores.get(slot)?,
            *reach,
            *self.ids.get(slot)?,
            *self.sources.get(slot)?,
        );
        *reach = f64::NAN;
        let mut index = slot / BLOCK;
        let leaf = index * BLOCK..((index + 1) * BLOCK).min(self.reach.len());
        self.refresh(0, index, leaf);
        for level in 1..self.levels.len() {
            index /= FAN;
            let children = index * FAN..((index + 1) * FAN).min(self.levels[level - 1].len());
            self.refresh(level, index, children);
        }
        Some(taken)
    }
}

/// Prim's algorithm over the mutual reachability graph, as scikit-learn's
/// `mst_from_data_matrix`; `at[i]` is what the distance needs of point `i`, and `order` a
/// spatially coherent order of the points for the frontier's slots. The frontier is cut
/// into parts that relax in parallel when the previous step had much to examine.
fn prim_mst<R: Reachability>(space: &R, core: &[f64], at: &[R::At], order: &[usize]) -> Vec<Edge> {
    let order: Vec<usize> = order
        .iter()
        .copied()
        .filter(|&i| i < at.len() && i < core.len())
        .collect();
    let n = order.len();
    let count = (n / PART_MIN).clamp(1, 4 * rayon::current_num_threads().max(1));
    let mut parts: Vec<Part<R::At, R::Bounds>> = order
        .chunks(n.div_ceil(count).max(1))
        .map(|ids| {
            let at_slots = ids.iter().map(|&i| at[i]).collect();
            let core_slots = ids.iter().map(|&i| core[i]).collect();
            Part::new(space, at_slots, core_slots, ids.to_vec())
        })
        .collect();
    let mut edges = Vec::with_capacity(n.saturating_sub(1));
    let first = parts.iter_mut().find_map(|p| {
        p.ids
            .iter()
            .position(|&i| i == 0)
            .and_then(|slot| p.remove(slot))
    });
    let Some((at, core, _, id, _)) = first else {
        return edges;
    };
    let mut current = Current { id, core, at };
    let mut examined = n;
    for _ in 1..n {
        let steps: Vec<(Candidate, usize)> = if examined >= PARALLEL_WORK && parts.len() > 1 {
            parts
                .par_iter_mut()
                .map(|p| p.relax(space, &current))
                .collect()
        } else {
            parts.iter_mut().map(|p| p.relax(space, &current)).collect()
        };
        examined = steps.iter().map(|s| s.1).sum();
        let best = steps.iter().enumerate().fold(
            None,
            |best: Option<(usize, Candidate)>, (part, &(c, _))| match best {
                Some((_, b)) if !c.beats(&b) => best,
                _ if c.slot == usize::MAX => best,
                _ => Some((part, c)),
            },
        );
        // Only NaN distances leave no candidate; take the first slot not in the tree then.
        let taken = match best {
            Some((part, c)) => parts.get_mut(part).and_then(|p| p.remove(c.slot)),
            None => parts.iter_mut().find_map(|p| {
                p.reach
                    .iter()
                    .position(|r| !r.is_nan())
                    .and_then(|slot| p.remove(slot))
            }),
        };
        let Some((at, core, weight, id, from)) = taken else {
            break;
        };
        edges.push(Edge {
            from,
            to: id,
            weight,
        });
        current = Current { id, core, at };
    }
    edges
}

// ---------------------------------------------------------------------------------------
// Single-linkage tree, condensed tree, cluster selection
// ---------------------------------------------------------------------------------------

/// A single-linkage merge: node `n + i` joins `left` and `right` at `distance`.
struct Merge {
    left: usize,
    right: usize,
    distance: f64,
    size: usize,
}

/// A condensed-tree row: `child` (a point, or a cluster if `size > 1`) leaves or splits off
/// `parent` at `lambda`.
struct Row {
    parent: usize,
    child: usize,
    lambda: f64,
    size: usize,
}

/// Steps 3 to 8 of the module documentation: from the spanning tree to the labels.
fn labels_from_mst(n: usize, mst: &[Edge], min_cluster_size: usize) -> Vec<i64> {
    let weights: Vec<f64> = mst.iter().map(|e| e.weight).collect();
    let order = numpy_argsort(&weights);
    let ordered: Vec<Edge> = order.iter().filter_map(|&i| mst.get(i).copied()).collect();
    let merges = single_linkage(n, &ordered);
    let rows = condense(n, &merges, min_cluster_size);
    let selected = excess_of_mass(n, &rows);
    label_points(n, &rows, &selected)
}

/// The single-linkage tree of the ordered edges, as scikit-learn's `make_single_linkage`.
fn single_linkage(n: usize, edges: &[Edge]) -> Vec<Merge> {
    let mut parent: Vec<Option<usize>> = vec![None; 2 * n];
    let mut size: Vec<usize> = (0..2 * n).map(|i| usize::from(i < n)).collect();
    let mut merges = Vec::with_capacity(edges.len());
    for (i, edge) in edges.iter().enumerate() {
        let left = find_root(&mut parent, edge.from);
        let right = find_root(&mut parent, edge.to);
        let node = n + i;
        let merged = size.get(left).copied().unwrap_or(0) + size.get(right).copied().unwrap_or(0);
        for root in [left, right] {
            if let Some(p) = parent.get_mut(root) {
                *p = Some(node);
            }
        }
        if let Some(s) = size.get_mut(node) {
            *s = merged;
        }
        merges.push(Merge {
            left,
            right,
            distance: edge.weight,
            size: merged,
        });
    }
    merges
}

/// The root above `x`, pointing every node on the way straight at it.
fn find_root(parent: &mut [Option<usize>], x: usize) -> usize {
    let mut root = x;
    while let Some(Some(p)) = parent.get(root) {
        root = *p;
    }
    let mut at = x;
    while at != root {
        let Some(slot) = parent.get_mut(at) else {
            break;
        };
        let Some(next) = slot.replace(root) else {
            break;
        };
        at = next;
    }
    root
}

/// The number of points under single-linkage node `node`.
fn node_size(n: usize, merges: &[Merge], node: usize) -> usize {
    if node < n {
        1
    } else {
        merges.get(node - n).map_or(0, |m| m.size)
    }
}

/// The nodes under `root` in breadth-first order, as scikit-learn's `bfs_from_hierarchy`.
fn bfs(n: usize, merges: &[Merge], root: usize) -> Vec<usize> {
    let mut result = Vec::new();
    let mut queue = vec![root];
    while !queue.is_empty() {
        result.extend_from_slice(&queue);
        queue = queue
            .iter()
            .filter(|&&x| x >= n)
            .filter_map(|&x| merges.get(x - n))
            .flat_map(|m| [m.left, m.right])
            .collect();
    }
    result
}

/// The condensed tree, as scikit-learn's `_condense_tree`, rows in its order.
fn condense(n: usize, merges: &[Merge], min_cluster_size: usize) -> Vec<Row> {
    let root = 2 * merges.len();
    let mut relabel = vec![0usize; root + 1];
    let mut ignore = vec![false; root + 1];
    relabel[root] = n;
    let mut next_label = n + 1;
    let mut rows = Vec::new();
    for node in bfs(n, merges, root) {
        if node < n || ignore.get(node).copied().unwrap_or(true) {
            continue;
        }
        let Some(merge) = merges.get(node - n) else {
            continue;
        };
        let lambda = if merge.distance > 0.0 {
            1.0 / merge.distance
        } else {
            f64::INFINITY
        };
        let parent = relabel[node];
        let (left, right) = (merge.left, merge.right);
        let left_big = node_size(n, merges, left) >= min_cluster_size;
        let right_big = node_size(n, merges, right) >= min_cluster_size;
        let mut fall_out = |side: usize, rows: &mut Vec<Row>| {
            for sub in bfs(n, merges, side) {
                if sub < n {
                    rows.push(Row {
                        parent,
                        child: sub,
                        lambda,
                        size: 1,
                    });
                }
                if let Some(flag) = ignore.get_mut(sub) {
                    *flag = true;
                }
            }
        };
        match (left_big, right_big) {
            (true, true) => {
                for side in [left, right] {
                    relabel[side] = next_label;
                    rows.push(Row {
                        parent,
                        child: next_label,
                        lambda,
                        size: node_size(n, merges, side),
                    });
                    next_label += 1;
                }
            }
            (false, false) => {
                fall_out(left, &mut rows);
                fall_out(right, &mut rows);
            }
            (false, true) => {
                relabel[right] = parent;
                fall_out(left, &mut rows);
            }
            (true, false) => {
                relabel[left] = parent;
                fall_out(right, &mut rows);
            }
        }
    }
    rows
}

/// Which clusters (numbered from `n`, the root) excess of mass keeps, as scikit-learn's
/// `_compute_stability` and `_get_clusters`.
fn excess_of_mass(n: usize, rows: &[Row]) -> Vec<bool> {
    let clusters = rows
        .iter()
        .map(|r| r.parent + 1)
        .max()
        .unwrap_or(n)
        .max(n + 1)
        - n;
    let mut birth = vec![f64::NAN; clusters];
    birth[0] = 0.0;
    let mut parent_of = vec![None; clusters];
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); clusters];
    for row in rows.iter().filter(|r| r.size > 1) {
        if let Some(b) = birth.get_mut(row.child - n) {
            *b = row.lambda;
        }
        if let Some(p) = parent_of.get_mut(row.child - n) {
            *p = Some(row.parent - n);
        }
        if let Some(c) = children.get_mut(row.parent - n) {
            c.push(row.child - n);
        }
    }
    let mut stability = vec![0.0f64; clusters];
    for row in rows {
        let c = row.parent - n;
        stability[c] += (row.lambda - birth[c]) * row.size as f64;
    }
    // Descending cluster numbers, the root excluded: children come before their parents.
    let mut chosen = vec![false; clusters];
    for c in (1..clusters).rev() {
        let subtree = children[c]
            .iter()
            .map(|&k| stability[k])
            .reduce(|a, b| a + b)
            .unwrap_or(0.0);
        if subtree > stability[c] {
            stability[c] = subtree;
        } else {
            chosen[c] = true;
        }
    }
    // A chosen cluster stays only if no ancestor was chosen after it (which unselects its
    // descendants); parents have smaller numbers than their children.
    let mut blocked = vec![false; clusters];
    let mut selected = vec![false; clusters];
    for c in 1..clusters {
        if let Some(p) = parent_of[c] {
            blocked[c] = blocked[p] || chosen[p];
        }
        selected[c] = chosen[c] && !blocked[c];
    }
    selected
}

/// Each point's label: the number, among kept clusters in ascending order, of the nearest
/// kept cluster above it, or −1.
fn label_points(n: usize, rows: &[Row], selected: &[bool]) -> Vec<i64> {
    let clusters = selected.len();
    let mut parent_of = vec![None; clusters];
    for row in rows.iter().filter(|r| r.size > 1) {
        if let Some(p) = parent_of.get_mut(row.child - n) {
            *p = Some(row.parent - n);
        }
    }
    let mut label = vec![-1i64; clusters];
    let mut next = 0i64;
    for c in 0..clusters {
        if selected[c] {
            label[c] = next;
            next += 1;
        } else if let Some(p) = parent_of[c] {
            label[c] = label[p];
        }
    }
    let mut labels = vec![-1i64; n];
    for row in rows.iter().filter(|r| r.size == 1 && r.child < n) {
        labels[row.child] = label.get(row.parent - n).copied().unwrap_or(-1);
    }
    labels
}

// ---------------------------------------------------------------------------------------
// NumPy's argsort of float64 (x86-simd-sort, AVX-512)
// ---------------------------------------------------------------------------------------

/// `np.argsort(values)` (default kind) as NumPy 2 computes it on AVX-512 x86-64, including
/// the order of equal values: x86-simd-sort's `avx512_argsort<double>`.
///
/// Arrays holding NaN are sorted by `std::sort` with NaN last; already ascending arrays are
/// left in index order; otherwise a quicksort with median-of-8 pivots partitions in place
/// the way the 8-lane compress-stores do, recursing at most `2·⌊log₂ n⌋` levels before
/// handing a range to `std::sort`, and sorting ranges of at most 256 elements with bitonic
/// networks of 8-lane registers.
fn numpy_argsort(values: &[f64]) -> Vec<usize> {
    let n = values.len();
    let mut arg: Vec<usize> = (0..n).collect();
    if n < 2 {
        return arg;
    }
    if values.iter().any(|v| v.is_nan()) {
        std_sort(&mut arg, &|a, b| {
            let (x, y) = (key(values, a), key(values, b));
            if !x.is_nan() && !y.is_nan() {
                x < y
            } else {
                !x.is_nan()
            }
        });
        return arg;
    }
    if values.windows(2).all(|w| w[0] <= w[1]) {
        return arg;
    }
    let budget = 2 * n.ilog2() as usize;
    simd_argsort(values, &mut arg, 0, n - 1, budget);
    arg
}

/// The value at index `i`, +∞ past the end.
fn key(values: &[f64], i: usize) -> f64 {
    values.get(i).copied().unwrap_or(f64::INFINITY)
}

/// x86-simd-sort's `argsort_` over `arg[left..=right]`.
fn simd_argsort(values: &[f64], arg: &mut [usize], left: usize, right: usize, budget: usize) {
    if budget == 0 {
        std_sort(&mut arg[left..=right], &|a, b| {
            key(values, a) < key(values, b)
        });
        return;
    }
    if right + 1 - left <= 256 {
        network_argsort(values, &mut arg[left..=right]);
        return;
    }
    let pivot = pivot_of_8(values, arg, left, right);
    let (split, smallest, biggest) = simd_partition(values, arg, left, right + 1, pivot);
    if pivot != smallest {
        simd_argsort(values, arg, left, split - 1, budget - 1);
    }
    if pivot != biggest {
        simd_argsort(values, arg, split, right, budget - 1);
    }
}

/// The 5th smallest of the 8 values at `left + k·⌊(right − left) / 8⌋`, `k = 1..=8`.
fn pivot_of_8(values: &[f64], arg: &[usize], left: usize, right: usize) -> f64 {
    let step = (right - left) / 8;
    let mut sample: Vec<f64> = (1..=8).map(|k| key(values, arg[left + k * step])).collect();
    sample.sort_by(f64::total_cmp);
    sample[4]
}

/// Lanes of one 8-lane register.
const LANES: usize = 8;
/// Registers partitioned per round (x86-simd-sort's unroll factor for this partition).
const UNROLL: usize = 4;

/// The smallest and biggest values seen by a partition.
struct Extremes {
    smallest: f64,
    biggest: f64,
}

impl Extremes {
    fn see(&mut self, v: f64) {
        if v < self.smallest {
            self.smallest = v;
        }
        if self.biggest < v {
            self.biggest = v;
        }
    }
}

/// x86-simd-sort's `argpartition_unrolled<4>` over `arg[left..right]`: indices of values
/// below `pivot` first; returns the split and the range's smallest and biggest values.
fn simd_partition(
    values: &[f64],
    arg: &mut [usize],
    left: usize,
    right: usize,
    pivot: f64,
) -> (usize, f64, f64) {
    let mut seen = Extremes {
        smallest: f64::INFINITY,
        biggest: f64::NEG_INFINITY,
    };
    let (mut left, mut right) = (left, right);
    // Shorten the range to a multiple of UNROLL registers, one element at a time.
    for _ in 0..(right - left) % (UNROLL * LANES) {
        let v = key(values, arg[left]);
        seen.see(v);
        if v < pivot {
            left += 1;
        } else {
            right -= 1;
            arg.swap(left, right);
        }
    }
    if left == right {
        return (left, seen.smallest, seen.biggest);
    }
    // The first and last UNROLL registers are held back and stored at the end; in between,
    // UNROLL registers at a time are loaded from whichever side has less room to store.
    let first: Vec<Register8> = (0..UNROLL).map(|i| load(arg, left + LANES * i)).collect();
    let last: Vec<Register8> = (0..UNROLL)
        .map(|i| load(arg, right - LANES * (UNROLL - i)))
        .collect();
    let mut stores = Stores {
        left,
        right: right - LANES,
    };
    left += UNROLL * LANES;
    right -= UNROLL * LANES;
    while right != left {
        let at = if (stores.right + LANES) - right < left - stores.left {
            right -= UNROLL * LANES;
            right
        } else {
            left += UNROLL * LANES;
            left - UNROLL * LANES
        };
        let registers: Vec<Register8> = (0..UNROLL).map(|i| load(arg, at + LANES * i)).collect();
        for register in &registers {
            stores.store(values, arg, register, pivot, &mut seen);
        }
    }
    for register in first.iter().chain(&last) {
        stores.store(values, arg, register, pivot, &mut seen);
    }
    (stores.left, seen.smallest, seen.biggest)
}

/// Eight indices, as a partition loads them.
type Register8 = [usize; LANES];

/// The register at `arg[at..at + 8]`.
fn load(arg: &[usize], at: usize) -> Register8 {
    std::array::from_fn(|lane| arg[at + lane])
}

/// Where a partition stores next: indices below the pivot from `left` up, the others
/// ending at `right + LANES`.
struct Stores {
    left: usize,
    right: usize,
}

impl Stores {
    fn store(
        &mut self,
        values: &[f64],
        arg: &mut [usize],
        register: &Register8,
        pivot: f64,
        seen: &mut Extremes,
    ) {
        let ge = partition_register(values, arg, self.left, self.right + LANES, register, pivot);
        for &i in register {
            seen.see(key(values, i));
        }
        self.left += LANES - ge;
        self.right -= ge;
    }
}

/// One register's compress-stores: lanes below `pivot` to `arg[l_store..]`, the others to
/// the end of `arg[..r_end]`, each in lane order; returns how many were not below.
fn partition_register(
    values: &[f64],
    arg: &mut [usize],
    l_store: usize,
    r_end: usize,
    register: &Register8,
    pivot: f64,
) -> usize {
    let ge = register
        .iter()
        .filter(|&&i| key(values, i) >= pivot)
        .count();
    let below = register.iter().filter(|&&i| key(values, i) < pivot);
    for (at, &i) in (l_store..).zip(below) {
        arg[at] = i;
    }
    let above = register.iter().filter(|&&i| key(values, i) >= pivot);
    for (at, &i) in (r_end - ge..).zip(above) {
        arg[at] = i;
    }
    ge
}

/// An 8-lane key/index register.
#[derive(Clone, Copy)]
struct Register {
    keys: [f64; LANES],
    ids: [usize; LANES],
}

impl Register {
    /// Lane `i` takes lane `partner(i)`'s content.
    fn permuted(self, partner: impl Fn(usize) -> usize) -> Register {
        Register {
            keys: std::array::from_fn(|i| self.keys[partner(i)]),
            ids: std::array::from_fn(|i| self.ids[partner(i)]),
        }
    }

    fn reversed(self) -> Register {
        self.permuted(|i| i ^ 7)
    }

    /// x86-simd-sort's key/index `cmp_merge`: each lane meets lane `partner(i)`, lanes in
    /// `max_lanes` keep the larger key and the others the smaller; a lane keeps its own
    /// index when its key is unchanged.
    fn cmp_merge(self, partner: impl Fn(usize) -> usize, max_lanes: u8) -> Register {
        let other = self.permuted(partner);
        let mut out = self;
        for lane in 0..LANES {
            let (mine, theirs) = (self.keys[lane], other.keys[lane]);
            let (low, high) = simd_min_max(theirs, mine);
            let k = if max_lanes >> lane & 1 == 1 {
                high
            } else {
                low
            };
            out.keys[lane] = k;
            out.ids[lane] = if k == mine {
                self.ids[lane]
            } else {
                other.ids[lane]
            };
        }
        out
    }

    /// Sorts the 8 lanes (x86-simd-sort's `sort_reg_8lanes`).
    fn sorted(self) -> Register {
        self.cmp_merge(|i| i ^ 1, 0xAA)
            .cmp_merge(|i| i ^ 3, 0xCC)
            .cmp_merge(|i| i ^ 1, 0xAA)
            .cmp_merge(|i| i ^ 7, 0xF0)
            .cmp_merge(|i| i ^ 2, 0xCC)
            .cmp_merge(|i| i ^ 1, 0xAA)
    }

    /// Sorts a bitonic register (x86-simd-sort's `bitonic_merge_reg_8lanes`).
    fn bitonic_merged(self) -> Register {
        self.cmp_merge(|i| i ^ 4, 0xF0)
            .cmp_merge(|i| i ^ 2, 0xCC)
            .cmp_merge(|i| i ^ 1, 0xAA)
    }
}

/// `(_mm512_min_pd(a, b), _mm512_max_pd(a, b))` lane values: the second operand unless the
/// first is strictly smaller (resp. larger).
fn simd_min_max(a: f64, b: f64) -> (f64, f64) {
    (if a < b { a } else { b }, if a > b { a } else { b })
}

/// x86-simd-sort's key/index `COEX` of two registers: lane-wise smaller keys to `a`,
/// indices following their keys, equal keys staying put.
fn coex(a: &mut Register, b: &mut Register) {
    for lane in 0..LANES {
        let (ka, kb) = (a.keys[lane], b.keys[lane]);
        let (low, high) = simd_min_max(ka, kb);
        let stays = low == ka;
        let (ia, ib) = (a.ids[lane], b.ids[lane]);
        a.keys[lane] = low;
        b.keys[lane] = high;
        a.ids[lane] = if stays { ia } else { ib };
        b.ids[lane] = if stays { ib } else { ia };
    }
}

/// x86-simd-sort's `argsort_n<…, 256>`: sorts up to 256 indices by their values with a
/// bitonic network over the smallest power-of-two number of registers that holds them
/// (missing lanes padded with +∞).
fn network_argsort(values: &[f64], arg: &mut [usize]) {
    let n = arg.len();
    let mut count = 256 / LANES;
    while count > 1 && n * 2 <= count * LANES {
        count /= 2;
    }
    let mut registers: Vec<Register> = (0..count)
        .map(|r| {
            let lane_at = |lane: usize| arg.get(r * LANES + lane).copied();
            let ids: [usize; LANES] =
                std::array::from_fn(|lane| lane_at(lane).unwrap_or(usize::MAX));
            let keys =
                std::array::from_fn(|lane| lane_at(lane).map_or(f64::INFINITY, |i| key(values, i)));
            Register { keys, ids }.sorted()
        })
        .collect();
    let mut width = 2;
    while width <= count {
        for group in registers.chunks_mut(width) {
            bitonic_merge_registers(group);
        }
        width *= 2;
    }
    for (slot, id) in arg.iter_mut().zip(registers.iter().flat_map(|r| r.ids)) {
        *slot = id;
    }
}

/// x86-simd-sort's `bitonic_merge_n_vec`: merges a group of registers whose two halves are
/// each sorted.
fn bitonic_merge_registers(group: &mut [Register]) {
    let m = group.len();
    for i in 0..m / 2 {
        let (low, high) = group.split_at_mut(m - 1 - i);
        let (Some(a), Some(b)) = (low.get_mut(i), high.first_mut()) else {
            continue;
        };
        *b = b.reversed();
        coex(a, b);
        *b = b.reversed();
    }
    let mut half = m / 2;
    while half >= 2 {
        for block in group.chunks_mut(half) {
            let (low, high) = block.split_at_mut(half / 2);
            for (a, b) in low.iter_mut().zip(high.iter_mut()) {
                coex(a, b);
            }
        }
        half /= 2;
    }
    for register in group.iter_mut() {
        *register = register.bitonic_merged();
    }
}

/// libstdc++'s `std::sort` (introsort: median-of-three, unguarded partition, heapsort past
/// `2·⌊log₂ n⌋` levels, final insertion sort) with the strict order `less`.
fn std_sort(v: &mut [usize], less: &dyn Fn(usize, usize) -> bool) {
    if v.len() < 2 {
        return;
    }
    let depth = 2 * v.len().ilog2() as usize;
    introsort_loop(v, depth, less);
    final_insertion_sort(v, less);
}

/// libstdc++'s size below which ranges are left to the final insertion sort.
const STD_THRESHOLD: usize = 16;

/// libstdc++'s `__introsort_loop`: partitions, recursing into the right part and looping on
/// the left, until ranges are small or the depth budget is spent (then heapsort).
fn introsort_loop(v: &mut [usize], depth: usize, less: &dyn Fn(usize, usize) -> bool) {
    let mut depth = depth;
    let mut last = v.len();
    while last > STD_THRESHOLD {
        if depth == 0 {
            heap_sort(&mut v[..last], less);
            return;
        }
        depth -= 1;
        let cut = partition_pivot(&mut v[..last], less);
        introsort_loop(&mut v[cut..last], depth, less);
        last = cut;
    }
}

/// `__unguarded_partition_pivot`: the median of the second, middle and last elements is
/// moved to the front and the rest partitioned around it; returns the cut.
fn partition_pivot(v: &mut [usize], less: &dyn Fn(usize, usize) -> bool) -> usize {
    let len = v.len();
    let (a, b, c) = (1, len / 2, len - 1);
    let median = if less(v[a], v[b]) {
        if less(v[b], v[c]) {
            b
        } else if less(v[a], v[c]) {
            c
        } else {
            a
        }
    } else if less(v[a], v[c]) {
        a
    } else if less(v[b], v[c]) {
        c
    } else {
        b
    };
    v.swap(0, median);
    let pivot = v[0];
    let (mut first, mut last) = (1, len);
    loop {
        while less(v[first], pivot) {
            first += 1;
        }
        last -= 1;
        while less(pivot, v[last]) {
            last -= 1;
        }
        if first >= last {
            return first;
        }
        v.swap(first, last);
        first += 1;
    }
}

/// libstdc++'s `__final_insertion_sort`: a guarded insertion sort of the first 16 elements,
/// then unguarded insertion of the rest.
fn final_insertion_sort(v: &mut [usize], less: &dyn Fn(usize, usize) -> bool) {
    let len = v.len();
    let guarded = len.min(STD_THRESHOLD);
    for i in 1..guarded {
        let x = v[i];
        if less(x, v[0]) {
            v.copy_within(0..i, 1);
            v[0] = x;
        } else {
            unguarded_linear_insert(v, i, less);
        }
    }
    for i in guarded..len {
        unguarded_linear_insert(v, i, less);
    }
}

/// libstdc++'s `__unguarded_linear_insert`: moves `v[at]` down past larger elements.
fn unguarded_linear_insert(v: &mut [usize], at: usize, less: &dyn Fn(usize, usize) -> bool) {
    let x = v[at];
    let mut hole = at;
    while hole > 0 && less(x, v[hole - 1]) {
        v[hole] = v[hole - 1];
        hole -= 1;
    }
    v[hole] = x;
}

/// libstdc++'s `__partial_sort(first, last, last)`: make_heap then sort_heap.
fn heap_sort(v: &mut [usize], less: &dyn Fn(usize, usize) -> bool) {
    let len = v.len();
    if len < 2 {
        return;
    }
    let mut parent = (len - 2) / 2;
    loop {
        let x = v[parent];
        adjust_heap(v, parent, len, x, less);
        if parent == 0 {
            break;
        }
        parent -= 1;
    }
    let mut last = len;
    while last > 1 {
        last -= 1;
        let x = v[last];
        v[last] = v[0];
        adjust_heap(v, 0, last, x, less);
    }
}

/// libstdc++'s `__adjust_heap`: sinks the hole at `hole` to a leaf along larger children,
/// then sifts `x` up from there (`__push_heap`).
fn adjust_heap(
    v: &mut [usize],
    hole: usize,
    len: usize,
    x: usize,
    less: &dyn Fn(usize, usize) -> bool,
) {
    let top = hole;
    let mut hole = hole;
    let mut child = hole;
    while child < (len - 1) / 2 {
        child = 2 * (child + 1);
        if less(v[child], v[child - 1]) {
            child -= 1;
        }
        v[hole] = v[child];
        hole = child;
    }
    if len.is_multiple_of(2) && child == (len - 2) / 2 {
        child = 2 * (child + 1);
        v[hole] = v[child - 1];
        hole = child - 1;
    }
    // Sift up, as `__push_heap`.
    let mut parent = hole.saturating_sub(1) / 2;
    while hole > top && less(v[parent], x) {
        v[hole] = v[parent];
        hole = parent;
        parent = hole.saturating_sub(1) / 2;
    }
    v[hole] = x;
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 4 × 4 unit lattice with its lower left corner at `(x, 0)`.
    fn lattice(x: f64) -> Vec<[f64; 2]> {
        (0..16)
            .map(|i| [x + (i / 4) as f64, (i % 4) as f64])
            .collect()
    }

    #[test]
    fn two_blobs_and_noise() {
        // Two lattices 97 apart and two far points. With min_samples = 3 every lattice point
        // has core distance 1, so each lattice is one cluster. (50, 60) joins the left
        // lattice at distance 73.9, before the lattices join at 97, and so leaves that
        // cluster after its birth: it belongs to it. (-40, 80) joins last and is noise.
        let mut points = lattice(0.0);
        points.extend(lattice(100.0));
        points.extend([[50.0, 60.0], [-40.0, 80.0]]);
        let mut expected = vec![0; 16];
        expected.extend([1; 16]);
        expected.extend([0, -1]);
        assert_eq!(hdbscan(&points, 5, 3), expected);
    }

    #[test]
    fn identical_points_are_noise() {
        // One cluster only, and the root cannot be selected.
        let points = vec![[1.0, 2.0]; 20];
        assert_eq!(hdbscan(&points, 5, 3), vec![-1; 20]);
    }

    #[test]
    fn degenerate_inputs() {
        assert!(hdbscan(&[], 5, 5).is_empty());
        assert_eq!(hdbscan(&[[0.0, 0.0]], 5, 5), vec![-1]);
        let points = [[0.0, 0.0], [1.0, 0.0], [2.0, 0.0]];
        assert_eq!(hdbscan(&points, 2, 4), vec![-1; 3]);
        assert_eq!(
            hdbscan_by(3, |i, j| (i as f64 - j as f64).abs(), 0, 0),
            vec![-1; 3]
        );
    }

    #[test]
    fn distance_function_matches_euclidean() {
        let mut points = lattice(0.0);
        points.extend(lattice(7.5));
        points.extend([[4.0, 9.0], [-6.0, -6.0], [3.5, 1.5], [1.5, 1.5]]);
        let distance = |i: usize, j: usize| {
            let (dx, dy) = (points[i][0] - points[j][0], points[i][1] - points[j][1]);
            (dx * dx + dy * dy).sqrt()
        };
        for (min_cluster_size, min_samples) in [(5, 4), (3, 1), (8, 8)] {
            let by = hdbscan_by(points.len(), distance, min_cluster_size, min_samples);
            assert_eq!(by, hdbscan(&points, min_cluster_size, min_samples));
        }
    }

    #[test]
    fn argsort_orders_ties_as_numpy() {
        // np.argsort([0, 2, 4, 1, 3] * 4) on AVX-512 (a stable sort would give 0 5 10 15 …).
        let values: Vec<f64> = (0..20).map(|i| ((i * 7) % 5) as f64).collect();
        let expected = [
            0, 5, 15, 10, 8, 13, 3, 18, 11, 6, 16, 1, 14, 19, 4, 9, 12, 7, 2, 17,
        ];
        assert_eq!(numpy_argsort(&values), expected);
    }

    #[test]
    fn argsort_orders_values() {
        let values: Vec<f64> = (0..1000).map(|i| ((i * 7919) % 13) as f64).collect();
        let order = numpy_argsort(&values);
        assert!(order.windows(2).all(|w| values[w[0]] <= values[w[1]]));
        let mut seen = order.clone();
        seen.sort_unstable();
        assert_eq!(seen, (0..1000).collect::<Vec<_>>());
    }

    #[test]
    fn std_sort_orders_values() {
        let values: Vec<f64> = (0..500).map(|i| ((i * 31) % 17) as f64).collect();
        let mut v: Vec<usize> = (0..500).collect();
        std_sort(&mut v, &|a, b| values[a] < values[b]);
        assert!(v.windows(2).all(|w| values[w[0]] <= values[w[1]]));
        let mut h: Vec<usize> = (0..500).collect();
        heap_sort(&mut h, &|a, b| values[a] < values[b]);
        assert!(h.windows(2).all(|w| values[w[0]] <= values[w[1]]));
    }
}
