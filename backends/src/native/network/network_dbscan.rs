//! DBSCAN of points by their distances along a line network (`cluster_network_dbscan`): the
//! network as GISPulse builds it (ends at 6 decimals, the last edge between two nodes), each
//! point on its nearest node, a cost-bounded Dijkstra from each node holding points.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::sync::Arc;

use arrow::array::{ArrayRef, Int64Array};
use rstar::RTree;
use rstar::primitives::GeomWithData;

use super::super::NativeError;
use super::super::clusters::label;
use super::super::layer::Layer;
use super::end_nodes::{fuse, round6};
use super::graph::{doubles, row_lines};
use super::graph_table::planar_length;
use super::{row_points, with_columns};
use geomill_planner::plan::network::NetworkDbscan;

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

/// The network: node points (rounded) and each node's neighbours with the edge's cost.
struct Graph {
    nodes: Vec<[f64; 2]>,
    next: Vec<Vec<(usize, f64)>>,
}

impl Graph {
    fn build(lines: &Layer, weight: Option<&str>) -> Result<Self, NativeError> {
        let rows = row_lines(lines)?;
        let weights = weight.map(|w| doubles(lines, w)).transpose()?;
        let mut parts = Vec::new();
        for (row, row_parts) in rows.into_iter().enumerate() {
            for points in row_parts {
                let cost = match &weights {
                    Some(w) => w[row],
                    None => Some(planar_length(&points)),
                };
                parts.push((points[0], points[points.len() - 1], cost));
            }
        }
        let ends: Vec<[f64; 2]> = parts.iter().flat_map(|(a, b, _)| [*a, *b]).collect();
        let node_of = fuse(&ends, 0.0, &[]);
        let count = node_of.iter().max().map_or(0, |m| m + 1);
        let mut nodes = vec![[0.0; 2]; count];
        for (end, &node) in ends.iter().zip(&node_of).rev() {
            nodes[node] = [round6(end[0]), round6(end[1])];
        }
        // One edge per node pair: the last listed (a networkx Graph's rule).
        let mut edges: HashMap<(usize, usize), Option<f64>> = HashMap::new();
        for (k, (_, _, cost)) in parts.iter().enumerate() {
            let (u, v) = (node_of[2 * k], node_of[2 * k + 1]);
            edges.insert((u.min(v), u.max(v)), *cost);
        }
        let mut next = vec![Vec::new(); count];
        for (&(u, v), cost) in &edges {
            if let Some(cost) = cost.filter(|c| *c >= 0.0) {
                next[u].push((v, cost));
                next[v].push((u, cost));
            }
        }
        Ok(Self { nodes, next })
    }

    /// Every node within `limit` of `from`, with its cost.
    fn within(&self, from: usize, limit: f64) -> HashMap<usize, f64> {
        let mut best: HashMap<usize, f64> = HashMap::from([(from, 0.0)]);
        let mut heap = BinaryHeap::from([Reverse((Cost(0.0), from))]);
        while let Some(Reverse((Cost(cost), node))) = heap.pop() {
            if best.get(&node).is_some_and(|&b| cost > b) {
                continue;
            }
            for &(to, step) in &self.next[node] {
                let reached = cost + step;
                if reached <= limit && best.get(&to).is_none_or(|&b| reached < b) {
                    best.insert(to, reached);
                    heap.push(Reverse((Cost(reached), to)));
                }
            }
        }
        best
    }
}

/// `points` with their network DBSCAN labels.
pub fn network_dbscan(
    points: &Layer,
    lines: &Layer,
    spec: &NetworkDbscan,
) -> Result<Layer, NativeError> {
    let graph = Graph::build(lines, spec.weight.as_deref())?;
    let tree = RTree::bulk_load(
        graph
            .nodes
            .iter()
            .enumerate()
            .map(|(i, p)| GeomWithData::new(*p, i))
            .collect(),
    );
    let placed: Vec<Option<usize>> = row_points(points)?
        .into_iter()
        .map(|p| p.and_then(|p| tree.nearest_neighbor(&p).map(|n| n.data)))
        .collect();
    let mut on_node: HashMap<usize, Vec<usize>> = HashMap::new();
    for (i, node) in placed.iter().enumerate() {
        if let Some(node) = node {
            on_node.entry(*node).or_default().push(i);
        }
    }
    let reach: HashMap<usize, Vec<usize>> = on_node
        .keys()
        .map(|&node| {
            let mut near: Vec<usize> = graph
                .within(node, spec.eps)
                .keys()
                .filter_map(|n| on_node.get(n))
                .flatten()
                .copied()
                .collect();
            near.sort_unstable();
            (node, near)
        })
        .collect();
    let hoods: Vec<Vec<usize>> = placed
        .iter()
        .enumerate()
        .map(|(i, node)| node.map_or_else(|| vec![i], |n| reach[&n].clone()))
        .collect();
    let labels = label(&hoods, spec.min_samples as usize);
    with_columns(
        points,
        vec![(
            spec.output.as_str(),
            Arc::new(labels.into_iter().map(Some).collect::<Int64Array>()) as ArrayRef,
        )],
    )
}
