//! Lines beside polygons in a dissolve (what `make_valid` leaves of collapsed rings): noded
//! among themselves by GEOS and cut to their parts outside the polygons, each against the union
//! of only the polygons near it (found in an R-tree of their boxes).

use geo::{BooleanOps, BoundingRect, Coord, LineString, MultiLineString, Polygon};
use geomill_geometry::wkb;
use geos::{Geom, Geometry, GeometryTypes};
use rayon::prelude::*;
use rstar::primitives::{GeomWithData, Rectangle};
use rstar::{AABB, RTree};

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
    let boxes: Vec<Entry> = polygons
        .par_iter()
        .enumerate()
        .filter_map(|(i, p)| {
            let b = p.bounding_rect()?;
            Some(Entry::new(
                Rectangle::from_corners(corner(b.min()), corner(b.max())),
                i,
            ))
        })
        .collect();
    let boxes = RTree::bulk_load(boxes);
    let pieces = merged
        .par_iter()
        .flat_map_iter(|line| {
            let Some(extent) = line.bounding_rect() else {
                return Vec::new();
            };
            let envelope = AABB::from_corners(corner(extent.min()), corner(extent.max()));
            // In the polygons' order, as a scan of every box found them.
            let mut found: Vec<usize> = boxes
                .locate_in_envelope_intersecting(&envelope)
                .map(|entry| entry.data)
                .collect();
            found.sort_unstable();
            let near: Vec<&Polygon<f64>> = found.iter().map(|&i| &polygons[i]).collect();
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

/// A polygon's bounding box in the R-tree, with its position.
type Entry = GeomWithData<Rectangle<[f64; 2]>, usize>;

fn corner(c: Coord<f64>) -> [f64; 2] {
    [c.x, c.y]
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
