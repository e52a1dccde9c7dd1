//! DBSCAN of points by their distances along a line network (`cluster_network_dbscan`): the
//! network as GISPulse builds it (ends at 6 decimals, the last edge between two nodes), each
//! point on its nearest node, a cost-bounded Dijkstra from each node holding points.

use std::collections::HashMap;
use std::sync::Arc;

use arrow::array::{ArrayRef, Int64Array};

use super::super::NativeError;
use super::super::clusters::label;
use super::super::layer::Layer;
use super::simple_graph::Graph;
use super::{row_points, with_columns};
use geomill_planner::plan::network::NetworkDbscan;

/// `points` with their network DBSCAN labels.
pub fn network_dbscan(
    points: &Layer,
    lines: &Layer,
    spec: &NetworkDbscan,
) -> Result<Layer, NativeError> {
    let graph = Graph::build(lines, spec.weight.as_deref())?;
    let placed = graph.place(&row_points(points)?);
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
