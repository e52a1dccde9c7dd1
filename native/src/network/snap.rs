//! Points snapped onto their nearest lines (`snap_points_to_lines`): candidates from an
//! R-tree of the lines' boxes, nearest first, measured along the line as GEOS measures.

use std::cmp::Ordering;
use std::sync::Arc;

use arrow::array::{
    Array, ArrayRef, BinaryArray, BooleanArray, Float64Array, Int64Array, RecordBatch, UInt64Array,
};
use arrow::compute::{cast, take};
use arrow::datatypes::{DataType, Field, Schema};
use rstar::primitives::{GeomWithData, Rectangle};
use rstar::{AABB, Envelope, PointDistance, RTree};

use super::super::NativeError;
use super::super::layer::Layer;
use super::graph::row_lines;
use super::{row_points, whole_column};
use geomill_geometry::wkb::write_point;
use geomill_planner::plan::network::SnapToLines;

/// Distances this close are equal.
const EPS: f64 = 1e-9;

/// A line (its parts one after the other) with the distance along it at each segment start.
struct Chain {
    segments: Vec<([f64; 2], [f64; 2], f64)>,
}

impl Chain {
    fn new(parts: &[Vec<[f64; 2]>]) -> Self {
        let mut segments = Vec::new();
        let mut along = 0.0;
        for points in parts {
            for w in points.windows(2) {
                segments.push((w[0], w[1], along));
                along += ((w[1][0] - w[0][0]).powi(2) + (w[1][1] - w[0][1]).powi(2)).sqrt();
            }
        }
        Self { segments }
    }

    /// The distance from `p` and the distance along the line to its point nearest `p` (the
    /// first nearest segment on ties).
    fn project(&self, p: [f64; 2]) -> (f64, f64) {
        let mut best = (f64::INFINITY, 0.0);
        for &(a, b, start) in &self.segments {
            let (dx, dy) = (b[0] - a[0], b[1] - a[1]);
            let length2 = dx * dx + dy * dy;
            let t = if length2 > 0.0 {
                (((p[0] - a[0]) * dx + (p[1] - a[1]) * dy) / length2).clamp(0.0, 1.0)
            } else {
                0.0
            };
            let (x, y) = (a[0] + t * dx, a[1] + t * dy);
            let d = ((p[0] - x).powi(2) + (p[1] - y).powi(2)).sqrt();
            if d < best.0 {
                best = (d, start + t * length2.sqrt());
            }
        }
        best
    }

    /// The point at distance `d` along the line.
    fn at(&self, d: f64) -> [f64; 2] {
        let Some(last) = self.segments.last() else {
            return [f64::NAN; 2];
        };
        let &(a, b, start) = self
            .segments
            .iter()
            .find(|(a, b, start)| {
                start + ((b[0] - a[0]).powi(2) + (b[1] - a[1]).powi(2)).sqrt() >= d
            })
            .unwrap_or(last);
        let length = ((b[0] - a[0]).powi(2) + (b[1] - a[1]).powi(2)).sqrt();
        let t = if length > 0.0 {
            ((d - start) / length).clamp(0.0, 1.0)
        } else {
            0.0
        };
        [a[0] + t * (b[0] - a[0]), a[1] + t * (b[1] - a[1])]
    }
}

/// A line id as GISPulse orders ids: numbers before text.
#[derive(Debug, Clone, PartialEq)]
enum IdKey {
    Number(f64),
    Text(String),
}

impl IdKey {
    fn cmp(&self, other: &Self) -> Ordering {
        match (self, other) {
            (Self::Number(a), Self::Number(b)) => a.total_cmp(b),
            (Self::Number(_), Self::Text(_)) => Ordering::Less,
            (Self::Text(_), Self::Number(_)) => Ordering::Greater,
            (Self::Text(a), Self::Text(b)) => a.cmp(b),
        }
    }
}

/// Every row of `array` as an [`IdKey`].
fn id_keys(array: &ArrayRef) -> Result<Vec<IdKey>, NativeError> {
    if array.data_type().is_numeric() {
        let numbers = cast(array, &DataType::Float64).map_err(NativeError::arrow)?;
        let numbers = numbers
            .as_any()
            .downcast_ref::<Float64Array>()
            .ok_or_else(|| NativeError::Declined("line ids".into()))?;
        return Ok(numbers
            .iter()
            .map(|v| v.map_or(IdKey::Text("None".into()), IdKey::Number))
            .collect());
    }
    let texts = cast(array, &DataType::Utf8).map_err(NativeError::arrow)?;
    let texts = texts
        .as_any()
        .downcast_ref::<arrow::array::StringArray>()
        .ok_or_else(|| NativeError::Declined("line ids".into()))?;
    Ok(texts
        .iter()
        .map(|v| IdKey::Text(v.unwrap_or("None").to_owned()))
        .collect())
}

/// One output row: the point's row, the line's row (none: not snapped) and where.
struct Snap {
    point: usize,
    line: Option<usize>,
    measure: Option<f64>,
    offset: Option<f64>,
    rank: i64,
    at: Option<[f64; 2]>,
}

/// The lines a point snaps to: `(distance, line)` nearest first, as the spec chooses them.
fn candidates(
    p: [f64; 2],
    tree: &RTree<GeomWithData<Rectangle<[f64; 2]>, usize>>,
    chains: &[Chain],
    keys: &[IdKey],
    spec: &SnapToLines,
) -> Vec<(f64, usize)> {
    let k = spec.k as usize;
    let mut found: Vec<(f64, usize)> = Vec::new();
    // Boxes come nearest first; a box's distance bounds its line's from below.
    let kth = |found: &mut Vec<(f64, usize)>| -> f64 {
        found.sort_by(|a, b| a.0.total_cmp(&b.0));
        found.get(k - 1).map_or(f64::INFINITY, |f| f.0)
    };
    for entry in tree.nearest_neighbor_iter(&p) {
        let box_distance = entry.geom().distance_2(&p).sqrt();
        let limit = match spec.max_distance {
            Some(max) => max,
            None => kth(&mut found) + EPS,
        };
        if box_distance > limit {
            break;
        }
        let line = entry.data;
        found.push((chains[line].project(p).0, line));
    }
    let limit = match spec.max_distance {
        Some(max) => max,
        None => kth(&mut found) + EPS,
    };
    found.retain(|(d, _)| *d <= limit);
    let by_distance_then_id = |a: &(f64, usize), b: &(f64, usize)| {
        a.0.total_cmp(&b.0).then_with(|| keys[a.1].cmp(&keys[b.1]))
    };
    found.sort_by(by_distance_then_id);
    if k == 1 && spec.max_distance.is_none() {
        let best = found.first().map_or(f64::INFINITY, |f| f.0);
        found.retain(|(d, _)| *d <= best + EPS);
        found.sort_by(|a, b| keys[a.1].cmp(&keys[b.1]));
        found.truncate(1);
    } else if spec.max_distance.is_none() {
        found.truncate(k);
    }
    found
}

/// The points snapped onto the lines.
pub fn snap(points: &Layer, lines: &Layer, spec: &SnapToLines) -> Result<Layer, NativeError> {
    let chains: Vec<Chain> = row_lines(lines)?
        .iter()
        .map(|parts| Chain::new(parts))
        .collect();
    let keys = id_keys(&whole_column(lines, lines.column_index(&spec.id)?)?)?;
    let tree = RTree::bulk_load(
        chains
            .iter()
            .enumerate()
            .filter(|(_, c)| !c.segments.is_empty())
            .map(|(i, c)| {
                let mut b = AABB::from_point(c.segments[0].0);
                for (a, z, _) in &c.segments {
                    b.merge(&AABB::from_point(*a));
                    b.merge(&AABB::from_point(*z));
                }
                GeomWithData::new(Rectangle::from_corners(b.lower(), b.upper()), i)
            })
            .collect(),
    );
    let mut snaps: Vec<Snap> = Vec::new();
    for (point, p) in row_points(points)?.into_iter().enumerate() {
        let unsnapped = |offset: Option<f64>| Snap {
            point,
            line: None,
            measure: None,
            offset,
            rank: 1,
            at: None,
        };
        let Some(p) = p else {
            snaps.push(unsnapped(None));
            continue;
        };
        let found = candidates(p, &tree, &chains, &keys, spec);
        if found.is_empty() {
            let nearest = tree
                .nearest_neighbor(&p)
                .map(|entry| chains[entry.data].project(p).0);
            snaps.push(unsnapped(nearest));
            continue;
        }
        for (rank, (distance, line)) in found.into_iter().enumerate() {
            let measure = chains[line].project(p).1;
            snaps.push(Snap {
                point,
                line: Some(line),
                measure: Some(measure),
                offset: Some(distance),
                rank: rank as i64 + 1,
                at: Some(chains[line].at(measure)),
            });
        }
    }
    snapped_layer(points, lines, spec, &snaps)
}

/// The output: the points' columns per snap, the geometry moved where snapped, the fields added.
fn snapped_layer(
    points: &Layer,
    lines: &Layer,
    spec: &SnapToLines,
    snaps: &[Snap],
) -> Result<Layer, NativeError> {
    let rows = UInt64Array::from(snaps.iter().map(|s| s.point as u64).collect::<Vec<_>>());
    let geom = points.geometry_index()?;
    let mut fields: Vec<Field> = Vec::new();
    let mut arrays: Vec<ArrayRef> = Vec::new();
    let mut add = |name: &str, array: ArrayRef| {
        let field = Field::new(name, array.data_type().clone(), true);
        if let Some(at) = fields.iter().position(|f| f.name() == name) {
            fields[at] = field;
            arrays[at] = array;
        } else {
            fields.push(field);
            arrays.push(array);
        }
    };
    for (i, field) in points.schema.fields().iter().enumerate() {
        let taken = take(&whole_column(points, i)?, &rows, None).map_err(NativeError::arrow)?;
        let array: ArrayRef = if i == geom {
            let original = taken
                .as_any()
                .downcast_ref::<BinaryArray>()
                .ok_or_else(|| NativeError::Declined("a geometry column not of WKB".into()))?;
            let moved: BinaryArray = snaps
                .iter()
                .enumerate()
                .map(|(k, s)| match s.at {
                    Some([x, y]) => {
                        let mut wkb = Vec::new();
                        write_point(x, y, &mut wkb);
                        Some(wkb)
                    }
                    None => original.is_valid(k).then(|| original.value(k).to_vec()),
                })
                .collect();
            Arc::new(moved)
        } else {
            taken
        };
        add(field.name(), array);
    }
    let line_rows = UInt64Array::from(
        snaps
            .iter()
            .map(|s| s.line.map(|l| l as u64))
            .collect::<Vec<_>>(),
    );
    let ids = take(
        &whole_column(lines, lines.column_index(&spec.id)?)?,
        &line_rows,
        None,
    )
    .map_err(NativeError::arrow)?;
    add(&spec.fields.edge_id, ids);
    add(
        &spec.fields.measure,
        Arc::new(snaps.iter().map(|s| s.measure).collect::<Float64Array>()),
    );
    add(
        &spec.fields.offset,
        Arc::new(snaps.iter().map(|s| s.offset).collect::<Float64Array>()),
    );
    add(
        &spec.fields.snapped,
        Arc::new(
            snaps
                .iter()
                .map(|s| Some(s.line.is_some()))
                .collect::<BooleanArray>(),
        ),
    );
    add(
        &spec.fields.rank,
        Arc::new(snaps.iter().map(|s| Some(s.rank)).collect::<Int64Array>()),
    );
    let schema = Arc::new(Schema::new(fields));
    let batch = RecordBatch::try_new(schema.clone(), arrays).map_err(NativeError::arrow)?;
    Layer::new(schema, vec![batch], &points.geometry, points.crs.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_multi_line_is_measured_part_after_part() {
        let chain = Chain::new(&[
            vec![[0.0, 0.0], [10.0, 0.0]],
            vec![[20.0, 0.0], [20.0, 10.0]],
        ]);
        assert_eq!(chain.project([5.0, 2.0]), (2.0, 5.0));
        assert_eq!(chain.project([21.0, 4.0]), (1.0, 14.0));
        assert_eq!(chain.at(14.0), [20.0, 4.0]);
        assert_eq!(chain.at(5.0), [5.0, 0.0]);
    }
}
