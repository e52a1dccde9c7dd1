//! The parts of a line layer linked at end points (GISPulse's `connected_components`): rows
//! whose ends share a node are in one part, numbered by their row counts.

use std::collections::HashMap;
use std::sync::Arc;

use arrow::array::{ArrayRef, Int64Array};

use super::super::NativeError;
use super::super::layer::Layer;
use super::end_nodes::fuse;
use super::graph::row_lines;
use super::with_columns;
use geomill_planner::plan::network::Components;

/// `lines` with each row's part number and size (−1 and 0 for a row without a line).
pub fn components(lines: &Layer, spec: &Components) -> Result<Layer, NativeError> {
    let rows = row_lines(lines)?;
    let mut ends = Vec::new();
    let mut links = Vec::new();
    let mut first_end: Vec<Option<usize>> = Vec::with_capacity(rows.len());
    for parts in &rows {
        let first = ends.len();
        for points in parts {
            ends.push(points[0]);
            ends.push(points[points.len() - 1]);
        }
        links.extend((first + 1..ends.len()).map(|k| (first, k)));
        first_end.push((ends.len() > first).then_some(first));
    }
    let nodes = fuse(&ends, spec.tolerance, &links);
    // A part is named by the node of its rows' first ends; counted and ordered by first row.
    let mut sizes: HashMap<usize, (i64, usize)> = HashMap::new();
    for (row, first) in first_end.iter().enumerate() {
        if let Some(end) = first {
            sizes.entry(nodes[*end]).or_insert((0, row)).0 += 1;
        }
    }
    let mut parts: Vec<(usize, i64, usize)> = sizes
        .iter()
        .map(|(&node, &(size, row))| (node, size, row))
        .collect();
    parts.sort_by_key(|&(_, size, row)| (-size, row));
    let number: HashMap<usize, i64> = parts
        .iter()
        .enumerate()
        .map(|(k, &(node, _, _))| (node, k as i64))
        .collect();
    let part_of = |first: &Option<usize>| first.map(|end| nodes[end]);
    let component: Int64Array = first_end
        .iter()
        .map(|f| Some(part_of(f).map_or(-1, |node| number[&node])))
        .collect();
    let size: Int64Array = first_end
        .iter()
        .map(|f| Some(part_of(f).map_or(0, |node| sizes[&node].0)))
        .collect();
    with_columns(
        lines,
        vec![
            (spec.component.as_str(), Arc::new(component) as ArrayRef),
            (spec.size.as_str(), Arc::new(size) as ArrayRef),
        ],
    )
}
