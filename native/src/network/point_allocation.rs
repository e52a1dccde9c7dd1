//! GISPulse's `network_allocation` over its networkx graph ([`Graph`]): every facility on its
//! nearest node, every node given the facility reaching it at the least cost (equal costs: the
//! facility listed first), each point given its nearest node's facility and cost.

use std::cmp::Reverse;
use std::collections::hash_map::Entry;
use std::collections::{BinaryHeap, HashMap};
use std::sync::Arc;

use arrow::array::{ArrayRef, Float64Array};

use super::super::NativeError;
use super::super::layer::Layer;
use super::simple_graph::Graph;
use super::{column_rows, row_points, with_columns};
use geomill_planner::plan::network::GraphAllocation;
use geomill_planner::plan::network::fields::{COST, FACILITY};

/// A node's allocation: its least cost and the row of the facility giving it, ordered by cost
/// then by that row (costs are never NaN here).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Label {
    cost: f64,
    facility: usize,
}

impl Eq for Label {}

impl PartialOrd for Label {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Label {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.cost
            .total_cmp(&other.cost)
            .then(self.facility.cmp(&other.facility))
    }
}

/// Every node reached within `limit` from the facilities' nodes (`facility_nodes[row]`), with
/// its [`Label`]: one Dijkstra from all of them at once over (cost, facility row), which gives
/// each node what one search per facility in row order, a later one replacing an allocation
/// only at a strictly lower cost, gives it.
fn allocate_nodes(
    graph: &Graph,
    facility_nodes: &[Option<usize>],
    limit: f64,
) -> HashMap<usize, Label> {
    let mut best: HashMap<usize, Label> = HashMap::new();
    let mut heap = BinaryHeap::new();
    for (facility, node) in facility_nodes.iter().enumerate() {
        let Some(node) = *node else { continue };
        let label = Label {
            cost: 0.0,
            facility,
        };
        if let Entry::Vacant(free) = best.entry(node) {
            free.insert(label);
            heap.push(Reverse((label, node)));
        }
    }
    while let Some(Reverse((label, node))) = heap.pop() {
        if best[&node] != label {
            continue;
        }
        for &(to, step) in &graph.next[node] {
            let reached = Label {
                cost: label.cost + step,
                facility: label.facility,
            };
            if reached.cost <= limit && best.get(&to).is_none_or(|b| reached < *b) {
                best.insert(to, reached);
                heap.push(Reverse((reached, to)));
            }
        }
    }
    best
}

/// `points` with the `facility` and `cost` of the node nearest each.
pub fn allocate(
    points: &Layer,
    lines: &Layer,
    facilities: &Layer,
    spec: &GraphAllocation,
) -> Result<Layer, NativeError> {
    let graph = Graph::build(lines, spec.weight.as_deref())?;
    let facility_nodes = graph.place(&row_points(facilities)?);
    let nodes = allocate_nodes(
        &graph,
        &facility_nodes,
        spec.max_cost.unwrap_or(f64::INFINITY),
    );
    let allocated: Vec<Option<Label>> = graph
        .place(&row_points(points)?)
        .into_iter()
        .map(|node| node.and_then(|n| nodes.get(&n).copied()))
        .collect();
    let rows: Vec<Option<u64>> = allocated
        .iter()
        .map(|a| a.map(|a| a.facility as u64))
        .collect();
    let costs: Float64Array = allocated.iter().map(|a| a.map(|a| a.cost)).collect();
    with_columns(
        points,
        vec![
            (FACILITY, column_rows(facilities, &spec.facility_id, &rows)?),
            (COST, Arc::new(costs) as ArrayRef),
        ],
    )
}
