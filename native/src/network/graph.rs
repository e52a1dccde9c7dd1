//! The graph of a line layer: each line part an edge between its end points, nodes numbered by
//! their coordinates (x, then y) as the SQL engines number them, edges held in a petgraph
//! directed graph (a two-way edge as two arcs).

use arrow::array::{Array, Float64Array};
use arrow::compute::cast;
use arrow::datatypes::DataType;
use geo::{Geodesic, Length, LineString};
use geos::{Geom, GeometryTypes};
use petgraph::graph::{DiGraph, NodeIndex};

use super::super::NativeError;
use super::super::geos_base::to_geos;
use super::super::layer::{Layer, Wkb};
use geomill_planner::plan::operator::GraphSpec;

/// Which way an edge may be travelled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    Both,
    Forward,
    Backward,
}

/// One line part of the layer.
#[derive(Debug, Clone)]
pub struct Edge {
    /// The row of the feature it comes from.
    pub row: usize,
    /// Node numbers (0-based) of its first and last vertex.
    pub from: usize,
    pub to: usize,
    pub cost: f64,
    pub direction: Direction,
    pub points: Vec<[f64; 2]>,
}

/// The graph: nodes sorted by coordinates, edges in input order, arcs weighted by edge index.
pub struct Network {
    pub nodes: Vec<[f64; 2]>,
    pub edges: Vec<Edge>,
    pub graph: DiGraph<(), usize, u32>,
}

/// A column of the layer as doubles, row by row across the batches.
pub(super) fn doubles(layer: &Layer, field: &str) -> Result<Vec<Option<f64>>, NativeError> {
    let index = layer.column_index(field)?;
    let mut out = Vec::with_capacity(layer.num_rows());
    for batch in &layer.batches {
        let column = cast(batch.column(index), &DataType::Float64).map_err(NativeError::arrow)?;
        let values = column
            .as_any()
            .downcast_ref::<Float64Array>()
            .ok_or_else(|| NativeError::Column {
                column: field.to_owned(),
                problem: "does not hold numbers".into(),
            })?;
        out.extend(values.iter());
    }
    Ok(out)
}

/// The line parts of each row (none for NULL, empty and non-line geometries), 2D.
pub fn row_lines(layer: &Layer) -> Result<Vec<Vec<Vec<[f64; 2]>>>, NativeError> {
    let geom = layer.geometry_index()?;
    let mut rows = Vec::with_capacity(layer.num_rows());
    for batch in &layer.batches {
        let wkbs = Wkb::of(batch, geom)?;
        for i in 0..wkbs.len() {
            let row = rows.len();
            let Some(bytes) = wkbs.get(i) else {
                rows.push(Vec::new());
                continue;
            };
            let g = to_geos(bytes, row)?;
            let mut parts = Vec::new();
            let lines: Vec<geos::Geometry> = match g.geometry_type() {
                GeometryTypes::LineString => vec![Geom::clone(&g)],
                GeometryTypes::MultiLineString => {
                    (0..g.get_num_geometries().map_err(NativeError::geos)?)
                        .map(|n| g.get_geometry_n(n).map(|p| Geom::clone(&p)))
                        .collect::<Result<_, _>>()
                        .map_err(NativeError::geos)?
                }
                _ => Vec::new(),
            };
            for line in lines {
                let coords = line.get_coord_seq().map_err(NativeError::geos)?;
                let n = coords.size().map_err(NativeError::geos)?;
                let points: Vec<[f64; 2]> = (0..n)
                    .map(|k| Ok([coords.get_x(k)? + 0.0, coords.get_y(k)? + 0.0]))
                    .collect::<Result<_, geos::Error>>()
                    .map_err(NativeError::geos)?;
                if points.len() >= 2 {
                    parts.push(points);
                }
            }
            rows.push(parts);
        }
    }
    Ok(rows)
}

fn direction(spec: &GraphSpec, oneway: Option<&str>) -> Direction {
    if spec.directed {
        return Direction::Forward;
    }
    match oneway {
        Some("1" | "true" | "yes") => Direction::Forward,
        Some("-1" | "reverse") => Direction::Backward,
        _ => Direction::Both,
    }
}

fn part_length(spec: &GraphSpec, points: &[[f64; 2]]) -> f64 {
    let line: LineString<f64> = points.iter().map(|[x, y]| (*x, *y)).collect();
    if spec.geodesic {
        Geodesic.length(&line)
    } else {
        let planar: f64 = points
            .windows(2)
            .map(|w| ((w[1][0] - w[0][0]).powi(2) + (w[1][1] - w[0][1]).powi(2)).sqrt())
            .sum();
        planar * spec.metres_per_unit
    }
}

impl Network {
    /// The graph of `layer`'s lines as `spec` weighs them.
    pub fn build(layer: &Layer, spec: &GraphSpec) -> Result<Self, NativeError> {
        let rows = row_lines(layer)?;
        let costs = match &spec.cost {
            Some(field) => Some(doubles(layer, field)?),
            None => None,
        };
        let oneway = match (&spec.oneway, spec.directed) {
            (Some(field), false) => Some(
                layer
                    .texts(field)?
                    .into_iter()
                    .map(|v| v.map(|t| t.trim().to_lowercase()))
                    .collect::<Vec<_>>(),
            ),
            _ => None,
        };
        let mut raw = Vec::new();
        for (row, parts) in rows.into_iter().enumerate() {
            let field_cost = costs.as_ref().map(|c| c[row]);
            let dir = direction(spec, oneway.as_ref().and_then(|o| o[row].as_deref()));
            for points in parts {
                let cost = match field_cost {
                    Some(value) => value,
                    None => Some(part_length(spec, &points)),
                };
                match cost {
                    Some(cost) if cost >= 0.0 => raw.push((row, cost, dir, points)),
                    _ => {}
                }
            }
        }
        let mut nodes: Vec<[f64; 2]> = raw
            .iter()
            .flat_map(|(_, _, _, p)| [p[0], p[p.len() - 1]])
            .collect();
        nodes.sort_by(|a, b| a[0].total_cmp(&b[0]).then(a[1].total_cmp(&b[1])));
        nodes.dedup();
        let number = |p: [f64; 2]| {
            nodes
                .binary_search_by(|n| n[0].total_cmp(&p[0]).then(n[1].total_cmp(&p[1])))
                .unwrap_or_default()
        };
        let edges: Vec<Edge> = raw
            .into_iter()
            .map(|(row, cost, direction, points)| Edge {
                row,
                from: number(points[0]),
                to: number(points[points.len() - 1]),
                cost,
                direction,
                points,
            })
            .collect();
        let mut graph = DiGraph::with_capacity(nodes.len(), edges.len() * 2);
        for _ in 0..nodes.len() {
            graph.add_node(());
        }
        for (index, e) in edges.iter().enumerate() {
            let (a, b) = (NodeIndex::new(e.from), NodeIndex::new(e.to));
            if e.direction != Direction::Backward {
                graph.add_edge(a, b, index);
            }
            if e.direction != Direction::Forward {
                graph.add_edge(b, a, index);
            }
        }
        Ok(Self {
            nodes,
            edges,
            graph,
        })
    }

    /// The node nearest to `p` (planar; ties to the lower number), `None` without nodes.
    pub fn nearest_node(&self, p: [f64; 2]) -> Option<usize> {
        let mut best: Option<(f64, usize)> = None;
        for (i, n) in self.nodes.iter().enumerate() {
            let d = (n[0] - p[0]) * (n[0] - p[0]) + (n[1] - p[1]) * (n[1] - p[1]);
            if best.is_none_or(|(b, _)| d < b) {
                best = Some((d, i));
            }
        }
        best.map(|(_, i)| i)
    }
}
