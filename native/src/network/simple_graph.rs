//! A line network as GISPulse builds its networkx `Graph`: each line part an undirected edge
//! between its end points, ends equal at 6 decimals one node (numbered by first appearance),
//! between two nodes only the last part listed; an edge's cost a field's value or its planar
//! length.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

use rstar::RTree;
use rstar::primitives::GeomWithData;

use super::super::NativeError;
use super::super::layer::Layer;
use super::end_nodes::{fuse, round6};
use super::graph::{doubles, row_lines};
use super::graph_table::planar_length;

/// A cost ordered for the heap (costs are never NaN here).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Cost(f64);

impl Eq for Cost {}

impl PartialOrd for Cost {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Cost {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&other.0)
    }
}

/// A node pair (lower first).
pub type Pair = (usize, usize);

/// An edge: its cost and its line part.
pub type EdgeLine = (f64, Vec<[f64; 2]>);

/// The network: node points (rounded), each node's neighbours with the edge's cost, each edge
/// (node pair, lower first) with its cost and line part, and the edges in the order networkx
/// lists a `Graph`'s edges (by lower node, then by the first part that linked the pair).
pub struct Graph {
    pub nodes: Vec<[f64; 2]>,
    pub next: Vec<Vec<(usize, f64)>>,
    pub edges: HashMap<Pair, EdgeLine>,
    pub order: Vec<Pair>,
}

impl Graph {
    pub fn build(lines: &Layer, weight: Option<&str>) -> Result<Self, NativeError> {
        let rows = row_lines(lines)?;
        let weights = weight.map(|w| doubles(lines, w)).transpose()?;
        let mut parts = Vec::new();
        for (row, row_parts) in rows.into_iter().enumerate() {
            for points in row_parts {
                let cost = match &weights {
                    Some(w) => w[row],
                    None => Some(planar_length(&points)),
                };
                parts.push((points[0], points[points.len() - 1], cost, points));
            }
        }
        let ends: Vec<[f64; 2]> = parts.iter().flat_map(|(a, b, _, _)| [*a, *b]).collect();
        let node_of = fuse(&ends, 0.0, &[]);
        let count = node_of.iter().max().map_or(0, |m| m + 1);
        let mut nodes = vec![[0.0; 2]; count];
        for (end, &node) in ends.iter().zip(&node_of).rev() {
            nodes[node] = [round6(end[0]), round6(end[1])];
        }
        // One edge per node pair: the last listed (a networkx Graph's rule).
        let mut listed: HashMap<Pair, (Option<f64>, Vec<[f64; 2]>)> = HashMap::new();
        let mut first: HashMap<Pair, usize> = HashMap::new();
        for (k, (_, _, cost, points)) in parts.into_iter().enumerate() {
            let (u, v) = (node_of[2 * k], node_of[2 * k + 1]);
            let pair = (u.min(v), u.max(v));
            first.entry(pair).or_insert(k);
            listed.insert(pair, (cost, points));
        }
        let edges: HashMap<Pair, EdgeLine> = listed
            .into_iter()
            .filter_map(|(pair, (cost, points))| {
                cost.filter(|c| *c >= 0.0).map(|c| (pair, (c, points)))
            })
            .collect();
        let mut next = vec![Vec::new(); count];
        let mut pairs: Vec<_> = edges.iter().map(|(&(u, v), (c, _))| (u, v, *c)).collect();
        pairs.sort_by_key(|&(u, v, _)| (u, v));
        for (u, v, cost) in pairs {
            next[u].push((v, cost));
            next[v].push((u, cost));
        }
        let mut order: Vec<Pair> = edges.keys().copied().collect();
        order.sort_by_key(|pair| (pair.0, first[pair]));
        Ok(Self {
            nodes,
            next,
            edges,
            order,
        })
    }

    /// Each point's nearest node (`None` for no point or no node).
    pub fn place(&self, points: &[Option<[f64; 2]>]) -> Vec<Option<usize>> {
        let tree = RTree::bulk_load(
            self.nodes
                .iter()
                .enumerate()
                .map(|(i, p)| GeomWithData::new(*p, i))
                .collect(),
        );
        points
            .iter()
            .map(|p| p.and_then(|p| tree.nearest_neighbor(&p).map(|n| n.data)))
            .collect()
    }

    /// Every node within `limit` of `from`, with its cost.
    pub fn within(&self, from: usize, limit: f64) -> HashMap<usize, f64> {
        self.search(&[from], limit)
            .into_iter()
            .map(|(node, (cost, _, _))| (node, cost))
            .collect()
    }

    /// Dijkstra from all of `sources` at once up to `limit`: per node reached, its cost, the
    /// source it is nearest to and the node before it (itself for a source).
    pub fn search(&self, sources: &[usize], limit: f64) -> HashMap<usize, (f64, usize, usize)> {
        let mut best: HashMap<usize, (f64, usize, usize)> =
            sources.iter().map(|&s| (s, (0.0, s, s))).collect();
        let mut heap: BinaryHeap<Reverse<(Cost, usize)>> =
            sources.iter().map(|&s| Reverse((Cost(0.0), s))).collect();
        while let Some(Reverse((Cost(cost), node))) = heap.pop() {
            let (known, source, _) = best[&node];
            if cost > known {
                continue;
            }
            for &(to, step) in &self.next[node] {
                let reached = cost + step;
                if reached <= limit && best.get(&to).is_none_or(|b| reached < b.0) {
                    best.insert(to, (reached, source, node));
                    heap.push(Reverse((Cost(reached), to)));
                }
            }
        }
        best
    }
}
