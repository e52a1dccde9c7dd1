//! Geometry functions per dialect. Geodesic work uses the same method in both dialects (a local
//! azimuthal equidistant projection; spheroidal area and length) so that engines agree.

use super::dialect::Dialect;
use super::quote::number;
use crate::plan::operator::{GeoExpr, SpatialPredicate};

/// The PROJ string of an azimuthal equidistant projection centred on `g`'s centroid (metres).
fn local_projection(g: &str) -> String {
    format!(
        "'+proj=aeqd +lat_0=' || ST_Y(ST_Centroid({g})) || ' +lon_0=' || ST_X(ST_Centroid({g})) || ' +datum=WGS84 +units=m +no_defs'"
    )
}

fn epsg_number(crs: &str) -> Result<&str, String> {
    crs.strip_prefix("EPSG:")
        .filter(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
        .ok_or_else(|| format!("{crs:?} is not of the form EPSG:<number>"))
}

fn scaled(sql: String, factor: f64) -> Result<String, String> {
    if (factor - 1.0).abs() < f64::EPSILON {
        Ok(sql)
    } else {
        Ok(format!("{sql} * {}", number(factor)?))
    }
}

/// Geographic WGS 84 with longitudes continuous around `g` (`+lon_wrap`): a buffer crossing
/// the antimeridian stays one valid polygon (its longitudes may pass ±180).
fn wrapped_lonlat(g: &str) -> String {
    format!("'+proj=longlat +datum=WGS84 +lon_wrap=' || ST_X(ST_Centroid({g})) || ' +no_defs'")
}

/// `expr` applied to the geometry SQL `g`.
pub fn geo_sql(expr: &GeoExpr, g: &str, dialect: Dialect) -> Result<String, String> {
    use Dialect::{Duckdb, Postgis};
    Ok(match (expr, dialect) {
        (
            GeoExpr::Buffer {
                distance,
                geodesic: false,
                segments,
            },
            _,
        ) => {
            format!("ST_Buffer({g}, {}, {segments})", number(*distance)?)
        }
        (
            GeoExpr::Buffer {
                distance,
                geodesic: true,
                segments,
            },
            Duckdb,
        ) => {
            // Projections built per feature leave the result without a CRS; the cast declares
            // it WGS 84 again (as ST_SetSRID does for PostGIS), so files written carry EPSG:4326.
            let (p, w) = (local_projection(g), wrapped_lonlat(g));
            format!(
                "CAST(ST_Transform(ST_Buffer(ST_Transform({g}, 'EPSG:4326', {p}, always_xy := true), {}, {segments}), {p}, {w}, always_xy := true) AS GEOMETRY('EPSG:4326'))",
                number(*distance)?
            )
        }
        (
            GeoExpr::Buffer {
                distance,
                geodesic: true,
                segments,
            },
            Postgis,
        ) => {
            let (p, w) = (local_projection(g), wrapped_lonlat(g));
            format!(
                "ST_SetSRID(ST_Transform(ST_Buffer(ST_Transform(ST_SetSRID({g}, 4326), {p}), {}, {segments}), {p}, {w}), 4326)",
                number(*distance)?
            )
        }
        (GeoExpr::Centroid, _) => format!("ST_Centroid({g})"),
        (GeoExpr::MakeValid, _) => format!(
            "CASE WHEN ST_IsValid({g}) THEN {g} ELSE ST_CollectionExtract(ST_MakeValid({g}), ST_Dimension({g}) + 1) END"
        ),
        (GeoExpr::ConvexHull, _) => format!("ST_ConvexHull({g})"),
        (
            GeoExpr::Simplify {
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
        (GeoExpr::Transform { from, to }, Duckdb) => {
            epsg_number(from)?;
            epsg_number(to)?;
            format!(
                "ST_Transform({g}, {}, {}, always_xy := true)",
                super::quote::string(from),
                super::quote::string(to)
            )
        }
        (GeoExpr::Transform { from, to }, Postgis) => {
            format!(
                "ST_Transform(ST_SetSRID({g}, {}), {})",
                epsg_number(from)?,
                epsg_number(to)?
            )
        }
        (
            GeoExpr::Area {
                geodesic: false,
                factor,
            },
            _,
        ) => scaled(format!("ST_Area({g})"), *factor)?,
        (
            GeoExpr::Area {
                geodesic: true,
                factor,
            },
            Duckdb,
        ) => scaled(
            format!("ST_Area_Spheroid(ST_FlipCoordinates({g}))"),
            *factor,
        )?,
        (
            GeoExpr::Area {
                geodesic: true,
                factor,
            },
            Postgis,
        ) => scaled(
            format!("ST_Area(CAST(ST_SetSRID({g}, 4326) AS geography))"),
            *factor,
        )?,
        (
            GeoExpr::Length {
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
            GeoExpr::Length {
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
            GeoExpr::Length {
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

/// `predicate(a, b)` (with the distance for `dwithin`).
pub fn predicate_sql(
    predicate: SpatialPredicate,
    a: &str,
    b: &str,
    distance: Option<f64>,
) -> Result<String, String> {
    let function = predicate.sql_function();
    match (predicate, distance) {
        (SpatialPredicate::Dwithin, Some(d)) => Ok(format!("{function}({a}, {b}, {})", number(d)?)),
        (SpatialPredicate::Dwithin, None) => Err("dwithin needs a distance".into()),
        _ => Ok(format!("{function}({a}, {b})")),
    }
}
