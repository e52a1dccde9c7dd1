//! HDBSCAN clustering with scikit-learn's `sklearn.cluster.HDBSCAN` (1.9) algorithm and
//! parameters — `metric="euclidean"` ([`hdbscan`], [`hdbscan_by`]) or `metric="haversine"`
//! ([`hdbscan_haversine`]), `alpha=1.0`, `cluster_selection_epsilon=0.0`,
//! `cluster_selection_method="eom"` and `allow_single_cluster=False`, clusters numbered the same
//! way — and tie rules that do not depend on the CPU.
//!
//! The steps are scikit-learn's, in its order:
//!
//! 1. **Core distances**: the distance from each point to its `min_samples`-th nearest neighbour,
//!    the point itself counting as the first (so `min_samples = 1` gives 0 everywhere), measured
//!    by the same function as the pair distances of step 2 (for `haversine`, `2·asin(√h)` with
//!    the C library's `asin`). scikit-learn converts its ball tree's haversines with NumPy's
//!    `arcsin` instead, which on AVX-512 CPUs is Intel SVML's and can differ in the last bit.
//! 2. **Minimum spanning tree** of the mutual reachability graph,
//!    `max(core(a), core(b), d(a, b))`, by Prim's algorithm over the implicit complete graph
//!    (`mst_from_data_matrix`): it starts at point 0; after each step every point outside the
//!    tree keeps its smallest reachability to the tree and the tree point that first gave it
//!    (a later tree point only replaces it when strictly smaller); the next point is the one
//!    with the smallest such reachability, the lowest index among equals. Each edge is
//!    recorded as (tree point, new point, reachability), and its orientation matters below.
//! 3. **Edge order**: the edges by ascending weight, **equal weights in the order Prim's
//!    algorithm added them** (a stable sort; NaN last). Equal weights are common (a weight is
//!    often some point's core distance, and grid-like data is full of equal distances), and
//!    their order decides the shape of the single-linkage tree, hence which points leave a
//!    cluster at the very lambda the cluster is born. scikit-learn orders them with
//!    `np.argsort`, which is not stable and whose tie order depends on the CPU (x86-simd-sort
//!    on AVX-512, other networks on AVX2, an introsort elsewhere): where equal weights meet,
//!    its labels change from one machine to the next, these do not. They equal scikit-learn's
//!    pipeline with `np.argsort(kind="stable")` and the core distances of step 1, which is what
//!    the tests compare them with.
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
//! 9. **Probabilities** (scikit-learn's `get_probabilities`): each cluster's largest lambda is
//!    the largest over the *last* run of consecutive condensed-tree rows it is the parent of
//!    (scikit-learn's `max_lambdas` reads the rows so); a clustered point's probability is the
//!    lambda it left the tree at, capped by its cluster's, over its cluster's (1 when that is
//!    0 or the point's lambda is infinite); noise 0.
//!
//! Degenerate inputs, which scikit-learn rejects, are answered rather than refused: no
//! points give no labels, a single point is noise, `min_cluster_size` below 2 counts as 2,
//! `min_samples = 0` means `min_samples = min_cluster_size` (scikit-learn's default), and
//! when `min_samples` exceeds the number of points no point is dense enough, so all are
//! noise. Distances must be finite and not NaN for the result to match scikit-learn; other
//! values still give labels, without a guarantee.
//!
//! The stages live in submodules: `core_distances` (step 1, with the k-d tree),
//! `reachability` and `prim` (step 2), `hierarchy` (steps 3 to 8), and `haversine` for
//! scikit-learn's great-circle metric.

mod core_distances;
mod haversine;
mod hierarchy;
mod prim;
mod reachability;

use core_distances::{KdTree, brute_core_distances};
use haversine::Sphere;
pub use hierarchy::Clustering;
use hierarchy::labels_from_mst;
use prim::prim_mst;
use reachability::{ByDistance, Euclidean};

/// The HDBSCAN label of each point (−1 noise): scikit-learn's
/// `HDBSCAN(min_cluster_size, min_samples, metric="euclidean").fit(points).labels_`, including
/// the numbering of the clusters, with the module documentation's tie rule for equal distances.
///
/// Core distances come from a k-d tree (k nearest neighbours, the point itself included).
/// The minimum spanning tree is Prim's algorithm over all pairs, `O(n²)` at worst, but each
/// step only looks at the points outside the tree whose reachability it may lower: they sit
/// in k-d tree order under a hierarchy of bounding boxes that carry their largest
/// reachability and best point, so a step skips every box it cannot reach and finds the next
/// point at the top. Steps that must examine many points are spread over the rayon thread
/// pool. See the module documentation for the remaining steps and for degenerate
/// parameters.
pub fn hdbscan(points: &[[f64; 2]], min_cluster_size: usize, min_samples: usize) -> Clustering {
    let n = points.len();
    let Some((min_cluster_size, min_samples)) = parameters(n, min_cluster_size, min_samples) else {
        return Clustering::noise(n);
    };
    let tree = KdTree::new(points);
    let core = tree.core_distances(min_samples);
    let mst = prim_mst(&Euclidean, &core, points, &tree.order);
    labels_from_mst(n, &mst, min_cluster_size)
}

/// The same with any symmetric distance between points `i` and `j`; `distance(i, i)` is
/// taken as 0 and never asked for. Core distances are the `min_samples`-th smallest values
/// of `distance` itself (step 1 of the module documentation). For longitude/latitude points
/// use [`hdbscan_haversine`], which measures scikit-learn's great-circle metric.
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
) -> Clustering {
    let Some((min_cluster_size, min_samples)) = parameters(n, min_cluster_size, min_samples) else {
        return Clustering::noise(n);
    };
    let core = brute_core_distances(n, &distance, min_samples);
    let order: Vec<usize> = (0..n).collect();
    let mst = prim_mst(&ByDistance(distance), &core, &order, &order);
    labels_from_mst(n, &mst, min_cluster_size)
}

/// The HDBSCAN label of each longitude/latitude point (degrees, longitude first):
/// scikit-learn's `HDBSCAN(min_cluster_size, min_samples, metric="haversine").fit(X).labels_`
/// with `X = np.radians(points[:, ::-1])` (latitude first, as that metric reads points).
///
/// Distances are angles in radians of the unit sphere, `2·asin(√h)` with the C library's
/// `asin`, `h` being the haversine of the angle, as scikit-learn's compiled metric computes
/// them; the core distances are the same function of the `min_samples`-th smallest `h` (see
/// step 1 of the module documentation). Both steps evaluate every pair, `O(n²)`, in parallel.
pub fn hdbscan_haversine(
    points: &[[f64; 2]],
    min_cluster_size: usize,
    min_samples: usize,
) -> Clustering {
    let n = points.len();
    let Some((min_cluster_size, min_samples)) = parameters(n, min_cluster_size, min_samples) else {
        return Clustering::noise(n);
    };
    let sphere = Sphere::new(points);
    let core = sphere.core_distances(min_samples);
    let order: Vec<usize> = (0..n).collect();
    let mst = prim_mst(
        &ByDistance(|i, j| sphere.distance(i, j)),
        &core,
        &order,
        &order,
    );
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
        assert_eq!(hdbscan(&points, 5, 3).labels, expected);
    }

    #[test]
    fn probabilities_match_scikit_learn() {
        // scikit-learn 1.9's HDBSCAN(min_cluster_size=5, min_samples=4) probabilities_.
        let mut points = lattice(0.0);
        points.extend(lattice(7.5));
        points.extend([[4.0, 9.0], [-6.0, -6.0], [3.5, 1.5], [1.5, 1.5]]);
        let found = hdbscan(&points, 5, 4);
        let corner = 0.7071067811865475;
        let lattice_probabilities = [
            corner, 1.0, 1.0, corner, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, corner, 1.0, 1.0,
            corner,
        ];
        let mut expected: Vec<f64> = lattice_probabilities.repeat(2);
        expected.extend([0.0, 0.0, 0.6324555320336759, 1.0]);
        assert_eq!(found.probabilities, expected);
        assert_eq!(&found.labels[32..], &[-1, -1, 0, 0]);
    }

    #[test]
    fn identical_points_are_noise() {
        // One cluster only, and the root cannot be selected.
        let points = vec![[1.0, 2.0]; 20];
        assert_eq!(hdbscan(&points, 5, 3).labels, vec![-1; 20]);
    }

    #[test]
    fn degenerate_inputs() {
        assert!(hdbscan(&[], 5, 5).labels.is_empty());
        assert_eq!(hdbscan(&[[0.0, 0.0]], 5, 5).labels, vec![-1]);
        let points = [[0.0, 0.0], [1.0, 0.0], [2.0, 0.0]];
        assert_eq!(hdbscan(&points, 2, 4).labels, vec![-1; 3]);
        assert_eq!(
            hdbscan_by(3, |i, j| (i as f64 - j as f64).abs(), 0, 0).labels,
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
    fn haversine_matches_scikit_learn() {
        // scikit-learn's labels for these longitude/latitude points with min_cluster_size = 3
        // and min_samples = 4, with NumPy on its baseline code path. On AVX-512 CPUs NumPy's
        // arcsine (SVML) changes a core distance in the last bit there, which moves point 20
        // into cluster 2.
        let points = [
            [-46.8, -59.1],
            [-49.5, -35.6],
            [-121.3, -13.2],
            [-123.5, -15.5],
            [-123.1, -13.3],
            [-55.6, -42.6],
            [-50.7, -45.4],
            [-45.9, -55.7],
            [-53.4, -45.1],
            [-49.8, -38.3],
            [-124.2, -13.6],
            [-48.1, -57.1],
            [-118.6, -11.3],
            [-45.4, -55.3],
            [-125.6, -18.2],
            [-46.3, -58.6],
            [-46.3, -54.8],
            [-48.4, -59.2],
            [-48.1, -54.2],
            [-48.6, -42.5],
            [-52.6, -48.7],
            [-44.7, -58.0],
            [-49.1, -58.2],
        ];
        let expected = [
            1, -1, 0, 0, 0, 2, 2, 1, 2, 2, 0, 1, 0, 1, 0, 1, 1, 1, 1, 2, 1, 1, 1,
        ];
        assert_eq!(hdbscan_haversine(&points, 3, 4).labels, expected);
    }
}
