//! A line layer's graph as one table (`build_network_graph`, `planarize`): its nodes (line
//! ends joined as GISPulse joins them), then its edges (line parts, or pieces of them, each
//! with its row's attributes).

use std::sync::Arc;

use arrow::array::{
    ArrayRef, BinaryArray, Float64Array, Int64Array, RecordBatch, StringArray, UInt64Array,
};
use arrow::compute::take;
use arrow::datatypes::{Field, Schema};

use super::super::NativeError;
use super::super::layer::Layer;
use super::end_nodes::fuse;
use super::graph::row_lines;
use super::whole_column;
use geomill_geometry::wkb::{write_line, write_point};
use geomill_planner::plan::network::{GraphTable, graph_fields};

/// One edge: the row it comes from and its points.
pub struct Edge {
    pub row: usize,
    pub points: Vec<[f64; 2]>,
}

/// The nodes of `edges`' ends: each end's node, and per node the mean of its ends and how
/// many there are.
pub struct Nodes {
    pub of_end: Vec<usize>,
    pub points: Vec<[f64; 2]>,
    pub degree: Vec<i64>,
}

impl Nodes {
    pub fn of(edges: &[Edge], tolerance: f64) -> Self {
        let ends: Vec<[f64; 2]> = edges
            .iter()
            .flat_map(|e| [e.points[0], e.points[e.points.len() - 1]])
            .collect();
        let of_end = fuse(&ends, tolerance, &[]);
        let count = of_end.iter().max().map_or(0, |m| m + 1);
        let mut sums = vec![[0.0_f64; 2]; count];
        let mut degree = vec![0_i64; count];
        for (end, &node) in ends.iter().zip(&of_end) {
            sums[node][0] += end[0];
            sums[node][1] += end[1];
            degree[node] += 1;
        }
        let points = sums
            .iter()
            .zip(&degree)
            .map(|(s, &n)| [s[0] / n as f64, s[1] / n as f64])
            .collect();
        Self {
            of_end,
            points,
            degree,
        }
    }
}

/// The table of `nodes` then `edges`: `columns(table)` gives the columns before the line
/// attributes (full length: a node row, then an edge row), the attributes not named in
/// `reserved` follow, the geometry in its place.
pub struct Table<'a> {
    pub lines: &'a Layer,
    pub nodes: &'a Nodes,
    pub edges: &'a [Edge],
}

impl Table<'_> {
    pub fn rows(&self) -> usize {
        self.nodes.points.len() + self.edges.len()
    }

    /// An integer column with values on node rows only.
    pub fn on_nodes(&self, f: impl Fn(usize) -> i64) -> ArrayRef {
        let n = self.nodes.points.len();
        Arc::new(
            (0..self.rows())
                .map(|i| (i < n).then(|| f(i)))
                .collect::<Int64Array>(),
        )
    }

    /// An integer column with values on edge rows only.
    pub fn on_edges(&self, f: impl Fn(usize) -> i64) -> ArrayRef {
        let n = self.nodes.points.len();
        Arc::new(
            (0..self.rows())
                .map(|i| (i >= n).then(|| f(i - n)))
                .collect::<Int64Array>(),
        )
    }

    /// `feature_type`: `node` on node rows, `edge_type` on edge rows.
    pub fn feature_types(&self, edge_type: &str) -> ArrayRef {
        let n = self.nodes.points.len();
        Arc::new(
            (0..self.rows())
                .map(|i| Some(if i < n { "node" } else { edge_type }))
                .collect::<StringArray>(),
        )
    }

    /// A column of the lines, its values on each edge row from the edge's row.
    pub fn line_column(&self, name: &str) -> Result<ArrayRef, NativeError> {
        let all = whole_column(self.lines, self.lines.column_index(name)?)?;
        let rows: UInt64Array = std::iter::repeat_n(None, self.nodes.points.len())
            .chain(self.edges.iter().map(|e| Some(e.row as u64)))
            .collect();
        take(&all, &rows, None).map_err(NativeError::arrow)
    }

    /// The layer: `columns`, then the lines' columns not in `reserved`, the geometry (node
    /// points, edge lines) in its place.
    pub fn layer(
        &self,
        mut columns: Vec<(String, ArrayRef)>,
        reserved: &[&str],
    ) -> Result<Layer, NativeError> {
        let mut geometry: Vec<Vec<u8>> = Vec::with_capacity(self.rows());
        for p in &self.nodes.points {
            let mut wkb = Vec::new();
            write_point(p[0], p[1], &mut wkb);
            geometry.push(wkb);
        }
        for e in self.edges {
            let mut wkb = Vec::new();
            write_line(&e.points, &mut wkb);
            geometry.push(wkb);
        }
        let geom = self.lines.geometry_index()?;
        for (i, field) in self.lines.schema.fields().iter().enumerate() {
            if reserved.contains(&field.name().as_str()) {
                continue;
            }
            let array: ArrayRef = if i == geom {
                Arc::new(
                    geometry
                        .iter()
                        .map(|g| Some(g.as_slice()))
                        .collect::<BinaryArray>(),
                )
            } else {
                self.line_column(field.name())?
            };
            columns.push((field.name().clone(), array));
        }
        let schema = Arc::new(Schema::new(
            columns
                .iter()
                .map(|(name, array)| Field::new(name, array.data_type().clone(), true))
                .collect::<Vec<_>>(),
        ));
        let batch = RecordBatch::try_new(
            schema.clone(),
            columns.into_iter().map(|(_, a)| a).collect(),
        )
        .map_err(NativeError::arrow)?;
        Layer::new(
            schema,
            vec![batch],
            &self.lines.geometry,
            self.lines.crs.clone(),
        )
    }

    /// Each edge's parent: the lines' `id` value, else its row position.
    pub fn parents(&self, id: Option<&str>) -> Result<ArrayRef, NativeError> {
        match id {
            Some(id) => self.line_column(id),
            None => Ok(self.on_edges(|e| self.edges[e].row as i64)),
        }
    }
}

/// Every line part of `lines` as an edge, rows then parts in order.
pub fn line_parts(lines: &Layer) -> Result<Vec<Edge>, NativeError> {
    Ok(row_lines(lines)?
        .into_iter()
        .enumerate()
        .flat_map(|(row, parts)| parts.into_iter().map(move |points| Edge { row, points }))
        .collect())
}

/// The nodes and edges of `lines` as one table, nodes first.
pub fn graph_table(lines: &Layer, spec: &GraphTable) -> Result<Layer, NativeError> {
    use graph_fields::*;
    let edges = line_parts(lines)?;
    let nodes = Nodes::of(&edges, spec.tolerance);
    let table = Table {
        lines,
        nodes: &nodes,
        edges: &edges,
    };
    let n = nodes.points.len();
    let mut columns: Vec<(String, ArrayRef)> = vec![
        (FEATURE_TYPE.into(), table.feature_types("edge")),
        (NODE_ID.into(), table.on_nodes(|i| i as i64)),
        (DEGREE.into(), table.on_nodes(|i| nodes.degree[i])),
        (EDGE_ID.into(), table.parents(spec.id.as_deref())?),
        (
            FROM_NODE.into(),
            table.on_edges(|e| nodes.of_end[2 * e] as i64),
        ),
        (
            TO_NODE.into(),
            table.on_edges(|e| nodes.of_end[2 * e + 1] as i64),
        ),
        (
            LENGTH.into(),
            Arc::new(
                (0..table.rows())
                    .map(|i| (i >= n).then(|| planar_length(&edges[i - n].points)))
                    .collect::<Float64Array>(),
            ),
        ),
    ];
    if let Some(weight) = &spec.weight {
        columns.push((WEIGHT.into(), table.line_column(weight)?));
    }
    table.layer(columns, &ALL)
}

/// The sum of a line's segment lengths, in order (as GEOS sums them).
pub fn planar_length(points: &[[f64; 2]]) -> f64 {
    points
        .windows(2)
        .map(|w| ((w[1][0] - w[0][0]).powi(2) + (w[1][1] - w[0][1]).powi(2)).sqrt())
        .sum()
}
