//! Lines cut wherever they meet (`planarize`): each line part's cuts are where the others
//! meet it (GEOS intersections, projected onto it), then the pieces and their nodes as one
//! table.

use geos::{Geom, Geometry, GeometryTypes};
use rstar::primitives::{GeomWithData, Rectangle};
use rstar::{AABB, RTree};

use super::super::NativeError;
use super::super::geos_base::to_geos;
use super::super::layer::Layer;
use super::graph_table::{Edge, Nodes, Table, line_parts};
use super::split::Part;
use geomill_geometry::wkb::write_line;
use geomill_planner::plan::network::{PARENT_EDGE_ID, Planarize, graph_fields};

/// The box of `points` grown by `by` on every side.
fn envelope(points: &[[f64; 2]], by: f64) -> AABB<[f64; 2]> {
    let (mut low, mut high) = ([f64::INFINITY; 2], [f64::NEG_INFINITY; 2]);
    for p in points {
        for d in 0..2 {
            low[d] = low[d].min(p[d]);
            high[d] = high[d].max(p[d]);
        }
    }
    AABB::from_corners([low[0] - by, low[1] - by], [high[0] + by, high[1] + by])
}

/// The measures along `part` of where `meeting` (an intersection with it) lies: its points,
/// and both ends of each stretch (a closed one has none).
fn collect(
    part: &Part<'_>,
    meeting: &Geometry,
    measures: &mut Vec<f64>,
) -> Result<(), NativeError> {
    match meeting.geometry_type() {
        GeometryTypes::Point if !meeting.is_empty().map_err(NativeError::geos)? => {
            let p = [
                meeting.get_x().map_err(NativeError::geos)?,
                meeting.get_y().map_err(NativeError::geos)?,
            ];
            measures.push(part.project(p).1);
        }
        GeometryTypes::LineString => {
            let coords = meeting.get_coord_seq().map_err(NativeError::geos)?;
            let n = coords.size().map_err(NativeError::geos)?;
            if n >= 2 {
                let at = |k: usize| -> Result<[f64; 2], NativeError> {
                    Ok([
                        coords.get_x(k).map_err(NativeError::geos)?,
                        coords.get_y(k).map_err(NativeError::geos)?,
                    ])
                };
                let (first, last) = (at(0)?, at(n - 1)?);
                if first != last {
                    measures.push(part.project(first).1);
                    measures.push(part.project(last).1);
                }
            }
        }
        GeometryTypes::MultiPoint
        | GeometryTypes::MultiLineString
        | GeometryTypes::GeometryCollection => {
            for k in 0..meeting.get_num_geometries().map_err(NativeError::geos)? {
                let member = Geom::clone(&meeting.get_geometry_n(k).map_err(NativeError::geos)?);
                collect(part, &member, measures)?;
            }
        }
        _ => {}
    }
    Ok(())
}

/// The nodes and pieces of `lines` made planar, as one table.
pub fn planarize(lines: &Layer, spec: &Planarize) -> Result<Layer, NativeError> {
    let parts = line_parts(lines)?;
    let shapes: Vec<Geometry> = parts
        .iter()
        .enumerate()
        .map(|(i, e)| {
            let mut wkb = Vec::new();
            write_line(&e.points, &mut wkb);
            to_geos(&wkb, i)
        })
        .collect::<Result<_, _>>()?;
    let tol = spec.tolerance;
    let tree = RTree::bulk_load(
        parts
            .iter()
            .enumerate()
            .map(|(i, e)| {
                let b = envelope(&e.points, 0.0);
                GeomWithData::new(Rectangle::from_corners(b.lower(), b.upper()), i)
            })
            .collect(),
    );
    let mut pieces: Vec<Edge> = Vec::new();
    for (i, edge) in parts.iter().enumerate() {
        let part = Part::new(&edge.points);
        let mut measures = Vec::new();
        for candidate in tree.locate_in_envelope_intersecting(&envelope(&edge.points, tol)) {
            let j = candidate.data;
            if j == i {
                continue;
            }
            let meeting = shapes[i]
                .intersection(&shapes[j])
                .map_err(NativeError::geos)?;
            collect(&part, &meeting, &mut measures)?;
            if tol > 0.0
                && meeting.is_empty().map_err(NativeError::geos)?
                && shapes[i].distance(&shapes[j]).map_err(NativeError::geos)? <= tol
            {
                let nearest = shapes[i]
                    .nearest_points(&shapes[j])
                    .map_err(NativeError::geos)?;
                let p = [
                    nearest.get_x(0).map_err(NativeError::geos)?,
                    nearest.get_y(0).map_err(NativeError::geos)?,
                ];
                measures.push(part.project(p).1);
            }
        }
        pieces.extend(part.pieces(&mut measures).into_iter().map(|points| Edge {
            row: edge.row,
            points,
        }));
    }
    let nodes = Nodes::of(&pieces, tol);
    let table = Table {
        lines,
        nodes: &nodes,
        edges: &pieces,
    };
    use graph_fields::*;
    let columns = vec![
        (FEATURE_TYPE.to_owned(), table.feature_types("segment")),
        (NODE_ID.to_owned(), table.on_nodes(|i| i as i64)),
        (DEGREE.to_owned(), table.on_nodes(|i| nodes.degree[i])),
        (
            PARENT_EDGE_ID.to_owned(),
            table.parents(spec.id.as_deref())?,
        ),
    ];
    table.layer(columns, &[FEATURE_TYPE, NODE_ID, DEGREE, PARENT_EDGE_ID])
}
