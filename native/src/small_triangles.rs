//! The union of small Delaunay triangles as GISPulse's alpha shape draws it: the edges of the
//! triangles whose circumradius is below a radius, polygonized, the faces unioned.

use std::collections::HashSet;

use geos::{Geom, Geometry};

use super::NativeError;
use super::delaunay::{Point, triangulate};

/// The faces enclosed by the edges of the Delaunay triangles of `g`'s vertices whose
/// circumradius (from the side lengths, Heron's formula) is below `radius`, unioned: isolated
/// parts stay apart, gaps the edges enclose are filled, flat triangles are skipped. Fewer than
/// four vertices (repeated ones counted), or no such triangle, give the vertices' convex hull.
pub fn small_triangles(g: &Geometry, radius: f64) -> Result<Geometry, NativeError> {
    if g.get_num_coordinates().map_err(NativeError::geos)? < 4 {
        return g.convex_hull().map_err(NativeError::geos);
    }
    let mut seen = HashSet::new();
    let mut lines = Vec::new();
    for tri in triangulate(g)? {
        if circumradius(tri.p).is_none_or(|r| r >= radius) {
            continue;
        }
        for (p, q) in [(0, 1), (1, 2), (2, 0)] {
            let (p, q) = (tri.p[p], tri.p[q]);
            let key = [p.0.to_bits(), p.1.to_bits(), q.0.to_bits(), q.1.to_bits()];
            let reversed = [key[2], key[3], key[0], key[1]];
            if seen.insert(key.min(reversed)) {
                lines.push(
                    super::geos_base::line_string(&[[p.0, p.1], [q.0, q.1]])
                        .map_err(NativeError::Geos)?,
                );
            }
        }
    }
    if lines.is_empty() {
        return g.convex_hull().map_err(NativeError::geos);
    }
    let faces = Geometry::polygonize(&lines).map_err(NativeError::geos)?;
    if faces.get_num_geometries().map_err(NativeError::geos)? == 0 {
        return g.convex_hull().map_err(NativeError::geos);
    }
    faces.unary_union().map_err(NativeError::geos)
}

/// A triangle's circumradius from its side lengths; `None` when it is flat.
fn circumradius([pa, pb, pc]: [Point; 3]) -> Option<f64> {
    let length = |p: Point, q: Point| ((p.0 - q.0).powi(2) + (p.1 - q.1).powi(2)).sqrt();
    let (a, b, c) = (length(pa, pb), length(pb, pc), length(pc, pa));
    let s = (a + b + c) / 2.0;
    let area_squared = (s * (s - a) * (s - b) * (s - c)).max(0.0);
    (area_squared != 0.0).then(|| a * b * c / (4.0 * area_squared.sqrt()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(wkt: &str, radius: f64) -> Geometry {
        small_triangles(&Geometry::new_from_wkt(wkt).unwrap(), radius).unwrap()
    }

    #[test]
    fn two_clusters_far_apart_give_two_parts() {
        // Each cluster's triangles are small, those joining the clusters large.
        let two = shape(
            "MULTIPOINT ((0 0), (1 0), (0 1), (1 1), (10 0), (11 0), (10 1), (11 1))",
            1.0,
        );
        assert_eq!(two.get_num_geometries().unwrap(), 2);
        assert!((two.area().unwrap() - 2.0).abs() < 1e-9);
    }

    #[test]
    fn too_few_points_or_no_small_triangle_give_the_convex_hull() {
        let hull = shape("MULTIPOINT ((0 0), (4 0), (0 3))", 0.1);
        assert!((hull.area().unwrap() - 6.0).abs() < 1e-9);
        let hull = shape("MULTIPOINT ((0 0), (4 0), (0 3), (4 3))", 0.1);
        assert!((hull.area().unwrap() - 12.0).abs() < 1e-9);
    }

    #[test]
    fn a_gap_the_small_triangles_enclose_is_filled() {
        // A ring of points around a wide empty centre: the centre's triangles are large, but
        // the ring's small triangles enclose it.
        let ring: Vec<String> = (0..24)
            .flat_map(|i| {
                let a = f64::from(i) * std::f64::consts::TAU / 24.0;
                [(10.0, a), (11.0, a + 0.13)]
                    .map(|(r, a): (f64, f64)| format!("({} {})", r * a.cos(), r * a.sin()))
            })
            .collect();
        let filled = shape(&format!("MULTIPOINT ({})", ring.join(", ")), 3.0);
        assert_eq!(filled.get_num_interior_rings().unwrap_or(0), 0);
        assert!(
            filled
                .contains(&Geometry::new_from_wkt("POINT (0 0)").unwrap())
                .unwrap()
        );
    }
}
