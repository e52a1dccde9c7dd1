//! Communities by Clauset–Newman–Moore greedy modularity maximisation, merge by merge as
//! networkx's `greedy_modularity_communities` makes them (`community_detection`).

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use arrow::array::{ArrayRef, Int64Array};

use super::super::NativeError;
use super::super::layer::Layer;
use super::end_nodes::fuse;
use super::graph::row_lines;
use super::simple_graph::Graph;
use super::with_columns;
use geomill_planner::plan::network::Communities;

/// A gain ordered for the set (never NaN; −0 taken as 0).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Gain(f64);

impl Eq for Gain {}

impl PartialOrd for Gain {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Gain {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        (self.0 + 0.0).total_cmp(&(other.0 + 0.0))
    }
}

/// The communities of the graph of `n` nodes and weighted `edges` (each node pair once), in
/// networkx's order: most nodes first, equal sizes by the node naming the community.
pub fn greedy_modularity(n: usize, edges: &[(usize, usize, f64)]) -> Vec<Vec<usize>> {
    let m: f64 = edges.iter().map(|e| e.2).sum();
    let mut members: Vec<Option<Vec<usize>>> = (0..n).map(|i| Some(vec![i])).collect();
    if m > 0.0 {
        let q0 = 1.0 / m;
        let mut a = vec![0.0; n];
        for &(u, v, w) in edges {
            a[u] += w;
            a[v] += w;
        }
        for x in &mut a {
            *x *= q0 * 0.5;
        }
        let mut dq: Vec<HashMap<usize, f64>> = vec![HashMap::new(); n];
        for &(u, v, w) in edges.iter().filter(|e| e.0 != e.1) {
            *dq[u].entry(v).or_default() += w;
            *dq[v].entry(u).or_default() += w;
        }
        // Candidate merges, the best first: the largest gain, then the lowest pair.
        let mut queue: BTreeSet<(Gain, usize, usize)> = BTreeSet::new();
        for u in 0..n {
            let row: Vec<usize> = dq[u].keys().copied().collect();
            for v in row {
                let gain = q0 * dq[u][&v] - 2.0 * a[u] * a[v];
                dq[u].insert(v, gain);
                queue.insert((Gain(-gain), u, v));
            }
        }
        let mut alive = n;
        while alive > 1 {
            let Some((Gain(negative), u, v)) = queue.pop_first() else {
                break;
            };
            if -negative < 0.0 {
                break;
            }
            queue.remove(&(Gain(-dq[v][&u]), v, u));
            // u joins v.
            let joined = members[u].take().unwrap_or_default();
            if let Some(into) = members[v].as_mut() {
                into.extend(joined);
            }
            alive -= 1;
            let mut around: Vec<usize> = dq[u].keys().chain(dq[v].keys()).copied().collect();
            around.sort_unstable();
            around.dedup();
            for w in around.into_iter().filter(|&w| w != u && w != v) {
                let (from_u, from_v) = (dq[u].get(&w).copied(), dq[v].get(&w).copied());
                let gain = match (from_u, from_v) {
                    (Some(gu), Some(gv)) => gv + gu,
                    (None, Some(gv)) => gv - 2.0 * a[u] * a[w],
                    (Some(gu), None) => gu - 2.0 * a[v] * a[w],
                    (None, None) => continue,
                };
                for (row, col) in [(v, w), (w, v)] {
                    if let Some(old) = dq[row].insert(col, gain) {
                        queue.remove(&(Gain(-old), row, col));
                    }
                    queue.insert((Gain(-gain), row, col));
                }
            }
            let gone: Vec<(usize, f64)> = dq[u].drain().collect();
            for (w, old) in gone {
                if let Some(back) = dq[w].remove(&u) {
                    queue.remove(&(Gain(-back), w, u));
                }
                queue.remove(&(Gain(-old), u, w));
            }
            a[v] += a[u];
            a[u] = 0.0;
        }
    }
    let mut communities: Vec<Vec<usize>> = members.into_iter().flatten().collect();
    communities.sort_by_key(|c| std::cmp::Reverse(c.len()));
    communities
}

/// `lines` with each row's community (−1 when its ends are not all in one).
pub fn communities(lines: &Layer, spec: &Communities) -> Result<Layer, NativeError> {
    let graph = Graph::build(lines, spec.weight.as_deref())?;
    let mut pairs: Vec<(usize, usize, f64)> = graph
        .edges
        .iter()
        .map(|(&(u, v), (w, _))| (u, v, *w))
        .collect();
    pairs.sort_by_key(|&(u, v, _)| (u, v));
    let mut community = vec![0_i64; graph.nodes.len()];
    for (k, nodes) in greedy_modularity(graph.nodes.len(), &pairs)
        .iter()
        .enumerate()
    {
        for &node in nodes {
            community[node] = k as i64;
        }
    }
    // The rows' ends numbered as the graph numbers them.
    let rows = row_lines(lines)?;
    let ends: Vec<[f64; 2]> = rows
        .iter()
        .flatten()
        .flat_map(|p| [p[0], p[p.len() - 1]])
        .collect();
    let node_of = fuse(&ends, 0.0, &[]);
    let mut next_end = 0;
    let labels: Int64Array = rows
        .iter()
        .map(|parts| {
            let count = parts.len() * 2;
            let mut seen: Vec<i64> = node_of[next_end..next_end + count]
                .iter()
                .map(|&node| community[node])
                .collect();
            next_end += count;
            seen.sort_unstable();
            seen.dedup();
            Some(if seen.len() == 1 { seen[0] } else { -1 })
        })
        .collect();
    with_columns(
        lines,
        vec![(spec.output.as_str(), Arc::new(labels) as ArrayRef)],
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_triangles_joined_by_a_weak_edge_are_two_communities() {
        let edges = [
            (0, 1, 1.0),
            (0, 2, 1.0),
            (1, 2, 1.0),
            (3, 4, 1.0),
            (3, 5, 1.0),
            (4, 5, 1.0),
            (2, 3, 0.1),
        ];
        let found = greedy_modularity(6, &edges);
        assert_eq!(found.len(), 2);
        let mut sorted: Vec<Vec<usize>> = found
            .into_iter()
            .map(|mut c| {
                c.sort_unstable();
                c
            })
            .collect();
        sorted.sort();
        assert_eq!(sorted, vec![vec![0, 1, 2], vec![3, 4, 5]]);
    }
}
