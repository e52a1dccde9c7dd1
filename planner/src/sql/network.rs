//! pgRouting SQL of the network analyses PostGIS runs (the others run natively).
//!
//! pgRouting reads its edges through a query text it runs on its own, which sees tables but
//! not the CTEs of the statement around it: the edge query reads the line layer's table and
//! numbers edges and nodes itself. Edges are numbered by the md5 of their WKB, then cost and
//! direction (deterministic, so the outer query's numbering equals the inner one's); nodes by
//! their coordinates, as the native graph numbers them.

use super::network_layer::layer_sql;
use super::parts::Input;
use super::quote::{ident, number, string};
use crate::plan::network::{GraphSpec, NetworkAnalysis, NetworkOp, fields};
use crate::schema::GEOM;

/// The value a `oneway` field's text takes for each direction (lower case, trimmed).
const FORWARD: &str = "('1', 'true', 'yes')";
const BACKWARD: &str = "('-1', 'reverse')";

/// The column numbering the input's rows in [`numbered_rows`].
pub(super) const ROW_KEY: &str = "__geomill_row";

/// `rows`: the line layer `from` with its rows numbered in [`ROW_KEY`] (a CTE read several
/// times is computed once, so every reader sees the same numbers).
pub(super) fn numbered_rows(from: &str) -> String {
    format!(
        "rows AS MATERIALIZED (SELECT row_number() OVER () AS {}, t.* FROM {from} AS t)",
        ident(ROW_KEY)
    )
}

/// `edges` (id, g, c, dir, ax, ay, bx, by; with `keyed`, the row key `rk` of the line they
/// come from) and `nodes` (nid, x, y) of the line layer `from`.
pub(super) fn graph_ctes(graph: &GraphSpec, from: &str, keyed: bool) -> Result<String, String> {
    let g = ident(GEOM);
    let cost = match &graph.cost {
        Some(field) => format!("CAST(t.{} AS double precision)", ident(field)),
        None if graph.geodesic => "ST_Length(p.g::geography)".to_owned(),
        None if graph.metres_per_unit == 1.0 => "ST_Length(p.g)".to_owned(),
        None => format!("ST_Length(p.g) * {}", number(graph.metres_per_unit)?),
    };
    let direction = match (&graph.oneway, graph.directed) {
        (_, true) => "1".to_owned(),
        (Some(field), false) => {
            let text = format!("lower(trim(CAST(t.{} AS text)))", ident(field));
            format!(
                "CASE WHEN {text} IN {FORWARD} THEN 1 WHEN {text} IN {BACKWARD} THEN -1 ELSE 0 END"
            )
        }
        (None, false) => "0".to_owned(),
    };
    let (key, carried) = if keyed {
        (format!(", t.{} AS rk", ident(ROW_KEY)), ", rk")
    } else {
        (String::new(), "")
    };
    Ok(format!(
        "parts AS (SELECT {cost} AS c, {direction} AS dir, p.g{key} FROM {from} AS t, \
LATERAL (SELECT (ST_Dump(ST_Force2D(t.{g}))).geom AS g) AS p \
WHERE t.{g} IS NOT NULL AND GeometryType(p.g) = 'LINESTRING' AND ST_NPoints(p.g) >= 2), \
edges AS (SELECT row_number() OVER (ORDER BY md5(ST_AsBinary(g)), c, dir) AS id, c, dir, g{carried}, \
ST_X(ST_StartPoint(g)) AS ax, ST_Y(ST_StartPoint(g)) AS ay, ST_X(ST_EndPoint(g)) AS bx, \
ST_Y(ST_EndPoint(g)) AS by FROM parts WHERE c >= 0), \
nodes AS (SELECT row_number() OVER (ORDER BY x, y) AS nid, x, y FROM \
(SELECT ax AS x, ay AS y FROM edges UNION SELECT bx, by FROM edges) AS ends)"
    ))
}

/// pgRouting's edge query over the line layer `from`.
pub(super) fn edges_query(graph: &GraphSpec, from: &str) -> Result<String, String> {
    let query = format!(
        "WITH {} SELECT e.id, s.nid AS source, d.nid AS target, \
CASE WHEN e.dir >= 0 THEN e.c ELSE -1 END AS cost, \
CASE WHEN e.dir <= 0 THEN e.c ELSE -1 END AS reverse_cost \
FROM edges AS e JOIN nodes AS s ON s.x = e.ax AND s.y = e.ay JOIN nodes AS d ON d.x = e.bx AND d.y = e.by",
        graph_ctes(graph, from, false)?
    );
    Ok(string(&query))
}

/// `name` (key, p, nid): each feature of `points` keyed by `id`, its point (a point, or the
/// centroid of another geometry) and the number of the node nearest to it.
pub(super) fn snapped(name: &str, points: &str, id: &str) -> String {
    let g = ident(GEOM);
    format!(
        "{name} AS (SELECT q.k, q.p, CASE WHEN q.p IS NOT NULL THEN (SELECT n.nid FROM nodes AS n \
ORDER BY (n.x - ST_X(q.p)) * (n.x - ST_X(q.p)) + (n.y - ST_Y(q.p)) * (n.y - ST_Y(q.p)), n.nid LIMIT 1) END AS nid \
FROM (SELECT o.{} AS k, CASE WHEN o.{g} IS NULL OR ST_IsEmpty(o.{g}) THEN NULL \
WHEN GeometryType(o.{g}) = 'POINT' THEN ST_Force2D(o.{g}) ELSE ST_Centroid(ST_Force2D(o.{g})) END AS p \
FROM {points} AS o) AS q)",
        ident(id)
    )
}

/// The SELECT of `op` over `inputs` (lines, then the point layers) on PostGIS with pgRouting.
pub fn network_sql(op: &NetworkOp, inputs: &[Input<'_>]) -> Result<String, String> {
    let layer = |i: usize| {
        inputs
            .get(i)
            .map(|input| input.from)
            .ok_or_else(|| format!("{} needs input {}", op.describe(), i + 1))
    };
    let lines = layer(0)?;
    let (origin_id, destination_id, paths) = match &op.analysis {
        NetworkAnalysis::OdMatrix {
            origin_id,
            destination_id,
        } => (origin_id, destination_id, false),
        NetworkAnalysis::ShortestPath {
            origin_id,
            destination_id,
        } => (origin_id, destination_id, true),
        _ => return layer_sql(op, inputs),
    };
    let ctes = format!(
        "WITH {}, {}, {}",
        graph_ctes(&op.graph, lines, false)?,
        snapped("o", layer(1)?, origin_id),
        snapped("d", layer(2)?, destination_id)
    );
    let edges = edges_query(&op.graph, lines)?;
    let starts = "(SELECT array_agg(DISTINCT o.nid) FROM o WHERE o.nid IS NOT NULL)";
    let ends = "(SELECT array_agg(DISTINCT d.nid) FROM d WHERE d.nid IS NOT NULL)";
    let (origin, destination, cost) = (
        ident(fields::ORIGIN),
        ident(fields::DESTINATION),
        ident(fields::COST),
    );
    let g = ident(GEOM);
    if !paths {
        // pgRouting leaves out unreachable pairs and a node's cost to itself.
        return Ok(format!(
            "{ctes}, m AS (SELECT start_vid, end_vid, agg_cost FROM pgr_dijkstraCost({edges}, {starts}, {ends}, true)) \
SELECT o.k AS {origin}, d.k AS {destination}, \
CASE WHEN o.nid = d.nid THEN 0.0 ELSE m.agg_cost END AS {cost}, ST_MakeLine(o.p, d.p) AS {g} \
FROM o CROSS JOIN d LEFT JOIN m ON m.start_vid = o.nid AND m.end_vid = d.nid"
        ));
    }
    let count = ident(fields::EDGES);
    Ok(format!(
        "{ctes}, r AS (SELECT start_vid, end_vid, path_seq, edge, agg_cost FROM pgr_dijkstra({edges}, {starts}, {ends}, true)), \
paths AS (SELECT r.start_vid, r.end_vid, max(r.agg_cost) AS c, count(e.id) AS n, \
ST_Collect(e.g ORDER BY r.path_seq) AS g FROM r LEFT JOIN edges AS e ON e.id = r.edge GROUP BY r.start_vid, r.end_vid) \
SELECT o.k AS {origin}, d.k AS {destination}, \
CASE WHEN o.nid = d.nid THEN 0.0 ELSE paths.c END AS {cost}, \
CASE WHEN o.nid = d.nid THEN 0 ELSE paths.n END AS {count}, \
CASE WHEN o.nid = d.nid THEN NULL ELSE ST_Multi(paths.g) END AS {g} \
FROM o CROSS JOIN d LEFT JOIN paths ON paths.start_vid = o.nid AND paths.end_vid = d.nid"
    ))
}
