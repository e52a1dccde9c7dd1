//! Polygons prepared for point queries: flat ring storage, a grid of part envelopes for points
//! and an R-tree for distances, bands over the edges of long rings, exact point location
//! (inside, on the boundary, outside) and point-to-polygon distance.

use geo::MultiPolygon;
use geo::kernels::{Kernel, Orientation, RobustKernel};
use rstar::primitives::{GeomWithData, Rectangle};
use rstar::{AABB, RTree};

use super::ring_bands::RingBands;

/// Where a point lies relative to a polygon (boundary as OGC defines it: rings and holes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Location {
    Outside,
    Boundary,
    Inside,
}

type Entry = GeomWithData<Rectangle<[f64; 2]>, u32>;

/// Every polygon of a layer, flattened: `parts[p]` is a polygon (its rings in `rings`, the
/// exterior first) of row `part_row[p]`.
pub struct PreparedPolygons {
    coords: Vec<geo::Coord<f64>>,
    rings: Vec<(u32, u32)>,
    /// For each ring, its edges by horizontal band (long rings only).
    bands: Vec<Option<RingBands>>,
    parts: Vec<(u32, u32)>,
    part_row: Vec<u32>,
    tree: RTree<Entry>,
    grid: super::grid::EnvelopeGrid,
}

impl PreparedPolygons {
    /// Prepares `shapes` (`None`: a NULL or empty geometry, never matched); row numbers are
    /// the positions in `shapes`.
    pub fn new(shapes: Vec<Option<MultiPolygon<f64>>>) -> Self {
        let mut coords = Vec::new();
        let mut rings = Vec::new();
        let mut parts = Vec::new();
        let mut part_row = Vec::new();
        let mut entries = Vec::new();
        let mut envelopes = Vec::new();
        for (row, shape) in shapes.into_iter().enumerate() {
            for polygon in shape.into_iter().flat_map(|m| m.0) {
                if polygon.exterior().0.len() < 4 {
                    continue;
                }
                let first_ring = rings.len() as u32;
                let (mut lo, mut hi) = ([f64::INFINITY; 2], [f64::NEG_INFINITY; 2]);
                for ring in std::iter::once(polygon.exterior()).chain(polygon.interiors()) {
                    let start = coords.len() as u32;
                    for c in &ring.0 {
                        lo = [lo[0].min(c.x), lo[1].min(c.y)];
                        hi = [hi[0].max(c.x), hi[1].max(c.y)];
                        coords.push(*c);
                    }
                    rings.push((start, coords.len() as u32));
                }
                let part = parts.len() as u32;
                parts.push((first_ring, rings.len() as u32));
                part_row.push(row as u32);
                if lo[0].is_finite() && hi[0].is_finite() && lo[1].is_finite() {
                    entries.push(GeomWithData::new(Rectangle::from_corners(lo, hi), part));
                }
                envelopes.push([lo[0], lo[1], hi[0], hi[1]]);
            }
        }
        // The bands of each ring, on every core (the longest part of preparing real polygons).
        let bands = {
            use rayon::prelude::*;
            rings
                .par_iter()
                .map(|&(start, end)| RingBands::new(&coords[start as usize..end as usize]))
                .collect()
        };
        Self {
            coords,
            rings,
            bands,
            parts,
            part_row,
            tree: RTree::bulk_load(entries),
            grid: super::grid::EnvelopeGrid::new(envelopes),
        }
    }

    /// The parts whose envelope holds `(x, y)` (from the grid: no search, no allocation).
    pub fn candidates_at(&self, x: f64, y: f64) -> impl Iterator<Item = u32> + '_ {
        self.grid.at(x, y)
    }

    /// The row of a part.
    pub fn row(&self, part: u32) -> u32 {
        self.part_row[part as usize]
    }

    /// The parts whose envelope holds `(x, y)`, then within `d` of it.
    pub fn candidates(&self, x: f64, y: f64, d: f64) -> impl Iterator<Item = u32> + '_ {
        let envelope = AABB::from_corners([x - d, y - d], [x + d, y + d]);
        self.tree
            .locate_in_envelope_intersecting(&envelope)
            .map(|e| e.data)
    }

    /// Parts in increasing order of their envelope's distance to `(x, y)`, with the squared
    /// distance to the envelope (a lower bound of the distance to the part).
    pub fn by_envelope_distance(&self, x: f64, y: f64) -> impl Iterator<Item = (u32, f64)> + '_ {
        self.tree
            .nearest_neighbor_iter_with_distance_2(&[x, y])
            .map(|(e, d2)| (e.data, d2))
    }

    fn ring(&self, ring: u32) -> &[geo::Coord<f64>] {
        let (start, end) = self.rings[ring as usize];
        &self.coords[start as usize..end as usize]
    }

    /// The location of `(x, y)` relative to ring `ring`, through its bands when it has them.
    fn locate_in(&self, ring: u32, x: f64, y: f64) -> Location {
        let coords = self.ring(ring);
        match &self.bands[ring as usize] {
            Some(bands) => {
                locate_by_edges(coords, bands.edges_at(y).iter().map(|&e| e as usize), x, y)
            }
            None => locate_in_ring(coords, x, y),
        }
    }

    /// The exact location of `(x, y)` relative to part `part` (robust orientation tests, so a
    /// point on an edge or a vertex is on the boundary, as in GEOS).
    pub fn locate(&self, part: u32, x: f64, y: f64) -> Location {
        let (first, end) = self.parts[part as usize];
        match self.locate_in(first, x, y) {
            Location::Inside => {}
            other => return other,
        }
        for hole in first + 1..end {
            match self.locate_in(hole, x, y) {
                Location::Outside => {}
                Location::Boundary => return Location::Boundary,
                Location::Inside => return Location::Outside,
            }
        }
        Location::Inside
    }

    /// The distance from `(x, y)` to part `part` (0 inside or on the boundary).
    pub fn distance(&self, part: u32, x: f64, y: f64) -> f64 {
        if self.locate(part, x, y) != Location::Outside {
            return 0.0;
        }
        let (first, end) = self.parts[part as usize];
        let mut best = f64::INFINITY;
        for ring in first..end {
            for edge in self.ring(ring).windows(2) {
                best = best.min(segment_distance_2(x, y, edge[0], edge[1]));
            }
        }
        best.sqrt()
    }
}

/// Squared distance from a point to a segment, computed as GEOS does (projection factor).
fn segment_distance_2(x: f64, y: f64, a: geo::Coord<f64>, b: geo::Coord<f64>) -> f64 {
    let (dx, dy) = (b.x - a.x, b.y - a.y);
    let len2 = dx * dx + dy * dy;
    let r = if len2 == 0.0 {
        0.0
    } else {
        (((x - a.x) * dx + (y - a.y) * dy) / len2).clamp(0.0, 1.0)
    };
    let (px, py) = (a.x + r * dx - x, a.y + r * dy - y);
    px * px + py * py
}

/// Winding-number location of a point in a closed ring, with exact boundary detection.
pub fn locate_in_ring(ring: &[geo::Coord<f64>], x: f64, y: f64) -> Location {
    locate_by_edges(ring, 0..ring.len().saturating_sub(1), x, y)
}

/// [`locate_in_ring`] counting only the edges starting at `edges` (all those whose y-range
/// holds `y`, and any others: they add nothing).
fn locate_by_edges(
    ring: &[geo::Coord<f64>],
    edges: impl Iterator<Item = usize>,
    x: f64,
    y: f64,
) -> Location {
    let p = geo::Coord { x, y };
    let mut winding = 0i32;
    for e in edges {
        let (a, b) = (ring[e], ring[e + 1]);
        if a == p {
            return Location::Boundary;
        }
        if a.y <= y {
            if b.y > y {
                match RobustKernel::orient2d(a, b, p) {
                    Orientation::CounterClockwise => winding += 1,
                    Orientation::Collinear => return Location::Boundary,
                    Orientation::Clockwise => {}
                }
            } else if a.y == y && b.y == y && (a.x.min(b.x)..=a.x.max(b.x)).contains(&x) {
                return Location::Boundary;
            }
        } else if b.y <= y {
            match RobustKernel::orient2d(a, b, p) {
                Orientation::Clockwise => winding -= 1,
                Orientation::Collinear => return Location::Boundary,
                Orientation::CounterClockwise => {}
            }
        }
    }
    if winding != 0 {
        Location::Inside
    } else {
        Location::Outside
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use geo::{LineString, Polygon};

    fn square_with_hole() -> PreparedPolygons {
        let outer = LineString::from(vec![
            (0.0, 0.0),
            (4.0, 0.0),
            (4.0, 4.0),
            (0.0, 4.0),
            (0.0, 0.0),
        ]);
        let hole = LineString::from(vec![
            (1.0, 1.0),
            (1.0, 2.0),
            (2.0, 2.0),
            (2.0, 1.0),
            (1.0, 1.0),
        ]);
        PreparedPolygons::new(vec![
            Some(MultiPolygon(vec![Polygon::new(outer, vec![hole])])),
            None,
        ])
    }

    #[test]
    fn locates_inside_outside_boundary_and_holes() {
        let p = square_with_hole();
        assert_eq!(p.locate(0, 3.0, 3.0), Location::Inside);
        assert_eq!(p.locate(0, 1.5, 1.5), Location::Outside);
        assert_eq!(p.locate(0, 4.0, 2.0), Location::Boundary);
        assert_eq!(p.locate(0, 2.0, 4.0), Location::Boundary);
        assert_eq!(p.locate(0, 0.0, 0.0), Location::Boundary);
        assert_eq!(p.locate(0, 1.0, 1.5), Location::Boundary);
        assert_eq!(p.locate(0, 5.0, 0.0), Location::Outside);
        assert_eq!(p.distance(0, 6.0, 2.0), 2.0);
        assert_eq!(p.distance(0, 1.5, 1.5), 0.5);
        assert_eq!(p.candidates(3.0, 3.0, 0.0).count(), 1);
        assert_eq!(p.candidates_at(3.0, 3.0).count(), 1);
        assert_eq!(p.candidates_at(4.0, 4.0).count(), 1);
        assert_eq!(p.candidates_at(4.5, 4.0).count(), 0);
    }

    proptest::proptest! {
        /// Long rings (banded) locate every point as a whole-ring scan does: vertices, points
        /// on edges, and points on a grid of the same coordinates (so many share a vertex's y).
        #[test]
        fn banded_rings_locate_as_a_whole_scan(
            steps in proptest::collection::vec((-3i32..=3, -3i32..=3), 40..200),
            probes in proptest::collection::vec((-40i32..=40, -40i32..=40), 1..200),
        ) {
            let mut at = (0i32, 0i32);
            let mut coords = vec![(0.0, 0.0)];
            for (dx, dy) in steps {
                at = (at.0 + dx, at.1 + dy);
                coords.push((f64::from(at.0), f64::from(at.1)));
            }
            coords.push((0.0, 0.0));
            let ring = LineString::from(coords.clone());
            let prepared = PreparedPolygons::new(vec![Some(MultiPolygon(vec![Polygon::new(ring.clone(), vec![])]))]);
            proptest::prop_assert!(prepared.bands[0].is_some());
            let edge_midpoints = coords.windows(2).map(|w| ((w[0].0 + w[1].0) / 2.0, (w[0].1 + w[1].1) / 2.0));
            let grid = probes.iter().map(|&(x, y)| (f64::from(x) / 2.0, f64::from(y) / 2.0));
            for (x, y) in coords.iter().copied().chain(edge_midpoints).chain(grid) {
                proptest::prop_assert_eq!(
                    prepared.locate(0, x, y),
                    locate_in_ring(&ring.0, x, y),
                    "at ({}, {})", x, y
                );
            }
        }
    }
}
