//! GISPulse's line cleaning rules: ends snapped by grid buckets
//! ([`snap_by_grid_buckets`]), every LineString end moved onto the nearest other feature
//! ([`ends_onto_nearest`]), and duplicates dropped in row order ([`first_in_row_order`]).

use std::collections::HashMap;

use geos::{Geom, Geometry};
use rayon::prelude::*;
use rstar::primitives::{GeomWithData, Rectangle};
use rstar::{AABB, RTree};

use super::{KeptRows, LineNetwork, Lines, RowBox};
use crate::cleaning::bounds;
use crate::geos_base::to_geos;
use crate::{NativeError, geos_base};

/// Every row's GEOS geometry (`None` for NULL and empty ones), whatever its type.
fn features(network: &LineNetwork) -> Result<Vec<Option<Geometry>>, NativeError> {
    let mut out = Vec::with_capacity(network.wkb.len());
    for (row, wkb) in network.wkb.iter().enumerate() {
        let g = match wkb {
            Some(bytes) => Some(to_geos(bytes, row)?),
            None => None,
        };
        out.push(match g {
            Some(g) if !g.is_empty().map_err(NativeError::geos)? => Some(g),
            _ => None,
        });
    }
    Ok(out)
}

fn row_box(g: &Geometry, row: usize) -> Result<RowBox, NativeError> {
    let (low, high) = bounds(g)?;
    Ok(GeomWithData::new(Rectangle::from_corners(low, high), row))
}

/// An R-tree of the rows' boxes.
fn index_of(geometries: &[Option<Geometry>]) -> Result<RTree<RowBox>, NativeError> {
    let mut boxes = Vec::new();
    for (row, g) in geometries.iter().enumerate() {
        if let Some(g) = g {
            boxes.push(row_box(g, row)?);
        }
    }
    Ok(RTree::bulk_load(boxes))
}

/// The nearest point to `p` of the nearest feature other than `row` (ties: the point's x, then
/// y), with its distance, within `reach`.
fn nearest_other(
    p: [f64; 2],
    row: usize,
    reach: f64,
    features: &[Option<Geometry>],
    index: &RTree<RowBox>,
) -> Result<Option<(f64, [f64; 2])>, NativeError> {
    let point = geos_base::point(p).map_err(NativeError::Geos)?;
    let around = AABB::from_corners([p[0] - reach, p[1] - reach], [p[0] + reach, p[1] + reach]);
    let mut best: Option<(f64, [f64; 2])> = None;
    for entry in index.locate_in_envelope_intersecting(&around) {
        let Some(other) = features[entry.data].as_ref().filter(|_| entry.data != row) else {
            continue;
        };
        let pair = point.nearest_points(other).map_err(NativeError::geos)?;
        let on = [
            pair.get_x(1).map_err(NativeError::geos)?,
            pair.get_y(1).map_err(NativeError::geos)?,
        ];
        // As GEOS measures two points (and GISPulse measures the end to the point found).
        let (dx, dy) = (on[0] - p[0], on[1] - p[1]);
        let d = (dx * dx + dy * dy).sqrt();
        let better = best.is_none_or(|(bd, b)| {
            d.total_cmp(&bd)
                .then(on[0].total_cmp(&b[0]))
                .then(on[1].total_cmp(&b[1]))
                .is_lt()
        });
        if better {
            best = Some((d, on));
        }
    }
    Ok(best.filter(|(d, _)| *d <= reach))
}

/// `extend_dangles` with `method: nearest_point`: each end of each LineString (start, then
/// end) moved onto the nearest point of the nearest other feature of any type when it is more
/// than 0 and at most `reach` away. The features met are the input's.
pub fn ends_onto_nearest(
    network: &LineNetwork,
    reach: f64,
) -> Result<Vec<Option<Lines>>, NativeError> {
    let features = features(network)?;
    let index = index_of(&features)?;
    network
        .lines
        .par_iter()
        .enumerate()
        .map(|(row, lines)| {
            let Some(lines) = lines.as_ref().filter(|l| !l.multi) else {
                return Ok(None);
            };
            let mut out = lines.clone();
            let part = &mut out.parts[0];
            let mut changed = false;
            for i in [0, part.len() - 1] {
                let p = [part[i][0], part[i][1]];
                if let Some((d, on)) = nearest_other(p, row, reach, &features, &index)?
                    && d > 0.0
                {
                    part[i][0] = on[0];
                    part[i][1] = on[1];
                    changed = true;
                }
            }
            Ok(changed.then_some(out))
        })
        .collect()
}

/// The mean of `points`, summed left to right as Python's `sum` adds floats (3.11).
fn mean(points: &[[f64; 2]]) -> [f64; 2] {
    let n = points.len() as f64;
    let (x, y) = points
        .iter()
        .fold((0.0, 0.0), |(x, y), p| (x + p[0], y + p[1]));
    [x / n, y / n]
}

/// Python's `round(v)` of a quotient as a grid cell (half to even; saturating far away).
fn cell(v: f64) -> i64 {
    v.round_ties_even() as i64
}

/// `snap_endpoints` with `rule: grid_buckets`: LineString ends in row order (start, then end)
/// bucketed on a grid of `tolerance`, each joining the first of the 3×3 nearby buckets whose
/// mean so far is within `tolerance` (else a new bucket in its own cell, emptying one already
/// there), then every end moved to its bucket's final mean.
pub fn snap_by_grid_buckets(
    network: &LineNetwork,
    tolerance: f64,
) -> Result<Vec<Option<Lines>>, NativeError> {
    type Key = (i64, i64);
    let mut buckets: HashMap<Key, Vec<[f64; 2]>> = HashMap::new();
    let mut keys: Vec<Option<[Key; 2]>> = vec![None; network.lines.len()];
    for (row, lines) in network.lines.iter().enumerate() {
        let Some(lines) = lines.as_ref().filter(|l| !l.multi && l.parts[0].len() >= 2) else {
            continue;
        };
        let part = &lines.parts[0];
        let mut ends = [(0, 0); 2];
        for (n, v) in [part[0], part[part.len() - 1]].iter().enumerate() {
            let (x, y) = (v[0], v[1]);
            let own = (cell(x / tolerance), cell(y / tolerance));
            let mut chosen = None;
            'search: for dx in [-1, 0, 1] {
                for dy in [-1, 0, 1] {
                    let key = (own.0.saturating_add(dx), own.1.saturating_add(dy));
                    if let Some(members) = buckets.get(&key) {
                        let [cx, cy] = mean(members);
                        let d = ((cx - x) * (cx - x) + (cy - y) * (cy - y)).sqrt();
                        if d <= tolerance {
                            chosen = Some(key);
                            break 'search;
                        }
                    }
                }
            }
            let key = chosen.unwrap_or_else(|| {
                buckets.insert(own, Vec::new());
                own
            });
            buckets.entry(key).or_default().push([x, y]);
            ends[n] = key;
        }
        keys[row] = Some(ends);
    }
    let means: HashMap<Key, [f64; 2]> = buckets
        .iter()
        .filter(|(_, members)| !members.is_empty())
        .map(|(key, members)| (*key, mean(members)))
        .collect();
    let mut out = vec![None; network.lines.len()];
    for (row, ends) in keys.iter().enumerate() {
        let (Some(ends), Some(lines)) = (ends, &network.lines[row]) else {
            continue;
        };
        let mut moved = lines.clone();
        let part = &mut moved.parts[0];
        let last = part.len() - 1;
        for (i, key) in [(0, ends[0]), (last, ends[1])] {
            let Some(at) = means.get(&key) else { continue };
            part[i][0] = at[0];
            part[i][1] = at[1];
        }
        out[row] = Some(moved);
    }
    Ok(out)
}

/// Whether `g` equals `kept` within `tolerance`: vertex for vertex (GEOS `equals_exact`), or,
/// both LineStrings, by discrete Hausdorff distance.
fn same(g: &Geometry, kept: &Geometry, tolerance: f64) -> Result<bool, NativeError> {
    if g.equals_exact(kept, tolerance).map_err(NativeError::geos)? {
        return Ok(true);
    }
    let lines = g.geometry_type() == geos::GeometryTypes::LineString
        && kept.geometry_type() == geos::GeometryTypes::LineString;
    Ok(lines && g.hausdorff_distance(kept).map_err(NativeError::geos)? <= tolerance)
}

/// `remove_duplicates` with `rule: first_in_row_order`: the rows kept, in order, and their
/// geometries. NULL and empty geometries are dropped; every other row is kept unless it equals
/// a row kept before it.
pub fn first_in_row_order(network: &LineNetwork, tolerance: f64) -> Result<KeptRows, NativeError> {
    let features = features(network)?;
    let mut kept_index: RTree<RowBox> = RTree::new();
    let (mut keep, mut geometries) = (Vec::new(), Vec::new());
    for (row, g) in features.iter().enumerate() {
        let Some(g) = g else { continue };
        let (low, high) = bounds(g)?;
        let near = AABB::from_corners(
            [low[0] - tolerance, low[1] - tolerance],
            [high[0] + tolerance, high[1] + tolerance],
        );
        let mut duplicate = false;
        for entry in kept_index.locate_in_envelope_intersecting(&near) {
            if let Some(kept) = &features[entry.data]
                && same(g, kept, tolerance)?
            {
                duplicate = true;
                break;
            }
        }
        if !duplicate {
            kept_index.insert(row_box(g, row)?);
            keep.push(row);
            geometries.push(network.wkb[row].clone());
        }
    }
    Ok((keep, geometries))
}
