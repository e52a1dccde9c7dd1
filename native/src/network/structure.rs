//! The network's connected parts and a minimum spanning forest (petgraph's union-find).

use std::sync::Arc;

use arrow::array::{ArrayRef, BooleanArray, Int64Array, RecordBatch};
use arrow::compute::filter_record_batch;
use petgraph::unionfind::UnionFind;

use super::super::NativeError;
use super::super::layer::Layer;
use super::graph::Network;
use super::with_columns;
use geomill_planner::plan::network::fields;

/// Each line row's component (1: the most edges; equal sizes by their lowest node), the
/// component's edge count, and whether it lies outside component 1.
pub fn connectivity(network: &Network, lines: &Layer) -> Result<Layer, NativeError> {
    let mut sets = UnionFind::<usize>::new(network.nodes.len());
    for e in &network.edges {
        sets.union(e.from, e.to);
    }
    // Per root: edge count and lowest node.
    let mut sizes = vec![(0_i64, usize::MAX); network.nodes.len()];
    for e in &network.edges {
        let root = sets.find(e.from);
        sizes[root].0 += 1;
        sizes[root].1 = sizes[root].1.min(e.from).min(e.to);
    }
    let mut roots: Vec<usize> = (0..sizes.len()).filter(|&r| sizes[r].0 > 0).collect();
    roots.sort_by_key(|&r| (-sizes[r].0, sizes[r].1));
    let mut number = vec![0_i64; network.nodes.len()];
    for (k, &root) in roots.iter().enumerate() {
        number[root] = k as i64 + 1;
    }
    let rows = lines.num_rows();
    let mut component: Vec<Option<i64>> = vec![None; rows];
    for e in &network.edges {
        let c = number[sets.find(e.from)];
        component[e.row] = Some(component[e.row].map_or(c, |old| old.min(c)));
    }
    let edges_of = |c: i64| sizes[roots[(c - 1) as usize]].0;
    with_columns(
        lines,
        vec![
            (
                fields::COMPONENT,
                Arc::new(component.iter().copied().collect::<Int64Array>()) as ArrayRef,
            ),
            (
                fields::COMPONENT_EDGES,
                Arc::new(
                    component
                        .iter()
                        .map(|c| c.map(edges_of))
                        .collect::<Int64Array>(),
                ),
            ),
            (
                fields::ISOLATED,
                Arc::new(
                    component
                        .iter()
                        .map(|c| c.map(|c| c != 1))
                        .collect::<BooleanArray>(),
                ),
            ),
        ],
    )
}

/// The line rows with a part in a minimum spanning forest (Kruskal: cheapest edges first,
/// equal costs in input order).
pub fn spanning_tree(network: &Network, lines: &Layer) -> Result<Layer, NativeError> {
    let mut order: Vec<usize> = (0..network.edges.len()).collect();
    order.sort_by(|&a, &b| {
        network.edges[a]
            .cost
            .total_cmp(&network.edges[b].cost)
            .then(a.cmp(&b))
    });
    let mut sets = UnionFind::<usize>::new(network.nodes.len());
    let mut keep = vec![false; lines.num_rows()];
    for e in order {
        let edge = &network.edges[e];
        if sets.union(edge.from, edge.to) {
            keep[edge.row] = true;
        }
    }
    let mut batches = Vec::with_capacity(lines.batches.len());
    let mut offset = 0;
    for batch in &lines.batches {
        let mask: BooleanArray = keep[offset..offset + batch.num_rows()]
            .iter()
            .map(|k| Some(*k))
            .collect();
        offset += batch.num_rows();
        let kept: RecordBatch = filter_record_batch(batch, &mask).map_err(NativeError::arrow)?;
        batches.push(kept);
    }
    Layer::new(
        lines.schema.clone(),
        batches,
        &lines.geometry,
        lines.crs.clone(),
    )
}
