//! Analyses over a graph made from a line layer: costs between points, paths, reach bands,
//! allocation to facilities, connected parts and spanning trees; and the line tools graphs
//! are built with (lines cut at points).
//!
//! The graph (the same on every engine): each part of each line is an edge from its first
//! vertex to its last; edges meet where their end points are equal (2D). Nodes are numbered
//! 1, 2, … by their coordinates (x, then y). Points (origins, destinations, facilities) are
//! placed on the node nearest to them (planar distance in the CRS's units; ties to the lower
//! node number).

mod graph_tools;

pub use graph_tools::*;

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
    /// The path between two points over the network, edge by edge: see [`GraphRoute`].
    GraphRoute(GraphRoute),
    /// What the network reaches from a point within budgets: see [`GraphReach`].
    GraphReach(GraphReach),
    /// The paths between every two rows of a point layer: see [`GraphMatrix`].
    GraphMatrix(GraphMatrix),
    /// The first input's points allocated to facilities (third input) over the network of the
    /// second: see [`GraphAllocation`]. (The points come first here.)
    GraphAllocation(GraphAllocation),
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
            NetworkAnalysis::GraphMatrix(m) => {
                let id =
                    m.id.as_ref()
                        .map_or(FieldType::Integer, |id| type_in(second, id));
                table(vec![
                    column(ORIGIN, id),
                    column(DESTINATION, id),
                    column(COST, FieldType::Double),
                    column(EDGES, FieldType::Integer),
                    column(GEOM, FieldType::Geometry),
                ])
            }
            NetworkAnalysis::GraphAllocation(a) => with(vec![
                column(FACILITY, type_in(third, &a.facility_id)),
                column(COST, FieldType::Double),
            ]),
            NetworkAnalysis::GraphRoute(_) => table(vec![
                column(graph_tools::PATH_ORDER, FieldType::Integer),
                column(GEOM, FieldType::Geometry),
            ]),
            NetworkAnalysis::GraphReach(_) => table(vec![
                column(graph_tools::REACH_COST, FieldType::Double),
                column(GEOM, FieldType::Geometry),
            ]),
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
            NetworkAnalysis::OdMatrix { .. }
            | NetworkAnalysis::ShortestPath { .. }
            | NetworkAnalysis::GraphAllocation(_) => 3,
            NetworkAnalysis::Isochrone { .. }
            | NetworkAnalysis::Allocation { .. }
            | NetworkAnalysis::SplitAtPoints(_)
            | NetworkAnalysis::SnapToLines(_)
            | NetworkAnalysis::NetworkDbscan(_)
            | NetworkAnalysis::GraphMatrix(_)
            | NetworkAnalysis::Steiner(_) => 2,
            NetworkAnalysis::Connectivity
            | NetworkAnalysis::SpanningTree
            | NetworkAnalysis::Components(_)
            | NetworkAnalysis::GraphTable(_)
            | NetworkAnalysis::Planarize(_)
            | NetworkAnalysis::Communities(_)
            | NetworkAnalysis::GraphTree(_)
            | NetworkAnalysis::GraphConnectivity(_)
            | NetworkAnalysis::GraphRoute(_)
            | NetworkAnalysis::GraphReach(_)
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
            NetworkAnalysis::GraphRoute(r) => fields.extend(r.weight.iter().cloned()),
            NetworkAnalysis::GraphMatrix(m) => fields.extend(m.weight.iter().chain(&m.id).cloned()),
            NetworkAnalysis::GraphReach(r) => fields.extend(r.weight.iter().cloned()),
            NetworkAnalysis::GraphAllocation(a) => {
                fields.extend(a.weight.iter().chain([&a.facility_id]).cloned());
            }
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
                        | NetworkAnalysis::GraphRoute(_)
                        | NetworkAnalysis::GraphReach(_)
                        | NetworkAnalysis::GraphMatrix(_)
                        | NetworkAnalysis::GraphAllocation(_)
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
            NetworkAnalysis::GraphReach(r) => format!(
                "reach_from_point from=[{}, {}] budgets={:?}{} (networkx graph)",
                r.from[0],
                r.from[1],
                r.budgets,
                r.buffer.map(|b| format!(" buffer={b}")).unwrap_or_default()
            ),
            NetworkAnalysis::GraphMatrix(m) => format!(
                "matrix_between_rows{}{} (networkx graph)",
                m.max_cost
                    .map_or_else(String::new, |c| format!(" max_cost={c}")),
                if m.include_missing {
                    " include_missing"
                } else {
                    ""
                }
            ),
            NetworkAnalysis::GraphAllocation(a) => format!(
                "allocate_points{} (networkx graph)",
                a.max_cost
                    .map_or_else(String::new, |c| format!(" max_cost={c}"))
            ),
            NetworkAnalysis::GraphRoute(r) => format!(
                "route_between_points from=[{}, {}] to=[{}, {}] (networkx graph)",
                r.from[0], r.from[1], r.to[0], r.to[1]
            ),
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
