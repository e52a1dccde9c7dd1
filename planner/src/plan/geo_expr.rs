//! The geometry functions a map computes over `geom` ([`GeoExpr`]), each in one place: its
//! plan text, its SQL on DuckDB spatial and on PostGIS, and the native kernel that computes it
//! (if one does). Adding a per-feature geometry function is a variant here, its arm in each of
//! the three methods, and the kernel in `native/src/geometry_ops.rs`.

pub use super::geo_kinds::Family;
use super::geo_kinds::{Kind, force_multi, force_single, kind_in, of_family, without_m};
pub use super::shape_expr::{MAX_DENSIFIED_VERTICES, OffsetJoin, ShapeExpr};
use crate::sql::Dialect;
use crate::sql::geo::{DUCKDB_GEODESIC_BUFFER, epsg_number, postgis_geodesic_buffer, scaled};
use crate::sql::quote::{number, string};

/// Geometry functions of `geom`. Distances are in the CRS's units unless `geodesic`.
#[derive(Debug, Clone, PartialEq)]
pub enum GeoExpr {
    /// Buffer by `distance`; `geodesic`: `distance` is in metres on geographic (lon/lat)
    /// coordinates, computed in a local azimuthal equidistant projection around each feature.
    Buffer {
        distance: f64,
        geodesic: bool,
        segments: u32,
    },
    Centroid,
    /// The geometry made valid when it is not (GEOS `MakeValid`, keeping the parts of the
    /// input's dimension); valid and NULL geometries unchanged.
    MakeValid,
    Simplify {
        tolerance: f64,
        preserve_topology: bool,
    },
    ConvexHull,
    Transform {
        from: String,
        to: String,
    },
    /// Area in square metres (`geodesic`: on the WGS 84 spheroid; else CRS units² × factor).
    Area {
        geodesic: bool,
        factor: f64,
    },
    /// Length of lines, perimeter of polygons, in metres (`geodesic` as for `Area`).
    Length {
        geodesic: bool,
        factor: f64,
    },
    /// The boundary as a Multi* (polygons: their rings; lines: their end points; points: an
    /// empty MultiPoint), 2-D when empty; NULL for geometry collections, which have none.
    Boundary,
    /// The bounding box: a polygon, or a point or two-point line when it has no area; empty
    /// geometries unchanged.
    Envelope,
    /// x and y swapped at every vertex.
    SwapXy,
    /// The vertex order of every line and ring reversed; with `lines_only`, of LineStrings and
    /// MultiLineStrings only (everything else left as it is).
    Reverse {
        lines_only: bool,
    },
    /// Z removed (M kept).
    DropZ,
    /// M removed (Z kept).
    DropM,
    /// Z of `value` added where missing (existing Z and M kept).
    AddZ {
        value: f64,
    },
    /// M of `value` added where missing (existing Z and M kept).
    AddM {
        value: f64,
    },
    /// The parts of lines joined end to end; `directed`: only where their directions agree.
    /// Other geometries unchanged.
    LineMerge {
        directed: bool,
    },
    /// The part of a LineString between fractions `start` and `end` of its length; NULL for
    /// other geometry types.
    LineSubstring {
        start: f64,
        end: f64,
        /// Everything but LineStrings left as it is (else NULL).
        keep_others: bool,
    },
    /// Coordinates rounded to a grid of `size` (GEOS precision reducer), M dropped.
    SnapToGrid {
        size: f64,
    },
    /// The 2-D affine transformation `x' = a·x + b·y + xoff`, `y' = d·x + e·y + yoff`.
    Affine {
        a: f64,
        b: f64,
        d: f64,
        e: f64,
        xoff: f64,
        yoff: f64,
    },
    /// Points, lines and polygons as one-part Multi*.
    ForceMulti,
    /// One-part Multi* as their part (with `first_part`, any Multi* of parts as its first).
    ForceSingle {
        first_part: bool,
    },
    /// The geometry when it is of `family` (single or Multi*), NULL or empty; any other becomes
    /// NULL, or fails the statement naming its type when `fail`.
    OfFamily {
        family: Family,
        fail: bool,
    },
    /// The CRS declared `crs` (an `EPSG:` code), coordinates unchanged.
    SetCrs {
        crs: String,
    },
    /// A new shape made from the geometry.
    Shape(ShapeExpr),
    /// A measure (`Area`, `Length`) of the geometry transformed from `from` to `to`; the
    /// geometry itself is left as it is (`work_crs` on a measuring step).
    MeasuredIn {
        measure: Box<GeoExpr>,
        from: String,
        to: String,
    },
}

impl GeoExpr {
    /// The function in the plan's EXPLAIN text.
    pub fn explain(&self) -> String {
        match self {
            Self::Buffer {
                distance,
                geodesic: true,
                segments,
            } => {
                format!("Buffer({distance} m geodesic, {segments} seg)")
            }
            Self::Buffer {
                distance, segments, ..
            } => format!("Buffer({distance} crs units, {segments} seg)"),
            Self::Centroid => "Centroid".into(),
            Self::Simplify {
                tolerance,
                preserve_topology,
            } => {
                format!("Simplify({tolerance}, preserve_topology={preserve_topology})")
            }
            Self::ConvexHull => "ConvexHull".into(),
            Self::MakeValid => "MakeValid".into(),
            Self::Transform { from, to } => format!("Transform({from} → {to})"),
            Self::Area { geodesic, factor } => format!("Area(geodesic={geodesic}, ×{factor})"),
            Self::Length { geodesic, factor } => {
                format!("Length(geodesic={geodesic}, ×{factor})")
            }
            Self::Boundary => "Boundary".into(),
            Self::Envelope => "Envelope".into(),
            Self::SwapXy => "SwapXY".into(),
            Self::Reverse { lines_only: false } => "Reverse".into(),
            Self::Reverse { lines_only: true } => "Reverse(lines only)".into(),
            Self::DropZ => "DropZ".into(),
            Self::DropM => "DropM".into(),
            Self::AddZ { value } => format!("AddZ({value})"),
            Self::AddM { value } => format!("AddM({value})"),
            Self::LineMerge { directed } => format!("LineMerge(directed={directed})"),
            Self::LineSubstring { start, end, .. } => format!("LineSubstring({start} → {end})"),
            Self::SnapToGrid { size } => format!("SnapToGrid({size} crs units)"),
            Self::Affine {
                a,
                b,
                d,
                e,
                xoff,
                yoff,
            } => format!("Affine(a={a}, b={b}, d={d}, e={e}, xoff={xoff}, yoff={yoff})"),
            Self::ForceMulti => "ForceMulti".into(),
            Self::ForceSingle { first_part: false } => "ForceSingle".into(),
            Self::ForceSingle { first_part: true } => "ForceSingle(first part)".into(),
            Self::OfFamily { family, fail } => {
                format!("OfFamily({}, fail={fail})", family.name())
            }
            Self::SetCrs { crs } => format!("SetCrs({crs})"),
            Self::Shape(shape) => shape.explain(),
            Self::MeasuredIn { measure, to, .. } => format!("{} in {to}", measure.explain()),
        }
    }

    /// The function applied to the geometry SQL `g` in `dialect`.
    pub fn sql(&self, g: &str, dialect: Dialect) -> Result<String, String> {
        use Dialect::{Duckdb, Postgis};
        Ok(match (self, dialect) {
            (
                Self::Buffer {
                    distance,
                    geodesic: false,
                    segments,
                },
                _,
            ) => {
                format!("ST_Buffer({g}, {}, {segments})", number(*distance)?)
            }
            (
                Self::Buffer {
                    distance,
                    geodesic: true,
                    segments,
                },
                Duckdb,
            ) => {
                // The function's WKB carries no CRS; the cast declares it WGS 84 again (as
                // ST_SetSRID does for PostGIS), so files written carry EPSG:4326.
                format!(
                    "CAST(ST_GeomFromWKB({DUCKDB_GEODESIC_BUFFER}(ST_AsWKB({g}), {}, {segments})) AS GEOMETRY('EPSG:4326'))",
                    number(*distance)?
                )
            }
            (
                Self::Buffer {
                    distance,
                    geodesic: true,
                    segments,
                },
                Postgis,
            ) => {
                let buffer = postgis_geodesic_buffer(g, &number(*distance)?, *segments);
                format!("ST_SetSRID({buffer}, 4326)")
            }
            (Self::Centroid, _) => format!("ST_Centroid({g})"),
            (Self::MakeValid, _) => format!(
                "CASE WHEN ST_IsValid({g}) THEN {g} ELSE ST_CollectionExtract(ST_MakeValid({g}), ST_Dimension({g}) + 1) END"
            ),
            (Self::ConvexHull, _) => format!("ST_ConvexHull({g})"),
            (
                Self::Simplify {
                    tolerance,
                    preserve_topology,
                },
                _,
            ) => {
                let function = if *preserve_topology {
                    "ST_SimplifyPreserveTopology"
                } else {
                    "ST_Simplify"
                };
                format!("{function}({g}, {})", number(*tolerance)?)
            }
            (Self::Transform { from, to }, Duckdb) => {
                epsg_number(from)?;
                epsg_number(to)?;
                format!(
                    "ST_Transform({g}, {}, {}, always_xy := true)",
                    string(from),
                    string(to)
                )
            }
            (Self::Transform { from, to }, Postgis) => {
                format!(
                    "ST_Transform(ST_SetSRID({g}, {}), {})",
                    epsg_number(from)?,
                    epsg_number(to)?
                )
            }
            (
                Self::Area {
                    geodesic: false,
                    factor,
                },
                _,
            ) => scaled(format!("ST_Area({g})"), *factor)?,
            (
                Self::Area {
                    geodesic: true,
                    factor,
                },
                Duckdb,
            ) => scaled(
                format!("ST_Area_Spheroid(ST_FlipCoordinates({g}))"),
                *factor,
            )?,
            (
                Self::Area {
                    geodesic: true,
                    factor,
                },
                Postgis,
            ) => scaled(
                format!("ST_Area(CAST(ST_SetSRID({g}, 4326) AS geography))"),
                *factor,
            )?,
            (
                Self::Length {
                    geodesic: false,
                    factor,
                },
                _,
            ) => scaled(
                format!(
                    "(CASE WHEN ST_Dimension({g}) = 2 THEN ST_Perimeter({g}) ELSE ST_Length({g}) END)"
                ),
                *factor,
            )?,
            (
                Self::Length {
                    geodesic: true,
                    factor,
                },
                Duckdb,
            ) => scaled(
                format!(
                    "(CASE WHEN ST_Dimension({g}) = 2 THEN ST_Perimeter_Spheroid(ST_FlipCoordinates({g})) ELSE ST_Length_Spheroid(ST_FlipCoordinates({g})) END)"
                ),
                *factor,
            )?,
            (
                Self::Length {
                    geodesic: true,
                    factor,
                },
                Postgis,
            ) => scaled(
                format!(
                    "(CASE WHEN ST_Dimension({g}) = 2 THEN ST_Perimeter(CAST(ST_SetSRID({g}, 4326) AS geography)) ELSE ST_Length(CAST(ST_SetSRID({g}, 4326) AS geography)) END)"
                ),
                *factor,
            )?,
            // The engines' own boundaries differ in type (DuckDB: a GEOMETRYCOLLECTION EMPTY
            // for a point, a MultiLineString for a one-ring MultiPolygon, empty results without
            // Z or M; PostGIS: POINT EMPTY, a LineString, empty results keeping them; DuckDB
            // NULL for collections): the boundary's dimension extracted as a Multi*, 2-D when
            // empty, is one answer on both.
            (Self::Boundary, _) => {
                let boundary = format!(
                    "ST_Multi(ST_CollectionExtract(ST_Boundary({g}), GREATEST(ST_Dimension({g}), 1)))"
                );
                format!(
                    "CASE WHEN {} THEN NULL WHEN ST_IsEmpty({boundary}) THEN ST_Force2D({boundary}) ELSE {boundary} END",
                    kind_in(g, &[Kind::GeometryCollection], dialect)
                )
            }
            // The hull of the envelope: the box as PostGIS gives it (a point or a line when it
            // has no area, where DuckDB gives a degenerate polygon), with the same ring order.
            (Self::Envelope, _) => format!(
                "CASE WHEN ST_IsEmpty({g}) THEN {g} ELSE ST_ConvexHull(ST_Envelope({g})) END"
            ),
            (Self::SwapXy, _) => format!("ST_FlipCoordinates({g})"),
            // DuckDB drops the Z and M of empty geometries it reverses.
            (Self::Reverse { lines_only: false }, _) => {
                format!("CASE WHEN ST_IsEmpty({g}) THEN {g} ELSE ST_Reverse({g}) END")
            }
            (Self::Reverse { lines_only: true }, _) => format!(
                "CASE WHEN {} AND NOT ST_IsEmpty({g}) THEN ST_Reverse({g}) ELSE {g} END",
                kind_in(g, &[Kind::LineString, Kind::MultiLineString], dialect)
            ),
            (Self::DropZ, _) => format!(
                "CASE WHEN ST_ZMFlag({g}) IN (1, 3) THEN ST_Force3DM({g}, 0) ELSE ST_Force2D({g}) END"
            ),
            (Self::DropM, _) => without_m(g),
            (Self::AddZ { value }, _) => {
                let value = number(*value)?;
                format!(
                    "CASE WHEN ST_ZMFlag({g}) IN (1, 3) THEN ST_Force4D({g}, {value}, 0) ELSE ST_Force3DZ({g}, {value}) END"
                )
            }
            (Self::AddM { value }, _) => {
                let value = number(*value)?;
                format!(
                    "CASE WHEN ST_ZMFlag({g}) IN (2, 3) THEN ST_Force4D({g}, 0, {value}) ELSE ST_Force3DM({g}, {value}) END"
                )
            }
            // Only non-empty lines: DuckDB merges polygon rings and turns empties into a
            // GEOMETRYCOLLECTION EMPTY, PostGIS does neither.
            (Self::LineMerge { directed }, _) => {
                let merge = if *directed {
                    format!("ST_LineMerge({g}, true)")
                } else {
                    format!("ST_LineMerge({g})")
                };
                format!(
                    "CASE WHEN ST_Dimension({g}) = 1 AND NOT ST_IsEmpty({g}) THEN {merge} ELSE {g} END"
                )
            }
            // DuckDB takes LineStrings only; a line of zero length gives NaN coordinates there,
            // its first point on PostGIS.
            (
                Self::LineSubstring {
                    start,
                    end,
                    keep_others,
                },
                _,
            ) => format!(
                "CASE WHEN {} THEN CASE WHEN ST_IsEmpty({g}) THEN {g} WHEN ST_Length({g}) = 0 THEN ST_StartPoint({g}) ELSE ST_LineSubstring({g}, {}, {}) END{} END",
                kind_in(g, &[Kind::LineString], dialect),
                number(*start)?,
                number(*end)?,
                if *keep_others {
                    format!(" ELSE {g}")
                } else {
                    String::new()
                }
            ),
            // PostGIS's GEOS drops M and returns a one-part Multi* as its part; DuckDB's keeps
            // both: M is dropped first there, and Multi* made Multi* again on PostGIS.
            (Self::SnapToGrid { size }, Duckdb) => format!(
                "CASE WHEN ST_IsEmpty({g}) THEN {g} ELSE ST_ReducePrecision({}, {}) END",
                without_m(g),
                number(*size)?
            ),
            (Self::SnapToGrid { size }, Postgis) => {
                let reduced = format!("ST_ReducePrecision({g}, {})", number(*size)?);
                format!(
                    "CASE WHEN ST_IsEmpty({g}) THEN {g} WHEN {} THEN ST_Multi({reduced}) ELSE {reduced} END",
                    kind_in(g, &Kind::MULTI, dialect)
                )
            }
            // DuckDB's ST_Affine sets M to 0 on XYZM geometries: those lose M on both engines.
            (
                Self::Affine {
                    a,
                    b,
                    d,
                    e,
                    xoff,
                    yoff,
                },
                _,
            ) => {
                let args = [a, b, d, e, xoff, yoff]
                    .into_iter()
                    .map(|v| number(*v))
                    .collect::<Result<Vec<_>, _>>()?
                    .join(", ");
                format!(
                    "CASE WHEN ST_ZMFlag({g}) = 3 THEN ST_Affine(ST_Force3DZ({g}, 0), {args}) ELSE ST_Affine({g}, {args}) END"
                )
            }
            (Self::ForceMulti, _) => force_multi(g, dialect),
            (Self::ForceSingle { first_part }, _) => force_single(g, *first_part, dialect),
            (Self::OfFamily { family, fail }, _) => of_family(g, *family, *fail, dialect),
            (Self::SetCrs { crs }, Duckdb) => {
                epsg_number(crs)?;
                format!("ST_SetCRS({g}, {})", string(crs))
            }
            (Self::SetCrs { crs }, Postgis) => {
                format!("ST_SetSRID({g}, {})", epsg_number(crs)?)
            }
            (Self::Shape(shape), _) => shape.sql(g, dialect)?,
            (Self::MeasuredIn { measure, from, to }, _) => {
                let moved = Self::Transform {
                    from: from.clone(),
                    to: to.clone(),
                }
                .sql(g, dialect)?;
                measure.sql(&moved, dialect)?
            }
        })
    }

    /// The native kernel that computes the function, in a line (`None`: no kernel; the step
    /// runs as SQL).
    pub fn native_kernel(&self) -> Option<String> {
        Some(match self {
            Self::Buffer {
                distance,
                geodesic: true,
                ..
            } => format!(
                "geodesic buffer of {distance} m (points: circle vertices by the direct geodesic problem on WGS 84; lines and polygons: GEOS buffer in a local azimuthal equidistant frame at the centroid)"
            ),
            Self::Buffer { distance, .. } => format!("GEOS buffer of {distance}"),
            Self::Centroid => "centroid (geo)".to_owned(),
            Self::Simplify {
                tolerance,
                preserve_topology,
            } => format!(
                "GEOS {}simplify, tolerance {tolerance}",
                if *preserve_topology {
                    "topology-preserving "
                } else {
                    ""
                }
            ),
            Self::ConvexHull => "convex hull (GEOS)".to_owned(),
            Self::MakeValid => "make valid (GEOS MakeValid of invalid geometries)".to_owned(),
            Self::Area { geodesic: true, .. } => {
                "area on the WGS 84 spheroid (geo, Karney)".to_owned()
            }
            Self::Area { factor, .. } => format!("planar area × {factor}"),
            Self::Length { geodesic: true, .. } => {
                "length on the WGS 84 spheroid (geo, Karney)".to_owned()
            }
            Self::Length { factor, .. } => format!("planar length × {factor}"),
            Self::Shape(shape) => shape.native_kernel(),
            Self::MeasuredIn { .. }
            | Self::Transform { .. }
            | Self::SetCrs { .. }
            | Self::Boundary
            | Self::Envelope
            | Self::SwapXy
            | Self::Reverse { .. }
            | Self::DropZ
            | Self::DropM
            | Self::AddZ { .. }
            | Self::AddM { .. }
            | Self::LineMerge { .. }
            | Self::LineSubstring { .. }
            | Self::SnapToGrid { .. }
            | Self::Affine { .. }
            | Self::ForceMulti
            | Self::ForceSingle { .. }
            | Self::OfFamily { .. } => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn both(expr: &GeoExpr) -> [String; 2] {
        Dialect::ALL.map(|d| expr.sql("\"geom\"", d).unwrap())
    }

    #[test]
    fn type_tests_use_each_engines_names() {
        let [duckdb, postgis] = both(&GeoExpr::ForceSingle { first_part: false });
        assert!(duckdb.contains("IN ('MULTIPOINT', 'MULTILINESTRING', 'MULTIPOLYGON')"));
        assert!(duckdb.contains("ST_Dump(\"geom\")[1].geom"));
        assert!(postgis.contains("IN ('ST_MultiPoint', 'ST_MultiLineString', 'ST_MultiPolygon')"));
        assert!(postgis.contains("ST_GeometryN(\"geom\", 1)"));
        let [duckdb, postgis] = both(&GeoExpr::LineSubstring {
            start: 0.25,
            end: 0.75,
            keep_others: false,
        });
        assert!(duckdb.starts_with("CASE WHEN ST_GeometryType(\"geom\") = 'LINESTRING' THEN"));
        assert!(postgis.starts_with("CASE WHEN ST_GeometryType(\"geom\") = 'ST_LineString' THEN"));
        assert!(duckdb.contains("ST_LineSubstring(\"geom\", 0.25, 0.75)"));
    }

    #[test]
    fn numbers_enter_the_sql_checked() {
        let [duckdb, postgis] = both(&GeoExpr::Affine {
            a: 2.0,
            b: 0.5,
            d: -1.0,
            e: 3.0,
            xoff: 10.0,
            yoff: 20.0,
        });
        assert_eq!(duckdb, postgis);
        assert!(duckdb.contains("ST_Affine(\"geom\", 2, 0.5, -1, 3, 10, 20)"));
        assert!(
            GeoExpr::AddZ { value: f64::NAN }
                .sql("\"geom\"", Dialect::Duckdb)
                .is_err()
        );
        let [duckdb, postgis] = both(&GeoExpr::SnapToGrid { size: 0.5 });
        assert!(duckdb.contains("ST_ReducePrecision(CASE WHEN ST_ZMFlag"));
        assert!(postgis.contains("ST_Multi(ST_ReducePrecision(\"geom\", 0.5))"));
    }

    #[test]
    fn functions_without_a_kernel_run_as_sql() {
        for expr in [
            GeoExpr::Boundary,
            GeoExpr::Envelope,
            GeoExpr::SwapXy,
            GeoExpr::Reverse { lines_only: false },
            GeoExpr::DropZ,
            GeoExpr::DropM,
            GeoExpr::AddZ { value: 0.0 },
            GeoExpr::AddM { value: 0.0 },
            GeoExpr::LineMerge { directed: false },
            GeoExpr::LineSubstring {
                start: 0.0,
                end: 1.0,
                keep_others: false,
            },
            GeoExpr::SnapToGrid { size: 1.0 },
            GeoExpr::Affine {
                a: 1.0,
                b: 0.0,
                d: 0.0,
                e: 1.0,
                xoff: 0.0,
                yoff: 0.0,
            },
            GeoExpr::ForceMulti,
            GeoExpr::ForceSingle { first_part: true },
        ] {
            assert!(expr.native_kernel().is_none(), "{}", expr.explain());
        }
        assert!(GeoExpr::MakeValid.native_kernel().is_some());
    }
}
