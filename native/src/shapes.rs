//! The native kernels of `ShapeExpr`: shapes made from each feature's geometry (a minimum-area
//! rectangle and the smallest enclosing circle, from `enclosing.rs`; densified,
//! Chaikin-smoothed and offset lines),
//! computed as PostGIS computes them so every engine gives the same answer; rows in parallel.

use std::sync::atomic::{AtomicUsize, Ordering};

use geos::{Geom, Geometry, GeometryTypes, JoinStyle};

use super::NativeError;
use super::concave::{HullLimit, concave_hull};
use super::enclosing::{circle, hull_points, min_area_rectangle};
use super::geos_base::{Xy, line_string, map_geometry, point, ring, text, to_geos, to_wkb, xy_of};
use super::layer::Layer;
use geomill_planner::plan::operator::{MAX_DENSIFIED_VERTICES, OffsetJoin, ShapeExpr};

/// Mean Earth radius (m) of the great-circle densification.
const EARTH_RADIUS: f64 = 6_371_008.8;

/// What [`rebuild`] applies to each line (`false`) and ring (`true`).
type LineFn<'a> = &'a dyn Fn(&[Xy], Part) -> Result<Vec<Xy>, String>;

/// What a coordinate sequence [`rebuild`] hands over is.
#[derive(Clone, Copy, PartialEq)]
enum Part {
    Line,
    Exterior,
    Hole,
}

/// Replaces each geometry by `shape` of it.
pub fn map_shape(layer: &Layer, shape: &ShapeExpr) -> Result<Layer, NativeError> {
    let added = AtomicUsize::new(0);
    map_geometry(layer, |bytes, row| {
        let geometry = to_geos(bytes, row)?;
        let out = shape_of(&geometry, shape, &added)
            .map_err(|reason| NativeError::Geometry { row, reason })?;
        out.as_ref().map(to_wkb).transpose()
    })
}

/// `shape` of one geometry; `added` counts the vertices densifying added over the whole layer.
fn shape_of(
    geometry: &Geometry,
    shape: &ShapeExpr,
    added: &AtomicUsize,
) -> Result<Option<Geometry>, String> {
    let empty = geometry.is_empty().map_err(text)?;
    Ok(Some(match *shape {
        ShapeExpr::OrientedEnvelope if empty => Geom::clone(geometry),
        ShapeExpr::OrientedEnvelope => min_area_rectangle(&hull_points(geometry)?)?,
        ShapeExpr::MinBoundingCircle { .. } if empty => flat_empty(geometry)?,
        ShapeExpr::MinBoundingCircle {
            segments,
            on_circle,
        } => circle(&hull_points(geometry)?, segments, on_circle)?,
        ShapeExpr::Densify {
            max_length,
            geodesic,
        } => rebuild(geometry, &|line, _| {
            densify(line, max_length, geodesic, added)
        })?,
        ShapeExpr::Chaikin {
            iterations,
            every_segment: false,
        } => rebuild(geometry, &|line, part| {
            let closed = part != Part::Line;
            Ok((0..iterations).fold(line.to_vec(), |l, _| chaikin(&l, closed)))
        })?,
        ShapeExpr::Chaikin {
            iterations,
            every_segment: true,
        } => rebuild(geometry, &|line, part| {
            Ok((0..iterations).fold(line.to_vec(), |l, _| {
                if part == Part::Exterior {
                    chaikin(&l, true)
                } else {
                    chaikin_every_segment(&l)
                }
            }))
        })?,
        ShapeExpr::OffsetCurve {
            distance,
            join,
            segments,
            mitre_limit,
        } => {
            let dimension = geometry.get_num_dimensions().map_err(text)?;
            if dimension != 1 || empty {
                return Ok(None);
            }
            offset(geometry, distance, join, segments, mitre_limit)?
        }
        ShapeExpr::ConcaveHull { ratio, holes } => {
            concave_hull(geometry, HullLimit::EdgeRatio(ratio), holes).map_err(|e| e.to_string())?
        }
        ShapeExpr::AlphaShape { alpha, holes } => {
            concave_hull(geometry, HullLimit::Alpha(alpha), holes).map_err(|e| e.to_string())?
        }
        ShapeExpr::SmallTriangles { radius } => {
            super::small_triangles::small_triangles(geometry, radius).map_err(|e| e.to_string())?
        }
    }))
}

/// An empty geometry of the same type without Z or M.
fn flat_empty(geometry: &Geometry) -> Result<Geometry, String> {
    Geometry::new_from_wkt(&format!("{} EMPTY", geometry.geometry_type_name())).map_err(text)
}

trait TypeName {
    fn geometry_type_name(&self) -> &'static str;
}

impl<G: Geom> TypeName for G {
    fn geometry_type_name(&self) -> &'static str {
        match self.geometry_type() {
            GeometryTypes::Point => "POINT",
            GeometryTypes::LineString | GeometryTypes::LinearRing => "LINESTRING",
            GeometryTypes::Polygon => "POLYGON",
            GeometryTypes::MultiPoint => "MULTIPOINT",
            GeometryTypes::MultiLineString => "MULTILINESTRING",
            GeometryTypes::MultiPolygon => "MULTIPOLYGON",
            _ => "GEOMETRYCOLLECTION",
        }
    }
}

/// The geometry with every line and ring replaced by `f(points, closed)`, 2-D; points kept.
fn rebuild<G: Geom>(geometry: &G, f: LineFn<'_>) -> Result<Geometry, String> {
    if geometry.is_empty().map_err(text)? {
        return Geometry::new_from_wkt(&format!("{} EMPTY", geometry.geometry_type_name()))
            .map_err(text);
    }
    match geometry.geometry_type() {
        GeometryTypes::Point => point(xy_of(geometry)?.first().copied().unwrap_or([0.0, 0.0])),
        GeometryTypes::LineString | GeometryTypes::LinearRing => {
            line_string(&f(&xy_of(geometry)?, Part::Line)?)
        }
        GeometryTypes::Polygon => {
            let exterior = ring(&f(
                &xy_of(&geometry.get_exterior_ring().map_err(text)?)?,
                Part::Exterior,
            )?)?;
            let holes = (0..geometry.get_num_interior_rings().map_err(text)?)
                .map(|n| {
                    let hole = geometry.get_interior_ring_n(n as u32).map_err(text)?;
                    ring(&f(&xy_of(&hole)?, Part::Hole)?)
                })
                .collect::<Result<Vec<_>, _>>()?;
            Geometry::create_polygon(exterior, holes).map_err(text)
        }
        kind => {
            let parts = (0..geometry.get_num_geometries().map_err(text)?)
                .map(|n| rebuild(&geometry.get_geometry_n(n).map_err(text)?, f))
                .collect::<Result<Vec<_>, _>>()?;
            match kind {
                GeometryTypes::MultiPoint => Geometry::create_multipoint(parts),
                GeometryTypes::MultiLineString => Geometry::create_multiline_string(parts),
                GeometryTypes::MultiPolygon => Geometry::create_multipolygon(parts),
                _ => Geometry::create_geometry_collection(parts),
            }
            .map_err(text)
        }
    }
}

/// One iteration of Chaikin's corner cutting as PostGIS's `ST_ChaikinSmoothing` makes it: the
/// points at a quarter and three quarters of every segment; an open line keeps its end points
/// (and the first and last segments add only their inner point), a ring is closed again.
fn chaikin(points: &[Xy], closed: bool) -> Vec<Xy> {
    let n = points.len();
    if n < 3 && !closed {
        return points.to_vec();
    }
    let mut out = Vec::with_capacity(2 * n);
    if !closed {
        out.push(points[0]);
    }
    for (i, pair) in points.windows(2).enumerate() {
        let ([x1, y1], [x2, y2]) = (pair[0], pair[1]);
        let (qx, qy) = ((x2 - x1) * 0.25, (y2 - y1) * 0.25);
        if closed || i > 0 {
            out.push([x1 + qx, y1 + qy]);
        }
        if closed || i + 2 < n {
            out.push([x2 - qx, y2 - qy]);
        }
    }
    if closed {
        if let Some(first) = out.first().copied() {
            out.push(first);
        }
    } else {
        out.push(points[n - 1]);
    }
    out
}

/// One iteration of GISPulse's corner cutting of a line (or a hole, as a line): its first
/// point, both the quarter and three-quarter points of every segment, its last point.
fn chaikin_every_segment(points: &[Xy]) -> Vec<Xy> {
    let n = points.len();
    if n < 2 {
        return points.to_vec();
    }
    let mut out = Vec::with_capacity(2 * n);
    out.push(points[0]);
    for pair in points.windows(2) {
        let ([x1, y1], [x2, y2]) = (pair[0], pair[1]);
        let (qx, qy) = ((x2 - x1) * 0.25, (y2 - y1) * 0.25);
        out.push([x1 + qx, y1 + qy]);
        out.push([x2 - qx, y2 - qy]);
    }
    out.push(points[n - 1]);
    out
}

/// The line with each segment longer than `max_length` cut into the fewest equal pieces short
/// enough (PostGIS's `ST_Segmentize`: a repeated vertex is dropped, except in a two-point line).
/// The vertices added are counted in `added`, and refused before they are made past
/// [`MAX_DENSIFIED_VERTICES`] for the layer.
fn densify(
    points: &[Xy],
    max_length: f64,
    geodesic: bool,
    added: &AtomicUsize,
) -> Result<Vec<Xy>, String> {
    let Some(&first) = points.first() else {
        return Ok(Vec::new());
    };
    let keep_repeated = points.len() == 2;
    let mut out = vec![first];
    for pair in points.windows(2) {
        let (a, b) = (pair[0], pair[1]);
        let length = if geodesic {
            great_circle(a, b).0 * EARTH_RADIUS
        } else {
            (b[0] - a[0]).hypot(b[1] - a[1])
        };
        let pieces = (length / max_length).ceil();
        if pieces > 1.0 && pieces.is_finite() {
            let too_many = || {
                format!(
                    "densify_vertices would add more than {MAX_DENSIFIED_VERTICES} vertices to the layer: give a larger max_length"
                )
            };
            if pieces > MAX_DENSIFIED_VERTICES as f64 {
                return Err(too_many());
            }
            let pieces = pieces as u64;
            let new = usize::try_from(pieces - 1).map_err(|_| too_many())?;
            if added.fetch_add(new, Ordering::Relaxed) + new > MAX_DENSIFIED_VERTICES {
                return Err(too_many());
            }
            for j in 1..pieces {
                let fraction = j as f64 / pieces as f64;
                out.push(if geodesic {
                    along_great_circle(a, b, fraction)
                } else {
                    [
                        a[0] + (b[0] - a[0]) * fraction,
                        a[1] + (b[1] - a[1]) * fraction,
                    ]
                });
            }
        }
        if keep_repeated || out.last() != Some(&b) {
            out.push(b);
        }
    }
    Ok(out)
}

/// A lon/lat point (degrees) as a unit vector.
fn unit_vector([lon, lat]: Xy) -> [f64; 3] {
    let (lon, lat) = (lon.to_radians(), lat.to_radians());
    [lat.cos() * lon.cos(), lat.cos() * lon.sin(), lat.sin()]
}

/// The central angle between two lon/lat points (radians), with their unit vectors.
fn great_circle(a: Xy, b: Xy) -> (f64, [f64; 3], [f64; 3]) {
    let (u, v) = (unit_vector(a), unit_vector(b));
    let cross = [
        u[1] * v[2] - u[2] * v[1],
        u[2] * v[0] - u[0] * v[2],
        u[0] * v[1] - u[1] * v[0],
    ];
    let sine = (cross[0].powi(2) + cross[1].powi(2) + cross[2].powi(2)).sqrt();
    let cosine = u[0] * v[0] + u[1] * v[1] + u[2] * v[2];
    (sine.atan2(cosine), u, v)
}

/// The point at `fraction` of the great-circle arc from `a` to `b` (spherical interpolation).
fn along_great_circle(a: Xy, b: Xy, fraction: f64) -> Xy {
    let (angle, u, v) = great_circle(a, b);
    let sine = angle.sin();
    if sine.abs() < 1e-15 {
        return [
            a[0] + (b[0] - a[0]) * fraction,
            a[1] + (b[1] - a[1]) * fraction,
        ];
    }
    let wa = ((1.0 - fraction) * angle).sin() / sine;
    let wb = (fraction * angle).sin() / sine;
    let p = [0, 1, 2].map(|k| wa * u[k] + wb * v[k]);
    let lat = p[2].atan2(p[0].hypot(p[1]));
    [p[1].atan2(p[0]).to_degrees(), lat.to_degrees()]
}

/// GEOS's offset curve of a line, or of each part of a MultiLineString (collected as
/// PostGIS's `ST_OffsetCurve` collects them).
fn offset(
    geometry: &Geometry,
    distance: f64,
    join: OffsetJoin,
    segments: u32,
    mitre_limit: f64,
) -> Result<Geometry, String> {
    let style = match join {
        OffsetJoin::Round => JoinStyle::Round,
        OffsetJoin::Mitre => JoinStyle::Mitre,
        OffsetJoin::Bevel => JoinStyle::Bevel,
    };
    let one = |line: &Geometry| {
        super::offset_curve::offset_curve(line, distance, style, segments, mitre_limit)
    };
    let flat = rebuild(geometry, &|line, _| Ok(line.to_vec()))?;
    if flat.geometry_type() == GeometryTypes::LineString {
        return one(&flat);
    }
    let mut parts = Vec::new();
    for n in 0..flat.get_num_geometries().map_err(text)? {
        let part = Geom::clone(&flat.get_geometry_n(n).map_err(text)?);
        if part.geometry_type() != GeometryTypes::LineString {
            continue;
        }
        let curve = one(&part)?;
        match curve.geometry_type() {
            GeometryTypes::LineString if !curve.is_empty().map_err(text)? => parts.push(curve),
            GeometryTypes::MultiLineString => {
                for k in 0..curve.get_num_geometries().map_err(text)? {
                    parts.push(Geom::clone(&curve.get_geometry_n(k).map_err(text)?));
                }
            }
            _ => {}
        }
    }
    Geometry::create_multiline_string(parts).map_err(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wkt(geometry: &Geometry) -> String {
        let mut writer = geos::WKTWriter::new().unwrap();
        writer.set_trim(true);
        writer.set_rounding_precision(6);
        writer.write(geometry).unwrap()
    }

    fn apply(input: &str, shape: ShapeExpr) -> String {
        let geometry = Geometry::new_from_wkt(input).unwrap();
        shape_of(&geometry, &shape, &AtomicUsize::new(0))
            .unwrap()
            .map(|g| wkt(&g))
            .unwrap_or_default()
    }

    #[test]
    fn every_segment_cutting_keeps_the_end_segments_points_and_cuts_holes_as_lines() {
        assert_eq!(
            apply(
                "LINESTRING(0 0, 4 0, 4 4)",
                ShapeExpr::Chaikin {
                    iterations: 1,
                    every_segment: true
                }
            ),
            "LINESTRING (0 0, 1 0, 3 0, 4 1, 4 3, 4 4)"
        );
        assert_eq!(
            apply(
                "POLYGON((0 0, 8 0, 8 8, 0 0),(1 1, 2 1, 2 2, 1 1))",
                ShapeExpr::Chaikin {
                    iterations: 1,
                    every_segment: true
                }
            ),
            "POLYGON ((2 0, 6 0, 8 2, 8 6, 6 6, 2 2, 2 0), (1 1, 1.25 1, 1.75 1, 2 1.25, 2 1.75, 1.75 1.75, 1.25 1.25, 1 1))"
        );
    }

    #[test]
    fn shapes_as_postgis_gives_them() {
        // The answers of PostGIS 3.3 for the same input.
        assert_eq!(
            apply(
                "POLYGON((0 0, 8 0, 8 8, 0 8, 0 0),(2 2, 2 4, 4 4, 2 2))",
                ShapeExpr::Chaikin {
                    iterations: 1,
                    every_segment: false
                }
            ),
            "POLYGON ((2 0, 6 0, 8 2, 8 6, 6 8, 2 8, 0 6, 0 2, 2 0), (2 2.5, 2 3.5, 2.5 4, 3.5 4, 3.5 3.5, 2.5 2.5, 2 2.5))"
        );
        assert_eq!(
            apply(
                "MULTILINESTRING((0 0, 8 0, 8 8),(0 0, 4 0))",
                ShapeExpr::Chaikin {
                    iterations: 2,
                    every_segment: false
                }
            ),
            "MULTILINESTRING ((0 0, 4.5 0, 6.5 0.5, 7.5 1.5, 8 3.5, 8 8), (0 0, 4 0))"
        );
        assert_eq!(
            apply(
                "POLYGON((0 0, 10 0, 10 10, 0 0))",
                ShapeExpr::Densify {
                    max_length: 4.0,
                    geodesic: false
                }
            ),
            "POLYGON ((0 0, 3.333333 0, 6.666667 0, 10 0, 10 3.333333, 10 6.666667, 10 10, 7.5 7.5, 5 5, 2.5 2.5, 0 0))"
        );
        assert_eq!(
            apply(
                "LINESTRING(0 0, 3 0, 3 0)",
                ShapeExpr::Densify {
                    max_length: 1.0,
                    geodesic: false
                }
            ),
            "LINESTRING (0 0, 1 0, 2 0, 3 0)"
        );
        assert_eq!(
            apply(
                "LINESTRING(0 0, 3 4, 6 0)",
                ShapeExpr::MinBoundingCircle {
                    segments: 1,
                    on_circle: false
                }
            ),
            "POLYGON ((3 5.294417, 7.419417 0.875, 3 -3.544417, -1.419417 0.875, 3 5.294417))"
        );
        assert_eq!(
            apply(
                "MULTIPOINT((1 2),(1 2))",
                ShapeExpr::MinBoundingCircle {
                    segments: 8,
                    on_circle: false
                }
            ),
            "POINT (1 2)"
        );
        assert_eq!(
            apply("LINESTRING(0 0, 1 1, 3 3)", ShapeExpr::OrientedEnvelope),
            "LINESTRING (0 0, 3 3)"
        );
        assert_eq!(
            apply(
                "MULTILINESTRING((0 0, 8 0),(0 5, 8 5))",
                ShapeExpr::OffsetCurve {
                    distance: 1.0,
                    join: OffsetJoin::Round,
                    segments: 8,
                    mitre_limit: 5.0
                }
            ),
            "MULTILINESTRING ((0 1, 8 1), (0 6, 8 6))"
        );
        assert_eq!(
            apply(
                "POLYGON((0 0, 1 0, 1 1, 0 0))",
                ShapeExpr::OffsetCurve {
                    distance: 1.0,
                    join: OffsetJoin::Round,
                    segments: 8,
                    mitre_limit: 5.0
                }
            ),
            ""
        );
    }

    #[test]
    fn the_least_area_rectangle_and_great_circle_pieces() {
        // DuckDB's ST_MinimumRotatedRectangle (GEOS 3.12+) for the same polygon.
        let rectangle = Geometry::new_from_wkt(&apply(
            "POLYGON((0 0, 10 1, 9 5, 1 3, 0 0))",
            ShapeExpr::OrientedEnvelope,
        ))
        .unwrap();
        let duckdb = Geometry::new_from_wkt("POLYGON ((-0.6470588235294118 2.588235294117647, 9 5, 10 1, 0.35294117647058826 -1.411764705882353, -0.6470588235294118 2.588235294117647))").unwrap();
        assert!(rectangle.sym_difference(&duckdb).unwrap().area().unwrap() < 1e-5);
        let pieces = densify(
            &[[0.0, 0.0], [0.0, 10.0]],
            200_000.0,
            true,
            &AtomicUsize::new(0),
        )
        .unwrap();
        assert_eq!(pieces.len(), 7); // 1,111.95 km in six pieces of 185.3 km
        assert!((pieces[3][1] - 5.0).abs() < 1e-12 && pieces[3][0].abs() < 1e-12);
    }

    #[test]
    fn densifying_stops_at_the_vertex_limit() {
        let line = [[0.0, 0.0], [1.0, 0.0]];
        let tiny = densify(&line, 1e-12, false, &AtomicUsize::new(0)).unwrap_err();
        assert!(tiny.contains("more than"), "{tiny}");
        // The count is the layer's: lines short enough alone add up past the limit.
        let added = AtomicUsize::new(MAX_DENSIFIED_VERTICES - 5);
        assert!(densify(&line, 0.25, false, &added).is_ok());
        assert!(densify(&line, 0.25, false, &added).is_err());
    }
}
