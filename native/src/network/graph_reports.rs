//! Answers over the network GISPulse builds (a networkx `Graph`, see [`Graph`]): its edges as
//! rows, its minimum spanning forest as networkx's Kruskal finds it, and how it holds together.

use std::sync::Arc;

use arrow::array::{ArrayRef, BooleanArray, Float64Array, Int64Array};
use geos::Geom;
use petgraph::unionfind::UnionFind;

use super::super::NativeError;
use super::super::geos_base::to_geos;
use super::super::layer::Layer;
use super::simple_graph::{Graph, Pair};
use super::steiner::spanning;
use super::table;
use geomill_planner::plan::network::{GraphConnectivity, GraphTree, connectivity_fields};

/// `edges` of `graph` as rows: `u`, `v`, `weight` and the edge's line part.
pub fn edge_rows(lines: &Layer, graph: &Graph, edges: &[Pair]) -> Result<Layer, NativeError> {
    let mut geometry = Vec::with_capacity(edges.len());
    for key in edges {
        let mut wkb = Vec::new();
        geomill_geometry::wkb::write_line(&graph.edges[key].1, &mut wkb);
        geometry.push(Some(wkb));
    }
    let ids = |end: fn(&Pair) -> usize| {
        Arc::new(
            edges
                .iter()
                .map(|e| Some(end(e) as i64))
                .collect::<Int64Array>(),
        ) as ArrayRef
    };
    let weights: Float64Array = edges.iter().map(|e| Some(graph.edges[e].0)).collect();
    table(
        lines,
        vec![
            ("u", ids(|e| e.0)),
            ("v", ids(|e| e.1)),
            ("weight", Arc::new(weights)),
        ],
        geometry,
    )
}

/// The minimum spanning forest: Kruskal over the edges in networkx's order (equal costs
/// taken in that order), listed by lower node, then in the order taken.
pub fn spanning_edges(lines: &Layer, spec: &GraphTree) -> Result<Layer, NativeError> {
    let graph = Graph::build(lines, spec.weight.as_deref())?;
    let listed: Vec<(usize, usize, f64)> = graph
        .order
        .iter()
        .map(|&(u, v)| (u, v, graph.edges[&(u, v)].0))
        .collect();
    let mut taken: Vec<Pair> = spanning(graph.nodes.len(), &listed)
        .into_iter()
        .map(|(u, v, _)| (u, v))
        .collect();
    // A stable sort keeps the order taken within each lower node.
    taken.sort_by_key(|pair| pair.0);
    edge_rows(lines, &graph, &taken)
}

/// One row of the network's statistics, or a row per connected part.
pub fn connectivity(lines: &Layer, spec: &GraphConnectivity) -> Result<Layer, NativeError> {
    let graph = Graph::build(lines, spec.weight.as_deref())?;
    let count = graph.nodes.len();
    let mut sets = UnionFind::<usize>::new(count);
    for &(u, v) in &graph.order {
        sets.union(u, v);
    }
    // Parts in the order networkx finds them: by their lowest node.
    let mut part_of_root: Vec<Option<usize>> = vec![None; count];
    let mut parts: Vec<(Vec<usize>, Vec<Pair>)> = Vec::new();
    for node in 0..count {
        let root = sets.find(node);
        let part = *part_of_root[root].get_or_insert_with(|| {
            parts.push((Vec::new(), Vec::new()));
            parts.len() - 1
        });
        parts[part].0.push(node);
    }
    for &(u, v) in &graph.order {
        if let Some(part) = part_of_root[sets.find(u)] {
            parts[part].1.push((u, v));
        }
    }
    use connectivity_fields::*;
    if spec.per_component {
        parts.sort_by_key(|(nodes, _)| std::cmp::Reverse(nodes.len()));
        let mut geometry = Vec::with_capacity(parts.len());
        for (_, edges) in &parts {
            geometry.push(hull(&graph, edges)?);
        }
        let ints = |f: &dyn Fn(usize) -> i64| {
            Arc::new((0..parts.len()).map(|k| Some(f(k))).collect::<Int64Array>()) as ArrayRef
        };
        return table(
            lines,
            vec![
                (COMPONENT_ID, ints(&|k| k as i64)),
                (N_NODES, ints(&|k| parts[k].0.len() as i64)),
                (N_EDGES, ints(&|k| parts[k].1.len() as i64)),
                (
                    IS_LARGEST,
                    Arc::new(
                        (0..parts.len())
                            .map(|k| Some(k == 0))
                            .collect::<BooleanArray>(),
                    ),
                ),
            ],
            geometry,
        );
    }
    let is_connected = (count > 0).then_some(parts.len() == 1);
    let largest = parts
        .iter()
        .map(|(_, edges)| edges.len())
        .max()
        .unwrap_or(0);
    let one = |value: usize| Arc::new(Int64Array::from(vec![Some(value as i64)])) as ArrayRef;
    table(
        lines,
        vec![
            (
                IS_CONNECTED,
                Arc::new(BooleanArray::from(vec![is_connected])),
            ),
            (N_COMPONENTS, one(parts.len())),
            (N_NODES, one(count)),
            (N_EDGES, one(graph.order.len())),
            (LARGEST_COMPONENT, one(largest)),
        ],
        vec![hull(&graph, &graph.order)?],
    )
}

/// The convex hull of `edges`' lines (GEOS's, as Shapely's `convex_hull` of their union:
/// a point or a line when they do not span an area); `None` without an edge.
fn hull(graph: &Graph, edges: &[Pair]) -> Result<Option<Vec<u8>>, NativeError> {
    if edges.is_empty() {
        return Ok(None);
    }
    // A MultiLineString of the edges' lines, as WKB.
    let mut wkb = vec![1u8];
    wkb.extend_from_slice(&5u32.to_le_bytes());
    wkb.extend_from_slice(&(edges.len() as u32).to_le_bytes());
    for key in edges {
        geomill_geometry::wkb::write_line(&graph.edges[key].1, &mut wkb);
    }
    let shape = to_geos(&wkb, 0)?.convex_hull().map_err(NativeError::geos)?;
    super::super::geos_base::to_wkb(&shape).map(Some)
}
