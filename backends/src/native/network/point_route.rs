//! GISPulse's `shortest_path`: the least-cost path over its networkx graph ([`Graph`])
//! between the nodes nearest two points, as the edges' line parts in path order.

use std::sync::Arc;

use arrow::array::{ArrayRef, Int64Array};

use super::super::NativeError;
use super::super::layer::Layer;
use super::simple_graph::Graph;
use super::table;
use geomill_planner::plan::network::{GraphRoute, PATH_ORDER};

/// The nodes of the path from `from` to `to` (both included), if one links them.
fn path(graph: &Graph, from: usize, to: usize) -> Option<Vec<usize>> {
    let reached = graph.search(&[from], f64::INFINITY);
    reached.get(&to)?;
    let mut nodes = vec![to];
    let mut at = to;
    while at != from {
        at = reached[&at].2;
        nodes.push(at);
    }
    nodes.reverse();
    Some(nodes)
}

/// One row per edge of the path: `path_order` from 0 and the edge's line part.
pub fn route(lines: &Layer, spec: &GraphRoute) -> Result<Layer, NativeError> {
    let graph = Graph::build(lines, spec.weight.as_deref())?;
    let ends = graph.place(&[Some(spec.from), Some(spec.to)]);
    let nodes = match (ends[0], ends[1]) {
        (Some(from), Some(to)) if from != to => path(&graph, from, to).unwrap_or_default(),
        _ => Vec::new(),
    };
    let mut geometry = Vec::new();
    for step in nodes.windows(2) {
        let pair = (step[0].min(step[1]), step[0].max(step[1]));
        let mut wkb = Vec::new();
        crate::wkb::write_line(&graph.edges[&pair].1, &mut wkb);
        geometry.push(Some(wkb));
    }
    let order: Int64Array = (0..geometry.len()).map(|n| i64::try_from(n).ok()).collect();
    table(lines, vec![(PATH_ORDER, Arc::new(order) as ArrayRef)], geometry)
}
