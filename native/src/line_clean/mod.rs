//! Line network cleaning over the whole layer: endpoints snapped together
//! ([`snap::snap_endpoints`]), pseudo nodes merged away ([`pseudo::remove_pseudo_nodes`]),
//! dangling ends extended ([`dangles::extend_dangles`]), and GISPulse's rules for three of them
//! ([`gispulse_rules`]). The lines are read once into
//! coordinate lists; NULL, empty and non-line geometries are carried through untouched.

mod dangles;
mod gispulse_rules;
mod pseudo;
mod rebuilt;
mod snap;

use std::sync::Arc;

use arrow::array::{ArrayRef, BinaryArray, RecordBatch};
use geos::{CoordDimensions, CoordSeq, Geom, Geometry, GeometryTypes};
use rstar::primitives::{GeomWithData, Rectangle};

use super::NativeError;
use super::geos_base::{to_geos, to_wkb};
use super::layer::{Layer, Wkb};
use geomill_planner::plan::ops::line_clean::{DangleMethod, DuplicateRule, LineCleanOp, SnapRule};

/// A vertex: x, y and z (0 without Z).
pub(crate) type Vertex = [f64; 3];

/// A LineString or MultiLineString feature as coordinate lists.
#[derive(Debug, Clone)]
pub(crate) struct Lines {
    pub parts: Vec<Vec<Vertex>>,
    pub multi: bool,
    pub z: bool,
}

impl Lines {
    /// The feature as a GEOS geometry.
    pub fn to_geos(&self) -> Result<Geometry, NativeError> {
        let mut lines = Vec::with_capacity(self.parts.len());
        for part in &self.parts {
            let dims = if self.z {
                CoordDimensions::ThreeD
            } else {
                CoordDimensions::TwoD
            };
            let size = u32::try_from(part.len())
                .map_err(|_| NativeError::Input("a line of too many vertices".into()))?;
            let mut seq = CoordSeq::new(size, dims).map_err(NativeError::geos)?;
            for (i, v) in part.iter().enumerate() {
                seq.set_x(i, v[0]).map_err(NativeError::geos)?;
                seq.set_y(i, v[1]).map_err(NativeError::geos)?;
                if self.z {
                    seq.set_z(i, v[2]).map_err(NativeError::geos)?;
                }
            }
            lines.push(Geometry::create_line_string(seq).map_err(NativeError::geos)?);
        }
        if self.multi {
            Geometry::create_multiline_string(lines).map_err(NativeError::geos)
        } else {
            lines
                .pop()
                .ok_or_else(|| NativeError::Input("a line without parts".into()))
        }
    }
}

/// The layer's rows in one batch, and each row's lines (`None` for NULL, empty and other
/// geometries).
pub(crate) struct LineNetwork {
    pub batch: RecordBatch,
    pub lines: Vec<Option<Lines>>,
    /// Each row's WKB as stored (`None` for NULL).
    pub wkb: Vec<Option<Vec<u8>>>,
}

fn part_vertices(part: &impl Geom, z: bool) -> Result<Vec<Vertex>, NativeError> {
    let seq = part.get_coord_seq().map_err(NativeError::geos)?;
    let n = seq.size().map_err(NativeError::geos)?;
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        out.push([
            seq.get_x(i).map_err(NativeError::geos)?,
            seq.get_y(i).map_err(NativeError::geos)?,
            if z {
                seq.get_z(i).map_err(NativeError::geos)?
            } else {
                0.0
            },
        ]);
    }
    Ok(out)
}

/// The lines of one WKB geometry, if it is a non-empty LineString or MultiLineString.
fn read_lines(bytes: &[u8], row: usize) -> Result<Option<Lines>, NativeError> {
    let g = to_geos(bytes, row)?;
    if g.is_empty().map_err(NativeError::geos)? {
        return Ok(None);
    }
    let z = g.has_z().map_err(NativeError::geos)?;
    match g.geometry_type() {
        GeometryTypes::LineString => Ok(Some(Lines {
            parts: vec![part_vertices(&g, z)?],
            multi: false,
            z,
        })),
        GeometryTypes::MultiLineString => {
            let mut parts = Vec::new();
            for n in 0..g.get_num_geometries().map_err(NativeError::geos)? {
                let part = g.get_geometry_n(n).map_err(NativeError::geos)?;
                if !part.is_empty().map_err(NativeError::geos)? {
                    parts.push(part_vertices(&part, z)?);
                }
            }
            Ok((!parts.is_empty()).then_some(Lines {
                parts,
                multi: true,
                z,
            }))
        }
        _ => Ok(None),
    }
}

impl LineNetwork {
    pub fn read(layer: &Layer) -> Result<Self, NativeError> {
        let batch = arrow::compute::concat_batches(&layer.schema, &layer.batches)
            .map_err(NativeError::arrow)?;
        let geom = layer.geometry_index()?;
        let wkbs = Wkb::of(&batch, geom)?;
        let mut lines = Vec::with_capacity(wkbs.len());
        let mut wkb = Vec::with_capacity(wkbs.len());
        for i in 0..wkbs.len() {
            let bytes = wkbs.get(i);
            lines.push(bytes.map(|b| read_lines(b, i)).transpose()?.flatten());
            wkb.push(bytes.map(<[u8]>::to_vec));
        }
        Ok(Self { batch, lines, wkb })
    }

    /// The layer with the rows `keep` (in that order), their geometries replaced by
    /// `geometries` where given (one per kept row).
    pub fn write(
        &self,
        layer: &Layer,
        keep: &[usize],
        geometries: &[Option<Vec<u8>>],
    ) -> Result<Layer, NativeError> {
        let (geom, schema) = layer.with_binary_geometry()?;
        let indices =
            arrow::array::UInt64Array::from(keep.iter().map(|&i| i as u64).collect::<Vec<u64>>());
        let mut columns = Vec::with_capacity(self.batch.num_columns());
        for (n, column) in self.batch.columns().iter().enumerate() {
            if n == geom {
                let array: BinaryArray = geometries.iter().map(Option::as_deref).collect();
                columns.push(Arc::new(array) as ArrayRef);
            } else {
                columns.push(
                    arrow::compute::take(column, &indices, None).map_err(NativeError::arrow)?,
                );
            }
        }
        let batch = RecordBatch::try_new(schema.clone(), columns).map_err(NativeError::arrow)?;
        Layer::new(schema, vec![batch], &layer.geometry, layer.crs.clone())
    }

    /// Every row kept, the lines of `changed` rows written anew.
    pub fn write_lines(
        &self,
        layer: &Layer,
        changed: &[Option<Lines>],
    ) -> Result<Layer, NativeError> {
        let keep: Vec<usize> = (0..self.lines.len()).collect();
        let mut geometries = Vec::with_capacity(keep.len());
        for (row, new) in changed.iter().enumerate() {
            geometries.push(match new {
                Some(lines) => Some(to_wkb(&lines.to_geos()?)?),
                None => self.wkb[row].clone(),
            });
        }
        self.write(layer, &keep, &geometries)
    }

    /// Each line row's GEOS geometry and bounding box, for an R-tree of the rows.
    pub fn indexed(&self) -> Result<(Vec<Option<Geometry>>, Vec<RowBox>), NativeError> {
        let mut geometries = Vec::with_capacity(self.lines.len());
        let mut boxes = Vec::new();
        for (row, lines) in self.lines.iter().enumerate() {
            let Some(lines) = lines else {
                geometries.push(None);
                continue;
            };
            let (mut low, mut high) = ([f64::INFINITY; 2], [f64::NEG_INFINITY; 2]);
            for v in lines.parts.iter().flatten() {
                low = [low[0].min(v[0]), low[1].min(v[1])];
                high = [high[0].max(v[0]), high[1].max(v[1])];
            }
            boxes.push(GeomWithData::new(Rectangle::from_corners(low, high), row));
            geometries.push(Some(lines.to_geos()?));
        }
        Ok((geometries, boxes))
    }
}

/// Rows kept (in input order) and their geometries (WKB, `None` for NULL).
pub(crate) type KeptRows = (Vec<usize>, Vec<Option<Vec<u8>>>);

/// A row's bounding box in an R-tree.
pub(crate) type RowBox = GeomWithData<Rectangle<[f64; 2]>, usize>;

/// Cleans the lines of `layer` as `op` says.
pub fn clean(layer: &Layer, op: &LineCleanOp) -> Result<Layer, NativeError> {
    let network = LineNetwork::read(layer)?;
    match op {
        LineCleanOp::SnapEndpoints {
            tolerance,
            rule: SnapRule::GridBuckets,
            ..
        } => {
            let changed = gispulse_rules::snap_by_grid_buckets(&network, *tolerance)?;
            network.write_lines(layer, &changed)
        }
        LineCleanOp::SnapEndpoints {
            tolerance, target, ..
        } => {
            let changed = snap::snap_endpoints(&network, *tolerance, *target)?;
            network.write_lines(layer, &changed)
        }
        LineCleanOp::ExtendDangles {
            max_distance,
            method,
        } => {
            let changed = match method {
                DangleMethod::Extend => dangles::extend_dangles(&network, *max_distance)?,
                DangleMethod::NearestPoint => {
                    gispulse_rules::ends_onto_nearest(&network, *max_distance)?
                }
            };
            network.write_lines(layer, &changed)
        }
        LineCleanOp::RemoveDuplicates {
            tolerance,
            rule: DuplicateRule::FirstInRowOrder,
            ..
        } => {
            let (keep, geometries) = gispulse_rules::first_in_row_order(&network, *tolerance)?;
            network.write(layer, &keep, &geometries)
        }
        LineCleanOp::RemovePseudoNodes { fields } => {
            let (keep, geometries) = pseudo::remove_pseudo_nodes(&network, layer, fields)?;
            network.write(layer, &keep, &geometries)
        }
        LineCleanOp::Rebuilt { merge } => rebuilt::rebuilt(layer, &network, *merge),
        LineCleanOp::NodeLines | LineCleanOp::RemoveDuplicates { .. } => {
            Err(NativeError::Declined(op.describe()))
        }
    }
}
