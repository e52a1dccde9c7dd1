//! Shapes that enclose a geometry, as the native `ShapeExpr` kernels draw them: the convex
//! hull of every vertex, the smallest enclosing circle (Welzl) and the least-area rectangle
//! (rotating calipers).

use geos::{Geom, Geometry, GeometryTypes};

use super::geos_base::{Xy, line_string, ring, sequence, text, xy_of};

/// The vertices of the convex hull of every vertex of the geometry (holes too: GEOS's hull
/// reads only polygon shells, which leaves out the holes outside the shell of an invalid
/// polygon), counter-clockwise, by Andrew's monotone chain.
pub(super) fn hull_points(geometry: &Geometry) -> Result<Vec<Xy>, String> {
    let mut points = Vec::new();
    collect_points(geometry, &mut points)?;
    points.sort_by(|a, b| a[0].total_cmp(&b[0]).then(a[1].total_cmp(&b[1])));
    points.dedup();
    if points.len() < 3 {
        return Ok(points);
    }
    let cross = |o: Xy, a: Xy, b: Xy| (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0]);
    let mut hull: Vec<Xy> = Vec::with_capacity(points.len() + 1);
    for pass in [false, true] {
        let start = hull.len();
        let ordered: Box<dyn Iterator<Item = &Xy>> = if pass {
            Box::new(points.iter().rev())
        } else {
            Box::new(points.iter())
        };
        for &p in ordered {
            while hull.len() >= start + 2
                && cross(hull[hull.len() - 2], hull[hull.len() - 1], p) <= 0.0
            {
                hull.pop();
            }
            hull.push(p);
        }
        hull.pop();
    }
    if hull.len() < 3 {
        // Collinear: the two extremes.
        return Ok(vec![points[0], points[points.len() - 1]]);
    }
    Ok(hull)
}

/// Every vertex of the geometry, x and y.
fn collect_points<G: Geom>(geometry: &G, out: &mut Vec<Xy>) -> Result<(), String> {
    if geometry.is_empty().map_err(text)? {
        return Ok(());
    }
    match geometry.geometry_type() {
        GeometryTypes::Point | GeometryTypes::LineString | GeometryTypes::LinearRing => {
            out.extend(xy_of(geometry)?);
        }
        GeometryTypes::Polygon => {
            out.extend(xy_of(&geometry.get_exterior_ring().map_err(text)?)?);
            for n in 0..geometry.get_num_interior_rings().map_err(text)? {
                out.extend(xy_of(
                    &geometry.get_interior_ring_n(n as u32).map_err(text)?,
                )?);
            }
        }
        _ => {
            for n in 0..geometry.get_num_geometries().map_err(text)? {
                collect_points(&geometry.get_geometry_n(n).map_err(text)?, out)?;
            }
        }
    }
    Ok(())
}

/// The smallest circle around `points` (Welzl's algorithm, move-to-front), drawn as PostGIS's
/// `ST_MinimumBoundingCircle` draws it, or `on_circle` as GEOS's buffer of the centre (the
/// vertices on the circle, from the east, clockwise); a single point (radius 0) is returned as a
/// point.
pub(super) fn circle(points: &[Xy], segments: u32, on_circle: bool) -> Result<Geometry, String> {
    let (center, radius) = smallest_circle(points);
    if radius == 0.0 {
        return Geometry::create_point(sequence(&[center])?).map_err(text);
    }
    let steps = 4 * segments;
    if on_circle {
        let mut ring_points: Vec<Xy> = (0..steps)
            .map(|i| {
                let angle = f64::from(i) * 2.0 * std::f64::consts::PI / f64::from(steps);
                [
                    center[0] + radius * angle.cos(),
                    center[1] - radius * angle.sin(),
                ]
            })
            .collect();
        ring_points.push(ring_points[0]);
        return Geometry::create_polygon(ring(&ring_points)?, Vec::new()).map_err(text);
    }
    let outer = radius / (std::f64::consts::PI / f64::from(steps)).cos();
    let mut ring_points: Vec<Xy> = (0..steps)
        .map(|i| {
            let angle = f64::from(i) * 2.0 * std::f64::consts::PI / f64::from(steps);
            [
                center[0] + outer * angle.sin(),
                center[1] + outer * angle.cos(),
            ]
        })
        .collect();
    ring_points.push(ring_points[0]);
    Geometry::create_polygon(ring(&ring_points)?, Vec::new()).map_err(text)
}

fn smallest_circle(points: &[Xy]) -> (Xy, f64) {
    let mut c = (points.first().copied().unwrap_or([0.0, 0.0]), 0.0);
    for i in 1..points.len() {
        if inside(c, points[i]) {
            continue;
        }
        c = (points[i], 0.0);
        for j in 0..i {
            if inside(c, points[j]) {
                continue;
            }
            c = diameter(points[i], points[j]);
            for k in 0..j {
                if !inside(c, points[k]) {
                    c = circumcircle(points[i], points[j], points[k])
                        .unwrap_or_else(|| widest(&[points[i], points[j], points[k]]));
                }
            }
        }
    }
    c
}

fn inside((center, radius): (Xy, f64), p: Xy) -> bool {
    (p[0] - center[0]).hypot(p[1] - center[1]) <= radius * (1.0 + 1e-12) + 1e-12
}

fn diameter(a: Xy, b: Xy) -> (Xy, f64) {
    let center = [(a[0] + b[0]) / 2.0, (a[1] + b[1]) / 2.0];
    (center, (a[0] - b[0]).hypot(a[1] - b[1]) / 2.0)
}

/// The circle of the pair farthest apart (for collinear points).
fn widest(points: &[Xy; 3]) -> (Xy, f64) {
    [(0, 1), (0, 2), (1, 2)]
        .map(|(i, j)| diameter(points[i], points[j]))
        .into_iter()
        .fold(
            (points[0], 0.0),
            |best, c| if c.1 > best.1 { c } else { best },
        )
}

fn circumcircle(a: Xy, b: Xy, c: Xy) -> Option<(Xy, f64)> {
    let (bx, by) = (b[0] - a[0], b[1] - a[1]);
    let (cx, cy) = (c[0] - a[0], c[1] - a[1]);
    let d = 2.0 * (bx * cy - by * cx);
    if d.abs() < f64::EPSILON * (bx.abs() + by.abs() + cx.abs() + cy.abs()).powi(2) {
        return None;
    }
    let (b2, c2) = (bx * bx + by * by, cx * cx + cy * cy);
    let ux = (cy * b2 - by * c2) / d;
    let uy = (bx * c2 - cx * b2) / d;
    Some(([a[0] + ux, a[1] + uy], ux.hypot(uy)))
}

/// The rectangle of least area around the convex hull `points` (rotating calipers: one side on
/// a hull edge); fewer than three points give the point or the line between the extremes.
pub(super) fn min_area_rectangle(points: &[Xy]) -> Result<Geometry, String> {
    match points {
        [] => return Geometry::create_empty_polygon().map_err(text),
        [p] => return Geometry::create_point(sequence(&[*p])?).map_err(text),
        [a, b] => return line_string(&[*a, *b]),
        _ => {}
    }
    let mut best: Option<(f64, [Xy; 4])> = None;
    for i in 0..points.len() {
        let (a, b) = (points[i], points[(i + 1) % points.len()]);
        let length = (b[0] - a[0]).hypot(b[1] - a[1]);
        if length == 0.0 {
            continue;
        }
        let u = [(b[0] - a[0]) / length, (b[1] - a[1]) / length];
        let v = [-u[1], u[0]];
        let (mut lo_u, mut hi_u, mut lo_v, mut hi_v) = (f64::MAX, f64::MIN, f64::MAX, f64::MIN);
        for p in points {
            let (du, dv) = (
                (p[0] - a[0]) * u[0] + (p[1] - a[1]) * u[1],
                (p[0] - a[0]) * v[0] + (p[1] - a[1]) * v[1],
            );
            lo_u = lo_u.min(du);
            hi_u = hi_u.max(du);
            lo_v = lo_v.min(dv);
            hi_v = hi_v.max(dv);
        }
        let area = (hi_u - lo_u) * (hi_v - lo_v);
        if best.is_none_or(|(least, _)| area < least) {
            let corner =
                |su: f64, sv: f64| [a[0] + su * u[0] + sv * v[0], a[1] + su * u[1] + sv * v[1]];
            best = Some((
                area,
                [
                    corner(lo_u, lo_v),
                    corner(hi_u, lo_v),
                    corner(hi_u, hi_v),
                    corner(lo_u, hi_v),
                ],
            ));
        }
    }
    let Some((_, corners)) = best else {
        return Geometry::create_point(sequence(&[points[0]])?).map_err(text);
    };
    let mut ring_points = corners.to_vec();
    ring_points.push(corners[0]);
    Geometry::create_polygon(ring(&ring_points)?, Vec::new()).map_err(text)
}
