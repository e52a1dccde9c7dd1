//! A minimum spanning tree of a layer's points (Prim's algorithm over every pair, O(n²)).

use std::sync::Arc;

use arrow::array::{ArrayRef, Float64Array};
use geo::{Distance, Geodesic, Point};

use super::super::NativeError;
use super::super::layer::Layer;
use super::{column_rows, row_points, table};
use geomill_geometry::wkb::write_line;
use geomill_planner::plan::network::{MAX_TREE_POINTS, fields};
use geomill_planner::plan::operator::GraphSpec;

/// The links of the tree, one row each: the ids of both ends, the length, the line.
pub fn point_tree(layer: &Layer, id: &str, spec: &GraphSpec) -> Result<Layer, NativeError> {
    let points: Vec<(usize, [f64; 2])> = row_points(layer)?
        .into_iter()
        .enumerate()
        .filter_map(|(row, p)| p.map(|p| (row, p)))
        .collect();
    if points.len() > MAX_TREE_POINTS {
        return Err(NativeError::Input(format!(
            "mst of points links at most {MAX_TREE_POINTS} points; the layer has {}",
            points.len()
        )));
    }
    let distance = |a: [f64; 2], b: [f64; 2]| {
        if spec.geodesic {
            Geodesic.distance(Point::new(a[0], a[1]), Point::new(b[0], b[1]))
        } else {
            ((b[0] - a[0]) * (b[0] - a[0]) + (b[1] - a[1]) * (b[1] - a[1])).sqrt()
                * spec.metres_per_unit
        }
    };
    let n = points.len();
    let mut best = vec![(f64::INFINITY, usize::MAX); n];
    let mut in_tree = vec![false; n];
    let mut links = Vec::with_capacity(n.saturating_sub(1));
    let mut current = 0;
    for step in 0..n {
        in_tree[current] = true;
        if step > 0 {
            links.push((best[current].1, current, best[current].0));
        }
        let mut next: Option<usize> = None;
        for j in 0..n {
            if in_tree[j] {
                continue;
            }
            let d = distance(points[current].1, points[j].1);
            if d < best[j].0 {
                best[j] = (d, current);
            }
            if next.is_none_or(|k| best[j].0 < best[k].0) {
                next = Some(j);
            }
        }
        match next {
            Some(j) => current = j,
            None => break,
        }
    }
    let from: Vec<Option<u64>> = links.iter().map(|l| Some(points[l.0].0 as u64)).collect();
    let to: Vec<Option<u64>> = links.iter().map(|l| Some(points[l.1].0 as u64)).collect();
    let geometry = links
        .iter()
        .map(|l| {
            let mut out = Vec::new();
            write_line(&[points[l.0].1, points[l.1].1], &mut out);
            Some(out)
        })
        .collect();
    table(
        layer,
        vec![
            (fields::FROM, column_rows(layer, id, &from)?),
            (fields::TO, column_rows(layer, id, &to)?),
            (
                fields::COST,
                Arc::new(links.iter().map(|l| Some(l.2)).collect::<Float64Array>()) as ArrayRef,
            ),
        ],
        geometry,
    )
}
