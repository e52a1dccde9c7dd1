//! Concave hulls and alpha shapes as GEOS 3.12+ computes them (`ConcaveHull`, after JTS): the
//! Delaunay triangulation of the geometry's vertices, eroded from its border (and, with holes
//! allowed, from inside) one triangle at a time, largest first, while the triangle is larger
//! than the limit and removing it keeps the hull one polygon. "Larger" is the longest edge
//! (for a ratio of the edge lengths) or the circumradius (alpha shapes).
//!
//! PostGIS 3.3 links GEOS 3.11, whose concave hull is an older algorithm, so this kernel is
//! what the PostGIS engine runs. The order in which triangles are taken matters where the
//! erosion stops, so the queue is the same binary heap as GEOS's (`std::priority_queue` on
//! libstdc++), with sizes that change while triangles sit in it, as there.

use std::collections::HashMap;

use geos::{Geom, Geometry};

use super::NativeError;

type Point = (f64, f64);

/// What decides whether a triangle stays in the hull.
#[derive(Debug, Clone, Copy)]
pub enum HullLimit {
    /// A fraction (0..=1) of the range of Delaunay edge lengths: triangles whose edges are
    /// longer are taken off.
    EdgeRatio(f64),
    /// Triangles whose circumradius is at least this are taken off.
    Alpha(f64),
}

struct Tri {
    p: [Point; 3],
    /// The triangle across edge `i` (from `p[i]` to `p[i + 1]`).
    adj: [Option<usize>; 3],
    size: f64,
    area: f64,
    removed: bool,
}

fn distance(a: Point, b: Point) -> f64 {
    let (dx, dy) = (a.0 - b.0, a.1 - b.1);
    (dx * dx + dy * dy).sqrt()
}

fn area(a: Point, b: Point, c: Point) -> f64 {
    (((c.0 - a.0) * (b.1 - a.1) - (b.0 - a.0) * (c.1 - a.1)) / 2.0).abs()
}

fn next(i: usize) -> usize {
    (i + 1) % 3
}

fn prev(i: usize) -> usize {
    (i + 2) % 3
}

fn circumradius(a: Point, b: Point, c: Point) -> f64 {
    let tri_area = area(a, b, c);
    if tri_area == 0.0 {
        return f64::INFINITY;
    }
    distance(a, b) * distance(b, c) * distance(c, a) / (4.0 * tri_area)
}

struct Mesh {
    tris: Vec<Tri>,
    alpha: bool,
    max_size: f64,
}

impl Mesh {
    fn num_adjacent(&self, t: usize) -> usize {
        self.tris[t].adj.iter().flatten().count()
    }

    fn is_border(&self, t: usize) -> bool {
        self.tris[t].adj.iter().any(Option::is_none)
    }

    /// Whether every triangle around vertex `index` of `t` is there (the vertex is not on the
    /// border).
    fn is_interior_vertex(&self, t: usize, index: usize) -> bool {
        let (mut curr, mut curr_index) = (t, index);
        loop {
            let Some(adj) = self.tris[curr].adj[curr_index] else {
                return false;
            };
            let Some(adj_index) = self.tris[adj].adj.iter().position(|a| *a == Some(curr)) else {
                return false;
            };
            curr = adj;
            curr_index = next(adj_index);
            if curr == t {
                return true;
            }
        }
    }

    /// Whether removing the border triangle `t` (two neighbours) would cut the hull in two.
    fn is_connecting(&self, t: usize) -> bool {
        let has = |i: usize| self.tris[t].adj[i].is_some();
        let vertex = if has(0) && has(1) {
            1
        } else if has(1) && has(2) {
            2
        } else if has(2) && has(0) {
            0
        } else {
            return true;
        };
        !self.is_interior_vertex(t, vertex)
    }

    fn is_boundary_touch(&self, t: usize, index: usize) -> bool {
        let adj = &self.tris[t].adj;
        if adj[index].is_none() || adj[prev(index)].is_none() {
            return false;
        }
        !self.is_interior_vertex(t, index)
    }

    fn has_boundary_touch(&self, t: usize) -> bool {
        (0..3).any(|i| self.is_boundary_touch(t, i))
    }

    fn boundary_length(&self, t: usize) -> f64 {
        let tri = &self.tris[t];
        (0..3)
            .filter(|i| tri.adj[*i].is_none())
            .map(|i| distance(tri.p[i], tri.p[next(i)]))
            .sum()
    }

    fn circumradius(&self, t: usize) -> f64 {
        let p = self.tris[t].p;
        circumradius(p[2], p[1], p[0])
    }

    fn set_border_size(&mut self, t: usize) {
        self.tris[t].size = if self.alpha {
            self.circumradius(t)
        } else {
            self.boundary_length(t)
        };
    }

    fn is_in_hull(&self, t: usize) -> bool {
        self.tris[t].size < self.max_size
    }

    fn remove(&mut self, t: usize) -> [Option<usize>; 3] {
        let adj = self.tris[t].adj;
        for (i, a) in adj.iter().enumerate() {
            if let Some(a) = *a {
                if let Some(back) = self.tris[a].adj.iter().position(|x| *x == Some(t)) {
                    self.tris[a].adj[back] = None;
                }
                self.tris[t].adj[i] = None;
            }
        }
        self.tris[t].removed = true;
        adj
    }

    /// `a` before `b` in GEOS's queue order (`HullTriCompare`: size, then area).
    fn less(&self, a: usize, b: usize) -> bool {
        let (a, b) = (&self.tris[a], &self.tris[b]);
        if a.size == b.size {
            a.area < b.area
        } else {
            a.size < b.size
        }
    }

    fn add_border_tri(&mut self, t: Option<usize>, queue: &mut Heap) {
        let Some(t) = t else { return };
        if self.num_adjacent(t) != 2 {
            return;
        }
        self.set_border_size(t);
        queue.push(t, self);
    }

    fn hull_border(&mut self) {
        let mut queue = Heap::default();
        for t in 0..self.tris.len() {
            if !self.tris[t].removed {
                self.add_border_tri(Some(t), &mut queue);
            }
        }
        while let Some(t) = queue.pop(self) {
            if self.is_in_hull(t) {
                break;
            }
            if self.num_adjacent(t) == 2 && !self.is_connecting(t) {
                for a in self.remove(t) {
                    self.add_border_tri(a, &mut queue);
                }
            }
        }
    }

    fn hull_holes(&mut self) {
        let mut candidates: Vec<usize> = (0..self.tris.len())
            .filter(|t| !self.tris[*t].removed && self.tris[*t].size >= self.max_size)
            .filter(|t| !(self.is_border(*t) || self.has_boundary_touch(*t)))
            .collect();
        candidates.sort_by(|a, b| {
            if self.less(*a, *b) {
                std::cmp::Ordering::Less
            } else if self.less(*b, *a) {
                std::cmp::Ordering::Greater
            } else {
                std::cmp::Ordering::Equal
            }
        });
        for hole in candidates {
            if self.tris[hole].removed || self.is_border(hole) || self.has_boundary_touch(hole) {
                continue;
            }
            let mut queue = Heap::default();
            queue.push(hole, self);
            while let Some(t) = queue.pop(self) {
                if t != hole && self.is_in_hull(t) {
                    break;
                }
                let removable = self.num_adjacent(t) == 2 && !self.has_boundary_touch(t);
                if t == hole || removable {
                    for a in self.remove(t) {
                        self.add_border_tri(a, &mut queue);
                    }
                }
            }
        }
    }
}

/// `std::priority_queue` as libstdc++ implements it (`push_heap`, `pop_heap`), comparing
/// triangles by their current sizes.
#[derive(Default)]
struct Heap {
    items: Vec<usize>,
}

impl Heap {
    fn push(&mut self, t: usize, mesh: &Mesh) {
        self.items.push(t);
        let hole = self.items.len() - 1;
        self.sift_up(hole, 0, t, mesh);
    }

    fn sift_up(&mut self, mut hole: usize, top: usize, value: usize, mesh: &Mesh) {
        while hole > top {
            let parent = (hole - 1) / 2;
            if !mesh.less(self.items[parent], value) {
                break;
            }
            self.items[hole] = self.items[parent];
            hole = parent;
        }
        self.items[hole] = value;
    }

    fn pop(&mut self, mesh: &Mesh) -> Option<usize> {
        let top = *self.items.first()?;
        let last = self.items.len() - 1;
        if last > 0 {
            let value = self.items[last];
            self.items[last] = top;
            self.adjust(last, value, mesh);
        }
        self.items.pop();
        Some(top)
    }

    /// libstdc++'s `__adjust_heap` from the root over the first `len` items.
    fn adjust(&mut self, len: usize, value: usize, mesh: &Mesh) {
        let mut hole = 0;
        let mut child = 0;
        while child < len.saturating_sub(1) / 2 {
            child = 2 * (child + 1);
            if mesh.less(self.items[child], self.items[child - 1]) {
                child -= 1;
            }
            self.items[hole] = self.items[child];
            hole = child;
        }
        if len.is_multiple_of(2) && len >= 2 && child == (len - 2) / 2 {
            child = 2 * (child + 1);
            self.items[hole] = self.items[child - 1];
            hole = child - 1;
        }
        self.sift_up(hole, 0, value, mesh);
    }
}

fn geos_err(e: geos::Error) -> NativeError {
    NativeError::geos(e)
}

/// The triangles of the Delaunay triangulation of `g`'s vertices, clockwise, with their
/// neighbours. GEOS 3.11's triangulator (the one linked) may leave out slivers along the
/// convex hull, where its boundary bends inwards (GEOS issue 953, fixed in 3.12.1); those
/// pockets are filled with their Delaunay triangles, so the triangulation is the one GEOS
/// 3.12+ makes (the order of the triangles does not change the hull).
fn triangulate(g: &Geometry) -> Result<Vec<Tri>, NativeError> {
    let mesh = g.delaunay_triangulation(0.0, false).map_err(geos_err)?;
    let mut tris = Vec::new();
    for n in 0..mesh.get_num_geometries().map_err(geos_err)? {
        let ring = mesh
            .get_geometry_n(n)
            .and_then(|t| t.get_exterior_ring().and_then(|r| r.get_coord_seq()))
            .map_err(geos_err)?;
        let point = |i: usize| -> Result<Point, NativeError> {
            Ok((
                ring.get_x(i).map_err(geos_err)?,
                ring.get_y(i).map_err(geos_err)?,
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

fn bits(p: Point) -> (u64, u64) {
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

/// The vertices of `g`'s convex hull.
fn hull_vertices(g: &Geometry) -> Result<Vec<(u64, u64)>, NativeError> {
    let hull = g.convex_hull().map_err(geos_err)?;
    let coords = hull
        .get_coord_seq()
        .or_else(|_| hull.get_exterior_ring().and_then(|r| r.get_coord_seq()));
    let Ok(coords) = coords else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    for i in 0..coords.size().map_err(geos_err)? {
        out.push(bits((
            coords.get_x(i).map_err(geos_err)?,
            coords.get_y(i).map_err(geos_err)?,
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
                after.insert(bits(tri.p[i]), tri.p[next(i)]);
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
            if chain.len() > 2 && chain.iter().any(|q| cross(a, b, *q) != 0.0) {
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
    if cross(a, b, chain[m]) != 0.0 {
        tris.push(new_tri(a, chain[m], b));
    }
    fill(chain, i, m, tris);
    fill(chain, m, j, tris);
}

/// The longest-edge limit for a ratio of the Delaunay edge lengths (GEOS's
/// `computeTargetEdgeLength`).
fn target_edge_length(tris: &[Tri], ratio: f64) -> f64 {
    if ratio == 0.0 {
        return 0.0;
    }
    let (mut max, mut min) = (-1.0_f64, -1.0_f64);
    for tri in tris {
        for i in 0..3 {
            let len = distance(tri.p[i], tri.p[next(i)]);
            if len > max {
                max = len;
            }
            if min < 0.0 || len < min {
                min = len;
            }
        }
    }
    if ratio == 1.0 {
        return 2.0 * max;
    }
    ratio * (max - min) + min
}

/// The concave hull (or alpha shape) of `g`'s vertices, 2-D: an empty polygon for an empty
/// geometry, the convex hull where there is no triangle.
pub fn concave_hull(g: &Geometry, limit: HullLimit, holes: bool) -> Result<Geometry, NativeError> {
    if g.is_empty().map_err(geos_err)? {
        return Geometry::create_empty_polygon().map_err(geos_err);
    }
    let mut tris = triangulate(g)?;
    if tris.is_empty() {
        return g.convex_hull().map_err(geos_err);
    }
    let (alpha, max_size) = match limit {
        HullLimit::EdgeRatio(ratio) => {
            for tri in &mut tris {
                let [a, b, c] = tri.p;
                tri.size = distance(a, b).max(distance(b, c)).max(distance(c, a));
            }
            let target = target_edge_length(&tris, ratio);
            (false, target)
        }
        HullLimit::Alpha(alpha) => {
            for tri in &mut tris {
                tri.size = circumradius(tri.p[2], tri.p[1], tri.p[0]);
            }
            (true, alpha)
        }
    };
    let mut mesh = Mesh {
        tris,
        alpha,
        max_size,
    };
    mesh.hull_border();
    if holes {
        mesh.hull_holes();
    }
    rings_polygon(&mesh.tris)
}

/// The polygon the kept triangles make, from their boundary edges: the erosion keeps them one
/// polygon whose rings do not touch, so the edges chain into rings, the largest the shell
/// (GEOS traces the shell alike, or unions the triangles when holes are allowed).
fn rings_polygon(tris: &[Tri]) -> Result<Geometry, NativeError> {
    let mut after: HashMap<(u64, u64), Point> = HashMap::new();
    for tri in tris.iter().filter(|t| !t.removed) {
        for i in 0..3 {
            if tri.adj[i].is_none() {
                after.insert(bits(tri.p[i]), tri.p[next(i)]);
            }
        }
    }
    let mut rings: Vec<Vec<Point>> = Vec::new();
    let mut starts: Vec<(u64, u64)> = after.keys().copied().collect();
    starts.sort_unstable();
    for start in starts {
        let Some(mut at) = after.remove(&start) else {
            continue;
        };
        let first = (f64::from_bits(start.0), f64::from_bits(start.1));
        let mut ring = vec![first, at];
        while bits(at) != start {
            let Some(p) = after.remove(&bits(at)) else {
                return Err(NativeError::Input(
                    "the hull's triangles do not close into rings".into(),
                ));
            };
            ring.push(p);
            at = p;
        }
        rings.push(ring);
    }
    let ring_area = |r: &[Point]| {
        r.windows(2)
            .map(|w| w[0].0 * w[1].1 - w[1].0 * w[0].1)
            .sum::<f64>()
            .abs()
    };
    rings.sort_by(|a, b| ring_area(b).total_cmp(&ring_area(a)));
    let text = |r: &[Point]| {
        let points: Vec<String> = r.iter().map(|(x, y)| format!("{x} {y}")).collect();
        format!("({})", points.join(", "))
    };
    let body: Vec<String> = rings.iter().map(|r| text(r)).collect();
    Geometry::new_from_wkt(&format!("POLYGON ({})", body.join(", "))).map_err(geos_err)
}

/// The Delaunay triangulation of `g`'s vertices as GEOS 3.12+ makes it (see [`triangulate`]):
/// a collection of its triangles, or with `edges` of its edges (each once).
pub fn delaunay(g: &Geometry, edges: bool) -> Result<Geometry, NativeError> {
    let tris = triangulate(g)?;
    let mut parts = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for tri in &tris {
        let [a, b, c] = tri.p;
        if !edges {
            parts.push(
                Geometry::new_from_wkt(&format!(
                    "POLYGON (({} {}, {} {}, {} {}, {} {}))",
                    a.0, a.1, b.0, b.1, c.0, c.1, a.0, a.1
                ))
                .map_err(geos_err)?,
            );
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
                    Geometry::new_from_wkt(&format!(
                        "LINESTRING ({} {}, {} {})",
                        p.0, p.1, q.0, q.1
                    ))
                    .map_err(geos_err)?,
                );
            }
        }
    }
    Geometry::create_geometry_collection(parts).map_err(geos_err)
}
