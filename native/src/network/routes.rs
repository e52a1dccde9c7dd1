//! Costs and paths from each origin to each destination: one Dijkstra per distinct origin
//! node, origins searched in parallel.

use std::collections::BTreeMap;
use std::sync::Arc;

use arrow::array::{ArrayRef, Float64Array, Int64Array};
use rayon::prelude::*;

use super::super::NativeError;
use super::super::layer::Layer;
use super::graph::Network;
use super::search::dijkstra;
use super::{column_rows, place, table};
use geomill_geometry::wkb::write_line;
use geomill_planner::plan::network::fields;

/// The WKB of the path's line parts as a MultiLineString, in order.
fn path_geometry(network: &Network, edges: &[usize]) -> Vec<u8> {
    let mut out = vec![1];
    out.extend_from_slice(&5u32.to_le_bytes());
    out.extend_from_slice(&(edges.len() as u32).to_le_bytes());
    for &e in edges {
        write_line(&network.edges[e].points, &mut out);
    }
    out
}

/// A destination's cost from one origin node and, when asked, the path's edges.
type Answer = Option<(f64, Option<Vec<usize>>)>;

/// One row per origin (row order) and destination (row order): ids, cost, and with `paths`
/// the number of edges and the path, else the straight line between the two points.
pub fn routes(
    network: &Network,
    lines: &Layer,
    (origins, origin_id): (&Layer, &str),
    (destinations, destination_id): (&Layer, &str),
    paths: bool,
) -> Result<Layer, NativeError> {
    let from = place(network, origins)?;
    let to = place(network, destinations)?;
    let mut starts: Vec<usize> = from.nodes.iter().flatten().copied().collect();
    starts.sort_unstable();
    starts.dedup();
    // Per origin node, each destination's cost and path (the search itself is dropped once
    // read: a thousand searches of a large network would not fit in memory together).
    let answers: BTreeMap<usize, Vec<Answer>> = starts
        .par_iter()
        .map(|&s| {
            let search = dijkstra(network, &[(s, s)], f64::INFINITY);
            let row: Vec<Answer> = to
                .nodes
                .iter()
                .map(|d| {
                    let b = (*d)?;
                    let cost = search.cost[b];
                    cost.is_finite()
                        .then(|| (cost, paths.then(|| search.path(network, b))))
                })
                .collect();
            (s, row)
        })
        .collect();
    let pairs = from.nodes.len() * to.nodes.len();
    let mut origin_rows = Vec::with_capacity(pairs);
    let mut destination_rows = Vec::with_capacity(pairs);
    let mut costs = Vec::with_capacity(pairs);
    let mut counts = Vec::with_capacity(pairs);
    let mut geometry = Vec::with_capacity(pairs);
    for (o, origin) in from.nodes.iter().enumerate() {
        let row = origin.and_then(|a| answers.get(&a));
        for d in 0..to.nodes.len() {
            origin_rows.push(Some(o as u64));
            destination_rows.push(Some(d as u64));
            let answer = row.and_then(|r| r[d].as_ref());
            costs.push(answer.map(|(cost, _)| *cost));
            if paths {
                let edges = answer.and_then(|(_, p)| p.as_ref());
                counts.push(edges.map(|e| e.len() as i64));
                geometry.push(
                    edges
                        .filter(|e| !e.is_empty())
                        .map(|e| path_geometry(network, e)),
                );
            } else {
                geometry.push(from.points[o].zip(to.points[d]).map(|(a, b)| {
                    let mut out = Vec::new();
                    write_line(&[a, b], &mut out);
                    out
                }));
            }
        }
    }
    let mut columns: Vec<(&str, ArrayRef)> = vec![
        (
            fields::ORIGIN,
            column_rows(origins, origin_id, &origin_rows)?,
        ),
        (
            fields::DESTINATION,
            column_rows(destinations, destination_id, &destination_rows)?,
        ),
        (fields::COST, Arc::new(Float64Array::from(costs))),
    ];
    if paths {
        columns.push((fields::EDGES, Arc::new(Int64Array::from(counts))));
    }
    table(lines, columns, geometry)
}
