//! Lines beside polygons in a dissolve (what `make_valid` leaves of collapsed rings): noded
//! among themselves by GEOS and cut to their parts outside the polygons, each against the union
//! of only the polygons near it.

use geo::{
    BooleanOps, BoundingRect, Coord, Intersects, LineString, MultiLineString, Polygon, Rect,
};
use geomill_geometry::wkb;
use geos::{Geom, Geometry, GeometryTypes};
use rayon::prelude::*;

use crate::NativeError;
use crate::geos_base::to_geos;

/// The lines, unioned among themselves by GEOS (noded, overlaps merged), cut to their parts
/// outside the union of `polygons`.
pub(super) fn outside(
    polygons: &[Polygon<f64>],
    lines: Vec<LineString<f64>>,
) -> Result<MultiLineString<f64>, NativeError> {
    let mut geos_lines = Vec::with_capacity(lines.len());
    for line in &lines {
        let mut bytes = Vec::new();
        let points: Vec<[f64; 2]> = line.0.iter().map(|c| [c.x, c.y]).collect();
        wkb::write_line(&points, &mut bytes);
        geos_lines.push(to_geos(&bytes, 0)?);
    }
    let noded = Geometry::create_geometry_collection(geos_lines)
        .and_then(|c| c.unary_union())
        .map_err(NativeError::geos)?;
    let mut merged = Vec::new();
    let mut pending = vec![noded];
    while let Some(g) = pending.pop() {
        match g.geometry_type() {
            GeometryTypes::LineString => merged.push(line_of(&g)?),
            _ => {
                for i in 0..g.get_num_geometries().map_err(NativeError::geos)? {
                    pending.push(Geom::clone(
                        &g.get_geometry_n(i).map_err(NativeError::geos)?,
                    ));
                }
            }
        }
    }
    let boxes: Vec<Option<Rect<f64>>> = polygons
        .par_iter()
        .map(BoundingRect::bounding_rect)
        .collect();
    let pieces = merged
        .par_iter()
        .flat_map_iter(|line| {
            let Some(extent) = line.bounding_rect() else {
                return Vec::new();
            };
            let near: Vec<&Polygon<f64>> = polygons
                .iter()
                .zip(&boxes)
                .filter(|(_, b)| b.is_some_and(|b| b.intersects(&extent)))
                .map(|(p, _)| p)
                .collect();
            if near.is_empty() {
                return vec![line.clone()];
            }
            geo::unary_union(near)
                .clip(&MultiLineString(vec![line.clone()]), true)
                .0
        })
        .collect();
    Ok(MultiLineString(pieces))
}

pub(super) fn line_of(line: &Geometry) -> Result<LineString<f64>, NativeError> {
    let seq = line.get_coord_seq().map_err(NativeError::geos)?;
    let n = seq.size().map_err(NativeError::geos)?;
    (0..n)
        .map(|i| {
            Ok(Coord {
                x: seq.get_x(i).map_err(NativeError::geos)?,
                y: seq.get_y(i).map_err(NativeError::geos)?,
            })
        })
        .collect::<Result<Vec<_>, NativeError>>()
        .map(LineString)
}
