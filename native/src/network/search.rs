//! Dijkstra's search over the network's petgraph graph, with flat arrays for the costs (one
//! search per source, sources searched in parallel by the callers).

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use petgraph::graph::NodeIndex;
use petgraph::visit::EdgeRef;

use super::graph::Network;

/// A node waiting in the heap: the least cost first, then the lower node number.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Queued {
    cost: f64,
    node: usize,
}

impl Eq for Queued {}

impl Ord for Queued {
    fn cmp(&self, other: &Self) -> Ordering {
        other
            .cost
            .total_cmp(&self.cost)
            .then_with(|| other.node.cmp(&self.node))
    }
}

impl PartialOrd for Queued {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// The result of one search: each node's least cost (infinite when not reached), the edge
/// it was reached by, and the source whose search reached it.
pub struct Reached {
    pub cost: Vec<f64>,
    pub via: Vec<Option<usize>>,
    pub source: Vec<Option<usize>>,
}

impl Reached {
    /// The edges from the source to `node`, in order (empty when `node` is a source).
    pub fn path(&self, network: &Network, mut node: usize) -> Vec<usize> {
        let mut edges = Vec::new();
        while let Some(edge) = self.via[node] {
            edges.push(edge);
            let e = &network.edges[edge];
            node = if e.to == node { e.from } else { e.to };
            if edges.len() > network.edges.len() {
                break;
            }
        }
        edges.reverse();
        edges
    }
}

/// Least costs from `sources` (node, label) at once, each node labelled with the source that
/// reaches it first (equal costs: the source on the lower node), searching no further than
/// `limit`.
pub fn dijkstra(network: &Network, sources: &[(usize, usize)], limit: f64) -> Reached {
    let n = network.nodes.len();
    let mut reached = Reached {
        cost: vec![f64::INFINITY; n],
        via: vec![None; n],
        source: vec![None; n],
    };
    let mut origin_node = vec![usize::MAX; n];
    let mut heap = BinaryHeap::new();
    for &(node, label) in sources {
        if reached.source[node].is_none() {
            reached.cost[node] = 0.0;
            reached.source[node] = Some(label);
            origin_node[node] = node;
            heap.push(Queued { cost: 0.0, node });
        }
    }
    let mut done = vec![false; n];
    while let Some(Queued { cost, node }) = heap.pop() {
        if done[node] || cost > reached.cost[node] {
            continue;
        }
        done[node] = true;
        if cost > limit {
            break;
        }
        for arc in network.graph.edges(NodeIndex::new(node)) {
            let edge = *arc.weight();
            let next = arc.target().index();
            let candidate = cost + network.edges[edge].cost;
            let better = candidate < reached.cost[next]
                || (candidate == reached.cost[next]
                    && !done[next]
                    && origin_node[node] < origin_node[next]);
            if better {
                reached.cost[next] = candidate;
                reached.via[next] = Some(edge);
                reached.source[next] = reached.source[node];
                origin_node[next] = origin_node[node];
                heap.push(Queued {
                    cost: candidate,
                    node: next,
                });
            }
        }
    }
    reached
}
