//! The SELECTs of `topology_check`: NULL, empty and invalid geometries (GEOS's reason and the
//! point it names), lines crossing themselves, overlapping polygons, gaps (holes of the
//! polygons' union) and dangles and undershoots of lines, over common tables of the checked
//! features, the valid polygons and the line parts.

use super::dialect::Dialect;
use super::quote::{ident, number, string};
use super::validate_context::{Context, NULL_GEOMETRY, ProblemRow};
use crate::plan::geo_kinds::{Kind, kind_in};
use crate::plan::validate::TopologyProblem;

/// geomill's DuckDB function giving GEOS's validity reason of a WKB geometry
/// (`GEOSisValidReason`, as PostGIS's `ST_IsValidReason` and Shapely's `is_valid_reason`).
pub const DUCKDB_IS_VALID_REASON: &str = "geomill_is_valid_reason";

/// GEOS's reason for a valid geometry.
const VALID: &str = "Valid Geometry";

/// The common tables every topology SELECT reads.
const CHECKED: &str = "geomill_checked";
const POLYGONS: &str = "geomill_valid_polygons";
const LINE_PARTS: &str = "geomill_line_parts";
const LINE_ENDS: &str = "geomill_line_ends";
const KEY: &str = "geomill_key";
const G: &str = "geomill_geom";
const REASON: &str = "geomill_reason";
const PART: &str = "geomill_part";

fn reason_of(g: &str, dialect: Dialect) -> String {
    match dialect {
        Dialect::Duckdb => format!("{DUCKDB_IS_VALID_REASON}(ST_AsWKB({g}))"),
        Dialect::Postgis => format!("ST_IsValidReason({g})"),
    }
}

/// The point a validity reason names (`Self-intersection[x y]`), in the geometry `g`'s CRS;
/// NULL when the reason names none.
fn reason_point(reason: &str, g: &str, dialect: Dialect) -> String {
    match dialect {
        Dialect::Duckdb => {
            let coordinate = |i: u8| {
                format!(
                    "TRY_CAST(regexp_extract({reason}, '\\[([^ \\]]+) ([^\\]]+)\\]$', {i}) AS DOUBLE)"
                )
            };
            format!(
                "ST_SetCRS(ST_Point({}, {}), ST_CRS({g}))",
                coordinate(1),
                coordinate(2)
            )
        }
        Dialect::Postgis => format!(
            "ST_SetSRID(ST_Point(CAST(substring({reason} from '\\[([^ \\]]+) [^\\]]+\\]$') AS DOUBLE PRECISION), CAST(substring({reason} from '\\[[^ \\]]+ ([^\\]]+)\\]$') AS DOUBLE PRECISION)), ST_SRID({g}))"
        ),
    }
}

/// The common tables (`WITH` items) and one SELECT per problem kind asked for.
pub(super) fn topology_sql(
    ctx: &Context<'_>,
    checks: &[TopologyProblem],
    tolerance: f64,
) -> Result<(Vec<String>, Vec<String>), String> {
    let d = ctx.dialect;
    let (key, g, reason, part) = (ident(KEY), ident(G), ident(REASON), ident(PART));
    let lines = [Kind::LineString, Kind::MultiLineString];
    let dump = match d {
        Dialect::Duckdb => format!(
            "SELECT s.{key}, COALESCE(s.d.path[1], 0) AS {part}, s.d.geom AS {g} FROM (SELECT c.{key}, unnest(ST_Dump(c.{g})) AS d FROM {CHECKED} AS c WHERE {}) AS s",
            kind_in(&format!("c.{g}"), &lines, d)
        ),
        Dialect::Postgis => format!(
            "SELECT c.{key}, COALESCE(d.path[1], 0) AS {part}, d.geom AS {g} FROM {CHECKED} AS c, ST_Dump(c.{g}) AS d WHERE {}",
            kind_in(&format!("c.{g}"), &lines, d)
        ),
    };
    let ctes = vec![
        format!(
            "{CHECKED} AS (SELECT {} AS {key}, {} AS {g}, {} AS {reason} FROM {} AS t WHERE {tg} IS NOT NULL AND NOT ST_IsEmpty({tg}))",
            ctx.key_of("t"),
            ctx.geom_of("t"),
            reason_of(&ctx.geom_of("t"), d),
            ctx.input.from,
            tg = ctx.geom_of("t"),
        ),
        format!(
            "{POLYGONS} AS (SELECT c.{key}, c.{g} FROM {CHECKED} AS c WHERE c.{reason} = {} AND {})",
            string(VALID),
            kind_in(&format!("c.{g}"), &[Kind::Polygon, Kind::MultiPolygon], d)
        ),
        format!("{LINE_PARTS} AS ({dump})"),
        format!(
            "{LINE_ENDS} AS (SELECT l.{key}, l.{part}, ST_StartPoint(l.{g}) AS {g} FROM {LINE_PARTS} AS l WHERE NOT ST_IsEmpty(l.{g}) AND NOT ST_IsClosed(l.{g}) UNION ALL SELECT l.{key}, l.{part}, ST_EndPoint(l.{g}) AS {g} FROM {LINE_PARTS} AS l WHERE NOT ST_IsEmpty(l.{g}) AND NOT ST_IsClosed(l.{g}))"
        ),
    ];
    let mut parts = Vec::new();
    for check in checks {
        let row =
            |problem, reason: String, feature: String, related: String, geom: String| ProblemRow {
                feature,
                related,
                problem,
                field: None,
                reason,
                geom,
            };
        match check {
            TopologyProblem::NullGeometry => parts.push(
                row(
                    "null_geometry",
                    string("the geometry is NULL"),
                    ctx.key_of("t"),
                    ctx.null_key(),
                    NULL_GEOMETRY.into(),
                )
                .select(&format!(
                    "FROM {} AS t WHERE {} IS NULL",
                    ctx.input.from,
                    ctx.geom_of("t")
                )),
            ),
            TopologyProblem::EmptyGeometry => parts.push(
                row(
                    "empty_geometry",
                    string("the geometry is empty"),
                    ctx.key_of("t"),
                    ctx.null_key(),
                    ctx.geom_of("t"),
                )
                .select(&format!(
                    "FROM {} AS t WHERE {tg} IS NOT NULL AND ST_IsEmpty({tg})",
                    ctx.input.from,
                    tg = ctx.geom_of("t")
                )),
            ),
            TopologyProblem::Invalid => parts.push(
                row(
                    "invalid",
                    format!("c.{reason}"),
                    format!("c.{key}"),
                    ctx.null_key(),
                    reason_point(&format!("c.{reason}"), &format!("c.{g}"), d),
                )
                .select(&format!(
                    "FROM {CHECKED} AS c WHERE c.{reason} <> {}",
                    string(VALID)
                )),
            ),
            TopologyProblem::SelfIntersection => parts.push(
                row(
                    "self_intersection",
                    string("the line crosses or touches itself"),
                    format!("c.{key}"),
                    ctx.null_key(),
                    format!("c.{g}"),
                )
                .select(&format!(
                    "FROM {CHECKED} AS c WHERE {} AND NOT ST_IsSimple(c.{g})",
                    kind_in(&format!("c.{g}"), &lines, d)
                )),
            ),
            TopologyProblem::Overlap => parts.push(
                row(
                    "overlap",
                    string("the interiors of the two polygons overlap"),
                    format!("a.{key}"),
                    format!("b.{key}"),
                    format!("ST_CollectionExtract(ST_Intersection(a.{g}, b.{g}), 3)"),
                )
                .select(&format!(
                    "FROM {POLYGONS} AS a JOIN {POLYGONS} AS b ON a.{key} < b.{key} AND ST_Intersects(a.{g}, b.{g}) AND NOT ST_Touches(a.{g}, b.{g})"
                )),
            ),
            TopologyProblem::Gap => parts.push(gap_sql(ctx)),
            TopologyProblem::Dangle => parts.extend(dangle_sql(ctx, tolerance)?),
        }
    }
    Ok((ctes, parts))
}

/// Each hole of the union of the valid polygons.
fn gap_sql(ctx: &Context<'_>) -> String {
    let g = ident(G);
    let problem = ProblemRow {
        feature: ctx.null_key(),
        related: ctx.null_key(),
        problem: "gap",
        field: None,
        reason: string("a hole in the union of the polygons"),
        geom: String::new(),
    };
    match ctx.dialect {
        Dialect::Duckdb => ProblemRow {
            geom: "ST_MakePolygon(ST_InteriorRingN(u.d.geom, CAST(r.i AS INTEGER)))".into(),
            ..problem
        }
        .select(&format!(
            "FROM (SELECT unnest(ST_Dump(ST_Union_Agg(p.{g}))) AS d FROM {POLYGONS} AS p) AS u, range(1, ST_NumInteriorRings(u.d.geom) + 1) AS r(i)"
        )),
        Dialect::Postgis => ProblemRow {
            geom: "ST_MakePolygon(ST_InteriorRingN(u.part, r.i))".into(),
            ..problem
        }
        .select(&format!(
            "FROM (SELECT (ST_Dump(ST_Union(p.{g}))).geom AS part FROM {POLYGONS} AS p) AS u, generate_series(1, ST_NumInteriorRings(u.part)) AS r(i)"
        )),
    }
}

/// Line ends touching no other line part: undershoots when another part is within
/// `tolerance`, dangles otherwise.
fn dangle_sql(ctx: &Context<'_>, tolerance: f64) -> Result<Vec<String>, String> {
    let (key, g, part) = (ident(KEY), ident(G), ident(PART));
    let other = |condition: &str| {
        format!(
            "EXISTS (SELECT 1 FROM {LINE_PARTS} AS o WHERE NOT (o.{key} IS NOT DISTINCT FROM e.{key} AND o.{part} = e.{part}) AND {condition})"
        )
    };
    let touching = other(&format!("ST_Intersects(o.{g}, e.{g})"));
    let end = |problem, reason: String, near: String| {
        ProblemRow {
            feature: format!("e.{key}"),
            related: ctx.null_key(),
            problem,
            field: None,
            reason,
            geom: format!("e.{g}"),
        }
        .select(&format!("FROM {LINE_ENDS} AS e WHERE NOT {touching}{near}"))
    };
    if tolerance > 0.0 {
        let tol = number(tolerance)?;
        let near = other(&format!("ST_DWithin(o.{g}, e.{g}, {tol})"));
        Ok(vec![
            end(
                "dangle",
                string("the line ends without touching another line"),
                format!(" AND NOT {near}"),
            ),
            end(
                "undershoot",
                string(&format!(
                    "the line ends within {tol} of another line without touching it"
                )),
                format!(" AND {near}"),
            ),
        ])
    } else {
        Ok(vec![end(
            "dangle",
            string("the line ends without touching another line"),
            String::new(),
        )])
    }
}
