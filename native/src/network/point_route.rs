//! GISPulse's analyses from points over its networkx graph ([`Graph`]): `shortest_path`
//! between the nodes nearest two points, as the edges' line parts in path order, and
//! `isochrone` from the node nearest one point (reached edges, or their buffered union).

use std::sync::Arc;

use arrow::array::{ArrayRef, Float64Array, Int64Array};
use geos::Geom;

use super::super::NativeError;
use super::super::geos_base::{to_geos, to_wkb};
use super::super::layer::Layer;
use super::simple_graph::{Graph, Pair};
use super::table;
use geomill_planner::plan::network::{GraphReach, GraphRoute, PATH_ORDER, REACH_COST};

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
        geomill_geometry::wkb::write_line(&graph.edges[&pair].1, &mut wkb);
        geometry.push(Some(wkb));
    }
    let order: Int64Array = (0..geometry.len()).map(|n| i64::try_from(n).ok()).collect();
    table(
        lines,
        vec![(PATH_ORDER, Arc::new(order) as ArrayRef)],
        geometry,
    )
}

/// The line part of edge `pair` as WKB.
fn edge_wkb(graph: &Graph, pair: &Pair) -> Vec<u8> {
    let mut wkb = Vec::new();
    geomill_geometry::wkb::write_line(&graph.edges[pair].1, &mut wkb);
    wkb
}

/// The edges (in networkx's order) with a node of cost at most `budget`.
fn reached(graph: &Graph, costs: &std::collections::HashMap<usize, f64>, budget: f64) -> Vec<Pair> {
    let within = |node: &usize| costs.get(node).is_some_and(|c| *c <= budget);
    graph
        .order
        .iter()
        .filter(|(u, v)| within(u) || within(v))
        .copied()
        .collect()
}

/// The union of `edges`' lines, each buffered by `distance` (16 segments a quarter circle).
fn buffered_union(graph: &Graph, edges: &[Pair], distance: f64) -> Result<Vec<u8>, NativeError> {
    let mut pieces = Vec::with_capacity(edges.len());
    for (n, pair) in edges.iter().enumerate() {
        let line = to_geos(&edge_wkb(graph, pair), n)?;
        pieces.push(line.buffer(distance, 16).map_err(NativeError::geos)?);
    }
    let all = geos::Geometry::create_geometry_collection(pieces).map_err(NativeError::geos)?;
    to_wkb(&all.unary_union().map_err(NativeError::geos)?)
}

/// What the graph reaches from the node nearest `spec.from`: a row per budget with the
/// buffered union, or a row per edge reached within the first budget with its cost.
pub fn reach(lines: &Layer, spec: &GraphReach) -> Result<Layer, NativeError> {
    let graph = Graph::build(lines, spec.weight.as_deref())?;
    let last = spec.budgets.iter().copied().fold(0.0, f64::max);
    let start = graph.place(&[Some(spec.from)])[0];
    let costs = match start {
        Some(start) if last > 0.0 => graph.within(start, last),
        _ => Default::default(),
    };
    let (mut cost, mut geometry) = (Vec::new(), Vec::new());
    match spec.buffer {
        Some(distance) => {
            for &budget in &spec.budgets {
                let edges = reached(&graph, &costs, budget);
                if !edges.is_empty() {
                    cost.push(budget);
                    geometry.push(Some(buffered_union(&graph, &edges, distance)?));
                }
            }
        }
        None => {
            let budget = spec.budgets.first().copied().unwrap_or(0.0);
            for pair in reached(&graph, &costs, budget) {
                cost.push(graph.edges[&pair].0);
                geometry.push(Some(edge_wkb(&graph, &pair)));
            }
        }
    }
    let cost: Float64Array = cost.into_iter().map(Some).collect();
    table(
        lines,
        vec![(REACH_COST, Arc::new(cost) as ArrayRef)],
        geometry,
    )
}
