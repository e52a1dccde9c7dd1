//! `network_extend_dangles`: each dangling end (shared with no other end, touching no other
//! feature) prolonged along its last segment, up to the longest extension, onto the nearest
//! point where that stretch meets another feature's line; rows in parallel.

use std::collections::HashMap;

use geos::{Geom, Geometry};
use rayon::prelude::*;
use rstar::{AABB, RTree};

use super::{LineNetwork, Lines, RowBox, Vertex};
use crate::{NativeError, geos_base};

fn point(p: [f64; 2]) -> Result<Geometry, NativeError> {
    geos_base::point(p).map_err(NativeError::Geos)
}

/// Where the end `p`, reached from `before`, meets another row's line within `reach`.
fn extension(
    p: [f64; 2],
    before: [f64; 2],
    reach: f64,
    row: usize,
    geometries: &[Option<Geometry>],
    index: &RTree<RowBox>,
) -> Result<Option<[f64; 2]>, NativeError> {
    let end = point(p)?;
    let near = AABB::from_point(p);
    for entry in index.locate_in_envelope_intersecting(&near) {
        if entry.data != row
            && let Some(other) = &geometries[entry.data]
            && end.intersects(other).map_err(NativeError::geos)?
        {
            return Ok(None);
        }
    }
    let (dx, dy) = (p[0] - before[0], p[1] - before[1]);
    let length = dx.hypot(dy);
    let far = [p[0] + dx / length * reach, p[1] + dy / length * reach];
    let ray = geos_base::line_string(&[p, far]).map_err(NativeError::Geos)?;
    let span = AABB::from_corners(p, far);
    let mut best: Option<(f64, [f64; 2])> = None;
    for entry in index.locate_in_envelope_intersecting(&span) {
        if entry.data == row {
            continue;
        }
        let Some(other) = &geometries[entry.data] else {
            continue;
        };
        if !ray.intersects(other).map_err(NativeError::geos)? {
            continue;
        }
        let meeting = ray.intersection(other).map_err(NativeError::geos)?;
        if meeting.is_empty().map_err(NativeError::geos)? {
            continue;
        }
        let d = end.distance(&meeting).map_err(NativeError::geos)?;
        let pair = end.nearest_points(&meeting).map_err(NativeError::geos)?;
        let at = [
            pair.get_x(1).map_err(NativeError::geos)?,
            pair.get_y(1).map_err(NativeError::geos)?,
        ];
        let better = best.is_none_or(|(bd, b)| {
            d.total_cmp(&bd)
                .then(at[0].total_cmp(&b[0]))
                .then(at[1].total_cmp(&b[1]))
                .is_lt()
        });
        if better {
            best = Some((d, at));
        }
    }
    Ok(best.map(|(_, at)| at))
}

/// The last vertex before the end of `part` (its last one, or with `first` its first one)
/// that differs from it.
fn before_end(part: &[Vertex], first: bool) -> Option<[f64; 2]> {
    let mut walk: Box<dyn Iterator<Item = &Vertex>> = if first {
        Box::new(part.iter())
    } else {
        Box::new(part.iter().rev())
    };
    let end = walk.next()?;
    walk.find(|v| v[0] != end[0] || v[1] != end[1])
        .map(|v| [v[0], v[1]])
}

fn node(v: &Vertex) -> (u64, u64) {
    ((v[0] + 0.0).to_bits(), (v[1] + 0.0).to_bits())
}

/// Each row's lines with their dangling ends extended (`None`: unchanged).
pub fn extend_dangles(
    network: &LineNetwork,
    reach: f64,
) -> Result<Vec<Option<Lines>>, NativeError> {
    let mut ends: HashMap<(u64, u64), usize> = HashMap::new();
    for part in network.lines.iter().flatten().flat_map(|l| l.parts.iter()) {
        if let (Some(first), Some(last)) = (part.first(), part.last()) {
            *ends.entry(node(first)).or_default() += 1;
            *ends.entry(node(last)).or_default() += 1;
        }
    }
    let (geometries, boxes) = network.indexed()?;
    let index = RTree::bulk_load(boxes);
    network
        .lines
        .par_iter()
        .enumerate()
        .map(|(row, lines)| {
            let Some(lines) = lines else { return Ok(None) };
            let mut out = lines.clone();
            let mut changed = false;
            for (n, part) in lines.parts.iter().enumerate() {
                for first in [true, false] {
                    let i = if first { 0 } else { part.len() - 1 };
                    let v = part[i];
                    if ends.get(&node(&v)).copied().unwrap_or(0) != 1 {
                        continue;
                    }
                    let Some(before) = before_end(part, first) else {
                        continue;
                    };
                    let p = [v[0], v[1]];
                    if let Some(at) = extension(p, before, reach, row, &geometries, &index)? {
                        out.parts[n][i][0] = at[0];
                        out.parts[n][i][1] = at[1];
                        changed = true;
                    }
                }
            }
            Ok(changed.then_some(out))
        })
        .collect()
}
