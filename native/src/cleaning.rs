//! Polygon cleaning over the whole layer (`CleanOp`): the layer's polygons read once (made
//! valid), an R-tree of their envelopes, the rule of `cleaning_rules` applied, and the rows
//! written back: unchanged rows keep their WKB, changed rows get GEOS's, removed rows go.

use arrow::array::BooleanArray;
use arrow::compute::filter_record_batch;
use geos::{Geom, Geometry, GeometryTypes};
use rstar::{AABB, RTree, primitives::GeomWithData, primitives::Rectangle};

use super::cleaning_rules::{fix_gaps, fix_overlaps, remove_slivers, snap_borders};
use super::geos_base::{to_geos, to_wkb};
use super::layer::{Layer, Wkb};
use super::{NativeError, wkb};
use geomill_planner::plan::ops::clean::CleanOp;

/// WKB type codes of polygons and multipolygons (2D, Z, M, ZM; ISO and EWKB-style).
fn is_polygonal_code(code: u32) -> bool {
    matches!(code % 1000, 3 | 6)
}

/// The layer's rows as the rules see them.
pub(crate) struct Rows {
    /// Each row's WKB as read (`None` for NULL).
    pub original: Vec<Option<Vec<u8>>>,
    /// Each polygonal, non-empty row's geometry, made valid; `None` for the rows that take no
    /// part (NULL, empty, points, lines, collections).
    pub polygons: Vec<Option<Geometry>>,
    /// Whether the row's polygon had to be made valid (its WKB then changes).
    pub repaired: Vec<bool>,
}

/// What a rule decides for each row.
pub(crate) struct Cleaned {
    /// A new geometry for the row (`None`: the row keeps its own).
    pub changed: Vec<Option<Geometry>>,
    /// Whether the row stays in the layer.
    pub keep: Vec<bool>,
}

impl Cleaned {
    pub fn unchanged(rows: usize) -> Self {
        Self {
            changed: (0..rows).map(|_| None).collect(),
            keep: vec![true; rows],
        }
    }
}

/// Cleans the polygons of `layer` by `op`.
pub fn clean(layer: &Layer, op: &CleanOp) -> Result<Layer, NativeError> {
    let rows = read_rows(layer)?;
    let cleaned = match op {
        CleanOp::FixGaps { max_area } => fix_gaps(&rows, *max_area)?,
        CleanOp::FixOverlaps { owner, order_by } => {
            fix_overlaps(layer, &rows, *owner, order_by.as_deref())?
        }
        CleanOp::RemoveSlivers {
            max_area,
            max_thinness,
            keep_isolated,
        } => remove_slivers(&rows, *max_area, *max_thinness, *keep_isolated)?,
        CleanOp::SnapBorders { tolerance } => snap_borders(&rows, *tolerance)?,
    };
    write_rows(layer, &rows, &cleaned)
}

fn read_rows(layer: &Layer) -> Result<Rows, NativeError> {
    let geom = layer.geometry_index()?;
    let mut rows = Rows {
        original: Vec::with_capacity(layer.num_rows()),
        polygons: Vec::with_capacity(layer.num_rows()),
        repaired: Vec::with_capacity(layer.num_rows()),
    };
    for batch in &layer.batches {
        let wkbs = Wkb::of(batch, geom)?;
        for i in 0..wkbs.len() {
            let row = rows.original.len();
            let bytes = wkbs.get(i);
            let mut polygon = None;
            let mut repaired = false;
            if let Some(bytes) = bytes {
                let code = wkb::geometry_type(bytes).map_err(|e| NativeError::Geometry {
                    row,
                    reason: e.to_string(),
                })?;
                if is_polygonal_code(code) {
                    let g = to_geos(bytes, row)?;
                    if !g.is_empty().map_err(NativeError::geos)? {
                        if g.is_valid() {
                            polygon = Some(g);
                        } else {
                            repaired = true;
                            polygon = Some(polygonal(&g.make_valid().map_err(NativeError::geos)?)?);
                        }
                    }
                }
            }
            rows.original.push(bytes.map(<[u8]>::to_vec));
            rows.polygons.push(polygon);
            rows.repaired.push(repaired);
        }
    }
    Ok(rows)
}

/// The polygonal parts of `g` as one Polygon, a MultiPolygon, or an empty Polygon.
pub(crate) fn polygonal(g: &Geometry) -> Result<Geometry, NativeError> {
    let mut parts = Vec::new();
    collect_polygons(g, &mut parts)?;
    match parts.len() {
        0 => Geometry::create_empty_polygon().map_err(NativeError::geos),
        1 => Ok(parts.remove(0)),
        _ => Geometry::create_multipolygon(parts).map_err(NativeError::geos),
    }
}

fn collect_polygons(g: &Geometry, out: &mut Vec<Geometry>) -> Result<(), NativeError> {
    match g.geometry_type() {
        GeometryTypes::Polygon => {
            let empty = g.is_empty().map_err(NativeError::geos)?;
            if !empty {
                out.push(Geom::clone(g));
            }
        }
        GeometryTypes::MultiPolygon | GeometryTypes::GeometryCollection => {
            for n in 0..g.get_num_geometries().map_err(NativeError::geos)? {
                let part = Geom::clone(&g.get_geometry_n(n).map_err(NativeError::geos)?);
                collect_polygons(&part, out)?;
            }
        }
        _ => {}
    }
    Ok(())
}

/// The union of `parts` (their polygonal parts).
pub(crate) fn union_of(parts: Vec<Geometry>) -> Result<Geometry, NativeError> {
    let all = Geometry::create_geometry_collection(parts).map_err(NativeError::geos)?;
    polygonal(&all.unary_union().map_err(NativeError::geos)?)
}

/// The length of `a`'s boundary that `b` covers: the border they share.
pub(crate) fn shared_border(a: &Geometry, b: &Geometry) -> Result<f64, NativeError> {
    let boundary = a.boundary().map_err(NativeError::geos)?;
    boundary
        .intersection(b)
        .and_then(|line| line.length())
        .map_err(NativeError::geos)
}

pub(crate) type Entry = GeomWithData<Rectangle<[f64; 2]>, usize>;

/// `[xmin, ymin], [xmax, ymax]` of a non-empty geometry.
pub(crate) fn bounds(g: &Geometry) -> Result<([f64; 2], [f64; 2]), NativeError> {
    let e = NativeError::geos;
    Ok((
        [g.get_x_min().map_err(e)?, g.get_y_min().map_err(e)?],
        [g.get_x_max().map_err(e)?, g.get_y_max().map_err(e)?],
    ))
}

/// An R-tree of the polygons' envelopes, each holding its row.
pub(crate) fn index(polygons: &[Option<Geometry>]) -> Result<RTree<Entry>, NativeError> {
    let mut entries = Vec::new();
    for (row, g) in polygons.iter().enumerate() {
        if let Some(g) = g {
            let (low, high) = bounds(g)?;
            entries.push(GeomWithData::new(Rectangle::from_corners(low, high), row));
        }
    }
    Ok(RTree::bulk_load(entries))
}

/// The rows whose envelope meets `g`'s grown by `margin`, in row order.
pub(crate) fn near(
    tree: &RTree<Entry>,
    g: &Geometry,
    margin: f64,
) -> Result<Vec<usize>, NativeError> {
    let (low, high) = bounds(g)?;
    let envelope = AABB::from_corners(
        [low[0] - margin, low[1] - margin],
        [high[0] + margin, high[1] + margin],
    );
    let mut rows: Vec<usize> = tree
        .locate_in_envelope_intersecting(&envelope)
        .map(|e| e.data)
        .collect();
    rows.sort_unstable();
    Ok(rows)
}

fn write_rows(layer: &Layer, rows: &Rows, cleaned: &Cleaned) -> Result<Layer, NativeError> {
    let mut values: Vec<Option<Vec<u8>>> = Vec::with_capacity(rows.original.len());
    for (row, original) in rows.original.iter().enumerate() {
        values.push(match (&cleaned.changed[row], &rows.polygons[row]) {
            (Some(g), _) => Some(to_wkb(g)?),
            (None, Some(g)) if rows.repaired[row] => Some(to_wkb(g)?),
            _ => original.clone(),
        });
    }
    let written = layer.with_geometries(&values)?;
    let mut start = 0;
    let mut batches = Vec::with_capacity(written.batches.len());
    for batch in &written.batches {
        let span = start..start + batch.num_rows();
        start = span.end;
        let keep = BooleanArray::from(cleaned.keep[span].to_vec());
        batches.push(filter_record_batch(batch, &keep).map_err(NativeError::arrow)?);
    }
    Layer::new(written.schema, batches, &layer.geometry, layer.crs.clone())
}
