//! The SELECTs of the layer-wide diagrams (`TessellateOp`): Voronoi cells joined back to their
//! sites' rows, Delaunay triangles and polygonized faces numbered in a canonical order, so that
//! every engine numbers them alike.

use super::{Bounds, PIECE_ID, TessellateOp};
use crate::plan::geo_kinds::{Kind, kind_in};
use crate::schema::GEOM;
use crate::sql::dialect::Dialect;
use crate::sql::input::Input;
use crate::sql::parts::projection_with_geom;
use crate::sql::quote::{ident, number};

/// The SELECT of a diagram over `main`.
pub fn tessellate_sql(
    op: &TessellateOp,
    main: Input<'_>,
    dialect: Dialect,
) -> Result<String, String> {
    match op {
        TessellateOp::Voronoi { envelope, clip } => {
            voronoi(envelope.as_ref(), *clip, main, dialect)
        }
        TessellateOp::Delaunay { edges, tolerance } => {
            let pieces = match dialect {
                Dialect::Postgis => format!(
                    "SELECT (ST_Dump(ST_DelaunayTriangles(ST_Collect(t.{}), {}, {}))).geom AS g FROM {} AS t",
                    ident(GEOM),
                    number(*tolerance)?,
                    i32::from(*edges),
                    main.from
                ),
                Dialect::Duckdb => {
                    return Err("DuckDB spatial has no Delaunay triangulation".into());
                }
            };
            Ok(numbered(&pieces, dialect))
        }
        TessellateOp::Polygonize { node } => {
            Ok(numbered(&polygonize(*node, main, dialect), dialect))
        }
    }
}

/// `pieces` (a SELECT of geometries `g`) numbered in `id` by their bounding boxes' lower-left
/// corners, ties broken by the normalized geometry's WKB (the same bytes on both engines).
fn numbered(pieces: &str, dialect: Dialect) -> String {
    let wkb = match dialect {
        Dialect::Duckdb => "ST_AsWKB(ST_Normalize(d.g))::BLOB",
        Dialect::Postgis => "ST_AsBinary(ST_Normalize(d.g))",
    };
    format!(
        "SELECT CAST(row_number() OVER (ORDER BY ST_XMin(d.g), ST_YMin(d.g), {wkb}) AS BIGINT) AS {}, d.g AS {} FROM ({pieces}) AS d",
        ident(PIECE_ID),
        ident(GEOM)
    )
}

/// The faces enclosed by every line and polygon ring, noded by a union when `node` (points and
/// collections are left out).
fn polygonize(node: bool, main: Input<'_>, dialect: Dialect) -> String {
    let geom = format!("t.{}", ident(GEOM));
    let polygons = kind_in(&geom, &[Kind::Polygon, Kind::MultiPolygon], dialect);
    let lines = kind_in(&geom, &[Kind::LineString, Kind::MultiLineString], dialect);
    let linework = format!(
        "SELECT CASE WHEN {polygons} THEN ST_Boundary({geom}) WHEN {lines} THEN {geom} END AS l FROM {} AS t",
        main.from
    );
    let lines = match (dialect, node) {
        (Dialect::Duckdb, true) => "[ST_Union_Agg(w.l)]",
        (Dialect::Duckdb, false) => "list(w.l)",
        (Dialect::Postgis, true) => "ARRAY[ST_Union(w.l)]",
        (Dialect::Postgis, false) => "array_agg(w.l)",
    };
    let dump = match dialect {
        Dialect::Duckdb => "UNNEST(ST_Dump(ST_Polygonize({lines}))).geom",
        Dialect::Postgis => "(ST_Dump(ST_Polygonize({lines}))).geom",
    }
    .replace("{lines}", lines);
    format!(
        "SELECT {dump} AS g FROM ({linework}) AS w WHERE w.l IS NOT NULL AND NOT ST_IsEmpty(w.l)"
    )
}

/// An envelope as a polygon.
fn envelope_sql(b: &Bounds, dialect: Dialect) -> Result<String, String> {
    let [x0, y0, x1, y1] = [number(b[0])?, number(b[1])?, number(b[2])?, number(b[3])?];
    Ok(match dialect {
        Dialect::Duckdb => format!("ST_MakeEnvelope({x0}, {y0}, {x1}, {y1})"),
        Dialect::Postgis => format!("ST_MakeEnvelope({x0}, {y0}, {x1}, {y1})"),
    })
}

/// Each row's geometry replaced by the cell of its site: the cells of every site, each row
/// joined to the cell its site lies in (a site is inside its own cell, away from the others).
fn voronoi(
    envelope: Option<&Bounds>,
    clip: bool,
    main: Input<'_>,
    dialect: Dialect,
) -> Result<String, String> {
    let geom = ident(GEOM);
    let point = kind_in(&format!("t.{geom}"), &[Kind::Point], dialect);
    let sites = format!(
        "SELECT t.*, CASE WHEN t.{geom} IS NULL OR ST_IsEmpty(t.{geom}) THEN NULL WHEN {point} THEN t.{geom} ELSE ST_Centroid(t.{geom}) END AS __site FROM {} AS t",
        main.from
    );
    let all_sites = match dialect {
        Dialect::Duckdb => "ST_Collect(list(s.__site) FILTER (WHERE s.__site IS NOT NULL))",
        Dialect::Postgis => "ST_Collect(s.__site)",
    };
    let cells = match (dialect, envelope) {
        (Dialect::Duckdb, None) => {
            format!("SELECT UNNEST(ST_Dump(ST_VoronoiDiagram({all_sites}))).geom AS __cell FROM s")
        }
        (Dialect::Duckdb, Some(_)) => {
            return Err("DuckDB's ST_VoronoiDiagram takes no envelope".into());
        }
        (Dialect::Postgis, _) => format!(
            "SELECT (ST_Dump(ST_VoronoiPolygons({all_sites}, 0, {}))).geom AS __cell FROM s",
            envelope.map_or(Ok("NULL".to_owned()), |b| envelope_sql(b, dialect))?
        ),
    };
    let cut = match (clip, envelope) {
        (false, _) => None,
        (true, Some(b)) => Some(envelope_sql(b, dialect)?),
        (true, None) => Some(format!("(SELECT ST_Envelope({all_sites}) FROM s)")),
    };
    // A clipped cell is cut once, beside the cell the join tests.
    let (cells, cell) = match cut {
        None => (cells, "c.__cell".to_owned()),
        Some(b) => {
            // PostGIS refuses an envelope of SRID 0 next to the cells'.
            let b = match dialect {
                Dialect::Postgis => format!("ST_SetSRID({b}, ST_SRID(x.__cell))"),
                Dialect::Duckdb => b,
            };
            (
                format!(
                    "SELECT x.__cell, ST_Intersection(x.__cell, {b}) AS __clipped FROM ({cells}) AS x"
                ),
                "CASE WHEN ST_IsEmpty(c.__clipped) THEN NULL ELSE c.__clipped END".to_owned(),
            )
        }
    };
    let items = projection_with_geom("s.", main.schema, &cell, dialect, &["__site"])?;
    // Nested, so that a fused stage can put its own WITH in front.
    Ok(format!(
        "SELECT * FROM (WITH s AS ({sites}), c AS ({cells}) SELECT {items} FROM s LEFT JOIN c ON s.__site IS NOT NULL AND ST_Intersects(c.__cell, s.__site)) AS cells"
    ))
}
