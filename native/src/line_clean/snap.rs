//! `network_snap_endpoints`: line ends, in the order of their x then y, moved onto the nearest
//! kept point of another feature within the tolerance (or, targeting lines, onto the nearest
//! point of another feature's line); ends that move nowhere become kept points.

use std::collections::HashMap;

use geos::{Geom, Geometry};
use rstar::{AABB, RTree};

use super::{LineNetwork, Lines};
use crate::NativeError;
use geomill_planner::plan::ops::line_clean::SnapTarget;

/// A point ends meet at, and the rows whose ends are there.
struct Kept {
    at: [f64; 2],
    rows: Vec<usize>,
}

/// Kept points hashed by a grid of the tolerance.
struct KeptPoints {
    cell: f64,
    points: Vec<Kept>,
    grid: HashMap<(i64, i64), Vec<usize>>,
}

impl KeptPoints {
    fn key(&self, p: [f64; 2]) -> (i64, i64) {
        // `as` saturates: far coordinates share the outermost cells.
        (
            (p[0] / self.cell).floor() as i64,
            (p[1] / self.cell).floor() as i64,
        )
    }

    fn near(&self, p: [f64; 2]) -> impl Iterator<Item = usize> + '_ {
        let (cx, cy) = self.key(p);
        (-1..=1).flat_map(move |dx| {
            (-1..=1).flat_map(move |dy| {
                self.grid
                    .get(&(cx.saturating_add(dx), cy.saturating_add(dy)))
                    .into_iter()
                    .flatten()
                    .copied()
            })
        })
    }

    fn add(&mut self, at: [f64; 2], row: usize) -> usize {
        let index = self.points.len();
        self.points.push(Kept {
            at,
            rows: vec![row],
        });
        let key = self.key(at);
        self.grid.entry(key).or_default().push(index);
        index
    }
}

fn distance(a: [f64; 2], b: [f64; 2]) -> f64 {
    (a[0] - b[0]).hypot(a[1] - b[1])
}

/// Whether (distance, x, y) `a` comes before `b`.
fn nearer(a: (f64, [f64; 2]), b: (f64, [f64; 2])) -> bool {
    a.0.total_cmp(&b.0)
        .then(a.1[0].total_cmp(&b.1[0]))
        .then(a.1[1].total_cmp(&b.1[1]))
        .is_lt()
}

/// The nearest point of another row's line within `tolerance` of `p`.
fn nearest_on_lines(
    p: [f64; 2],
    row: usize,
    tolerance: f64,
    geometries: &[Option<Geometry>],
    index: &RTree<super::RowBox>,
) -> Result<Option<[f64; 2]>, NativeError> {
    let point = crate::geos_base::point(p).map_err(NativeError::Geos)?;
    let reach = AABB::from_corners(
        [p[0] - tolerance, p[1] - tolerance],
        [p[0] + tolerance, p[1] + tolerance],
    );
    let mut best: Option<(f64, [f64; 2])> = None;
    for entry in index.locate_in_envelope_intersecting(&reach) {
        if entry.data == row {
            continue;
        }
        let Some(line) = &geometries[entry.data] else {
            continue;
        };
        let d = point.distance(line).map_err(NativeError::geos)?;
        if d > tolerance {
            continue;
        }
        let pair = point.nearest_points(line).map_err(NativeError::geos)?;
        let on = [
            pair.get_x(1).map_err(NativeError::geos)?,
            pair.get_y(1).map_err(NativeError::geos)?,
        ];
        if best.is_none_or(|b| nearer((d, on), b)) {
            best = Some((d, on));
        }
    }
    Ok(best.map(|(_, on)| on))
}

/// Each row's lines with their ends moved (`None`: unchanged).
pub fn snap_endpoints(
    network: &LineNetwork,
    tolerance: f64,
    target: SnapTarget,
) -> Result<Vec<Option<Lines>>, NativeError> {
    // (x, y, row, part, last end)
    let mut ends: Vec<([f64; 2], usize, usize, bool)> = Vec::new();
    for (row, lines) in network.lines.iter().enumerate() {
        for (part, vertices) in lines.iter().flat_map(|l| l.parts.iter().enumerate()) {
            if let (Some(first), Some(last)) = (vertices.first(), vertices.last()) {
                ends.push(([first[0], first[1]], row, part, false));
                ends.push(([last[0], last[1]], row, part, true));
            }
        }
    }
    ends.sort_by(|a, b| {
        a.0[0]
            .total_cmp(&b.0[0])
            .then(a.0[1].total_cmp(&b.0[1]))
            .then(a.1.cmp(&b.1))
            .then(a.2.cmp(&b.2))
            .then(a.3.cmp(&b.3))
    });
    let lines_index = match target {
        SnapTarget::Lines => {
            let (geometries, boxes) = network.indexed()?;
            Some((geometries, RTree::bulk_load(boxes)))
        }
        SnapTarget::Endpoints => None,
    };
    let mut kept = KeptPoints {
        cell: tolerance,
        points: Vec::new(),
        grid: HashMap::new(),
    };
    let mut out: Vec<Option<Lines>> = vec![None; network.lines.len()];
    for (p, row, part, last) in ends {
        let near: Vec<usize> = kept.near(p).collect();
        if let Some(&here) = near.iter().find(|&&k| kept.points[k].at == p) {
            kept.points[here].rows.push(row);
            continue;
        }
        let mut best: Option<(f64, [f64; 2], usize)> = None;
        for k in near {
            let point = &kept.points[k];
            let d = distance(p, point.at);
            if d > tolerance || point.rows.contains(&row) {
                continue;
            }
            if best.is_none_or(|b| nearer((d, point.at), (b.0, b.1))) {
                best = Some((d, point.at, k));
            }
        }
        let moved_to = match (best, &lines_index) {
            (Some((_, at, k)), _) => {
                kept.points[k].rows.push(row);
                Some(at)
            }
            (None, Some((geometries, index))) => {
                let on = nearest_on_lines(p, row, tolerance, geometries, index)?;
                kept.add(on.unwrap_or(p), row);
                on
            }
            (None, None) => {
                kept.add(p, row);
                None
            }
        };
        let Some(at) = moved_to else { continue };
        let lines = out[row].get_or_insert_with(|| {
            network.lines[row].clone().unwrap_or(Lines {
                parts: Vec::new(),
                multi: false,
                z: false,
            })
        });
        let vertices = &mut lines.parts[part];
        let i = if last { vertices.len() - 1 } else { 0 };
        vertices[i][0] = at[0];
        vertices[i][1] = at[1];
    }
    Ok(out)
}
