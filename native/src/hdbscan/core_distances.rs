//! Core distances: each point's distance to its `min_samples`-th nearest neighbour (itself
//! the first), by a k-d tree for 2-D Euclidean points or by evaluating every pair.

use rayon::prelude::*;

/// The `k`-th smallest of each point's distances to all points (itself included, at 0).
pub(super) fn brute_core_distances<D: Fn(usize, usize) -> f64 + Sync>(
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
pub(super) struct KdTree<'a> {
    points: &'a [[f64; 2]],
    pub(super) order: Vec<usize>,
    nodes: Vec<KdNode>,
}

impl<'a> KdTree<'a> {
    pub(super) fn new(points: &'a [[f64; 2]]) -> Self {
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
    pub(super) fn core_distances(&self, k: usize) -> Vec<f64> {
        self.points
            .par_iter()
            .map_init(Vec::new, |best, &q| {
                self.nearest(q, k, best);
                best.last().map_or(0.0, |d2| d2.sqrt())
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kd_tree_agrees_with_every_pair() {
        // Points on a coarse grid, with repeated points and many equal distances.
        let points: Vec<[f64; 2]> = (0..200)
            .map(|i| [((i * 37) % 23) as f64, ((i * 11) % 17) as f64 * 0.5])
            .collect();
        let distance = |i: usize, j: usize| {
            let (dx, dy) = (points[i][0] - points[j][0], points[i][1] - points[j][1]);
            (dx * dx + dy * dy).sqrt()
        };
        let tree = KdTree::new(&points);
        for k in [1, 2, 5, 17, 200] {
            let brute = brute_core_distances(points.len(), &distance, k);
            assert_eq!(tree.core_distances(k), brute, "k = {k}");
        }
    }
}
