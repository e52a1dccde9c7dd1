//! pgRouting SQL of the network analyses that answer per line or per reached line: connected
//! parts (`pgr_connectedComponents`), the minimum spanning forest (`pgr_kruskal`), reach
//! bands and allocation to facilities (`pgr_drivingDistance`).

use super::network::{ROW_KEY, edges_query, graph_ctes, numbered_rows, snapped};
use super::parts::{Input, NEEDS_COLUMNS};
use super::quote::{ident, number};
use crate::plan::network::{NetworkAnalysis, NetworkOp, fields};
use crate::schema::{FieldType, GEOM};

/// The input's columns as `t."c"`, without the row key.
fn columns(lines: Input<'_>) -> Result<String, String> {
    let schema = lines.schema.ok_or(NEEDS_COLUMNS)?;
    Ok(schema
        .columns
        .iter()
        .map(|c| format!("t.{}", ident(&c.name)))
        .collect::<Vec<_>>()
        .join(", "))
}

/// `ends`: each edge with the numbers of its end nodes.
const ENDS: &str = "ends AS (SELECT e.*, s.nid AS sn, d.nid AS tn FROM edges AS e \
JOIN nodes AS s ON s.x = e.ax AND s.y = e.ay JOIN nodes AS d ON d.x = e.bx AND d.y = e.by)";

/// The SELECT of the analyses answering per line or per reached line.
pub fn layer_sql(op: &NetworkOp, inputs: &[Input<'_>]) -> Result<String, String> {
    let lines = *inputs.first().ok_or("a network analysis needs its lines")?;
    let edges = edges_query(&op.graph, lines.from)?;
    let key = ident(ROW_KEY);
    let prefix = format!(
        "WITH {}, {}, {ENDS}",
        numbered_rows(lines.from),
        graph_ctes(&op.graph, "rows", true)?
    );
    match &op.analysis {
        NetworkAnalysis::Connectivity => {
            let (component, size, isolated) = (
                ident(fields::COMPONENT),
                ident(fields::COMPONENT_EDGES),
                ident(fields::ISOLATED),
            );
            // pgRouting numbers a component by its lowest node.
            Ok(format!(
                "{prefix}, cc AS (SELECT component, node FROM pgr_connectedComponents({edges})), \
edge_root AS (SELECT x.rk, cc.component AS root FROM ends AS x JOIN cc ON cc.node = x.sn), \
sizes AS (SELECT root, count(*) AS n FROM edge_root GROUP BY root), \
ranked AS (SELECT root, n, row_number() OVER (ORDER BY n DESC, root) AS k FROM sizes), \
per_row AS (SELECT edge_root.rk, min(ranked.k) AS k FROM edge_root JOIN ranked USING (root) GROUP BY edge_root.rk) \
SELECT {}, per_row.k AS {component}, ranked.n AS {size}, per_row.k <> 1 AS {isolated} \
FROM rows AS t LEFT JOIN per_row ON per_row.rk = t.{key} LEFT JOIN ranked ON ranked.k = per_row.k",
                columns(lines)?
            ))
        }
        NetworkAnalysis::SpanningTree => Ok(format!(
            "{prefix}, kept AS (SELECT DISTINCT x.rk FROM pgr_kruskal({edges}) AS k JOIN ends AS x ON x.id = k.edge) \
SELECT {} FROM rows AS t WHERE t.{key} IN (SELECT rk FROM kept)",
            columns(lines)?
        )),
        NetworkAnalysis::Isochrone {
            origin_id,
            bands,
            polygons,
        } => {
            let origins = inputs.get(1).ok_or("isochrone needs its origins")?.from;
            let limit = number(*bands.last().ok_or("isochrone needs bands")?)?;
            let mut band_list = Vec::new();
            for (k, upper) in bands.iter().enumerate() {
                band_list.push(format!("({}, {})", k + 1, number(*upper)?));
            }
            let (origin, band, cost, g) = (
                ident(fields::ORIGIN),
                ident(fields::BAND),
                ident(fields::COST),
                ident(GEOM),
            );
            let reach = format!(
                "{prefix}, {}, \
dd AS (SELECT from_v AS s, node, agg_cost FROM pgr_drivingDistance({edges}, \
(SELECT array_agg(DISTINCT o.nid) FROM o WHERE o.nid IS NOT NULL), {limit}, true)), \
cand AS (SELECT dd.s, x.id, CASE WHEN x.dir >= 0 THEN dd.agg_cost + x.c END AS r FROM dd JOIN ends AS x ON x.sn = dd.node \
UNION ALL SELECT dd.s, x.id, CASE WHEN x.dir <= 0 THEN dd.agg_cost + x.c END FROM dd JOIN ends AS x ON x.tn = dd.node), \
reach AS (SELECT s, id, min(r) AS r FROM cand WHERE r IS NOT NULL GROUP BY s, id HAVING min(r) <= {limit}), \
bands(k, upper) AS (VALUES {})",
                snapped("o", origins, origin_id),
                band_list.join(", ")
            );
            if *polygons {
                Ok(format!(
                    "{reach} SELECT o.k AS {origin}, b.k AS {band}, b.upper AS {cost}, ST_ConvexHull(ST_Collect(x.g)) AS {g} \
FROM o JOIN reach ON reach.s = o.nid JOIN ends AS x ON x.id = reach.id JOIN bands AS b ON reach.r <= b.upper \
GROUP BY o.k, b.k, b.upper"
                ))
            } else {
                Ok(format!(
                    "{reach} SELECT o.k AS {origin}, (SELECT min(b.k) FROM bands AS b WHERE reach.r <= b.upper) AS {band}, \
reach.r AS {cost}, x.g AS {g} FROM o JOIN reach ON reach.s = o.nid JOIN ends AS x ON x.id = reach.id"
                ))
            }
        }
        NetworkAnalysis::Allocation { facility_id } => {
            let facilities = *inputs.get(1).ok_or("allocation needs its facilities")?;
            Ok(format!(
                "{prefix}, {} {}",
                allocation_ctes(facilities, facility_id, &edges)?,
                allocation_select(&columns(lines)?)
            ))
        }
        _ => Err(format!("{} has no pgRouting SQL", op.describe())),
    }
}

/// The CTEs of allocation to the facilities of `facilities`, over `edges` (pgRouting's edge
/// query): `fnodes` (each node holding a facility, with the lowest id there), `best` (each
/// node's least cost `d` and the lowest facility node `s` reaching it at that cost) and
/// `per_row` (each line row's least cost `r` over its parts and directions, with its `s`).
/// pgRouting's own equal-cost rule (`equicost`) is arbitrary: every facility's costs are
/// searched and the documented rule applied to them here.
fn allocation_ctes(
    facilities: Input<'_>,
    facility_id: &str,
    edges: &str,
) -> Result<String, String> {
    // Ids order as the native backend sorts them: text by its bytes.
    let text = facilities
        .schema
        .and_then(|s| s.columns.iter().find(|c| c.name == facility_id))
        .is_none_or(|c| c.ty == FieldType::Text);
    let collate = if text { " COLLATE \"C\"" } else { "" };
    Ok(format!(
        "{}, fnodes AS (SELECT DISTINCT ON (f.nid) f.nid, f.k FROM f WHERE f.nid IS NOT NULL \
ORDER BY f.nid, f.k{collate} NULLS LAST), \
dd AS (SELECT from_v AS s, node, agg_cost FROM pgr_drivingDistance({edges}, \
(SELECT array_agg(nid) FROM fnodes), (SELECT 2 * sum(c) + 1 FROM edges), true)), \
best AS (SELECT DISTINCT ON (node) node, s, agg_cost AS d FROM dd ORDER BY node, agg_cost, s), \
cand AS (SELECT x.rk, b.d + x.c AS r, b.s FROM ends AS x JOIN best AS b ON b.node = x.sn WHERE x.dir >= 0 \
UNION ALL SELECT x.rk, b.d + x.c, b.s FROM ends AS x JOIN best AS b ON b.node = x.tn WHERE x.dir <= 0), \
per_row AS (SELECT DISTINCT ON (rk) rk, r, s FROM cand ORDER BY rk, r, s)",
        snapped("f", facilities.from, facility_id)
    ))
}

/// Every line row with its facility and cost (NULL when none reaches it).
fn allocation_select(columns: &str) -> String {
    format!(
        "SELECT {columns}, fnodes.k AS {}, per_row.r AS {} FROM rows AS t \
LEFT JOIN per_row ON per_row.rk = t.{} LEFT JOIN fnodes ON fnodes.nid = per_row.s",
        ident(fields::FACILITY),
        ident(fields::COST),
        ident(ROW_KEY)
    )
}
