//! The offset curve of a line as GEOS 3.12+ (after JTS 1.19) draws it, from the buffer of the
//! GEOS 3.11 the native backend links: the stretches of the buffer's boundary that lie on the
//! offset side of the line (not on its end caps), in order along the line. GEOS 3.11's own
//! offset curve may fold back at tight bends, leaving vertices closer to the line than the
//! distance; the buffer's boundary never is.

use geos::{BufferParams, CapStyle, Geom, Geometry, JoinStyle};
use rstar::RTree;
use rstar::primitives::{GeomWithData, Line};

use super::geos_base::{Xy, line_string, text, xy_of};

/// How many of the line's segments nearest to a piece of the buffer's boundary are tried as
/// the piece's origin.
const NEAREST: usize = 8;

/// One segment of the line, numbered along it.
type Segment = GeomWithData<Line<Xy>, usize>;

/// The offset curve of the LineString `line` at `distance` (left when positive, right when
/// negative): a LineString, or a MultiLineString of its stretches in order along the line
/// where the buffer cuts it; an empty LineString for a line of no length.
pub fn offset_curve(
    line: &Geometry,
    distance: f64,
    join: JoinStyle,
    segments: u32,
    mitre_limit: f64,
) -> Result<Geometry, String> {
    let mut points = xy_of(line)?;
    points.dedup();
    without_straight_vertices(&mut points);
    if points.len() < 2 {
        return Geometry::new_from_wkt("LINESTRING EMPTY").map_err(text);
    }
    if points.len() == 2 {
        return line_string(&shifted(points[0], points[1], distance));
    }
    let params = BufferParams::builder()
        .end_cap_style(CapStyle::Round)
        .join_style(join)
        .mitre_limit(mitre_limit)
        // As GEOS: at least 8 segments a quarter circle, against artifacts near the end caps.
        .quadrant_segments(i32::try_from(segments.max(8)).unwrap_or(8))
        .build()
        .map_err(text)?;
    let buffer = largest_polygon(
        &line
            .buffer_with_params(distance.abs(), &params)
            .map_err(text)?,
    )?;
    let index = RTree::bulk_load(
        points
            .windows(2)
            .enumerate()
            .map(|(k, w)| GeomWithData::new(Line::new(w[0], w[1]), k))
            .collect::<Vec<Segment>>(),
    );
    let line_side = Side {
        points: &points,
        index: &index,
        left: distance > 0.0,
        closed: points.first() == points.last(),
        distance: distance.abs(),
        mitre_limit: if join == JoinStyle::Mitre {
            mitre_limit.max(1.0)
        } else {
            0.0
        },
    };
    let mut stretches = Vec::new();
    stretches.extend(line_side.stretches(&xy_of(&buffer.get_exterior_ring().map_err(text)?)?));
    let holes = u32::try_from(buffer.get_num_interior_rings().map_err(text)?).unwrap_or(0);
    for h in 0..holes {
        let hole = buffer.get_interior_ring_n(h).map_err(text)?;
        stretches.extend(line_side.stretches(&xy_of(&hole)?));
    }
    stretches.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut lines = stretches
        .iter()
        .map(|(_, stretch)| line_string(stretch))
        .collect::<Result<Vec<_>, _>>()?;
    match lines.len() {
        0 => Geometry::new_from_wkt("LINESTRING EMPTY").map_err(text),
        1 => Ok(lines.remove(0)),
        _ => Geometry::create_multiline_string(lines).map_err(text),
    }
}

/// Removes the vertices where the line goes straight on (GEOS's offset has no join there, so
/// the buffer's boundary runs past them in one segment).
fn without_straight_vertices(points: &mut Vec<Xy>) {
    let mut kept: Vec<Xy> = Vec::with_capacity(points.len());
    for (i, &p) in points.iter().enumerate() {
        if let (Some(&a), Some(&c)) = (kept.last(), points.get(i + 1)) {
            let (u, v) = ((p[0] - a[0], p[1] - a[1]), (c[0] - p[0], c[1] - p[1]));
            if u.0 * v.1 - u.1 * v.0 == 0.0 && u.0 * v.0 + u.1 * v.1 > 0.0 {
                continue;
            }
        }
        kept.push(p);
    }
    *points = kept;
}

/// The segment `a`–`b` moved `distance` to its left (right when negative).
fn shifted(a: Xy, b: Xy, distance: f64) -> [Xy; 2] {
    let (dx, dy) = (b[0] - a[0], b[1] - a[1]);
    let length = dx.hypot(dy);
    let (ox, oy) = (-dy / length * distance, dx / length * distance);
    [[a[0] + ox, a[1] + oy], [b[0] + ox, b[1] + oy]]
}

/// The polygon of largest area of a buffer (a polygon, or a multipolygon in rare cases).
fn largest_polygon(buffer: &Geometry) -> Result<Geometry, String> {
    let parts = buffer.get_num_geometries().map_err(text)?;
    let mut best: Option<(f64, Geometry)> = None;
    for n in 0..parts {
        let part = Geom::clone(&buffer.get_geometry_n(n).map_err(text)?);
        let area = part.area().map_err(text)?;
        if best.as_ref().is_none_or(|(a, _)| area > *a) {
            best = Some((area, part));
        }
    }
    best.map(|(_, p)| p)
        .ok_or_else(|| "the line's buffer is empty".to_owned())
}

/// Which side of the line the pieces of the buffer's boundary come from.
struct Side<'a> {
    points: &'a [Xy],
    index: &'a RTree<Segment>,
    left: bool,
    /// A closed line has no end caps.
    closed: bool,
    distance: f64,
    /// The join's mitre limit (0 without mitre joins).
    mitre_limit: f64,
}

impl Side<'_> {
    /// How far a point may lie from where it is expected (GEOS matches the buffer to its raw
    /// offset at 1/10000 of the distance; the offsets here are the unsimplified line's).
    fn tolerance(&self) -> f64 {
        self.distance / 1000.0
    }

    /// Where along the line `p` lies: its nearest segment's number plus the fraction.
    fn position(&self, p: Xy) -> f64 {
        self.index.nearest_neighbor(&p).map_or(0.0, |nearest| {
            let k = nearest.data;
            k as f64 + self.along(k, p).clamp(0.0, 1.0)
        })
    }

    /// The fraction along segment `k`'s line where `p` projects, and `p`'s distance from that
    /// line (positive on its left).
    fn along(&self, k: usize, p: Xy) -> f64 {
        let (a, b) = (self.points[k], self.points[k + 1]);
        let (dx, dy) = (b[0] - a[0], b[1] - a[1]);
        ((p[0] - a[0]) * dx + (p[1] - a[1]) * dy) / (dx * dx + dy * dy)
    }

    fn signed_distance(&self, k: usize, p: Xy) -> f64 {
        let (a, b) = (self.points[k], self.points[k + 1]);
        let (dx, dy) = (b[0] - a[0], b[1] - a[1]);
        (dx * (p[1] - a[1]) - dy * (p[0] - a[0])) / dx.hypot(dy)
    }

    /// Whether `p` lies on a line parallel to segment `k` at the distance (`Some(left)`),
    /// within the segment's extent stretched by `slack` (a fraction of its length) each way.
    fn on_offset(&self, k: usize, p: Xy, slack: (f64, f64)) -> Option<bool> {
        let along = self.along(k, p);
        let signed = self.signed_distance(k, p);
        ((signed.abs() - self.distance).abs() <= self.tolerance()
            && along >= -slack.0
            && along <= 1.0 + slack.1)
            .then_some(signed > 0.0)
    }

    /// Whether the buffer boundary's segment `p`–`q` is on the offset side: a piece of a
    /// segment's offset, or of the join outside a turn on that side (its ends on the circle
    /// around the vertex or on the adjacent offsets' extensions); not of an end cap.
    fn kept(&self, p: Xy, q: Xy) -> bool {
        let middle = [(p[0] + q[0]) / 2.0, (p[1] + q[1]) / 2.0];
        // The piece's own segment, or the two meeting at its join, are among the nearest
        // (a few, so that the work stays proportional to the pieces, whatever the distance).
        let near: Vec<usize> = self
            .index
            .nearest_neighbor_iter(&middle)
            .take(NEAREST)
            .map(|s| s.data)
            .collect();
        // A mitre's corner lies on both offsets, past the segments' ends.
        let mitre = if self.mitre_limit > 1.0 {
            self.distance * self.mitre_limit
        } else {
            0.0
        };
        let last = self.points.len() - 2;
        for &k in &near {
            let length = self.length(k);
            // No mitre past the line's ends: the end caps are round.
            let slack = |end: bool| {
                let past = if end && !self.closed { 0.0 } else { mitre };
                (past + self.tolerance()) / length
            };
            let slack = (slack(k == 0), slack(k == last));
            if let (Some(a), Some(b)) = (self.on_offset(k, p, slack), self.on_offset(k, q, slack))
                && a == b
            {
                return a == self.left;
            }
        }
        if self.on_cap(middle) {
            return false;
        }
        for &k in &near {
            // The joins at both ends of segment k: (segment before, segment after).
            for (before, after) in [(k.checked_sub(1), k), (Some(k), k + 1)] {
                let (before, after) = match (before, after) {
                    (Some(b), a) if a <= last => (b, a),
                    (None, 0) if self.closed => (last, 0),
                    (Some(b), a) if a == last + 1 && self.closed => (b, 0),
                    _ => continue,
                };
                let turn = self.turn(before, after);
                if turn == 0.0 {
                    continue;
                }
                // A clockwise turn has its outside on the left: the join lies there.
                let outside_left = turn < 0.0;
                if self.of_join(before, after, p) && self.of_join(before, after, q) {
                    return outside_left == self.left;
                }
            }
        }
        false
    }

    /// Whether `p` lies on an end cap: past an end of an open line, around it.
    fn on_cap(&self, p: Xy) -> bool {
        if self.closed {
            return false;
        }
        let last = self.points.len() - 2;
        let near =
            |end: Xy| (p[0] - end[0]).hypot(p[1] - end[1]) <= self.distance + self.tolerance();
        (self.along(0, p) < -self.tolerance() / self.length(0) && near(self.points[0]))
            || (self.along(last, p) > 1.0 + self.tolerance() / self.length(last)
                && near(self.points[last + 1]))
    }

    fn length(&self, k: usize) -> f64 {
        let (a, b) = (self.points[k], self.points[k + 1]);
        (b[0] - a[0]).hypot(b[1] - a[1])
    }

    /// Whether `p` belongs to the join between segments `before` and `after`: in the wedge
    /// outside the turn (past the end of `before`, ahead of the start of `after`) and no
    /// farther from their shared vertex than the join reaches (the distance; a mitre's limit).
    fn of_join(&self, before: usize, after: usize, p: Xy) -> bool {
        let slack = |k: usize| self.tolerance() / self.length(k);
        let vertex = self.points[after];
        // A limited mitre's bevel lies across the bisector at the limit: its ends a little
        // farther.
        let reach = self.distance * (self.mitre_limit + 1.0) + self.tolerance();
        self.along(before, p) >= 1.0 - slack(before)
            && self.along(after, p) <= slack(after)
            && (p[0] - vertex[0]).hypot(p[1] - vertex[1]) <= reach
    }

    /// The cross product of segment `before`'s direction and segment `after`'s: negative for
    /// a clockwise turn.
    fn turn(&self, before: usize, after: usize) -> f64 {
        let direction = |k: usize| {
            let (a, b) = (self.points[k], self.points[k + 1]);
            (b[0] - a[0], b[1] - a[1])
        };
        let (u, v) = (direction(before), direction(after));
        u.0 * v.1 - u.1 * v.0
    }

    /// The stretches of `ring` on the offset side, each with where it starts along the line,
    /// its points in the line's direction.
    fn stretches(&self, ring: &[Xy]) -> Vec<(f64, Vec<Xy>)> {
        let n = ring.len().saturating_sub(1);
        let kept: Vec<bool> = (0..n).map(|i| self.kept(ring[i], ring[i + 1])).collect();
        if n == 0 || kept.iter().all(|k| !k) {
            return Vec::new();
        }
        // Start where a kept run begins (after a segment left out), so that no run wraps.
        let start = (0..n).find(|&i| kept[i] && !kept[(i + n - 1) % n]);
        let start = start.unwrap_or(0);
        let mut stretches = Vec::new();
        let mut current: Vec<Xy> = Vec::new();
        for step in 0..n {
            let i = (start + step) % n;
            if kept[i] {
                if current.is_empty() {
                    current.push(ring[i]);
                }
                current.push(ring[i + 1]);
            } else if !current.is_empty() {
                stretches.push(std::mem::take(&mut current));
            }
        }
        if !current.is_empty() {
            stretches.push(current);
        }
        stretches
            .into_iter()
            .map(|mut stretch| {
                let first = self.position(stretch[0]);
                let last = self.position(stretch[stretch.len() - 1]);
                if first > last {
                    stretch.reverse();
                }
                (first.min(last), stretch)
            })
            .collect()
    }
}
