//! Analyses over a graph made from a line layer: costs between points, paths, reach bands,
//! allocation to facilities, connected parts and spanning trees; and the line tools graphs
//! are built with (lines cut at points).
//!
//! The graph (the same on every engine): each part of each line is an edge from its first
//! vertex to its last; edges meet where their end points are equal (2D). Nodes are numbered
//! 1, 2, … by their coordinates (x, then y). Points (origins, destinations, facilities) are
//! placed on the node nearest to them (planar distance in the CRS's units; ties to the lower
//! node number).

use crate::schema::{Column, FieldType, GEOM, Schema};
use crate::sql::Dialect;

/// Most points a tree of points links (every pair is a candidate link).
pub const MAX_TREE_POINTS: usize = 10_000;

/// How the edges of a line layer are weighted and which way they run.
#[derive(Debug, Clone, PartialEq)]
pub struct GraphSpec {
    /// The field giving each edge's cost; `None`: its length (metres on the WGS 84 ellipsoid
    /// for longitude/latitude data, CRS units otherwise). A NULL or negative cost leaves the
    /// edge out.
    pub cost: Option<String>,
    /// Length on the ellipsoid (the layer is longitude/latitude).
    pub geodesic: bool,
    /// Metres in one CRS unit, converting a planar length (1 when `geodesic`).
    pub metres_per_unit: f64,
    /// Every edge runs only from its first vertex to its last.
    pub directed: bool,
    /// The field saying which way each edge runs: true, 1, `yes`, `true` (any case) from its
    /// first vertex to its last; -1, `-1`, `reverse` the other way; anything else (or NULL)
    /// both ways.
    pub oneway: Option<String>,
}

impl GraphSpec {
    /// The graph of analyses that only link end points (no costs, no directions).
    pub fn end_points() -> Self {
        Self {
            cost: None,
            geodesic: false,
            metres_per_unit: 1.0,
            directed: false,
            oneway: None,
        }
    }

    /// The fields of the line layer the graph reads.
    pub fn reads(&self) -> Vec<String> {
        self.cost.iter().chain(&self.oneway).cloned().collect()
    }

    fn describe(&self) -> String {
        let cost = self.cost.as_deref().map_or_else(
            || {
                if self.geodesic {
                    "geodesic_length_m".to_owned()
                } else {
                    format!("length_m(x{})", self.metres_per_unit)
                }
            },
            |f| format!("field {f}"),
        );
        let direction = match (&self.oneway, self.directed) {
            (_, true) => "directed".to_owned(),
            (Some(f), false) => format!("oneway={f}"),
            (None, false) => "undirected".to_owned(),
        };
        format!("cost={cost} {direction}")
    }
}

/// One analysis over the graph. The first input is the line layer; the point layers follow
/// in the order listed.
#[derive(Debug, Clone, PartialEq)]
pub enum NetworkAnalysis {
    /// Least cost from each origin (second input) to each destination (third): one row per
    /// pair, `cost` NULL when unreachable, the geometry a straight line between the two points.
    OdMatrix {
        origin_id: String,
        destination_id: String,
    },
    /// The least-cost path of each origin–destination pair: `cost`, `edges` (how many) and the
    /// path's lines in order as a MultiLineString (NULL when unreachable).
    ShortestPath {
        origin_id: String,
        destination_id: String,
    },
    /// The edges each origin (second input) reaches within each cost band: with `polygons`,
    /// the convex hull of the edges reached within each band instead.
    Isochrone {
        origin_id: String,
        bands: Vec<f64>,
        polygons: bool,
    },
    /// Each line given its nearest facility (second input) by cost along the network.
    Allocation { facility_id: String },
    /// Each line given its connected part (edges linked in either direction).
    Connectivity,
    /// The lines of a minimum spanning forest of the graph (undirected).
    SpanningTree,
    /// A minimum spanning tree of the input's points themselves (every pair linked at its
    /// distance): one line per link, from the point already in the tree (`from`) to the one
    /// it joins (`to`), with its `cost`.
    PointTree { id: String },
    /// Each line row's connected part by its end points, as GISPulse's
    /// `connected_components`: see [`Components`].
    Components(Components),
    /// Every line part cut at the points (second input) near it: see [`SplitAtPoints`].
    SplitAtPoints(SplitAtPoints),
    /// The graph of the lines as a table of its nodes, then its edges: see [`GraphTable`].
    GraphTable(GraphTable),
    /// The lines cut where they meet each other, as a table of nodes then pieces: see
    /// [`Planarize`].
    Planarize(Planarize),
    /// The first input's points moved onto their nearest lines (second input): see
    /// [`SnapToLines`]. (The points come first here.)
    SnapToLines(SnapToLines),
    /// DBSCAN of the first input's points by their distances along the network of the second
    /// input: see [`NetworkDbscan`]. (The points come first here.)
    NetworkDbscan(NetworkDbscan),
    /// A tree linking the terminals (second input) through the network: see [`Steiner`].
    Steiner(Steiner),
    /// Each line's community in the network: see [`Communities`].
    Communities(Communities),
    /// A minimum spanning forest of the network as node pairs: see [`GraphTree`].
    GraphTree(GraphTree),
    /// How the network holds together, in one row or a row per part: see
    /// [`GraphConnectivity`].
    GraphConnectivity(GraphConnectivity),
}

/// A minimum spanning forest of the network built as [`NetworkDbscan`]'s, as networkx's
/// `minimum_spanning_tree` (Kruskal) finds it (GISPulse's `mst`): edges taken by cost, equal
/// costs in the order networkx lists the graph's edges (by lower node, then by the first line
/// part that linked the pair). One row per tree edge as [`Steiner`]'s (`u` < `v`, `weight`,
/// the line part), ordered as networkx lists the tree's edges: by `u`, then in the order taken.
#[derive(Debug, Clone, PartialEq)]
pub struct GraphTree {
    pub weight: Option<String>,
}

/// How the network built as [`NetworkDbscan`]'s holds together (GISPulse's
/// `connectivity_check`). Without `per_component`, one row: `is_connected`, `n_components`,
/// `n_nodes`, `n_edges` (node pairs linked; a closed line's loop counts), `largest_component`
/// (most edges in one part) and the convex hull of every edge's line (all NULL, the counts 0,
/// for a network without a line). With it, a row per connected part, most nodes first (equal
/// counts by their lowest node): `component_id` from 0, `n_nodes`, `n_edges`, `is_largest`
/// (the first) and the convex hull of its edges' lines.
#[derive(Debug, Clone, PartialEq)]
pub struct GraphConnectivity {
    pub weight: Option<String>,
    pub per_component: bool,
}

/// Column names of [`GraphConnectivity`]'s output.
pub mod connectivity_fields {
    pub const IS_CONNECTED: &str = "is_connected";
    pub const N_COMPONENTS: &str = "n_components";
    pub const N_NODES: &str = "n_nodes";
    pub const N_EDGES: &str = "n_edges";
    pub const LARGEST_COMPONENT: &str = "largest_component";
    pub const COMPONENT_ID: &str = "component_id";
    pub const IS_LARGEST: &str = "is_largest";
}

/// Communities of the network built as [`NetworkDbscan`]'s, by Clauset–Newman–Moore greedy
/// modularity maximisation as networkx's `greedy_modularity_communities` runs it (edges
/// weighted by their cost; the pair of communities whose merge raises modularity most merged
/// first, equal gains by the lower node pair; merging stops when every merge would lower it).
/// Communities are numbered from 0 by size (most nodes first; equal sizes by the node that
/// names them in networkx). Each line row gets the community of all its parts' ends when they
/// share one, else −1 (as a row without a line).
#[derive(Debug, Clone, PartialEq)]
pub struct Communities {
    pub weight: Option<String>,
    pub output: String,
}

/// An approximate Steiner tree (Mehlhorn's algorithm, networkx's `steiner_tree` default) of
/// the network built as [`NetworkDbscan`]'s, linking the nodes nearest the terminals (second
/// input; a geometry other than a point by its centroid): the closest terminal of every node
/// (Dijkstra from all terminals), the cheapest link between each two terminals' regions, a
/// minimum spanning tree of those links, their shortest paths, a minimum spanning tree of the
/// paths' edges, and leaves that are not terminals pruned. One row per tree edge: `u` and `v`
/// (its nodes, lower first), `weight` (its cost), its line part as geometry; ordered by `u`,
/// then `v`. Fewer than two distinct terminal nodes give no rows; terminals the network does
/// not link are an error.
#[derive(Debug, Clone, PartialEq)]
pub struct Steiner {
    pub weight: Option<String>,
}

/// DBSCAN of points over a line network (GISPulse's `cluster_network_dbscan`). The network
/// (second input) is an undirected graph: each line part an edge between its end points, ends
/// equal at 6 decimals one node (numbered by first appearance), an edge's cost its `weight`
/// field's value or its planar length; between two nodes only the last edge listed counts, as
/// in a networkx `Graph`. Each point (a geometry other than a point by its centroid) sits on
/// its nearest node; two points are `eps` apart or less when their nodes are, along the network
/// (points on one node: 0); DBSCAN over those distances (`min_samples` counting the point
/// itself) labels clusters from 0 in the order of their first core point, −1 noise. A point
/// without a geometry, or none of the network, has no neighbour but itself.
#[derive(Debug, Clone, PartialEq)]
pub struct NetworkDbscan {
    pub eps: f64,
    pub min_samples: u32,
    pub weight: Option<String>,
    pub output: String,
}

/// Most lines one point is snapped to.
pub const MAX_SNAP_CANDIDATES: u32 = 100;

/// Each point (a geometry other than a point by its centroid) snapped onto its `k` nearest
/// lines of the second input — or onto every line within `max_distance` — nearest first: one
/// row per line with the point's attributes, `edge_id` (the line's `id` value), `measure`
/// (the distance along the line to its point nearest the point, a MultiLineString's parts
/// measured one after the other), `offset` (the distance to it), `snapped` true, `rank` (1 the
/// nearest) and that point on the line as geometry. Lines at distances within 1e-9 of each
/// other rank by their ids (numbers before text), and with `k` 1 the lowest id among those
/// within 1e-9 of the nearest is taken. A point with no line (none within `max_distance`, or
/// a NULL or empty geometry) keeps one row, its geometry, `snapped` false, `rank` 1, NULL
/// `edge_id` and `measure`, and `offset` its distance to the nearest line (NULL when it has
/// none).
#[derive(Debug, Clone, PartialEq)]
pub struct SnapToLines {
    pub id: String,
    pub k: u32,
    pub max_distance: Option<f64>,
    pub fields: SnapFields,
}

/// The names of [`SnapToLines`]' output fields.
#[derive(Debug, Clone, PartialEq)]
pub struct SnapFields {
    pub edge_id: String,
    pub measure: String,
    pub offset: String,
    pub snapped: String,
    pub rank: String,
}

/// The lines made planar (GISPulse's `planarize`): each line part cut where another part
/// (of any row, the same row's other parts too; not itself) meets it — at each point of their
/// intersection, at both ends of each stretch they share, and, with a `tolerance`, where a
/// part passes within it of another without meeting it (at its point nearest the other) —
/// as `split_lines_at_points` cuts. The output is a table as [`GraphTable`]'s: node rows
/// (`feature_type` `node`, `node_id`, `degree`, the mean of its piece ends; ends joined as
/// there) then a row per piece (`feature_type` `segment`, `parent_edge_id` the row's `id`
/// value or 0-based position, the row's attributes).
#[derive(Debug, Clone, PartialEq)]
pub struct Planarize {
    pub tolerance: f64,
    pub id: Option<String>,
}

/// The field naming each piece's line in [`Planarize`]'s output.
pub const PARENT_EDGE_ID: &str = "parent_edge_id";

/// A line layer's graph as one table (GISPulse's `build_network_graph`): a row per node
/// (`feature_type` `node`, `node_id` from 0 in the order of its first end, `degree` the edge ends
/// on it, its point the mean of its ends), then a row per edge — each line part, in row order
/// — (`feature_type` `edge`, `edge_id` the row's `id` value or 0-based position, `from_node`,
/// `to_node`, `length_m` its planar length in CRS units, `weight` the `weight` field's value
/// when named, the row's attributes, the part as geometry). Ends within `tolerance` of each
/// other are one node (single linkage), or at 0 ends equal at 6 decimals. Rows without a line
/// part (NULL, empty, not a line) give no edge.
#[derive(Debug, Clone, PartialEq)]
pub struct GraphTable {
    pub tolerance: f64,
    pub id: Option<String>,
    pub weight: Option<String>,
}

/// Column names of [`GraphTable`]'s output.
pub mod graph_fields {
    pub const FEATURE_TYPE: &str = "feature_type";
    pub const NODE_ID: &str = "node_id";
    pub const DEGREE: &str = "degree";
    pub const EDGE_ID: &str = "edge_id";
    pub const FROM_NODE: &str = "from_node";
    pub const TO_NODE: &str = "to_node";
    pub const LENGTH: &str = "length_m";
    pub const WEIGHT: &str = "weight";
    /// Every column the table makes (an input column of one of these names is left out).
    pub const ALL: [&str; 8] = [
        FEATURE_TYPE,
        NODE_ID,
        DEGREE,
        EDGE_ID,
        FROM_NODE,
        TO_NODE,
        LENGTH,
        WEIGHT,
    ];
}

/// Each line part (LineString; a MultiLineString's parts one by one) cut where the points of
/// the second input within `tolerance` of it project onto it (GEOS's projection: the distance
/// along the part to its nearest point); cuts within 1e-9 of an end or of each other are one,
/// pieces of length 1e-9 or less dropped. One row per piece, in the order of the rows, their
/// parts and along each part, with the row's attributes, `parent` (the row's `id` value, or its
/// 0-based position without one) and, when named, `part` (the part's 0-based position among
/// the row's line parts). Rows without a line part (NULL, empty, points, polygons) are dropped.
/// A point other than a point cuts at its centroid.
#[derive(Debug, Clone, PartialEq)]
pub struct SplitAtPoints {
    pub tolerance: f64,
    pub id: Option<String>,
    pub parent: String,
    pub part: Option<String>,
}

/// The connected parts of a line layer linked only at end points: the ends of all parts of
/// all rows, ends within `tolerance` of each other (single linkage; 0: equal at 6 decimals)
/// one node, every end of a row in that row's part. `component` numbers the parts from 0 by
/// their rows (most first; equal counts by their first row); `size` is the part's row count.
/// A row without a line part (NULL, empty, not a line) gets −1 and 0.
#[derive(Debug, Clone, PartialEq)]
pub struct Components {
    /// End points this near (CRS units, planar) are one node; 0: equal coordinates rounded to
    /// 6 decimals.
    pub tolerance: f64,
    pub component: String,
    pub size: String,
}

/// Field names of the analyses' outputs.
pub mod fields {
    pub const ORIGIN: &str = "origin";
    pub const DESTINATION: &str = "destination";
    pub const COST: &str = "cost";
    pub const EDGES: &str = "edges";
    pub const BAND: &str = "band";
    pub const FACILITY: &str = "facility";
    pub const COMPONENT: &str = "component";
    pub const COMPONENT_EDGES: &str = "component_edges";
    pub const ISOLATED: &str = "isolated";
    pub const FROM: &str = "from";
    pub const TO: &str = "to";
}

/// An analysis and the graph it runs on.
#[derive(Debug, Clone, PartialEq)]
pub struct NetworkOp {
    pub graph: GraphSpec,
    pub analysis: NetworkAnalysis,
}

fn column(name: &str, ty: FieldType) -> Column {
    Column {
        name: name.to_owned(),
        ty,
    }
}

fn type_in(schema: Option<&Schema>, name: &str) -> FieldType {
    schema
        .and_then(|s| s.columns.iter().find(|c| c.name == name))
        .map_or(FieldType::Text, |c| c.ty)
}

impl NetworkOp {
    /// The output schema given the inputs' schemas (lines first).
    pub fn output_schema(&self, inputs: &[Option<&Schema>]) -> Option<Schema> {
        use fields::*;
        let lines = inputs.first().copied().flatten()?;
        let second = inputs.get(1).copied().flatten();
        let third = inputs.get(2).copied().flatten();
        let table = |columns: Vec<Column>| Schema {
            columns,
            crs: lines.crs.clone(),
        };
        let with = |extra: Vec<Column>| {
            let mut schema = lines.clone();
            for c in extra {
                schema.set(&c.name, c.ty);
            }
            schema
        };
        Some(match &self.analysis {
            NetworkAnalysis::OdMatrix {
                origin_id,
                destination_id,
            } => table(vec![
                column(ORIGIN, type_in(second, origin_id)),
                column(DESTINATION, type_in(third, destination_id)),
                column(COST, FieldType::Double),
                column(GEOM, FieldType::Geometry),
            ]),
            NetworkAnalysis::ShortestPath {
                origin_id,
                destination_id,
            } => table(vec![
                column(ORIGIN, type_in(second, origin_id)),
                column(DESTINATION, type_in(third, destination_id)),
                column(COST, FieldType::Double),
                column(EDGES, FieldType::Integer),
                column(GEOM, FieldType::Geometry),
            ]),
            NetworkAnalysis::Isochrone { origin_id, .. } => table(vec![
                column(ORIGIN, type_in(second, origin_id)),
                column(BAND, FieldType::Integer),
                column(COST, FieldType::Double),
                column(GEOM, FieldType::Geometry),
            ]),
            NetworkAnalysis::Allocation { facility_id } => with(vec![
                column(FACILITY, type_in(second, facility_id)),
                column(COST, FieldType::Double),
            ]),
            NetworkAnalysis::Connectivity => with(vec![
                column(COMPONENT, FieldType::Integer),
                column(COMPONENT_EDGES, FieldType::Integer),
                column(ISOLATED, FieldType::Boolean),
            ]),
            NetworkAnalysis::SpanningTree => lines.clone(),
            NetworkAnalysis::Components(c) => with(vec![
                column(&c.component, FieldType::Integer),
                column(&c.size, FieldType::Integer),
            ]),
            NetworkAnalysis::GraphTable(g) => {
                use graph_fields::*;
                let mut columns = vec![
                    column(FEATURE_TYPE, FieldType::Text),
                    column(NODE_ID, FieldType::Integer),
                    column(DEGREE, FieldType::Integer),
                    column(
                        EDGE_ID,
                        g.id.as_ref()
                            .map_or(FieldType::Integer, |id| type_in(Some(lines), id)),
                    ),
                    column(FROM_NODE, FieldType::Integer),
                    column(TO_NODE, FieldType::Integer),
                    column(LENGTH, FieldType::Double),
                ];
                if let Some(weight) = &g.weight {
                    columns.push(column(WEIGHT, type_in(Some(lines), weight)));
                }
                columns.extend(
                    lines
                        .columns
                        .iter()
                        .filter(|c| !ALL.contains(&c.name.as_str()))
                        .cloned(),
                );
                table(columns)
            }
            NetworkAnalysis::Planarize(p) => {
                use graph_fields::*;
                let reserved = [FEATURE_TYPE, NODE_ID, DEGREE, PARENT_EDGE_ID];
                let mut columns = vec![
                    column(FEATURE_TYPE, FieldType::Text),
                    column(NODE_ID, FieldType::Integer),
                    column(DEGREE, FieldType::Integer),
                    column(
                        PARENT_EDGE_ID,
                        p.id.as_ref()
                            .map_or(FieldType::Integer, |id| type_in(Some(lines), id)),
                    ),
                ];
                columns.extend(
                    lines
                        .columns
                        .iter()
                        .filter(|c| !reserved.contains(&c.name.as_str()))
                        .cloned(),
                );
                table(columns)
            }
            NetworkAnalysis::GraphConnectivity(c) => {
                use connectivity_fields::*;
                let columns = if c.per_component {
                    vec![
                        column(COMPONENT_ID, FieldType::Integer),
                        column(N_NODES, FieldType::Integer),
                        column(N_EDGES, FieldType::Integer),
                        column(IS_LARGEST, FieldType::Boolean),
                    ]
                } else {
                    vec![
                        column(IS_CONNECTED, FieldType::Boolean),
                        column(N_COMPONENTS, FieldType::Integer),
                        column(N_NODES, FieldType::Integer),
                        column(N_EDGES, FieldType::Integer),
                        column(LARGEST_COMPONENT, FieldType::Integer),
                    ]
                };
                let mut columns = columns;
                columns.push(column(GEOM, FieldType::Geometry));
                table(columns)
            }
            NetworkAnalysis::Steiner(_) | NetworkAnalysis::GraphTree(_) => table(vec![
                column("u", FieldType::Integer),
                column("v", FieldType::Integer),
                column("weight", FieldType::Double),
                column(GEOM, FieldType::Geometry),
            ]),
            NetworkAnalysis::NetworkDbscan(d) => with(vec![column(&d.output, FieldType::Integer)]),
            NetworkAnalysis::Communities(c) => with(vec![column(&c.output, FieldType::Integer)]),
            NetworkAnalysis::SnapToLines(s) => with(vec![
                column(&s.fields.edge_id, type_in(second, &s.id)),
                column(&s.fields.measure, FieldType::Double),
                column(&s.fields.offset, FieldType::Double),
                column(&s.fields.snapped, FieldType::Boolean),
                column(&s.fields.rank, FieldType::Integer),
            ]),
            NetworkAnalysis::SplitAtPoints(s) => {
                let parent = match &s.id {
                    Some(id) => type_in(Some(lines), id),
                    None => FieldType::Integer,
                };
                let mut extra = vec![column(&s.parent, parent)];
                extra.extend(s.part.iter().map(|p| column(p, FieldType::Integer)));
                with(extra)
            }
            NetworkAnalysis::PointTree { id } => table(vec![
                column(FROM, type_in(Some(lines), id)),
                column(TO, type_in(Some(lines), id)),
                column(COST, FieldType::Double),
                column(GEOM, FieldType::Geometry),
            ]),
        })
    }

    /// How many inputs the analysis reads: the lines and its point layers.
    pub fn arity(&self) -> usize {
        match self.analysis {
            NetworkAnalysis::OdMatrix { .. } | NetworkAnalysis::ShortestPath { .. } => 3,
            NetworkAnalysis::Isochrone { .. }
            | NetworkAnalysis::Allocation { .. }
            | NetworkAnalysis::SplitAtPoints(_)
            | NetworkAnalysis::SnapToLines(_)
            | NetworkAnalysis::NetworkDbscan(_)
            | NetworkAnalysis::Steiner(_) => 2,
            NetworkAnalysis::Connectivity
            | NetworkAnalysis::SpanningTree
            | NetworkAnalysis::Components(_)
            | NetworkAnalysis::GraphTable(_)
            | NetworkAnalysis::Planarize(_)
            | NetworkAnalysis::Communities(_)
            | NetworkAnalysis::GraphTree(_)
            | NetworkAnalysis::GraphConnectivity(_)
            | NetworkAnalysis::PointTree { .. } => 1,
        }
    }

    /// The fields the analysis reads: the graph's, then the point layers' identifiers.
    pub fn reads(&self) -> Vec<String> {
        let mut fields = self.graph.reads();
        match &self.analysis {
            NetworkAnalysis::OdMatrix {
                origin_id,
                destination_id,
            }
            | NetworkAnalysis::ShortestPath {
                origin_id,
                destination_id,
            } => fields.extend([origin_id.clone(), destination_id.clone()]),
            NetworkAnalysis::Isochrone { origin_id, .. } => fields.push(origin_id.clone()),
            NetworkAnalysis::Allocation { facility_id } => fields.push(facility_id.clone()),
            NetworkAnalysis::PointTree { id } => fields.push(id.clone()),
            NetworkAnalysis::SplitAtPoints(s) => fields.extend(s.id.iter().cloned()),
            NetworkAnalysis::GraphTable(g) => {
                fields.extend(g.id.iter().chain(&g.weight).cloned());
            }
            NetworkAnalysis::Planarize(p) => fields.extend(p.id.iter().cloned()),
            NetworkAnalysis::SnapToLines(s) => fields.push(s.id.clone()),
            NetworkAnalysis::NetworkDbscan(d) => fields.extend(d.weight.iter().cloned()),
            NetworkAnalysis::Steiner(t) => fields.extend(t.weight.iter().cloned()),
            NetworkAnalysis::Communities(c) => fields.extend(c.weight.iter().cloned()),
            NetworkAnalysis::GraphTree(t) => fields.extend(t.weight.iter().cloned()),
            NetworkAnalysis::GraphConnectivity(c) => fields.extend(c.weight.iter().cloned()),
            NetworkAnalysis::Connectivity
            | NetworkAnalysis::SpanningTree
            | NetworkAnalysis::Components(_) => {}
        }
        fields
    }

    /// Why `dialect`'s SQL cannot run the analysis, if it cannot (it then runs natively).
    pub fn missing_on(&self, dialect: Dialect) -> Option<String> {
        let why = match dialect {
            Dialect::Duckdb => "DuckDB has no graph search",
            Dialect::Postgis if matches!(self.analysis, NetworkAnalysis::PointTree { .. }) => {
                "pgRouting needs the links as edges (a million for a thousand points)"
            }
            Dialect::Postgis
                if matches!(
                    self.analysis,
                    NetworkAnalysis::Components(_)
                        | NetworkAnalysis::GraphTable(_)
                        | NetworkAnalysis::Planarize(_)
                        | NetworkAnalysis::GraphTree(_)
                        | NetworkAnalysis::GraphConnectivity(_)
                ) =>
            {
                "pgRouting joins equal end points only, not rounded or near ones"
            }
            Dialect::Postgis
                if matches!(
                    self.analysis,
                    NetworkAnalysis::SplitAtPoints(_)
                        | NetworkAnalysis::SnapToLines(_)
                        | NetworkAnalysis::NetworkDbscan(_)
                        | NetworkAnalysis::Steiner(_)
                        | NetworkAnalysis::Communities(_)
                ) =>
            {
                "cutting each line at a varying number of points is one pass natively"
            }
            Dialect::Postgis => return None,
        };
        Some(format!(
            "{} runs on the native backend: {why}",
            self.describe()
        ))
    }

    /// The operator in EXPLAIN text.
    pub fn describe(&self) -> String {
        let analysis = match &self.analysis {
            NetworkAnalysis::OdMatrix { .. } => "od_matrix".to_owned(),
            NetworkAnalysis::ShortestPath { .. } => "shortest_path".to_owned(),
            NetworkAnalysis::Isochrone {
                bands, polygons, ..
            } => format!(
                "isochrone bands={bands:?} {}",
                if *polygons { "polygons" } else { "edges" }
            ),
            NetworkAnalysis::Allocation { .. } => "allocation".to_owned(),
            NetworkAnalysis::Connectivity => "connectivity".to_owned(),
            NetworkAnalysis::SpanningTree => "spanning_tree".to_owned(),
            NetworkAnalysis::PointTree { .. } => "point_spanning_tree".to_owned(),
            NetworkAnalysis::Components(c) => {
                format!("end_point_components tolerance={}", c.tolerance)
            }
            NetworkAnalysis::SplitAtPoints(s) => {
                format!("split_at_points tolerance={}", s.tolerance)
            }
            NetworkAnalysis::GraphTable(g) => {
                format!("graph_table tolerance={}", g.tolerance)
            }
            NetworkAnalysis::Planarize(p) => format!("planarize tolerance={}", p.tolerance),
            NetworkAnalysis::Steiner(_) => "steiner_tree (Mehlhorn)".to_owned(),
            NetworkAnalysis::Communities(_) => "greedy_modularity_communities".to_owned(),
            NetworkAnalysis::GraphTree(_) => "spanning_tree_edges (networkx Kruskal)".to_owned(),
            NetworkAnalysis::GraphConnectivity(c) => format!(
                "connectivity_report {}",
                if c.per_component {
                    "per_component"
                } else {
                    "summary"
                }
            ),
            NetworkAnalysis::NetworkDbscan(d) => {
                format!("network_dbscan eps={} min_samples={}", d.eps, d.min_samples)
            }
            NetworkAnalysis::SnapToLines(s) => format!(
                "snap_to_lines k={}{}",
                s.k,
                s.max_distance
                    .map_or_else(String::new, |d| format!(" max_distance={d}"))
            ),
        };
        format!("{analysis} {}", self.graph.describe())
    }
}
