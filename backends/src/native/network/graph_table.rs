//! A line layer's graph as one table (`build_network_graph`): its nodes (line ends joined as
//! GISPulse joins them), then its edges (each line part with its row's attributes).

use std::sync::Arc;

use arrow::array::{
    ArrayRef, BinaryArray, Float64Array, Int64Array, RecordBatch, StringArray, UInt64Array,
};
use arrow::compute::{concat, take};
use arrow::datatypes::{Field, Schema};

use super::super::NativeError;
use super::super::layer::Layer;
use super::end_nodes::fuse;
use super::graph::row_lines;
use crate::wkb::{write_line, write_point};
use geomill_planner::plan::network::{GraphTable, graph_fields};

/// One edge: the row it comes from and its part's points.
struct Edge {
    row: usize,
    points: Vec<[f64; 2]>,
}

/// The nodes and edges of `lines` as one table, nodes first.
pub fn graph_table(lines: &Layer, spec: &GraphTable) -> Result<Layer, NativeError> {
    let edges: Vec<Edge> = row_lines(lines)?
        .into_iter()
        .enumerate()
        .flat_map(|(row, parts)| parts.into_iter().map(move |points| Edge { row, points }))
        .collect();
    let ends: Vec<[f64; 2]> = edges
        .iter()
        .flat_map(|e| [e.points[0], e.points[e.points.len() - 1]])
        .collect();
    let node_of = fuse(&ends, spec.tolerance, &[]);
    let node_count = node_of.iter().max().map_or(0, |m| m + 1);
    let mut sums = vec![([0.0_f64, 0.0_f64], 0_usize); node_count];
    for (end, &node) in ends.iter().zip(&node_of) {
        sums[node].0[0] += end[0];
        sums[node].0[1] += end[1];
        sums[node].1 += 1;
    }
    let nodes = node_count;
    let total = nodes + edges.len();
    let edge_rows: Vec<Option<u64>> = std::iter::repeat_n(None, nodes)
        .chain(edges.iter().map(|e| Some(e.row as u64)))
        .collect();
    let node_values = |f: &dyn Fn(usize) -> i64| -> ArrayRef {
        Arc::new(
            (0..total)
                .map(|i| (i < nodes).then(|| f(i)))
                .collect::<Int64Array>(),
        )
    };
    let edge_values = |f: &dyn Fn(usize) -> i64| -> ArrayRef {
        Arc::new(
            (0..total)
                .map(|i| (i >= nodes).then(|| f(i - nodes)))
                .collect::<Int64Array>(),
        )
    };
    let whole = |name: &str| -> Result<ArrayRef, NativeError> {
        let index = lines.column_index(name)?;
        let parts: Vec<&dyn arrow::array::Array> = lines
            .batches
            .iter()
            .map(|b| b.column(index).as_ref())
            .collect();
        let all = if parts.is_empty() {
            arrow::array::new_empty_array(lines.schema.field(index).data_type())
        } else {
            concat(&parts).map_err(NativeError::arrow)?
        };
        take(&all, &UInt64Array::from(edge_rows.clone()), None).map_err(NativeError::arrow)
    };
    let mut geometry = Vec::with_capacity(total);
    for (sum, count) in &sums {
        let mut wkb = Vec::new();
        write_point(sum[0] / *count as f64, sum[1] / *count as f64, &mut wkb);
        geometry.push(wkb);
    }
    for e in &edges {
        let mut wkb = Vec::new();
        write_line(&e.points, &mut wkb);
        geometry.push(wkb);
    }
    use graph_fields::*;
    let mut columns: Vec<(String, ArrayRef)> = vec![
        (
            FEATURE_TYPE.into(),
            Arc::new(
                (0..total)
                    .map(|i| Some(if i < nodes { "node" } else { "edge" }))
                    .collect::<StringArray>(),
            ),
        ),
        (NODE_ID.into(), node_values(&|n| n as i64)),
        (DEGREE.into(), node_values(&|n| sums[n].1 as i64)),
        (
            EDGE_ID.into(),
            match &spec.id {
                Some(id) => whole(id)?,
                None => edge_values(&|e| edges[e].row as i64),
            },
        ),
        (FROM_NODE.into(), edge_values(&|e| node_of[2 * e] as i64)),
        (TO_NODE.into(), edge_values(&|e| node_of[2 * e + 1] as i64)),
        (
            LENGTH.into(),
            Arc::new(
                (0..total)
                    .map(|i| (i >= nodes).then(|| planar_length(&edges[i - nodes].points)))
                    .collect::<Float64Array>(),
            ),
        ),
    ];
    if let Some(weight) = &spec.weight {
        columns.push((WEIGHT.into(), whole(weight)?));
    }
    let geom = lines.geometry_index()?;
    for (i, field) in lines.schema.fields().iter().enumerate() {
        if ALL.contains(&field.name().as_str()) {
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
            whole(field.name())?
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
    Layer::new(schema, vec![batch], &lines.geometry, lines.crs.clone())
}

/// The sum of a line's segment lengths, in order (as GEOS sums them).
fn planar_length(points: &[[f64; 2]]) -> f64 {
    points
        .windows(2)
        .map(|w| ((w[1][0] - w[0][0]).powi(2) + (w[1][1] - w[0][1]).powi(2)).sqrt())
        .sum()
}
