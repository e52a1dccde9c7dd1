//! Layer-wide diagrams with GEOS: Voronoi cells given back to their sites' rows, Delaunay
//! triangles and polygonized faces numbered as the SQL engines number them (by the lower-left
//! corner of their bounding box, ties by the normalized geometry's WKB).

use std::sync::Arc;

use arrow::array::{ArrayRef, BinaryArray, Int64Array, RecordBatch};
use arrow::datatypes::{DataType, Field, Schema};
use geos::{Geom, Geometry, GeometryTypes};
use rstar::{AABB, RTree, primitives::GeomWithData};

use super::geos_base::{point, polygon};
use super::geos_base::{to_geos, to_wkb};
use super::layer::{Layer, Wkb};
use super::{NativeError, delaunay};
use geomill_planner::plan::ops::tessellate::{Bounds, PIECE_ID, TessellateOp};
use geomill_planner::schema::GEOM;

/// Computes the diagram `op` over every feature of `layer`.
pub fn tessellate(layer: &Layer, op: &TessellateOp) -> Result<Layer, NativeError> {
    match op {
        TessellateOp::Voronoi { envelope, clip } => voronoi(layer, envelope.as_ref(), *clip),
        TessellateOp::Delaunay { edges, tolerance } => {
            let all = collection(geometries(layer)?.into_iter().flatten().collect())?;
            let mesh = if *tolerance == 0.0 {
                delaunay::delaunay(&all, *edges)?
            } else {
                all.delaunay_triangulation(*tolerance, *edges)
                    .map_err(NativeError::geos)?
            };
            numbered(layer, &mesh)
        }
        TessellateOp::Polygonize { node } => {
            let mut lines = Vec::new();
            for g in geometries(layer)?.into_iter().flatten() {
                match g.geometry_type() {
                    GeometryTypes::Polygon | GeometryTypes::MultiPolygon => {
                        lines.push(g.boundary().map_err(NativeError::geos)?);
                    }
                    GeometryTypes::LineString | GeometryTypes::MultiLineString => lines.push(g),
                    _ => {}
                }
            }
            if lines.is_empty() {
                return numbered(layer, &collection(Vec::new())?);
            }
            let faces = if *node {
                let noded = collection(lines)?
                    .unary_union()
                    .map_err(NativeError::geos)?;
                Geometry::polygonize(&[noded])
            } else {
                Geometry::polygonize(&lines)
            }
            .map_err(NativeError::geos)?;
            numbered(layer, &faces)
        }
    }
}

/// Every row's geometry (`None` for NULL and empty ones), in row order.
fn geometries(layer: &Layer) -> Result<Vec<Option<Geometry>>, NativeError> {
    let geom = layer.geometry_index()?;
    let mut out = Vec::with_capacity(layer.num_rows());
    for batch in &layer.batches {
        let wkbs = Wkb::of(batch, geom)?;
        for i in 0..wkbs.len() {
            let g = match wkbs.get(i) {
                Some(bytes) => Some(to_geos(bytes, out.len())?),
                None => None,
            };
            out.push(g.filter(|g| !g.is_empty().unwrap_or(true)));
        }
    }
    Ok(out)
}

fn collection(parts: Vec<Geometry>) -> Result<Geometry, NativeError> {
    Geometry::create_geometry_collection(parts).map_err(NativeError::geos)
}

fn rectangle(b: &Bounds) -> Result<Geometry, NativeError> {
    let [x0, y0, x1, y1] = *b;
    polygon(&[[x0, y0], [x0, y1], [x1, y1], [x1, y0], [x0, y0]]).map_err(NativeError::Geos)
}

/// The parts of `diagram` as rows `id, geom`, in the SQL engines' order.
fn numbered(layer: &Layer, diagram: &Geometry) -> Result<Layer, NativeError> {
    let mut pieces = Vec::new();
    for n in 0..diagram.get_num_geometries().map_err(NativeError::geos)? {
        let mut part = Geom::clone(&diagram.get_geometry_n(n).map_err(NativeError::geos)?);
        let wkb = to_wkb(&part)?;
        let (x, y) = (
            part.get_x_min().map_err(NativeError::geos)?,
            part.get_y_min().map_err(NativeError::geos)?,
        );
        part.normalize().map_err(NativeError::geos)?;
        pieces.push((x, y, to_wkb(&part)?, wkb));
    }
    pieces.sort_by(|a, b| {
        a.0.total_cmp(&b.0)
            .then(a.1.total_cmp(&b.1))
            .then_with(|| a.2.cmp(&b.2))
    });
    let ids: Int64Array = (1..=pieces.len()).map(|n| i64::try_from(n).ok()).collect();
    let geoms: BinaryArray = pieces.iter().map(|p| Some(p.3.as_slice())).collect();
    let schema = Arc::new(Schema::new(vec![
        Field::new(PIECE_ID, DataType::Int64, true),
        Field::new(GEOM, DataType::Binary, true),
    ]));
    let columns: Vec<ArrayRef> = vec![Arc::new(ids), Arc::new(geoms)];
    let batch = RecordBatch::try_new(schema.clone(), columns).map_err(NativeError::arrow)?;
    Layer::new(schema, vec![batch], GEOM, layer.crs.clone())
}

/// A feature's site: the point itself, or the centroid of another geometry.
fn site(g: &Geometry) -> Result<(f64, f64), NativeError> {
    let point = if g.geometry_type() == GeometryTypes::Point {
        Geom::clone(g)
    } else {
        g.get_centroid().map_err(NativeError::geos)?
    };
    Ok((
        point.get_x().map_err(NativeError::geos)?,
        point.get_y().map_err(NativeError::geos)?,
    ))
}

type CellEntry = GeomWithData<rstar::primitives::Rectangle<[f64; 2]>, usize>;

/// Each row's geometry replaced by the Voronoi cell its site lies in.
fn voronoi(layer: &Layer, envelope: Option<&Bounds>, clip: bool) -> Result<Layer, NativeError> {
    let sites: Vec<Option<(f64, f64)>> = geometries(layer)?
        .iter()
        .map(|g| g.as_ref().map(site).transpose())
        .collect::<Result<_, _>>()?;
    let points = sites
        .iter()
        .flatten()
        .map(|(x, y)| point([*x, *y]))
        .collect::<Result<Vec<_>, _>>()
        .map_err(NativeError::Geos)?;
    let all = Geometry::create_multipoint(points).map_err(NativeError::geos)?;
    let frame = envelope.map(rectangle).transpose()?;
    let diagram = all
        .voronoi(frame.as_ref(), 0.0, false)
        .map_err(NativeError::geos)?;
    let cut = match (clip, frame) {
        (false, _) => None,
        (true, Some(frame)) => Some(frame),
        (true, None) => Some(all.envelope().map_err(NativeError::geos)?),
    };
    let mut cells = Vec::new();
    for n in 0..diagram.get_num_geometries().map_err(NativeError::geos)? {
        cells.push(Geom::clone(
            &diagram.get_geometry_n(n).map_err(NativeError::geos)?,
        ));
    }
    let index: RTree<CellEntry> = RTree::bulk_load(
        cells
            .iter()
            .enumerate()
            .map(|(n, cell)| {
                let corner = |x: geos::GResult<f64>, y: geos::GResult<f64>| {
                    Ok::<_, NativeError>([
                        x.map_err(NativeError::geos)?,
                        y.map_err(NativeError::geos)?,
                    ])
                };
                let low = corner(cell.get_x_min(), cell.get_y_min())?;
                let high = corner(cell.get_x_max(), cell.get_y_max())?;
                Ok(GeomWithData::new(
                    rstar::primitives::Rectangle::from_corners(low, high),
                    n,
                ))
            })
            .collect::<Result<Vec<_>, NativeError>>()?,
    );
    let mut out: Vec<Option<Vec<u8>>> = Vec::with_capacity(sites.len());
    for s in &sites {
        let Some((x, y)) = *s else {
            out.push(None);
            continue;
        };
        let site = point([x, y]).map_err(NativeError::Geos)?;
        let mut found = None;
        for entry in index.locate_in_envelope_intersecting(&AABB::from_point([x, y])) {
            let cell = &cells[entry.data];
            if cell.intersects(&site).map_err(NativeError::geos)? {
                found = Some(cell);
                break;
            }
        }
        let cell = match (found, &cut) {
            (None, _) => None,
            (Some(cell), None) => Some(to_wkb(cell)?),
            (Some(cell), Some(cut)) => {
                let piece = cell.intersection(cut).map_err(NativeError::geos)?;
                if piece.is_empty().map_err(NativeError::geos)? {
                    None
                } else {
                    Some(to_wkb(&piece)?)
                }
            }
        };
        out.push(cell);
    }
    layer.with_geometries(&out)
}
