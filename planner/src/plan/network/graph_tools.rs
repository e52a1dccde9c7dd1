//! The analyses GISPulse's graph tools answer (its networkx `Graph` of the lines, rows and
//! nodes numbered as GISPulse numbers them), each a [`super::NetworkAnalysis`] variant's
//! parameters, and their output field names.

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

/// Each point (first input; a geometry other than a point by its centroid) allocated to a
/// facility (third input) over the network (second input) built as [`NetworkDbscan`]'s, as
/// GISPulse's `network_allocation` does: every facility with a geometry sits on the node
/// nearest it, every node takes the facility reaching it at the least cost within `max_cost`
/// (default: any), equal costs going to the facility listed first; each point takes the
/// allocation of the node nearest it: `facility` (the `facility_id` field's value) and `cost`
/// (the node's least cost; both NULL when no facility reaches the node, or for a point with
/// no geometry). Every point is kept with its attributes and geometry.
#[derive(Debug, Clone, PartialEq)]
pub struct GraphAllocation {
    pub weight: Option<String>,
    pub facility_id: String,
    pub max_cost: Option<f64>,
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

/// The least-cost path over the network built as [`NetworkDbscan`]'s (GISPulse's
/// `shortest_path`), from the node nearest `from` to the node nearest `to` (points in the
/// lines' CRS; of equally near nodes either may be taken, as in GISPulse). One row per edge in path order:
/// `path_order` from 0 and the edge's line part as stored. No rows when the two points share
/// a node or no path links them; equal-cost paths: the one Dijkstra from `from` settles first
/// (networkx's bidirectional search may take another of the same cost).
#[derive(Debug, Clone, PartialEq)]
pub struct GraphRoute {
    pub weight: Option<String>,
    pub from: [f64; 2],
    pub to: [f64; 2],
}

/// The least-cost paths over the network built as [`NetworkDbscan`]'s between every two
/// rows of a point layer (GISPulse's symmetric `od_matrix`): each point (a centroid for other
/// geometries) starts at its nearest node; per origin row, Dijkstra up to `max_cost`, then one
/// row per other destination row reached: `origin` and `destination` (the `id` field's
/// values, or the rows' positions from 0), `cost`, `edges` (the path's edge count) and the
/// path (its edges' line parts merged into one line; the origin's own geometry when both
/// share a node). With `include_missing`, a row for an origin and itself too (cost 0, no
/// edge) and for each destination not reached (cost NULL, no edge), both with the origin's
/// geometry. Rows by origin, then destination.
#[derive(Debug, Clone, PartialEq)]
pub struct GraphMatrix {
    pub weight: Option<String>,
    pub id: Option<String>,
    pub max_cost: Option<f64>,
    pub include_missing: bool,
}

/// The field numbering [`GraphRoute`]'s edges.
pub const PATH_ORDER: &str = "path_order";

/// What the network built as [`NetworkDbscan`]'s reaches from the node nearest `from`
/// (GISPulse's `isochrone` from a point): a node is reached within a budget when its least
/// cost is at most the budget, and an edge when either of its nodes is. With `buffer`, one row
/// per budget (ascending) reaching an edge: `cost` (the budget) and the union of every reached
/// edge's line buffered by `buffer` (GEOS, 16 segments a quarter circle). Without, one row per
/// edge reached within the first budget, in the order networkx lists the graph's edges:
/// `cost` (the edge's own cost) and its line part. Budgets all 0 reach nothing.
#[derive(Debug, Clone, PartialEq)]
pub struct GraphReach {
    pub weight: Option<String>,
    pub from: [f64; 2],
    pub budgets: Vec<f64>,
    pub buffer: Option<f64>,
}

/// The cost field of [`GraphReach`]'s rows.
pub const REACH_COST: &str = "cost";
