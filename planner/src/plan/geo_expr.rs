//! The geometry functions a map computes over `geom` ([`GeoExpr`]), each in one place: its
//! plan text, its SQL on DuckDB spatial and on PostGIS, and the native kernel that computes it
//! (if one does). Adding a per-feature geometry function is a variant here, its arm in each of
//! the three methods, and the kernel in `backends/src/native/geometry_ops.rs`.

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
            Self::Transform { .. } => return None,
        })
    }
}
