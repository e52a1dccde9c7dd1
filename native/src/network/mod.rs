//! Network analyses over a line layer's graph (petgraph): origin–destination costs, shortest
//! paths, reach bands, allocation to facilities, connected parts, minimum spanning forests,
//! and GISPulse's graph tools over the networkx-style graph it builds.

mod communities;
mod components;
mod end_nodes;
mod graph;
mod graph_reports;
mod graph_table;
mod network_dbscan;
mod planarize;
mod point_allocation;
mod point_matrix;
mod point_route;
mod reach;
mod routes;
mod search;
mod simple_graph;
mod snap;
mod split;
mod steiner;
mod structure;
mod tree;

use std::sync::Arc;

use arrow::array::{ArrayRef, BinaryArray, RecordBatch, UInt64Array};
use arrow::compute::{concat, take};
use arrow::datatypes::{Field, Schema};
use geos::{Geom, GeometryTypes};

use super::NativeError;
use super::geos_base::to_geos;
use super::layer::{Layer, Wkb};
use geomill_planner::plan::operator::{NetworkAnalysis, NetworkOp};
use geomill_planner::schema::GEOM;

pub use graph::Network;

/// Runs `op` over `inputs`: the line layer, then the point layers the analysis names.
pub fn analyse(op: &NetworkOp, inputs: &[&Layer]) -> Result<Layer, NativeError> {
    let layer = |i: usize| {
        inputs.get(i).copied().ok_or_else(|| {
            NativeError::Declined(format!("{} without input {}", op.describe(), i + 1))
        })
    };
    let lines = layer(0)?;
    match &op.analysis {
        NetworkAnalysis::PointTree { id } => return tree::point_tree(lines, id, &op.graph),
        NetworkAnalysis::Components(spec) => return components::components(lines, spec),
        NetworkAnalysis::SplitAtPoints(spec) => return split::split(lines, layer(1)?, spec),
        NetworkAnalysis::GraphTable(spec) => return graph_table::graph_table(lines, spec),
        NetworkAnalysis::Planarize(spec) => return planarize::planarize(lines, spec),
        NetworkAnalysis::SnapToLines(spec) => return snap::snap(lines, layer(1)?, spec),
        NetworkAnalysis::Steiner(spec) => return steiner::steiner(lines, layer(1)?, spec),
        NetworkAnalysis::Communities(spec) => return communities::communities(lines, spec),
        NetworkAnalysis::GraphTree(spec) => return graph_reports::spanning_edges(lines, spec),
        NetworkAnalysis::GraphRoute(spec) => return point_route::route(lines, spec),
        NetworkAnalysis::GraphReach(spec) => return point_route::reach(lines, spec),
        NetworkAnalysis::GraphMatrix(spec) => {
            return point_matrix::matrix(lines, layer(1)?, spec);
        }
        NetworkAnalysis::GraphConnectivity(spec) => {
            return graph_reports::connectivity(lines, spec);
        }
        NetworkAnalysis::NetworkDbscan(spec) => {
            return network_dbscan::network_dbscan(lines, layer(1)?, spec);
        }
        NetworkAnalysis::GraphAllocation(spec) => {
            return point_allocation::allocate(lines, layer(1)?, layer(2)?, spec);
        }
        _ => {}
    }
    let network = Network::build(lines, &op.graph)?;
    match &op.analysis {
        NetworkAnalysis::OdMatrix {
            origin_id,
            destination_id,
        }
        | NetworkAnalysis::ShortestPath {
            origin_id,
            destination_id,
        } => routes::routes(
            &network,
            lines,
            (layer(1)?, origin_id),
            (layer(2)?, destination_id),
            matches!(op.analysis, NetworkAnalysis::ShortestPath { .. }),
        ),
        NetworkAnalysis::Isochrone {
            origin_id,
            bands,
            polygons,
        } => reach::isochrone(&network, lines, (layer(1)?, origin_id), bands, *polygons),
        NetworkAnalysis::Allocation { facility_id } => {
            reach::allocation(&network, lines, (layer(1)?, facility_id))
        }
        NetworkAnalysis::Connectivity => structure::connectivity(&network, lines),
        NetworkAnalysis::SpanningTree => structure::spanning_tree(&network, lines),
        NetworkAnalysis::PointTree { .. }
        | NetworkAnalysis::Components(_)
        | NetworkAnalysis::SplitAtPoints(_)
        | NetworkAnalysis::GraphTable(_)
        | NetworkAnalysis::Planarize(_)
        | NetworkAnalysis::SnapToLines(_)
        | NetworkAnalysis::NetworkDbscan(_)
        | NetworkAnalysis::Steiner(_)
        | NetworkAnalysis::Communities(_)
        | NetworkAnalysis::GraphTree(_)
        | NetworkAnalysis::GraphConnectivity(_)
        | NetworkAnalysis::GraphRoute(_)
        | NetworkAnalysis::GraphReach(_)
        | NetworkAnalysis::GraphMatrix(_)
        | NetworkAnalysis::GraphAllocation(_) => Err(NativeError::Declined(op.describe())),
    }
}

/// Each row's point (a point, or the centroid of another geometry; `None` for NULL and empty).
fn row_points(layer: &Layer) -> Result<Vec<Option<[f64; 2]>>, NativeError> {
    let geom = layer.geometry_index()?;
    let mut out = Vec::with_capacity(layer.num_rows());
    for batch in &layer.batches {
        let wkbs = Wkb::of(batch, geom)?;
        for i in 0..wkbs.len() {
            let Some(bytes) = wkbs.get(i) else {
                out.push(None);
                continue;
            };
            let g = to_geos(bytes, out.len())?;
            if g.is_empty().map_err(NativeError::geos)? {
                out.push(None);
                continue;
            }
            let p = if g.geometry_type() == GeometryTypes::Point {
                g
            } else {
                g.get_centroid().map_err(NativeError::geos)?
            };
            out.push(Some([
                p.get_x().map_err(NativeError::geos)?,
                p.get_y().map_err(NativeError::geos)?,
            ]));
        }
    }
    Ok(out)
}

/// Points placed on the network: each row's node (`None` for NULL and empty geometries).
struct Placed {
    points: Vec<Option<[f64; 2]>>,
    nodes: Vec<Option<usize>>,
}

fn place(network: &Network, layer: &Layer) -> Result<Placed, NativeError> {
    let points = row_points(layer)?;
    let nodes = points
        .iter()
        .map(|p| p.and_then(|p| network.nearest_node(p)))
        .collect();
    Ok(Placed { points, nodes })
}

/// The column at `index` of `layer`, all batches in one array.
fn whole_column(layer: &Layer, index: usize) -> Result<ArrayRef, NativeError> {
    let parts: Vec<&dyn arrow::array::Array> = layer
        .batches
        .iter()
        .map(|b| b.column(index).as_ref())
        .collect();
    if parts.is_empty() {
        return Ok(arrow::array::new_empty_array(
            layer.schema.field(index).data_type(),
        ));
    }
    concat(&parts).map_err(NativeError::arrow)
}

/// One column of `layer` (all batches), the rows `rows` of it (`None`: a NULL value).
fn column_rows(layer: &Layer, field: &str, rows: &[Option<u64>]) -> Result<ArrayRef, NativeError> {
    let whole = whole_column(layer, layer.column_index(field)?)?;
    take(&whole, &UInt64Array::from(rows.to_vec()), None).map_err(NativeError::arrow)
}

/// A layer of the named `columns` (the geometry, WKB, last).
fn table(
    lines: &Layer,
    columns: Vec<(&str, ArrayRef)>,
    geometry: Vec<Option<Vec<u8>>>,
) -> Result<Layer, NativeError> {
    let mut fields: Vec<Field> = columns
        .iter()
        .map(|(name, array)| Field::new(*name, array.data_type().clone(), true))
        .collect();
    fields.push(Field::new(GEOM, arrow::datatypes::DataType::Binary, true));
    let schema = Arc::new(Schema::new(fields));
    let mut arrays: Vec<ArrayRef> = columns.into_iter().map(|(_, a)| a).collect();
    arrays.push(Arc::new(
        geometry
            .iter()
            .map(|g| g.as_deref())
            .collect::<BinaryArray>(),
    ));
    let batch = RecordBatch::try_new(schema.clone(), arrays).map_err(NativeError::arrow)?;
    Layer::new(schema, vec![batch], GEOM, lines.crs.clone())
}

/// `lines` with `columns` added to (or replacing) its own, row for row.
fn with_columns(lines: &Layer, columns: Vec<(&str, ArrayRef)>) -> Result<Layer, NativeError> {
    let mut fields: Vec<Arc<Field>> = lines.schema.fields().iter().cloned().collect();
    let mut positions = Vec::new();
    for (name, array) in &columns {
        let field = Arc::new(Field::new(*name, array.data_type().clone(), true));
        match lines.schema.index_of(name) {
            Ok(i) => {
                fields[i] = field;
                positions.push(i);
            }
            Err(_) => {
                fields.push(field);
                positions.push(fields.len() - 1);
            }
        }
    }
    let schema = Arc::new(Schema::new(fields));
    let mut batches = Vec::with_capacity(lines.batches.len());
    let mut offset = 0;
    for batch in &lines.batches {
        let rows = batch.num_rows();
        let mut arrays = batch.columns().to_vec();
        for ((_, array), &at) in columns.iter().zip(&positions) {
            let slice = array.slice(offset, rows);
            if at < arrays.len() {
                arrays[at] = slice;
            } else {
                arrays.push(slice);
            }
        }
        batches.push(RecordBatch::try_new(schema.clone(), arrays).map_err(NativeError::arrow)?);
        offset += rows;
    }
    Layer::new(schema, batches, &lines.geometry, lines.crs.clone())
}
