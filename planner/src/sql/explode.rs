//! The SELECT of the `Explode` reshape: each row repeated for the parts, vertices, segments or
//! holes of its geometry, numbered.

use super::dialect::Dialect;
use super::parts::{Input, projection_with_geom};
use super::quote::ident;
use crate::plan::relational::ExplodeKind;
use crate::schema::GEOM;

/// DuckDB: the list of pieces of `g` (NULL for a NULL geometry). Parts and vertices are
/// `ST_Dump` structs (`.geom`), segments and holes geometries.
fn duckdb_pieces(kind: ExplodeKind, g: &str) -> String {
    match kind {
        ExplodeKind::Parts => format!("ST_Dump({g})"),
        ExplodeKind::Vertices => format!("ST_Dump(ST_Points({g}))"),
        // Every part's lines (a polygon's rings, exterior first), then each line's
        // consecutive vertex pairs.
        ExplodeKind::Segments => format!(
            "flatten([[ST_MakeLine(ST_PointN(l.geom, i::INTEGER), ST_PointN(l.geom, (i + 1)::INTEGER)) \
             for i in range(1, ST_NPoints(l.geom))] \
             for l in flatten([ST_Dump(CASE WHEN ST_Dimension(d.geom) = 2 THEN ST_Boundary(d.geom) \
             WHEN ST_Dimension(d.geom) = 1 THEN d.geom END) for d in ST_Dump({g})])])"
        ),
        ExplodeKind::ChainSegments => {
            let points = format!("[d.geom for d in ST_Dump(ST_Points({g}))]");
            format!(
                "[ST_MakeLine(z[1], z[2]) for z in list_zip({points}, ({points})[2:]) if z[2] IS NOT NULL]"
            )
        }
        ExplodeKind::Holes => format!(
            "flatten([[ST_MakePolygon(ST_InteriorRingN(d.geom, i::INTEGER)) \
             for i in range(1, ST_NumInteriorRings(d.geom) + 1)] \
             for d in ST_Dump({g}) if ST_GeometryType(d.geom) = 'POLYGON'])"
        ),
    }
}

/// PostGIS: a lateral source of `(part, n)` rows for `g`.
fn postgis_pieces(kind: ExplodeKind, g: &str) -> String {
    let dump = |function: &str| format!("{function}({g}) WITH ORDINALITY AS l(path, part, n)");
    match kind {
        ExplodeKind::Parts => dump("ST_Dump"),
        ExplodeKind::Vertices => {
            format!("ST_Dump(ST_Points({g})) WITH ORDINALITY AS l(path, part, n)")
        }
        ExplodeKind::Segments => dump("ST_DumpSegments"),
        ExplodeKind::ChainSegments => format!(
            "(SELECT ST_MakeLine(p.geom, p.next) AS part, p.n FROM (SELECT d.geom, \
             lead(d.geom) OVER (ORDER BY d.n) AS next, d.n FROM ST_DumpPoints({g}) \
             WITH ORDINALITY AS d(path, geom, n)) AS p WHERE p.next IS NOT NULL) AS l"
        ),
        ExplodeKind::Holes => format!(
            "(SELECT r.geom AS part, row_number() OVER (ORDER BY d.path, r.path) AS n \
             FROM ST_Dump({g}) AS d, ST_DumpRings(d.geom) AS r \
             WHERE ST_GeometryType(d.geom) = 'ST_Polygon' AND r.path[1] > 0) AS l"
        ),
    }
}

/// Each row repeated for the pieces of its geometry, numbered from 1; a row whose geometry is
/// NULL or empty, or has no such piece, kept once with NULLs (DuckDB dumps an empty geometry
/// as one part, PostGIS as none: both dump NULL instead). DuckDB unnests the list in the
/// select list (a lateral join there is decorrelated into a plan hundreds of times slower);
/// PostGIS joins the dump laterally. `row_index` numbers the output rows from 1, in order.
pub fn explode_sql(
    kind: ExplodeKind,
    index: &str,
    row_index: Option<&str>,
    main: Input<'_>,
    dialect: Dialect,
) -> Result<String, String> {
    let geom = ident(GEOM);
    let g = format!("CASE WHEN ST_IsEmpty(t.{geom}) THEN NULL ELSE t.{geom} END");
    let (from, part, number) = match dialect {
        Dialect::Duckdb => {
            let pieces = format!("coalesce(nullif({}, []), [NULL])", duckdb_pieces(kind, &g));
            let part = match kind {
                ExplodeKind::Parts | ExplodeKind::Vertices => "t.__part.geom",
                ExplodeKind::Segments | ExplodeKind::ChainSegments | ExplodeKind::Holes => {
                    "t.__part"
                }
            };
            (
                format!(
                    "(SELECT t.*, UNNEST({pieces}) AS __part, generate_subscripts({pieces}, 1) AS __n FROM {} AS t) AS t",
                    main.from
                ),
                part,
                "CASE WHEN t.__part IS NULL THEN NULL ELSE t.__n END",
            )
        }
        Dialect::Postgis => (
            format!(
                "{} AS t LEFT JOIN LATERAL {} ON true",
                main.from,
                postgis_pieces(kind, &g)
            ),
            "l.part",
            "l.n",
        ),
    };
    let items = projection_with_geom("t.", main.schema, part, dialect, &["__part", "__n"])?;
    let exploded = format!(
        "SELECT {items}, CAST({number} AS BIGINT) AS {} FROM {from}",
        ident(index)
    );
    Ok(match row_index {
        Some(row_index) => format!(
            "SELECT e.*, CAST(row_number() OVER () AS BIGINT) AS {} FROM ({exploded}) AS e",
            ident(row_index)
        ),
        None => exploded,
    })
}
