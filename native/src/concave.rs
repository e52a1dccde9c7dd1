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
use super::delaunay::{Point, Tri, area, bits, next, triangulate};

/// What decides whether a triangle stays in the hull.
#[derive(Debug, Clone, Copy)]
pub enum HullLimit {
    /// A fraction (0..=1) of the range of Delaunay edge lengths: triangles whose edges are
    /// longer are taken off.
    EdgeRatio(f64),
    /// Triangles whose circumradius is at least this are taken off.
    Alpha(f64),
}

fn distance(a: Point, b: Point) -> f64 {
    let (dx, dy) = (a.0 - b.0, a.1 - b.1);
    (dx * dx + dy * dy).sqrt()
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
    if g.is_empty().map_err(NativeError::geos)? {
        return Geometry::create_empty_polygon().map_err(NativeError::geos);
    }
    let mut tris = triangulate(g)?;
    if tris.is_empty() {
        return g.convex_hull().map_err(NativeError::geos);
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

/// The union of the kept triangles (where rings touch, so that tracing cannot tell them
/// apart).
fn union_of(tris: &[Tri]) -> Result<Geometry, NativeError> {
    let kept = tris
        .iter()
        .filter(|t| !t.removed)
        .map(Tri::polygon)
        .collect::<Result<Vec<_>, _>>()?;
    Geometry::create_geometry_collection(kept)
        .and_then(|c| c.unary_union())
        .map_err(NativeError::geos)
}

/// The polygon the kept triangles make, from their boundary edges: the erosion keeps them one
/// polygon whose rings do not touch, so the edges chain into rings, the largest the shell
/// (GEOS traces the shell alike, or unions the triangles when holes are allowed); where a
/// vertex is on the boundary twice, their union.
fn rings_polygon(tris: &[Tri]) -> Result<Geometry, NativeError> {
    let mut after: HashMap<(u64, u64), Point> = HashMap::new();
    for tri in tris.iter().filter(|t| !t.removed) {
        for i in 0..3 {
            if tri.adj[i].is_none() && after.insert(bits(tri.p[i]), tri.p[next(i)]).is_some() {
                return union_of(tris);
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
                return union_of(tris);
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
    let mut rings = rings.iter().map(|r| {
        let points: Vec<[f64; 2]> = r.iter().map(|(x, y)| [*x, *y]).collect();
        super::geos_base::ring(&points).map_err(NativeError::Geos)
    });
    let shell = rings
        .next()
        .ok_or_else(|| NativeError::Geos("a hull without a ring".into()))??;
    let holes = rings.collect::<Result<Vec<_>, _>>()?;
    Geometry::create_polygon(shell, holes).map_err(NativeError::geos)
}
