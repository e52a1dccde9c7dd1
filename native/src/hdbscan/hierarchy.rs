//! From the spanning tree to the labels: the single-linkage tree, the condensed tree, excess
//! of mass selection and the labelling, as scikit-learn's `_linkage` and `_tree` modules.

use super::prim::Edge;

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

/// Each point's label (−1 noise) and its membership probability, as scikit-learn's
/// `labels_` and `probabilities_`.
#[derive(Debug, Clone, PartialEq)]
pub struct Clustering {
    pub labels: Vec<i64>,
    pub probabilities: Vec<f64>,
}

impl Clustering {
    /// `n` points of noise.
    pub fn noise(n: usize) -> Self {
        Self {
            labels: vec![-1; n],
            probabilities: vec![0.0; n],
        }
    }
}

/// Steps 3 to 9 of the parent module's documentation: from the spanning tree to the labels
/// and probabilities.
pub(super) fn labels_from_mst(n: usize, mst: &[Edge], min_cluster_size: usize) -> Clustering {
    let mut ordered = mst.to_vec();
    // Stable: equal weights keep Prim's order (step 3); NaN sorts last, as NumPy sorts it.
    ordered.sort_by(|a, b| {
        a.weight
            .partial_cmp(&b.weight)
            .unwrap_or_else(|| a.weight.is_nan().cmp(&b.weight.is_nan()))
    });
    let merges = single_linkage(n, &ordered);
    let rows = condense(n, &merges, min_cluster_size);
    let selected = excess_of_mass(n, &rows);
    let labels = label_points(n, &rows, &selected);
    let probabilities = probabilities(n, &rows, &selected, &labels);
    Clustering {
        labels,
        probabilities,
    }
}

/// Each cluster's largest lambda as scikit-learn's `max_lambdas` finds it: over each run of
/// consecutive condensed-tree rows of one parent, the last run of a parent winning.
fn max_lambdas(n: usize, rows: &[Row]) -> Vec<f64> {
    let clusters = rows.iter().map(|r| r.parent - n + 1).max().unwrap_or(0);
    let mut deaths = vec![0.0; clusters];
    let Some(first) = rows.first() else {
        return deaths;
    };
    let (mut parent, mut largest) = (first.parent, first.lambda);
    for row in &rows[1..] {
        if row.parent == parent {
            // Cython's max of two doubles: the second unless the first is greater.
            largest = if largest > row.lambda {
                largest
            } else {
                row.lambda
            };
        } else {
            deaths[parent - n] = largest;
            parent = row.parent;
            largest = row.lambda;
        }
    }
    deaths[parent - n] = largest;
    deaths
}

/// Each point's probability as scikit-learn's `get_probabilities`: 0 for noise; else the
/// lambda it left the tree at, capped by its cluster's largest lambda, over that largest
/// lambda (1 when that is 0 or the point's lambda is infinite).
fn probabilities(n: usize, rows: &[Row], selected: &[bool], labels: &[i64]) -> Vec<f64> {
    let deaths = max_lambdas(n, rows);
    let kept: Vec<usize> = (0..selected.len()).filter(|&c| selected[c]).collect();
    let mut result = vec![0.0; n];
    for row in rows.iter().filter(|r| r.child < n) {
        let Some(&cluster) = usize::try_from(labels[row.child])
            .ok()
            .and_then(|label| kept.get(label))
        else {
            continue;
        };
        let largest = deaths.get(cluster).copied().unwrap_or(0.0);
        result[row.child] = if largest == 0.0 || row.lambda.is_infinite() {
            1.0
        } else {
            row.lambda.min(largest) / largest
        };
    }
    result
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
