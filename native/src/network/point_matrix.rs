//! GISPulse's symmetric `od_matrix` over its networkx graph ([`Graph`]): every row of a point
//! layer placed on its nearest node, Dijkstra from each origin up to the largest cost, a row
//! per other row reached with the path's cost, edge count and line.

use std::sync::Arc;

use arrow::array::{ArrayRef, Float64Array, Int64Array, UInt64Array};

use super::super::NativeError;
use super::super::layer::{Layer, Wkb};
use super::simple_graph::Graph;
use super::{row_points, table};
use geomill_planner::plan::network::GraphMatrix;
use geomill_planner::plan::network::fields::{COST, DESTINATION, EDGES, ORIGIN};

/// One row of the matrix: origin and destination rows, cost (`None`: not reached), edge
/// count and geometry.
struct Pair {
    origin: usize,
    destination: usize,
    cost: Option<f64>,
    edges: i64,
    geometry: Option<Vec<u8>>,
}

/// The nodes from the search's source to `to`, following each node's predecessor.
fn path_to(
    reached: &std::collections::HashMap<usize, (f64, usize, usize)>,
    to: usize,
) -> Vec<usize> {
    let mut nodes = vec![to];
    let mut at = to;
    while reached[&at].2 != at {
        at = reached[&at].2;
        nodes.push(at);
    }
    nodes.reverse();
    nodes
}

/// The path's edges' line parts as one line: each part turned to start at the end nearer its
/// first node, a vertex equal to the line's last dropped.
fn path_line(graph: &Graph, nodes: &[usize]) -> Vec<u8> {
    let mut line: Vec<[f64; 2]> = Vec::new();
    for step in nodes.windows(2) {
        let pair = (step[0].min(step[1]), step[0].max(step[1]));
        let mut part = graph.edges[&pair].1.clone();
        let at = graph.nodes[step[0]];
        let gap = |p: [f64; 2]| (p[0] - at[0]).hypot(p[1] - at[1]);
        if let (Some(first), Some(last)) = (part.first(), part.last())
            && gap(*last) < gap(*first)
        {
            part.reverse();
        }
        for p in part {
            if line.last() != Some(&p) {
                line.push(p);
            }
        }
    }
    let mut wkb = Vec::new();
    geomill_geometry::wkb::write_line(&line, &mut wkb);
    wkb
}

/// The matrix between every two rows of `points` over `lines`.
pub fn matrix(lines: &Layer, points: &Layer, spec: &GraphMatrix) -> Result<Layer, NativeError> {
    let graph = Graph::build(lines, spec.weight.as_deref())?;
    let places = row_points(points)?;
    let nodes = graph.place(&places);
    let batch = arrow::compute::concat_batches(&points.schema, &points.batches)
        .map_err(NativeError::arrow)?;
    let wkbs = Wkb::of(&batch, points.geometry_index()?)?;
    let own = |row: usize| wkbs.get(row).map(<[u8]>::to_vec);
    let limit = spec.max_cost.unwrap_or(f64::INFINITY);
    let mut pairs = Vec::new();
    for (i, start) in nodes.iter().enumerate() {
        let reached = start.map(|s| graph.search(&[s], limit)).unwrap_or_default();
        for (j, end) in nodes.iter().enumerate() {
            let missing = |cost| Pair {
                origin: i,
                destination: j,
                cost,
                edges: 0,
                geometry: own(i),
            };
            if i == j {
                if spec.include_missing {
                    pairs.push(missing(Some(0.0)));
                }
                continue;
            }
            match end.filter(|e| reached.contains_key(e)) {
                Some(end) => {
                    let path = path_to(&reached, end);
                    let edges = i64::try_from(path.len() - 1).unwrap_or(i64::MAX);
                    pairs.push(Pair {
                        origin: i,
                        destination: j,
                        cost: Some(reached[&end].0),
                        edges,
                        geometry: if edges == 0 {
                            own(i)
                        } else {
                            Some(path_line(&graph, &path))
                        },
                    });
                }
                None if spec.include_missing => pairs.push(missing(None)),
                None => {}
            }
        }
    }
    let ids = |pick: fn(&Pair) -> usize| -> Result<ArrayRef, NativeError> {
        match &spec.id {
            None => Ok(Arc::new(
                pairs
                    .iter()
                    .map(|p| i64::try_from(pick(p)).ok())
                    .collect::<Int64Array>(),
            )),
            Some(id) => {
                let column = batch.column(points.column_index(id)?);
                let rows: UInt64Array = pairs.iter().map(|p| Some(pick(p) as u64)).collect();
                arrow::compute::take(column, &rows, None).map_err(NativeError::arrow)
            }
        }
    };
    let cost: Float64Array = pairs.iter().map(|p| p.cost).collect();
    let edges: Int64Array = pairs.iter().map(|p| Some(p.edges)).collect();
    let columns = vec![
        (ORIGIN, ids(|p| p.origin)?),
        (DESTINATION, ids(|p| p.destination)?),
        (COST, Arc::new(cost) as ArrayRef),
        (EDGES, Arc::new(edges) as ArrayRef),
    ];
    let geometry = pairs.into_iter().map(|p| p.geometry).collect();
    table(lines, columns, geometry)
}
