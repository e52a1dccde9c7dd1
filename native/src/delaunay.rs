//! The Delaunay triangulation of a geometry's vertices as GEOS 3.12+ makes it, from the GEOS
//! 3.11 the native backend links: its triangles completed with the slivers GEOS 3.11 misses
//! along the convex hull (GEOS issue 953), as the concave hull's triangles ([`Tri`],
//! clockwise, with their neighbours) or as a geometry.

use std::collections::HashMap;

use geos::{Geom, Geometry};

use super::NativeError;

pub(super) type Point = (f64, f64);

pub(super) struct Tri {
    pub(super) p: [Point; 3],
    /// The triangle across edge `i` (from `p[i]` to `p[i + 1]`).
    pub(super) adj: [Option<usize>; 3],
    pub(super) size: f64,
    pub(super) area: f64,
    pub(super) removed: bool,
}

impl Tri {
    /// The triangle as a polygon.
    pub(super) fn polygon(&self) -> Result<Geometry, NativeError> {
        let [a, b, c] = self.p;
        super::geos_base::polygon(&[[a.0, a.1], [b.0, b.1], [c.0, c.1], [a.0, a.1]])
            .map_err(NativeError::Geos)
    }
}

pub(super) fn area(a: Point, b: Point, c: Point) -> f64 {
    (((c.0 - a.0) * (b.1 - a.1) - (b.0 - a.0) * (c.1 - a.1)) / 2.0).abs()
}

pub(super) fn next(i: usize) -> usize {
    (i + 1) % 3
}

/// The triangles of the Delaunay triangulation of `g`'s vertices, clockwise, with their
/// neighbours. GEOS 3.11's triangulator (the one linked) may leave out slivers along the
/// convex hull, where its boundary bends inwards (GEOS issue 953, fixed in 3.12.1); those
/// pockets are filled with their Delaunay triangles, so the triangulation is the one GEOS
/// 3.12+ makes (the order of the triangles does not change the hull).
pub(super) fn triangulate(g: &Geometry) -> Result<Vec<Tri>, NativeError> {
    let mesh = g
        .delaunay_triangulation(0.0, false)
        .map_err(NativeError::geos)?;
    let mut tris = Vec::new();
    for n in 0..mesh.get_num_geometries().map_err(NativeError::geos)? {
        let ring = mesh
            .get_geometry_n(n)
            .and_then(|t| t.get_exterior_ring().and_then(|r| r.get_coord_seq()))
            .map_err(NativeError::geos)?;
        let point = |i: usize| -> Result<Point, NativeError> {
            Ok((
                ring.get_x(i).map_err(NativeError::geos)?,
                ring.get_y(i).map_err(NativeError::geos)?,
            ))
        };
        tris.push(new_tri(point(0)?, point(1)?, point(2)?));
    }
    link(&mut tris);
    if !tris.is_empty() {
        let hull = hull_vertices(g)?;
        for pocket in pockets(&tris, &hull) {
            fill(&pocket, 0, pocket.len() - 1, &mut tris);
        }
        link(&mut tris);
    }
    Ok(tris)
}

fn cross(o: Point, a: Point, b: Point) -> f64 {
    (a.0 - o.0) * (b.1 - o.1) - (a.1 - o.1) * (b.0 - o.0)
}

/// A triangle, clockwise as GEOS's `HullTri`s are.
fn new_tri(p0: Point, p1: Point, p2: Point) -> Tri {
    let p = if cross(p0, p1, p2) > 0.0 {
        [p0, p2, p1]
    } else {
        [p0, p1, p2]
    };
    Tri {
        p,
        adj: [None; 3],
        size: 0.0,
        area: area(p[0], p[1], p[2]),
        removed: false,
    }
}

pub(super) fn bits(p: Point) -> (u64, u64) {
    (p.0.to_bits(), p.1.to_bits())
}

/// Sets every triangle's neighbours across its edges.
fn link(tris: &mut [Tri]) {
    let key = |a: Point, b: Point| {
        let (a, b) = (bits(a), bits(b));
        if a <= b { (a, b) } else { (b, a) }
    };
    let mut edges: HashMap<_, (usize, usize)> = HashMap::new();
    for t in 0..tris.len() {
        tris[t].adj = [None; 3];
        for i in 0..3 {
            let k = key(tris[t].p[i], tris[t].p[next(i)]);
            if let Some((other, j)) = edges.remove(&k) {
                tris[t].adj[i] = Some(other);
                tris[other].adj[j] = Some(t);
            } else {
                edges.insert(k, (t, i));
            }
        }
    }
}

/// The vertices of the convex hull of all `g`'s vertices, the region the triangulation covers.
/// GEOS's hull of a polygon reads its shell only, which leaves out the vertices of a hole
/// crossing an invalid polygon's shell; the hull of a collection holding `g` reads them all.
fn hull_vertices(g: &Geometry) -> Result<Vec<(u64, u64)>, NativeError> {
    let hull = Geometry::create_geometry_collection(vec![Geom::clone(g)])
        .and_then(|all| all.convex_hull())
        .map_err(NativeError::geos)?;
    let coords = hull
        .get_coord_seq()
        .or_else(|_| hull.get_exterior_ring().and_then(|r| r.get_coord_seq()));
    let Ok(coords) = coords else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    for i in 0..coords.size().map_err(NativeError::geos)? {
        out.push(bits((
            coords.get_x(i).map_err(NativeError::geos)?,
            coords.get_y(i).map_err(NativeError::geos)?,
        )));
    }
    Ok(out)
}

/// The stretches of the triangulation's boundary between two hull vertices that pass through
/// other vertices off the hull edge: each a chain from one hull vertex to the next.
fn pockets(tris: &[Tri], hull: &[(u64, u64)]) -> Vec<Vec<Point>> {
    let mut after: HashMap<(u64, u64), Point> = HashMap::new();
    let mut start = None;
    for tri in tris {
        for i in 0..3 {
            if tri.adj[i].is_none() {
                // A vertex on the boundary twice: the chain is ambiguous, fill nothing.
                if after.insert(bits(tri.p[i]), tri.p[next(i)]).is_some() {
                    return Vec::new();
                }
                start.get_or_insert(tri.p[i]);
            }
        }
    }
    let is_hull = |p: Point| hull.contains(&bits(p));
    let Some(mut first) = start else {
        return Vec::new();
    };
    // Walk from a hull vertex, so that every chain starts at one.
    for _ in 0..after.len() {
        if is_hull(first) {
            break;
        }
        match after.get(&bits(first)) {
            Some(p) => first = *p,
            None => return Vec::new(),
        }
    }
    let mut out = Vec::new();
    let mut chain = vec![first];
    let mut at = first;
    for _ in 0..after.len() {
        let Some(p) = after.get(&bits(at)).copied() else {
            return Vec::new();
        };
        chain.push(p);
        if is_hull(p) {
            let (a, b) = (chain[0], p);
            // The boundary runs clockwise: a pocket's vertices lie right of the hull edge.
            let inner = &chain[1..chain.len() - 1];
            if !inner.is_empty()
                && inner.iter().all(|q| cross(a, b, *q) <= 0.0)
                && inner.iter().any(|q| cross(a, b, *q) < 0.0)
            {
                out.push(std::mem::take(&mut chain));
            }
            chain = vec![p];
        }
        at = p;
        if bits(at) == bits(first) {
            break;
        }
    }
    out
}

/// The Delaunay triangles of the pocket `chain[i..=j]` closed by the edge from `chain[j]` to
/// `chain[i]`: the vertex seeing that edge at the widest angle makes a triangle with it (its
/// circumcircle holds no other vertex), and each side left is filled the same way.
fn fill(chain: &[Point], i: usize, j: usize, tris: &mut Vec<Tri>) {
    if j <= i + 1 {
        return;
    }
    let (a, b) = (chain[i], chain[j]);
    let angle = |c: Point| {
        let (u, v) = ((a.0 - c.0, a.1 - c.1), (b.0 - c.0, b.1 - c.1));
        (u.0 * v.1 - u.1 * v.0).abs().atan2(u.0 * v.0 + u.1 * v.1)
    };
    let Some(m) = (i + 1..j).max_by(|x, y| angle(chain[*x]).total_cmp(&angle(chain[*y]))) else {
        return;
    };
    if cross(a, b, chain[m]) < 0.0 {
        tris.push(new_tri(a, chain[m], b));
    }
    fill(chain, i, m, tris);
    fill(chain, m, j, tris);
}

/// The Delaunay triangulation of `g`'s vertices as GEOS 3.12+ makes it (see [`triangulate`]):
/// a collection of its triangles, or with `edges` of its edges (each once).
pub fn delaunay(g: &Geometry, edges: bool) -> Result<Geometry, NativeError> {
    let tris = triangulate(g)?;
    let mut parts = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for tri in &tris {
        if !edges {
            parts.push(tri.polygon()?);
            continue;
        }
        for i in 0..3 {
            let (p, q) = (tri.p[i], tri.p[next(i)]);
            let key = if bits(p) <= bits(q) {
                (bits(p), bits(q))
            } else {
                (bits(q), bits(p))
            };
            if seen.insert(key) {
                parts.push(
                    super::geos_base::line_string(&[[p.0, p.1], [q.0, q.1]])
                        .map_err(NativeError::Geos)?,
                );
            }
        }
    }
    Geometry::create_geometry_collection(parts).map_err(NativeError::geos)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::concave::{HullLimit, concave_hull};

    /// An invalid polygon whose hole crosses its shell and reaches past it: the convex hull of
    /// all the vertices is the hole's (0 0, 100 0) with the shell's (50 -30), and the hole's
    /// edge along y = 0 bends inwards by 0.1 over 100, where GEOS 3.11 leaves slivers out.
    const HOLE_PAST_SHELL: &str = "POLYGON ((50 -30, 60 -5, 40 -5, 50 -30), \
        (0 0, 25 -0.07071067811865475, 50 -0.1, 75 -0.07071067811865475, 100 0, 50 -10, 0 0))";

    fn circumcircle(p: [Point; 3]) -> (Point, f64) {
        let [a, b, c] = p;
        let d = 2.0 * (a.0 * (b.1 - c.1) + b.0 * (c.1 - a.1) + c.0 * (a.1 - b.1));
        let sq = |q: Point| q.0 * q.0 + q.1 * q.1;
        let x = (sq(a) * (b.1 - c.1) + sq(b) * (c.1 - a.1) + sq(c) * (a.1 - b.1)) / d;
        let y = (sq(a) * (c.0 - b.0) + sq(b) * (a.0 - c.0) + sq(c) * (b.0 - a.0)) / d;
        ((x, y), ((a.0 - x).powi(2) + (a.1 - y).powi(2)).sqrt())
    }

    #[test]
    fn the_triangulation_covers_the_hull_of_every_vertex_holes_too() {
        let g = Geometry::new_from_wkt(HOLE_PAST_SHELL).unwrap();
        let tris = triangulate(&g).unwrap();
        let vertices: Vec<Point> = {
            let mut all: Vec<Point> = tris.iter().flat_map(|t| t.p).collect();
            all.sort_by_key(|a| bits(*a));
            all.dedup_by(|a, b| bits(*a) == bits(*b));
            all
        };
        assert_eq!(vertices.len(), 9, "every vertex is in a triangle");
        // 9 vertices, 3 of them on the hull: 2 * 9 - 2 - 3 triangles.
        assert_eq!(tris.len(), 13);
        let hull_area = 0.5 * 100.0 * 30.0;
        let covered: f64 = tris.iter().map(|t| t.area).sum();
        assert!((covered - hull_area).abs() <= 1e-9 * hull_area, "{covered}");
        for tri in &tris {
            let (centre, radius) = circumcircle(tri.p);
            for v in &vertices {
                let d = ((v.0 - centre.0).powi(2) + (v.1 - centre.1).powi(2)).sqrt();
                assert!(d >= radius * (1.0 - 1e-9), "{v:?} inside {:?}", tri.p);
            }
        }
    }

    #[test]
    fn an_alpha_above_every_circumradius_gives_the_hull_of_every_vertex() {
        let g = Geometry::new_from_wkt(HOLE_PAST_SHELL).unwrap();
        let shape = concave_hull(&g, HullLimit::Alpha(1e12), true).unwrap();
        let hull_area = 0.5 * 100.0 * 30.0;
        let area = shape.area().unwrap();
        assert!((area - hull_area).abs() <= 1e-9 * hull_area, "{area}");
        assert!(shape.is_valid());
    }
}
