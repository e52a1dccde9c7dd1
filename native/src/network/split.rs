//! Lines cut at the points near them (`split_lines_at_points`): each part's cuts are the
//! points' projections onto it (GEOS's rule: the distance along the part to its point nearest
//! the point, the first nearest segment on ties), its pieces the stretches between them.

use std::sync::Arc;

use arrow::array::{ArrayRef, BinaryArray, Int64Array, RecordBatch, UInt64Array};
use arrow::compute::take;
use arrow::datatypes::{DataType, Field, Schema};
use rstar::primitives::GeomWithData;
use rstar::{AABB, RTree};

use super::super::NativeError;
use super::super::layer::Layer;
use super::graph::row_lines;
use super::{row_points, whole_column};
use geomill_geometry::wkb::write_line;
use geomill_planner::plan::network::SplitAtPoints;

/// Cuts this near an end, or pieces this short, are none.
const EPS: f64 = 1e-9;

/// The distance from `p` to the segment `a`–`b` and the fraction of the segment (0..1) at its
/// point nearest `p`.
fn segment_nearest(p: [f64; 2], a: [f64; 2], b: [f64; 2]) -> (f64, f64) {
    let (dx, dy) = (b[0] - a[0], b[1] - a[1]);
    let length2 = dx * dx + dy * dy;
    let t = if length2 > 0.0 {
        (((p[0] - a[0]) * dx + (p[1] - a[1]) * dy) / length2).clamp(0.0, 1.0)
    } else {
        0.0
    };
    let (x, y) = (a[0] + t * dx, a[1] + t * dy);
    (((p[0] - x).powi(2) + (p[1] - y).powi(2)).sqrt(), t)
}

/// A line part with the distance along it at each vertex.
pub(super) struct Part<'a> {
    points: &'a [[f64; 2]],
    along: Vec<f64>,
}

impl<'a> Part<'a> {
    pub(super) fn new(points: &'a [[f64; 2]]) -> Self {
        let mut along = Vec::with_capacity(points.len());
        let mut total = 0.0;
        along.push(0.0);
        for w in points.windows(2) {
            total += ((w[1][0] - w[0][0]).powi(2) + (w[1][1] - w[0][1]).powi(2)).sqrt();
            along.push(total);
        }
        Self { points, along }
    }

    fn length(&self) -> f64 {
        self.along[self.along.len() - 1]
    }

    /// The distance from `p` to the part and the distance along it to its point nearest `p`.
    pub(super) fn project(&self, p: [f64; 2]) -> (f64, f64) {
        let mut best = (f64::INFINITY, 0.0);
        for (i, w) in self.points.windows(2).enumerate() {
            let (d, t) = segment_nearest(p, w[0], w[1]);
            if d < best.0 {
                best = (d, self.along[i] + t * (self.along[i + 1] - self.along[i]));
            }
        }
        best
    }

    /// The point at distance `d` along the part.
    fn at(&self, d: f64) -> [f64; 2] {
        let last = self.points.len() - 1;
        let i = (0..last)
            .find(|&i| self.along[i + 1] >= d)
            .unwrap_or(last - 1);
        let span = self.along[i + 1] - self.along[i];
        let t = if span > 0.0 {
            ((d - self.along[i]) / span).clamp(0.0, 1.0)
        } else {
            0.0
        };
        let (a, b) = (self.points[i], self.points[i + 1]);
        [a[0] + t * (b[0] - a[0]), a[1] + t * (b[1] - a[1])]
    }

    /// The stretch from `a` to `b` along the part: its points there and the vertices between.
    fn substring(&self, a: f64, b: f64) -> Vec<[f64; 2]> {
        let mut out = vec![self.at(a)];
        for (p, &d) in self.points.iter().zip(&self.along) {
            if d >= b {
                break;
            }
            if d > a {
                out.push(*p);
            }
        }
        out.push(self.at(b));
        out
    }

    /// The pieces between the cuts at `measures` (ends and near duplicates ignored); the
    /// whole part when none is left.
    pub(super) fn pieces(&self, measures: &mut Vec<f64>) -> Vec<Vec<[f64; 2]>> {
        let length = self.length();
        measures.retain(|&m| m > EPS && m < length - EPS);
        measures.sort_by(f64::total_cmp);
        measures.dedup();
        let mut bounds = vec![0.0];
        bounds.extend(measures.iter().copied());
        bounds.push(length);
        let pieces: Vec<Vec<[f64; 2]>> = bounds
            .windows(2)
            .filter(|w| w[1] - w[0] > EPS)
            .map(|w| self.substring(w[0], w[1]))
            .filter(|piece| Part::new(piece).length() > EPS)
            .collect();
        if pieces.is_empty() {
            vec![self.points.to_vec()]
        } else {
            pieces
        }
    }
}

/// One row per piece of each line part, with the line's columns, `parent` and `part`.
pub fn split(lines: &Layer, points: &Layer, spec: &SplitAtPoints) -> Result<Layer, NativeError> {
    let cutters: Vec<GeomWithData<[f64; 2], ()>> = row_points(points)?
        .into_iter()
        .flatten()
        .map(|p| GeomWithData::new(p, ()))
        .collect();
    let tree = RTree::bulk_load(cutters);
    let tol = spec.tolerance;
    let mut rows: Vec<u64> = Vec::new();
    let mut parts: Vec<i64> = Vec::new();
    let mut geometry: Vec<Vec<u8>> = Vec::new();
    for (row, line_parts) in row_lines(lines)?.iter().enumerate() {
        for (k, points) in line_parts.iter().enumerate() {
            let part = Part::new(points);
            let (mut low, mut high) = ([f64::INFINITY; 2], [f64::NEG_INFINITY; 2]);
            for p in points {
                for d in 0..2 {
                    low[d] = low[d].min(p[d]);
                    high[d] = high[d].max(p[d]);
                }
            }
            let envelope =
                AABB::from_corners([low[0] - tol, low[1] - tol], [high[0] + tol, high[1] + tol]);
            let mut measures: Vec<f64> = tree
                .locate_in_envelope_intersecting(&envelope)
                .map(|c| part.project(*c.geom()))
                .filter(|(distance, _)| *distance <= tol)
                .map(|(_, along)| along)
                .collect();
            for piece in part.pieces(&mut measures) {
                let mut wkb = Vec::new();
                write_line(&piece, &mut wkb);
                geometry.push(wkb);
                rows.push(row as u64);
                parts.push(k as i64);
            }
        }
    }
    pieces_layer(lines, spec, &rows, &parts, geometry)
}

/// `lines`' columns at `rows`, the geometry replaced by the pieces, `parent` and `part` added.
fn pieces_layer(
    lines: &Layer,
    spec: &SplitAtPoints,
    rows: &[u64],
    parts: &[i64],
    geometry: Vec<Vec<u8>>,
) -> Result<Layer, NativeError> {
    let indices = UInt64Array::from(rows.to_vec());
    let geom = lines.geometry_index()?;
    let whole = |i: usize| whole_column(lines, i);
    let mut fields: Vec<Field> = Vec::new();
    let mut arrays: Vec<ArrayRef> = Vec::new();
    let mut add = |field: Field, array: ArrayRef| {
        if let Some(at) = fields.iter().position(|f| f.name() == field.name()) {
            fields[at] = field;
            arrays[at] = array;
        } else {
            fields.push(field);
            arrays.push(array);
        }
    };
    for (i, field) in lines.schema.fields().iter().enumerate() {
        let array: ArrayRef = if i == geom {
            Arc::new(
                geometry
                    .iter()
                    .map(|g| Some(g.as_slice()))
                    .collect::<BinaryArray>(),
            )
        } else {
            take(&whole(i)?, &indices, None).map_err(NativeError::arrow)?
        };
        add(
            field
                .as_ref()
                .clone()
                .with_data_type(array.data_type().clone()),
            array,
        );
    }
    let parent: ArrayRef = match &spec.id {
        Some(id) => {
            take(&whole(lines.column_index(id)?)?, &indices, None).map_err(NativeError::arrow)?
        }
        None => Arc::new(rows.iter().map(|&r| r as i64).collect::<Int64Array>()),
    };
    add(
        Field::new(&spec.parent, parent.data_type().clone(), true),
        parent,
    );
    if let Some(part) = &spec.part {
        add(
            Field::new(part, DataType::Int64, true),
            Arc::new(Int64Array::from(parts.to_vec())),
        );
    }
    let schema = Arc::new(Schema::new(fields));
    let batch = RecordBatch::try_new(schema.clone(), arrays).map_err(NativeError::arrow)?;
    Layer::new(schema, vec![batch], &lines.geometry, lines.crs.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_is_cut_at_the_projections_and_not_at_its_ends() {
        let points = [[0.0, 0.0], [10.0, 0.0], [10.0, 10.0]];
        let part = Part::new(&points);
        assert_eq!(part.project([4.0, 1.0]), (1.0, 4.0));
        assert_eq!(part.project([11.0, 5.0]), (1.0, 15.0));
        let pieces = part.pieces(&mut vec![15.0, 4.0, 0.0, 20.0, 4.0]);
        assert_eq!(
            pieces,
            vec![
                vec![[0.0, 0.0], [4.0, 0.0]],
                vec![[4.0, 0.0], [10.0, 0.0], [10.0, 5.0]],
                vec![[10.0, 5.0], [10.0, 10.0]],
            ]
        );
        // Only end cuts: the part whole.
        assert_eq!(part.pieces(&mut vec![0.0, 20.0]), vec![points.to_vec()]);
    }
}
