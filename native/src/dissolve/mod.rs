//! Dissolve: the union of every geometry of a layer, polygons in one overlay sweep.
//!
//! The polygonal parts are unioned by one sweep over all their edges (i_overlay's integer
//! overlay: rings oriented counter-clockwise, holes clockwise, the positive fill rule),
//! whose cost is O(E log E) in the number of edges whatever the layer looks like: a coverage
//! (neighbours sharing their edges, as administrative and parcel layers do) and overlapping
//! polygons alike, where GEOS's cascaded union re-nodes every partial result at each level of
//! its tree (21 s for 3,000 real-shaped regions that the sweep unions in about a second). A
//! coverage needs no detection of its own: its shared edges cancel in the same sweep, and GEOS's
//! `CoverageUnion` (3.12+) is not in the system's 3.11. The sweep runs on an integer grid fitted
//! to the layer's extent (2^29 units over its larger half-extent, rounded to a power of two:
//! 2.4e-7 degrees on the whole globe, 3.7e-9 on a 7-degree layer), in vertical strips on
//! every core (`strips.rs`); the vertices of the input keep their exact coordinates, only the
//! points where edges cross are on the grid; rings that touch themselves are split as the OGC
//! model wants (`simple_rings.rs`), so the answer is valid for GEOS and the SQL engines.
//!
//! Lines and points (what `make_valid` leaves of collapsed rings, or a layer of lines) are
//! unioned by GEOS: lines left in a polygon layer are cut to the parts outside the polygons'
//! union and listed after the polygons in a geometry collection, as GEOS's unary union lists
//! them; a layer of lines or points alone, or with Z or M, goes through GEOS's cascaded union
//! (rows sorted along x, one union per core, the partial unions unioned pairwise).

use std::sync::Arc;

use arrow::array::{BinaryBuilder, RecordBatch};
use arrow::datatypes::{DataType, Field, Schema};
use geo::orient::{Direction, Orient};
use geo::{LineString, MultiLineString, MultiPolygon, Polygon};
use geomill_geometry::wkb;
use geos::{Geom, Geometry, GeometryTypes};
use rayon::prelude::*;

use super::NativeError;
use super::geos_base::{to_geos, to_wkb};
use super::layer::{Layer, Wkb};

mod lines;
mod simple_rings;
mod strips;

/// The union of every geometry of `layer`: one row, NULL when the layer has no geometry.
pub fn dissolve(layer: &Layer) -> Result<Layer, NativeError> {
    let rows = geometries(layer)?;
    let merged = match by_overlay(&rows)? {
        Some(bytes) => Some(bytes),
        None => by_geos(&rows)?,
    };
    one_row(layer, merged)
}

/// The non-NULL geometries of `layer` with their row numbers.
fn geometries(layer: &Layer) -> Result<Vec<(&[u8], usize)>, NativeError> {
    let geom = layer.geometry_index()?;
    let mut rows = Vec::with_capacity(layer.num_rows());
    let mut row = 0;
    for batch in &layer.batches {
        let wkbs = Wkb::of(batch, geom)?;
        for i in 0..wkbs.len() {
            if let Some(bytes) = wkbs.get(i) {
                rows.push((bytes, row));
            }
            row += 1;
        }
    }
    Ok(rows)
}

/// What one geometry contributes to the sweep.
enum Parts {
    Polygons(Vec<Polygon<f64>>),
    /// Polygons and the lines beside them (a collection, what `make_valid` leaves).
    Mixed(Vec<Polygon<f64>>, Vec<LineString<f64>>),
    /// Points, Z or M, or a shape the sweep does not take: the whole layer goes to GEOS.
    Declined,
}

/// The union by the overlay sweep, or `None` when the layer is not for it (no polygon, or a
/// part it does not take).
fn by_overlay(rows: &[(&[u8], usize)]) -> Result<Option<Vec<u8>>, NativeError> {
    let parts = rows
        .par_iter()
        .map(|(bytes, row)| parts_of(bytes, *row))
        .collect::<Result<Vec<_>, _>>()?;
    let mut polygons = Vec::new();
    let mut lines = Vec::new();
    for part in parts {
        match part {
            Parts::Polygons(p) => polygons.extend(p),
            Parts::Mixed(p, l) => {
                polygons.extend(p);
                lines.extend(l);
            }
            Parts::Declined => return Ok(None),
        }
    }
    if polygons.is_empty() {
        return Ok(None);
    }
    let union = strips::union(&polygons, strip_count(&polygons));
    if union.0.is_empty() {
        return Ok(None);
    }
    let mut out = Vec::new();
    if lines.is_empty() {
        wkb::write_polygonal(&union, &mut out);
        return Ok(Some(out));
    }
    let outside = lines::outside(&polygons, lines)?;
    if outside.0.is_empty() {
        wkb::write_polygonal(&union, &mut out);
    } else {
        write_collection(&union, &outside, &mut out);
    }
    Ok(Some(out))
}

/// How many strips `strips::union` cuts: two per core when the layer is large enough to gain
/// (below some 50,000 vertices one sweep is quicker than cutting and merging).
fn strip_count(polygons: &[Polygon<f64>]) -> usize {
    let vertices: usize = polygons
        .iter()
        .map(|p| p.exterior().0.len() + p.interiors().iter().map(|r| r.0.len()).sum::<usize>())
        .sum();
    if vertices < 50_000 {
        1
    } else {
        rayon::current_num_threads() * 2
    }
}

/// The polygons of one geometry, oriented for the positive fill rule, and its lines.
fn parts_of(bytes: &[u8], row: usize) -> Result<Parts, NativeError> {
    let code = wkb::geometry_type(bytes).map_err(|e| NativeError::Geometry {
        row,
        reason: e.to_string(),
    })?;
    match code {
        3 | 6 => {
            let shape = wkb::read_polygonal(bytes).map_err(|e| NativeError::Geometry {
                row,
                reason: e.to_string(),
            })?;
            Ok(Parts::Polygons(oriented(shape)))
        }
        2 | 5 | 7 => collection_parts(&to_geos(bytes, row)?),
        _ => Ok(Parts::Declined),
    }
}

fn oriented(shape: MultiPolygon<f64>) -> Vec<Polygon<f64>> {
    shape
        .0
        .into_iter()
        .map(|p| p.orient(Direction::Default))
        .collect()
}

/// The polygons and lines of a line, multiline or collection (recursively).
fn collection_parts(geometry: &Geometry) -> Result<Parts, NativeError> {
    if geometry.has_z().map_err(NativeError::geos)? {
        return Ok(Parts::Declined);
    }
    let mut polygons = Vec::new();
    let mut lines = Vec::new();
    let mut pending = vec![Geom::clone(geometry)];
    while let Some(g) = pending.pop() {
        if g.is_empty().map_err(NativeError::geos)? {
            continue;
        }
        match g.geometry_type() {
            GeometryTypes::Polygon | GeometryTypes::MultiPolygon => {
                let bytes = to_wkb(&g)?;
                let shape = wkb::read_polygonal(&bytes).map_err(|e| NativeError::Geometry {
                    row: 0,
                    reason: e.to_string(),
                })?;
                polygons.extend(oriented(shape));
            }
            GeometryTypes::LineString | GeometryTypes::LinearRing => {
                lines.push(lines::line_of(&g)?)
            }
            GeometryTypes::MultiLineString | GeometryTypes::GeometryCollection => {
                for i in 0..g.get_num_geometries().map_err(NativeError::geos)? {
                    pending.push(Geom::clone(
                        &g.get_geometry_n(i).map_err(NativeError::geos)?,
                    ));
                }
            }
            _ => return Ok(Parts::Declined),
        }
    }
    Ok(Parts::Mixed(polygons, lines))
}

/// Little-endian WKB of a geometry collection: the polygons, then the lines.
fn write_collection(polygons: &MultiPolygon<f64>, lines: &MultiLineString<f64>, out: &mut Vec<u8>) {
    out.push(1);
    out.extend_from_slice(&7u32.to_le_bytes());
    out.extend_from_slice(&((polygons.0.len() + lines.0.len()) as u32).to_le_bytes());
    for polygon in &polygons.0 {
        wkb::write_polygonal(&MultiPolygon(vec![polygon.clone()]), out);
    }
    for line in &lines.0 {
        let points: Vec<[f64; 2]> = line.0.iter().map(|c| [c.x, c.y]).collect();
        wkb::write_line(&points, out);
    }
}

/// GEOS's cascaded union: rows sorted along x, one union per run of rows on each core, the
/// partial unions unioned pairwise, level by level.
fn by_geos(rows: &[(&[u8], usize)]) -> Result<Option<Vec<u8>>, NativeError> {
    let mut keyed: Vec<(f64, &[u8], usize)> = rows.iter().map(|(b, r)| (0.0, *b, *r)).collect();
    keyed.par_iter_mut().try_for_each(|entry| {
        let g = to_geos(entry.1, entry.2)?;
        entry.0 = if g.is_empty().unwrap_or(true) {
            0.0
        } else {
            g.get_x_min().unwrap_or(0.0)
        };
        Ok::<_, NativeError>(())
    })?;
    keyed.sort_by(|a, b| a.0.total_cmp(&b.0));
    let runs = (rayon::current_num_threads() * 4).max(1);
    let run_len = keyed.len().div_ceil(runs).max(1);
    let mut partials: Vec<Vec<u8>> = keyed
        .par_chunks(run_len)
        .map(|run| {
            let parts = run
                .iter()
                .map(|(_, bytes, row)| to_geos(bytes, *row))
                .collect::<Result<Vec<_>, _>>()?;
            let collection =
                Geometry::create_geometry_collection(parts).map_err(NativeError::geos)?;
            to_wkb(&collection.unary_union().map_err(NativeError::geos)?)
        })
        .collect::<Result<_, _>>()?;
    // Neighbouring runs are unioned pairwise, level by level (a unary union of all the
    // partial results would take them apart into polygons and redo the whole union on one
    // thread).
    while partials.len() > 1 {
        partials = partials
            .par_chunks(2)
            .map(|pair| match pair {
                [a, b] => {
                    let union = to_geos(a, 0)?
                        .union(&to_geos(b, 0)?)
                        .map_err(NativeError::geos)?;
                    to_wkb(&union)
                }
                [single] => Ok(single.clone()),
                _ => Ok(Vec::new()),
            })
            .collect::<Result<_, NativeError>>()?;
    }
    Ok(partials.pop())
}

/// The layer of one row holding `merged` (NULL when `None`).
fn one_row(layer: &Layer, merged: Option<Vec<u8>>) -> Result<Layer, NativeError> {
    let mut builder = BinaryBuilder::new();
    builder.append_option(merged);
    let schema = Arc::new(Schema::new(vec![Field::new(
        &layer.geometry,
        DataType::Binary,
        true,
    )]));
    let batch = RecordBatch::try_new(schema.clone(), vec![Arc::new(builder.finish())])
        .map_err(NativeError::arrow)?;
    Layer::new(schema, vec![batch], &layer.geometry, layer.crs.clone())
}
