//! Per-feature functions that construct a new shape from each geometry ([`ShapeExpr`]: an
//! oriented box, a bounding circle, a smoothed, densified or offset line),
//! each in one place: its plan text, the engines with a SQL function for it and that SQL,
//! and its native kernel. DuckDB spatial lacks several of them: there the native backend
//! computes them (`plan/native.rs` reads [`ShapeExpr::sql_on`]).

use crate::sql::Dialect;
use crate::sql::quote::number;

/// How the corners of an offset curve are joined.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OffsetJoin {
    Round,
    Mitre,
    Bevel,
}

impl OffsetJoin {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Round => "round",
            Self::Mitre => "mitre",
            Self::Bevel => "bevel",
        }
    }
}

/// The most vertices [`ShapeExpr::Densify`] may add to a layer: the native kernel refuses to go
/// past it.
pub const MAX_DENSIFIED_VERTICES: usize = 10_000_000;

/// Shapes constructed from each feature's geometry.
#[derive(Debug, Clone, PartialEq)]
pub enum ShapeExpr {
    /// The rotated rectangle of least area around it.
    OrientedEnvelope,
    /// The smallest circle around it, as a polygon of `segments` vertices a quarter, drawn
    /// around the circle (its edges touch it) from the top clockwise.
    /// The smallest enclosing circle, `segments` vertices a quarter: drawn around the circle
    /// from the top (PostGIS's), or with `on_circle` its vertices on the circle from the east,
    /// clockwise (GEOS's buffer of the centre, as Shapely gives it).
    MinBoundingCircle { segments: u32, on_circle: bool },
    /// Vertices added so no segment is longer than `max_length` (CRS units; `geodesic`:
    /// metres along great circles on lon/lat), each segment cut into equal pieces; 2-D.
    Densify { max_length: f64, geodesic: bool },
    /// Chaikin's corner cutting, `iterations` times; line end points kept; 2-D. With
    /// `every_segment` (GISPulse's): every segment of a line gives both its points (beside the
    /// end points), two-point lines too, and holes are cut as open lines.
    Chaikin {
        iterations: u32,
        every_segment: bool,
    },
    /// The line offset by `distance` (CRS units; positive to the left); NULL for
    /// non-lines.
    OffsetCurve {
        distance: f64,
        join: OffsetJoin,
        segments: u32,
        mitre_limit: f64,
    },
    /// GEOS 3.12+'s concave hull of the vertices: Delaunay triangles eroded while their edges
    /// are longer than `ratio` of the range of edge lengths; 2-D.
    ConcaveHull { ratio: f64, holes: bool },
    /// GEOS's alpha shape of the vertices: Delaunay triangles eroded while their circumradius
    /// is at least `alpha`; 2-D.
    AlphaShape { alpha: f64, holes: bool },
    /// The faces the edges of the vertices' Delaunay triangles of circumradius below `radius`
    /// enclose, unioned (isolated parts, enclosed gaps filled); their convex hull when there
    /// are fewer than four vertices or no such triangle; 2-D.
    SmallTriangles { radius: f64 },
}

/// `g` forced to 2-D: the shapes of both engines and the native kernels drop Z and M alike.
fn flat(g: &str) -> String {
    format!("ST_Force2D({g})")
}

impl ShapeExpr {
    /// The function in the plan's EXPLAIN text.
    pub fn explain(&self) -> String {
        match self {
            Self::OrientedEnvelope => "OrientedEnvelope".into(),
            Self::MinBoundingCircle { segments, .. } => {
                format!("MinBoundingCircle({segments} seg/quarter)")
            }
            Self::Densify {
                max_length,
                geodesic: true,
            } => format!("Densify({max_length} m geodesic)"),
            Self::Densify { max_length, .. } => format!("Densify({max_length} crs units)"),
            Self::Chaikin {
                iterations,
                every_segment: false,
            } => format!("ChaikinSmooth({iterations}×)"),
            Self::Chaikin { iterations, .. } => {
                format!("ChaikinSmooth({iterations}×, every segment)")
            }
            Self::OffsetCurve {
                distance,
                join,
                segments,
                mitre_limit,
            } => format!(
                "OffsetCurve({distance} crs units, join={}, {segments} seg, mitre_limit={mitre_limit})",
                join.as_str()
            ),
            Self::ConcaveHull { ratio, holes } => {
                format!("ConcaveHull(ratio={ratio}, holes={holes})")
            }
            Self::AlphaShape { alpha, holes } => {
                format!("AlphaShape(alpha={alpha} crs units, holes={holes})")
            }
            Self::SmallTriangles { radius } => {
                format!("SmallTriangles(radius={radius} crs units)")
            }
        }
    }

    /// Whether `dialect` has a SQL function giving this shape as the native kernel does.
    pub fn sql_on(&self, dialect: Dialect) -> bool {
        match (self, dialect) {
            // PostGIS 3.3's GEOS (3.11) gives the rectangle of least width instead.
            (Self::OrientedEnvelope, dialect) => dialect == Dialect::Duckdb,
            // GEOS 3.11 (PostGIS 3.3) has the older concave hull; no engine has alpha shapes.
            (Self::ConcaveHull { .. }, dialect) => dialect == Dialect::Duckdb,
            (Self::AlphaShape { .. } | Self::SmallTriangles { .. }, _) => false,
            (
                Self::MinBoundingCircle {
                    on_circle: true, ..
                },
                _,
            ) => false,
            (
                Self::Chaikin {
                    every_segment: true,
                    ..
                },
                _,
            ) => false,
            // GEOS 3.11's (PostGIS 3.3) offset curve folds back at tight bends; the kernel
            // draws GEOS 3.12+'s from the buffer's boundary.
            (Self::OffsetCurve { .. }, _) => false,
            // Geography segmentizing bisects edges; the kernel cuts them in equal pieces.
            (Self::Densify { geodesic: true, .. }, _) => false,
            (_, Dialect::Duckdb) => false,
            (_, Dialect::Postgis) => true,
        }
    }

    /// What an engine lacking the shape's function says (`None` when it has one).
    pub fn missing_on(&self, dialect: Dialect) -> Option<String> {
        (!self.sql_on(dialect)).then(|| {
            let engine = match dialect {
                Dialect::Duckdb => "DuckDB spatial",
                Dialect::Postgis => "PostGIS",
            };
            format!(
                "{} runs on the native backend: {engine} has no function giving the same shape",
                self.explain()
            )
        })
    }

    /// The function applied to the geometry SQL `g` in `dialect` (only where
    /// [`Self::sql_on`]).
    pub fn sql(&self, g: &str, dialect: Dialect) -> Result<String, String> {
        if let Some(missing) = self.missing_on(dialect) {
            return Err(missing);
        }
        Ok(match self {
            Self::OrientedEnvelope => {
                format!(
                    "CASE WHEN ST_IsEmpty({g}) THEN {g} ELSE ST_MinimumRotatedRectangle({g}) END"
                )
            }
            // PostGIS computes the ring's last vertex apart from its first: they may differ in
            // the last bits (an open ring other readers refuse), so the first closes it.
            Self::MinBoundingCircle { segments, .. } => {
                // Of every vertex: PostGIS leaves out holes (outside the shell of an invalid
                // polygon, say). The circle of the vertices is the circle of their convex hull's
                // vertices, and PostGIS's search slows sharply with the count of points (minutes
                // for a few hundred polygons of thousands of vertices, evaluated once per use
                // below): the hull comes first, as in the native kernel.
                let circle = format!(
                    "ST_MinimumBoundingCircle(ST_ConvexHull(ST_Points({})), {segments})",
                    flat(g)
                );
                let ring = format!("ST_ExteriorRing({circle})");
                format!(
                    "CASE WHEN ST_IsEmpty({g}) THEN ST_Force2D({g}) WHEN ST_GeometryType({circle}) = 'ST_Polygon' THEN ST_MakePolygon(ST_SetPoint({ring}, -1, ST_StartPoint({ring}))) ELSE {circle} END"
                )
            }
            Self::Densify { max_length, .. } => {
                format!("ST_Segmentize({}, {})", flat(g), number(*max_length)?)
            }
            Self::Chaikin { iterations, .. } => format!(
                "CASE WHEN ST_Dimension({g}) = 0 OR ST_IsEmpty({g}) THEN ST_Force2D({g}) ELSE ST_ChaikinSmoothing({}, {iterations}, false) END",
                flat(g)
            ),
            Self::ConcaveHull { ratio, holes } => {
                format!("ST_ConcaveHull({}, {}, {holes})", flat(g), number(*ratio)?)
            }
            Self::OffsetCurve { .. } | Self::AlphaShape { .. } | Self::SmallTriangles { .. } => {
                return Err(self.explain());
            }
        })
    }

    /// The native kernel that computes the shape, in a line.
    pub fn native_kernel(&self) -> String {
        match self {
            Self::OrientedEnvelope => {
                "least-area rectangle (rotating calipers over the convex hull)".into()
            }
            Self::MinBoundingCircle { segments, .. } => format!(
                "smallest enclosing circle of the convex hull's vertices (Welzl), drawn with {segments} vertices a quarter"
            ),
            Self::Densify {
                geodesic: true,
                max_length,
            } => format!(
                "each segment cut into equal great-circle pieces of at most {max_length} m (spherical interpolation)"
            ),
            Self::Densify { max_length, .. } => {
                format!("each segment cut into equal pieces of at most {max_length}")
            }
            Self::Chaikin { iterations, .. } => {
                format!("Chaikin corner cutting, {iterations} iteration(s)")
            }
            Self::OffsetCurve { .. } => {
                "GEOS 3.12+'s offset curve: the GEOS buffer's boundary on the offset side".into()
            }
            Self::SmallTriangles { .. } => {
                "Delaunay triangles (GEOS 3.12+), the small ones' edges polygonized and unioned (GEOS)".into()
            }
            Self::ConcaveHull { .. } | Self::AlphaShape { .. } => {
                "GEOS 3.12+'s concave hull: Delaunay triangles (GEOS) eroded from the border in GEOS's queue order".into()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn engines_lacking_a_function_say_so() {
        let circle = ShapeExpr::MinBoundingCircle {
            segments: 8,
            on_circle: false,
        };
        assert!(circle.sql("g", Dialect::Postgis).is_ok());
        let missing = circle.sql("g", Dialect::Duckdb).unwrap_err();
        assert!(missing.contains("runs on the native backend"), "{missing}");
        let geodesic = ShapeExpr::Densify {
            max_length: 1000.0,
            geodesic: true,
        };
        assert!(!geodesic.sql_on(Dialect::Postgis));
        assert!(ShapeExpr::OrientedEnvelope.sql_on(Dialect::Duckdb));
        assert!(!ShapeExpr::OrientedEnvelope.sql_on(Dialect::Postgis));
        let offset = ShapeExpr::OffsetCurve {
            distance: -2.5,
            join: OffsetJoin::Mitre,
            segments: 8,
            mitre_limit: 5.0,
        };
        let missing = offset.sql("g", Dialect::Postgis).unwrap_err();
        assert!(missing.contains("runs on the native backend"), "{missing}");
    }
}
