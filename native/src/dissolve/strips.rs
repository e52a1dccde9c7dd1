//! The union of polygons on an integer grid, in vertical strips unioned on every core.
//!
//! Every vertex is put on one integer grid fitted to the layer's extent (i_overlay's own
//! scale: 2^29 units over the larger half-extent, rounded to a power of two). The plane is cut by vertical lines at
//! x-quantiles of the vertices into strips; every ring segment crossing a cut line is split
//! there first, at a point computed once from the segment, so both strips see the same point.
//! Each strip unions its rings clipped to the strip (one i_overlay sweep, positive fill rule),
//! in parallel. The strips' unions meet only along the cut lines: the pieces touching a cut
//! line are unioned once more, by their outer rings and the holes that touch a cut line, and the
//! other holes (most of them: the gaps between neighbours that are not a coverage) go back to
//! the merged shape that holds their piece.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use geo::{Coord, LineString, MultiPolygon, Polygon};
use i_overlay::core::fill_rule::FillRule;
use i_overlay::core::overlay::{IntOverlayOptions, Overlay, ShapeType};
use i_overlay::core::overlay_rule::OverlayRule;
use i_overlay::i_float::int::point::IntPoint;
use rayon::prelude::*;

/// A ring on the grid, open (its first point not repeated).
pub(super) type Contour = Vec<IntPoint>;
/// An outer ring and its holes.
pub(super) type Shape = Vec<Contour>;

/// The map between coordinates and the integer grid.
struct Grid {
    x0: f64,
    y0: f64,
    scale: f64,
}

impl Grid {
    /// The grid of i_overlay's float adapter for the extent of `polygons`.
    fn fitted(polygons: &[Polygon<f64>]) -> Grid {
        let (mut min, mut max) = ([f64::INFINITY; 2], [f64::NEG_INFINITY; 2]);
        for c in polygons.iter().flat_map(rings).flat_map(|r| r.0.iter()) {
            min = [min[0].min(c.x), min[1].min(c.y)];
            max = [max[0].max(c.x), max[1].max(c.y)];
        }
        let half = ((max[0] - min[0]) / 2.0).max((max[1] - min[1]) / 2.0);
        let scale = if half > 0.0 && half.is_finite() {
            (29.0 - half.log2().floor()).exp2()
        } else {
            1.0
        };
        Grid {
            x0: (min[0] + max[0]) / 2.0,
            y0: (min[1] + max[1]) / 2.0,
            scale,
        }
    }

    fn to_int(&self, c: &Coord<f64>) -> IntPoint {
        IntPoint::new(
            ((c.x - self.x0) * self.scale).round() as i32,
            ((c.y - self.y0) * self.scale).round() as i32,
        )
    }

    fn to_float(&self, p: &IntPoint) -> Coord<f64> {
        Coord {
            x: f64::from(p.x) / self.scale + self.x0,
            y: f64::from(p.y) / self.scale + self.y0,
        }
    }
}

/// The input's vertices by grid point: a vertex of the union that is a vertex of the input gets
/// its exact coordinates back (so the union shares them with its inputs, as GEOS's does, and
/// predicates against the inputs, `touches` rather than `overlaps`, stay exact); only the
/// points where edges cross are on the grid. Two input vertices on one grid point: the first
/// in input order.
struct Originals(HashMap<u64, Coord<f64>, BuildHasherDefault<PointHasher>>);

/// One grid point as one number.
fn key(p: IntPoint) -> u64 {
    (u64::from(p.x as u32) << 32) | u64::from(p.y as u32)
}

/// The hash of a grid point's key: one multiply (std's SipHash is half the union's time here).
#[derive(Default)]
struct PointHasher(u64);

impl Hasher for PointHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.write_u64(u64::from(*b));
        }
    }

    fn write_u64(&mut self, k: u64) {
        let h = (self.0 ^ k ^ (k >> 32)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        self.0 = h ^ (h >> 29);
    }
}

impl Originals {
    fn of(grid: &Grid, polygons: &[Polygon<f64>]) -> Originals {
        let vertices = polygons.iter().flat_map(rings).map(|r| r.0.len()).sum();
        let mut map = HashMap::with_capacity_and_hasher(vertices, BuildHasherDefault::default());
        for c in polygons.iter().flat_map(rings).flat_map(|r| r.0.iter()) {
            map.entry(key(grid.to_int(c))).or_insert(*c);
        }
        Originals(map)
    }

    fn coordinate(&self, grid: &Grid, p: &IntPoint) -> Coord<f64> {
        self.0
            .get(&key(*p))
            .copied()
            .unwrap_or_else(|| grid.to_float(p))
    }
}

fn rings(polygon: &Polygon<f64>) -> impl Iterator<Item = &LineString<f64>> {
    std::iter::once(polygon.exterior()).chain(polygon.interiors())
}

/// The union of `polygons` (exteriors counter-clockwise, holes clockwise) computed in `strips`
/// vertical strips (one overlay when `strips` < 2).
pub(super) fn union(polygons: &[Polygon<f64>], strips: usize) -> MultiPolygon<f64> {
    let grid = Grid::fitted(polygons);
    let contours: Vec<Contour> = polygons
        .par_iter()
        .flat_map_iter(|p| rings(p).map(|r| to_contour(&grid, r)).collect::<Vec<_>>())
        .filter(|c| c.len() >= 3)
        .collect();
    let cuts = cut_lines(&contours, strips);
    let shapes = if cuts.is_empty() {
        overlay(&contours)
    } else {
        let split: Vec<Contour> = contours.par_iter().map(|c| split_at(c, &cuts)).collect();
        let bounds: Vec<(i32, i32)> = std::iter::once(i32::MIN)
            .chain(cuts.iter().copied())
            .zip(cuts.iter().copied().chain(std::iter::once(i32::MAX)))
            .collect();
        let per_strip: Vec<Vec<Shape>> = bounds
            .par_iter()
            .map(|&(lo, hi)| {
                let clipped: Vec<Contour> = split.iter().filter_map(|c| clip(c, lo, hi)).collect();
                overlay(&clipped)
            })
            .collect();
        merge(per_strip.into_iter().flatten().collect(), &cuts)
    };
    let shapes = super::simple_rings::split_touching_rings(shapes);
    let originals = Originals::of(&grid, polygons);
    MultiPolygon(
        shapes
            .par_iter()
            .map(|shape| {
                let mut rings = shape.iter().map(|c| {
                    let mut points: Vec<Coord<f64>> =
                        c.iter().map(|p| originals.coordinate(&grid, p)).collect();
                    points.push(points[0]);
                    LineString(points)
                });
                let exterior = rings.next().unwrap_or_else(|| LineString(Vec::new()));
                Polygon::new(exterior, rings.collect())
            })
            .collect(),
    )
}

/// A ring on the grid, open (its first point not repeated), without repeated points.
fn to_contour(grid: &Grid, ring: &LineString<f64>) -> Contour {
    let mut contour: Contour = Vec::with_capacity(ring.0.len());
    for c in &ring.0 {
        let p = grid.to_int(c);
        if contour.last() != Some(&p) {
            contour.push(p);
        }
    }
    while contour.len() > 1 && contour.first() == contour.last() {
        contour.pop();
    }
    contour
}

/// One sweep: the union of `contours` (positive fill rule), every input vertex on the union's
/// boundary kept (as GEOS keeps them).
fn overlay(contours: &[Contour]) -> Vec<Shape> {
    let points = contours.iter().map(Vec::len).sum();
    let mut overlay = Overlay::new_custom(points, IntOverlayOptions::default(), Default::default());
    overlay.add_contours(contours, ShapeType::Subject);
    overlay.overlay(OverlayRule::Subject, FillRule::Positive)
}

/// `strips - 1` cut lines at x-quantiles of the vertices (none when fewer than two strips).
fn cut_lines(contours: &[Contour], strips: usize) -> Vec<i32> {
    if strips < 2 {
        return Vec::new();
    }
    let mut xs: Vec<i32> = contours.iter().flatten().map(|p| p.x).collect();
    xs.par_sort_unstable();
    let mut cuts: Vec<i32> = (1..strips).map(|k| xs[k * xs.len() / strips]).collect();
    cuts.dedup();
    cuts.retain(|&c| c > xs[0] && c < xs[xs.len() - 1]);
    cuts
}

/// The contour with a vertex added wherever a segment crosses a cut line, at a point computed
/// from the segment alone (its end with the smaller x first), so every strip gets the same one.
fn split_at(contour: &Contour, cuts: &[i32]) -> Contour {
    let mut out = Vec::with_capacity(contour.len() + 4);
    for (i, &a) in contour.iter().enumerate() {
        out.push(a);
        let b = contour[(i + 1) % contour.len()];
        let (lo, hi) = (a.x.min(b.x), a.x.max(b.x));
        let first = cuts.partition_point(|&c| c <= lo);
        let last = cuts.partition_point(|&c| c < hi);
        if first >= last {
            continue;
        }
        let crossings = cuts[first..last].iter().map(|&c| crossing(a, b, c));
        if a.x < b.x {
            out.extend(crossings);
        } else {
            out.extend(crossings.rev());
        }
    }
    out
}

/// Where the segment `a`–`b` crosses the vertical line at `c` (strictly between its ends).
fn crossing(a: IntPoint, b: IntPoint, c: i32) -> IntPoint {
    let (p, q) = if (a.x, a.y) <= (b.x, b.y) {
        (a, b)
    } else {
        (b, a)
    };
    let dx = i128::from(q.x) - i128::from(p.x);
    let num = (i128::from(q.y) - i128::from(p.y)) * (i128::from(c) - i128::from(p.x));
    // Rounded to the nearest unit, halves away from zero, in integers.
    let offset = (2 * num + dx * num.signum()) / (2 * dx);
    IntPoint::new(c, (i128::from(p.y) + offset) as i32)
}

/// The contour clipped to the strip `lo <= x <= hi` (its crossings already vertices): the
/// vertices inside, excursions out of the strip replaced by an edge along the cut line they
/// left and came back through. `None` when nothing of it is left.
fn clip(contour: &Contour, lo: i32, hi: i32) -> Option<Contour> {
    let inside = |p: &IntPoint| p.x >= lo && p.x <= hi;
    if contour.iter().all(inside) {
        return Some(contour.clone());
    }
    let kept: Contour = contour.iter().copied().filter(inside).collect();
    (kept.len() >= 3 && kept.iter().any(|p| p.x > lo && p.x < hi)).then_some(kept)
}

fn touches(contour: &Contour, cuts: &[i32]) -> bool {
    contour.iter().any(|p| cuts.binary_search(&p.x).is_ok())
}

/// The strips' shapes made one: those touching a cut line unioned again (outer rings and the
/// holes touching a cut line), their other holes given back to the merged shape holding them.
fn merge(shapes: Vec<Shape>, cuts: &[i32]) -> Vec<Shape> {
    let mut done = Vec::new();
    let mut rejoin: Vec<Contour> = Vec::new();
    // Per piece touching a cut line: its outer ring and the holes it keeps aside.
    let mut pieces: Vec<(Contour, Vec<Contour>)> = Vec::new();
    for shape in shapes {
        let mut contours = shape.into_iter();
        let Some(outer) = contours.next() else {
            continue;
        };
        if !touches(&outer, cuts) {
            done.push(std::iter::once(outer).chain(contours).collect());
            continue;
        }
        let mut aside = Vec::new();
        for hole in contours {
            if touches(&hole, cuts) {
                rejoin.push(hole);
            } else {
                aside.push(hole);
            }
        }
        rejoin.push(outer.clone());
        pieces.push((outer, aside));
    }
    let mut merged = overlay(&rejoin);
    let owner = vertex_owners(&merged);
    for (outer, aside) in pieces {
        if aside.is_empty() {
            continue;
        }
        let found = outer
            .iter()
            .filter(|p| cuts.binary_search(&p.x).is_err())
            .find_map(|p| owner.get(p).copied().flatten())
            .or_else(|| containing(&merged, &aside[0]));
        // Not found only for a piece the merge removed: its holes go with it.
        if let Some(index) = found {
            merged[index].extend(aside);
        }
    }
    done.extend(merged);
    done
}

/// Which merged shape each vertex belongs to (`None` for a vertex two shapes share).
fn vertex_owners(shapes: &[Shape]) -> HashMap<IntPoint, Option<usize>> {
    let mut owner: HashMap<IntPoint, Option<usize>> = HashMap::new();
    for (index, shape) in shapes.iter().enumerate() {
        for p in shape.iter().flatten() {
            owner
                .entry(*p)
                .and_modify(|o| {
                    if *o != Some(index) {
                        *o = None;
                    }
                })
                .or_insert(Some(index));
        }
    }
    owner
}

/// The shape whose outer ring strictly holds a vertex of `hole` (a search of every shape).
fn containing(shapes: &[Shape], hole: &Contour) -> Option<usize> {
    hole.iter().find_map(|p| {
        shapes
            .iter()
            .position(|shape| shape.first().is_some_and(|outer| winding(outer, *p) != 0))
    })
}

/// The winding number of `ring` around `p` (0 outside; points on the ring count as outside).
pub(super) fn winding(ring: &Contour, p: IntPoint) -> i32 {
    let mut w = 0;
    for (i, a) in ring.iter().enumerate() {
        let b = ring[(i + 1) % ring.len()];
        let cross = (i128::from(b.x) - i128::from(a.x)) * (i128::from(p.y) - i128::from(a.y))
            - (i128::from(p.x) - i128::from(a.x)) * (i128::from(b.y) - i128::from(a.y));
        if a.y <= p.y {
            if b.y > p.y && cross > 0 {
                w += 1;
            }
        } else if b.y <= p.y && cross < 0 {
            w -= 1;
        }
    }
    w
}

#[cfg(test)]
mod tests {
    use super::*;
    use geo::orient::{Direction, Orient};
    use geo::{Area, wkt};

    fn square(x: f64, y: f64, size: f64) -> Polygon<f64> {
        let s = size;
        Polygon::new(
            LineString::from(vec![(x, y), (x + s, y), (x + s, y + s), (x, y + s), (x, y)]),
            vec![],
        )
    }

    #[test]
    fn a_coverage_becomes_one_polygon_and_holes_survive_the_strips() {
        // A 6 x 6 grid of unit squares, the middle 2 x 2 left out: one polygon with one hole.
        let cells: Vec<Polygon<f64>> = (0..6)
            .flat_map(|i| (0..6).map(move |j| (i, j)))
            .filter(|&(i, j)| !((2..4).contains(&i) && (2..4).contains(&j)))
            .map(|(i, j)| square(f64::from(i), f64::from(j), 1.0))
            .collect();
        for strips in [1, 2, 3, 5] {
            let union = union(&cells, strips);
            assert_eq!(union.0.len(), 1, "{strips} strips: {union:?}");
            assert_eq!(union.0[0].interiors().len(), 1, "{strips} strips");
            assert!(
                (union.unsigned_area() - 32.0).abs() < 1e-9,
                "{strips} strips"
            );
        }
    }

    #[test]
    fn strips_give_the_answer_of_one_sweep_on_overlapping_polygons_with_holes() {
        // Overlapping rotated squares with holes, across every cut line.
        let mut polygons = Vec::new();
        for k in 0..40 {
            let (x, y) = (f64::from(k % 8) * 0.7, f64::from(k / 8) * 0.6);
            let hole = LineString::from(vec![
                (x + 0.3, y + 0.3),
                (x + 0.3, y + 0.5),
                (x + 0.5, y + 0.5),
                (x + 0.5, y + 0.3),
                (x + 0.3, y + 0.3),
            ]);
            let p = Polygon::new(square(x, y, 1.0).exterior().clone(), vec![hole]);
            polygons.push(
                geo::Rotate::rotate_around_centroid(&p, f64::from(k) * 7.0)
                    .orient(Direction::Default),
            );
        }
        let one = union(&polygons, 1);
        for strips in [2, 4, 7] {
            let many = union(&polygons, strips);
            assert!(
                // Crossings are rounded to the grid (2^-28 here): within 1e-9 of the area.
                (many.unsigned_area() - one.unsigned_area()).abs() < 1e-9 * one.unsigned_area(),
                "{strips}: {} against {}",
                many.unsigned_area(),
                one.unsigned_area()
            );
            assert_eq!(many.0.len(), one.0.len(), "{strips} strips");
            let holes =
                |m: &MultiPolygon<f64>| m.0.iter().map(|p| p.interiors().len()).sum::<usize>();
            assert_eq!(holes(&many), holes(&one), "{strips} strips");
        }
        let expected = wkt!(POLYGON((0. 0.,1. 0.,1. 1.,0. 1.,0. 0.)));
        assert!((union(&[expected], 3).unsigned_area() - 1.0).abs() < 1e-12);
    }

    #[test]
    fn a_crossing_is_the_same_point_from_either_end() {
        let (a, b) = (IntPoint::new(-7, 3), IntPoint::new(13, 40));
        assert_eq!(crossing(a, b, 2), crossing(b, a, 2));
        assert_eq!(crossing(a, b, 2).x, 2);
    }
}
