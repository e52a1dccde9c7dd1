//! What origins reach within cost bands, and which facility reaches each line first.

use std::sync::Arc;

use arrow::array::{ArrayRef, Float64Array, Int64Array};
use arrow::compute::{SortOptions, concat, sort_to_indices};
use rayon::prelude::*;

use super::super::NativeError;
use super::super::geos_base::{to_geos, to_wkb};
use super::super::layer::Layer;
use super::graph::{Direction, Network};
use super::search::{Reached, dijkstra};
use super::{column_rows, place, table, with_columns};
use geomill_geometry::wkb::{write_line, write_point};
use geomill_planner::plan::network::fields;
use geos::Geom;

/// The least cost of travelling edge `e` end to end from the search's sources.
fn edge_reach(network: &Network, search: &Reached, e: usize) -> Option<f64> {
    let edge = &network.edges[e];
    let forward = (edge.direction != Direction::Backward).then(|| search.cost[edge.from]);
    let backward = (edge.direction != Direction::Forward).then(|| search.cost[edge.to]);
    [forward, backward]
        .into_iter()
        .flatten()
        .map(|cost| cost + edge.cost)
        .filter(|cost| cost.is_finite())
        .min_by(f64::total_cmp)
}

/// The convex hull (GEOS) of every vertex of `edges`.
fn hull(network: &Network, edges: &[usize]) -> Result<Vec<u8>, NativeError> {
    let count: usize = edges.iter().map(|&e| network.edges[e].points.len()).sum();
    let mut points = vec![1];
    points.extend_from_slice(&4u32.to_le_bytes());
    points.extend_from_slice(&(count as u32).to_le_bytes());
    for &e in edges {
        for [x, y] in &network.edges[e].points {
            write_point(*x, *y, &mut points);
        }
    }
    let hull = to_geos(&points, 0)?
        .convex_hull()
        .map_err(NativeError::geos)?;
    to_wkb(&hull)
}

/// Per origin (row order), the edges reached within the bands (`polygons`: their hull per band).
pub fn isochrone(
    network: &Network,
    lines: &Layer,
    (origins, origin_id): (&Layer, &str),
    bands: &[f64],
    polygons: bool,
) -> Result<Layer, NativeError> {
    let placed = place(network, origins)?;
    let limit = bands.last().copied().unwrap_or(0.0);
    type Row = (u64, i64, f64, Vec<u8>);
    let per_origin: Vec<Vec<Row>> = placed
        .nodes
        .par_iter()
        .enumerate()
        .map(|(o, node)| -> Result<Vec<Row>, NativeError> {
            let Some(node) = node else {
                return Ok(Vec::new());
            };
            let search = dijkstra(network, &[(*node, o)], limit);
            let reached: Vec<(usize, f64, usize)> = (0..network.edges.len())
                .filter_map(|e| {
                    let cost = edge_reach(network, &search, e)?;
                    let band = bands.iter().position(|b| cost <= *b)?;
                    Some((e, cost, band))
                })
                .collect();
            let mut rows = Vec::new();
            if polygons {
                for (band, upper) in bands.iter().enumerate() {
                    let within: Vec<usize> = reached
                        .iter()
                        .filter(|r| r.2 <= band)
                        .map(|r| r.0)
                        .collect();
                    if !within.is_empty() {
                        rows.push((o as u64, band as i64 + 1, *upper, hull(network, &within)?));
                    }
                }
            } else {
                for (e, cost, band) in reached {
                    let mut line = Vec::new();
                    write_line(&network.edges[e].points, &mut line);
                    rows.push((o as u64, band as i64 + 1, cost, line));
                }
            }
            Ok(rows)
        })
        .collect::<Result<_, _>>()?;
    let rows: Vec<Row> = per_origin.into_iter().flatten().collect();
    let origin_rows: Vec<Option<u64>> = rows.iter().map(|r| Some(r.0)).collect();
    table(
        lines,
        vec![
            (
                fields::ORIGIN,
                column_rows(origins, origin_id, &origin_rows)?,
            ),
            (
                fields::BAND,
                Arc::new(rows.iter().map(|r| Some(r.1)).collect::<Int64Array>()) as ArrayRef,
            ),
            (
                fields::COST,
                Arc::new(rows.iter().map(|r| Some(r.2)).collect::<Float64Array>()),
            ),
        ],
        rows.into_iter().map(|r| Some(r.3)).collect(),
    )
}

/// Each facility row's rank by its id (ascending, NULLs last).
fn id_ranks(facilities: &Layer, id: &str) -> Result<Vec<usize>, NativeError> {
    let index = facilities.column_index(id)?;
    let parts: Vec<&dyn arrow::array::Array> = facilities
        .batches
        .iter()
        .map(|b| b.column(index).as_ref())
        .collect();
    if parts.is_empty() {
        return Ok(Vec::new());
    }
    let whole = concat(&parts).map_err(NativeError::arrow)?;
    let order = sort_to_indices(
        &whole,
        Some(SortOptions {
            descending: false,
            nulls_first: false,
        }),
        None,
    )
    .map_err(NativeError::arrow)?;
    let mut ranks = vec![0; whole.len()];
    for (rank, row) in order.values().iter().enumerate() {
        ranks[*row as usize] = rank;
    }
    Ok(ranks)
}

/// Each line row given the facility reaching one of its parts at the least cost.
pub fn allocation(
    network: &Network,
    lines: &Layer,
    (facilities, facility_id): (&Layer, &str),
) -> Result<Layer, NativeError> {
    let placed = place(network, facilities)?;
    let ranks = id_ranks(facilities, facility_id)?;
    let mut sources: Vec<(usize, usize)> = placed
        .nodes
        .iter()
        .enumerate()
        .filter_map(|(row, node)| node.map(|n| (n, row)))
        .collect();
    // On one node, the facility with the lowest id is the one that counts.
    sources.sort_by_key(|(node, row)| (*node, ranks.get(*row).copied().unwrap_or(usize::MAX)));
    let search = dijkstra(network, &sources, f64::INFINITY);
    let rows = lines.num_rows();
    let mut best: Vec<Option<(f64, usize, usize)>> = vec![None; rows];
    // Each edge travelled from either end: the least cost wins, then the facility on the
    // lower node.
    for edge in &network.edges {
        let row = edge.row;
        for (runs, start) in [
            (edge.direction != Direction::Backward, edge.from),
            (edge.direction != Direction::Forward, edge.to),
        ] {
            let cost = search.cost[start] + edge.cost;
            let Some(facility) = search.source[start].filter(|_| runs && cost.is_finite()) else {
                continue;
            };
            let facility_node = placed.nodes[facility].unwrap_or(usize::MAX);
            let better =
                best[row].is_none_or(|(c, _, n)| cost < c || (cost == c && facility_node < n));
            if better {
                best[row] = Some((cost, facility, facility_node));
            }
        }
    }
    let chosen: Vec<Option<u64>> = best.iter().map(|b| b.map(|(_, f, _)| f as u64)).collect();
    with_columns(
        lines,
        vec![
            (
                fields::FACILITY,
                column_rows(facilities, facility_id, &chosen)?,
            ),
            (
                fields::COST,
                Arc::new(
                    best.iter()
                        .map(|b| b.map(|(c, _, _)| c))
                        .collect::<Float64Array>(),
                ),
            ),
        ],
    )
}
