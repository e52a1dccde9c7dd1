//! Grids of square or hexagonal cells over an extent (the cells of PostGIS's `ST_SquareGrid`
//! and `ST_HexagonGrid`); the kernel density on such a grid is in [`super::density`].
//!
//! A grid lies in a plane: the layer's CRS, or, for sizes in metres on longitude/latitude, a
//! local azimuthal equidistant frame around the extent's centre whose cell vertices are carried
//! back to lon/lat.

use std::collections::HashSet;
use std::sync::Arc;

use arrow::array::{ArrayRef, BinaryArray, Float64Array, Int64Array, RecordBatch};
use arrow::datatypes::{DataType, Field, Schema};
use geomill_planner::plan::operator::{GridAnchor, GridShape, GridSpec};
use geomill_planner::schema::GEOM;
use geos::Geom;
use rayon::prelude::*;

use super::NativeError;
use super::geos_base::to_geos;
use super::layer::{Layer, Wkb};
use geomill_geometry::geodesic::LocalFrame;
use geomill_geometry::wkb;

/// The most cells a grid may have.
pub const MAX_CELLS: usize = 10_000_000;

/// The cells of one size and shape: cell (i, j)'s place in the grid's plane.
pub(super) struct Lattice {
    pub(super) shape: GridShape,
    pub(super) size: f64,
    /// Squares anchored at an extent (GISPulse's grid): each column's and row's lower edge.
    pub(super) corners: Option<[Vec<f64>; 2]>,
}

/// numpy's `arange(start, stop, step)`: `ceil((stop − start) / step)` values, the i-th
/// `start + i·((start + step) − start)`.
#[allow(
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    clippy::cast_precision_loss
)]
pub(super) fn arange(start: f64, stop: f64, step: f64) -> Vec<f64> {
    let count = ((stop - start) / step).ceil();
    if count.is_nan() || count <= 0.0 {
        return Vec::new();
    }
    let delta = (start + step) - start;
    (0..count as usize)
        .map(|i| {
            if i == 0 {
                start
            } else {
                start + i as f64 * delta
            }
        })
        .collect()
}

impl Lattice {
    /// The lattice of `grid` over `extent` (in the grid's plane).
    pub(super) fn of(grid: &GridSpec, extent: [f64; 4]) -> Result<Self, NativeError> {
        let corners = match (grid.anchor, grid.shape) {
            (GridAnchor::Extent, GridShape::Square) => {
                let columns = (extent[2] - extent[0]) / grid.size;
                let rows = (extent[3] - extent[1]) / grid.size;
                if columns.ceil() * rows.ceil() > MAX_CELLS as f64 {
                    return Err(too_many(columns.ceil() * rows.ceil()));
                }
                Some([
                    arange(extent[0], extent[2], grid.size),
                    arange(extent[1], extent[3], grid.size),
                ])
            }
            _ => None,
        };
        Ok(Self {
            shape: grid.shape,
            size: grid.size,
            corners,
        })
    }

    fn half_height(&self) -> f64 {
        self.size * 3_f64.sqrt() / 2.0
    }

    #[allow(clippy::cast_precision_loss)]
    pub(super) fn centre(&self, i: i64, j: i64) -> [f64; 2] {
        let s = self.size;
        if self.corners.is_some() {
            let [x0, y0, ..] = self.envelope(i, j);
            return [x0 + s / 2.0, y0 + s / 2.0];
        }
        match self.shape {
            GridShape::Square => [(i as f64 + 0.5) * s, (j as f64 + 0.5) * s],
            GridShape::Hexagon => [
                1.5 * i as f64 * s,
                self.half_height() * (2 * j + (i % 2).abs()) as f64,
            ],
        }
    }

    /// `[xmin, ymin, xmax, ymax]` of cell (i, j).
    #[allow(clippy::cast_precision_loss)]
    fn envelope(&self, i: i64, j: i64) -> [f64; 4] {
        let s = self.size;
        if let Some([xs, ys]) = &self.corners {
            let at = |v: &[f64], k: i64| usize::try_from(k).ok().and_then(|k| v.get(k).copied());
            let (x, y) = (at(xs, i).unwrap_or(f64::NAN), at(ys, j).unwrap_or(f64::NAN));
            return [x, y, x + s, y + s];
        }
        match self.shape {
            GridShape::Square => [
                i as f64 * s,
                j as f64 * s,
                (i + 1) as f64 * s,
                (j + 1) as f64 * s,
            ],
            GridShape::Hexagon => {
                let [x, y] = self.centre(i, j);
                let h = self.half_height();
                [x - s, y - h, x + s, y + h]
            }
        }
    }

    /// The closed ring of cell (i, j), counter-clockwise.
    pub(super) fn ring(&self, i: i64, j: i64) -> Vec<[f64; 2]> {
        let [x0, y0, x1, y1] = self.envelope(i, j);
        match self.shape {
            GridShape::Square => vec![[x0, y0], [x1, y0], [x1, y1], [x0, y1], [x0, y0]],
            GridShape::Hexagon => {
                let [x, y] = self.centre(i, j);
                let half = self.size / 2.0;
                vec![
                    [x0, y],
                    [x - half, y0],
                    [x + half, y0],
                    [x1, y],
                    [x + half, y1],
                    [x - half, y1],
                    [x0, y],
                ]
            }
        }
    }

    /// The ranges of i and j that hold every cell meeting `extent` (hexagons: a cell more on
    /// each side, sorted out by [`Self::meets`]).
    #[allow(clippy::cast_possible_truncation)]
    fn ranges(&self, e: [f64; 4]) -> ([i64; 2], [i64; 2]) {
        let s = self.size;
        if let Some([xs, ys]) = &self.corners {
            // A cell more on each side of the estimate, sorted out by `meets`.
            let range = |v: &[f64], lo: f64, hi: f64| -> [i64; 2] {
                let (Some(first), Ok(last)) = (v.first(), i64::try_from(v.len())) else {
                    return [0, -1];
                };
                let index = |x: f64| ((x - first) / s).floor().clamp(-1.0, last as f64) as i64;
                [(index(lo) - 1).max(0), (index(hi) + 1).min(last - 1)]
            };
            return (range(xs, e[0], e[2]), range(ys, e[1], e[3]));
        }
        match self.shape {
            GridShape::Square => (
                [(e[0] / s).floor() as i64, (e[2] / s).floor() as i64],
                [(e[1] / s).floor() as i64, (e[3] / s).floor() as i64],
            ),
            GridShape::Hexagon => {
                let (column, row) = (1.5 * s, 2.0 * self.half_height());
                (
                    [
                        ((e[0] - s) / column).floor() as i64,
                        ((e[2] + s) / column).ceil() as i64,
                    ],
                    [
                        (e[1] / row).floor() as i64 - 1,
                        (e[3] / row).ceil() as i64 + 1,
                    ],
                )
            }
        }
    }

    /// Whether cell (i, j)'s envelope meets `e` (touching counts).
    fn meets(&self, i: i64, j: i64, e: [f64; 4]) -> bool {
        let c = self.envelope(i, j);
        !(c[2] < e[0] || c[0] > e[2] || c[3] < e[1] || c[1] > e[3])
    }

    /// The cells meeting `extent`, by column then row; an error past [`MAX_CELLS`].
    pub(super) fn cells_over(&self, extent: [f64; 4]) -> Result<Vec<(i64, i64)>, NativeError> {
        if let Some([xs, ys]) = &self.corners {
            // Anchored at the extent: every cell of the lattice.
            let (columns, rows) = (xs.len() as i64, ys.len() as i64);
            return Ok((0..columns)
                .flat_map(|i| (0..rows).map(move |j| (i, j)))
                .collect());
        }
        let ([i0, i1], [j0, j1]) = self.ranges(extent);
        let count = (i1 - i0 + 1).saturating_mul(j1 - j0 + 1);
        if usize::try_from(count).map_or(true, |c| c > MAX_CELLS) {
            return Err(too_many(count as f64));
        }
        Ok((i0..=i1)
            .flat_map(|i| (j0..=j1).map(move |j| (i, j)))
            .filter(|&(i, j)| self.meets(i, j, extent))
            .collect())
    }
}

fn too_many(count: f64) -> NativeError {
    NativeError::Input(format!(
        "the grid would have about {count:.0} cells (at most {MAX_CELLS}): give a larger cell size or a smaller extent"
    ))
}

/// Where the grid's plane lies: the layer's CRS, or a local frame in metres.
pub(super) enum Plane {
    Crs,
    Frame(LocalFrame),
}

impl Plane {
    /// The plane of `grid` over `extent` (in the layer's CRS).
    pub(super) fn of(grid: &GridSpec, extent: [f64; 4]) -> Self {
        if grid.geodesic {
            Self::Frame(LocalFrame::new(
                (extent[0] + extent[2]) / 2.0,
                (extent[1] + extent[3]) / 2.0,
            ))
        } else {
            Self::Crs
        }
    }

    pub(super) fn forward(&self, p: [f64; 2]) -> [f64; 2] {
        match self {
            Self::Crs => p,
            Self::Frame(frame) => {
                let (x, y) = frame.forward(p[0], p[1]);
                [x, y]
            }
        }
    }

    pub(super) fn inverse(&self, p: [f64; 2]) -> [f64; 2] {
        match self {
            Self::Crs => p,
            Self::Frame(frame) => {
                let (x, y) = frame.inverse(p[0], p[1]);
                [x, y]
            }
        }
    }

    /// The envelope in the plane of an envelope in the CRS (in a frame: of its boundary,
    /// sampled densely enough that a cell's margin covers what the samples miss).
    #[allow(clippy::cast_precision_loss)]
    pub(super) fn envelope(&self, e: [f64; 4]) -> [f64; 4] {
        if matches!(self, Self::Crs) {
            return e;
        }
        const STEPS: usize = 256;
        let mut out = [
            f64::INFINITY,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NEG_INFINITY,
        ];
        for k in 0..=STEPS {
            let t = k as f64 / STEPS as f64;
            let (x, y) = (e[0] + t * (e[2] - e[0]), e[1] + t * (e[3] - e[1]));
            for p in [[x, e[1]], [x, e[3]], [e[0], y], [e[2], y]] {
                let [px, py] = self.forward(p);
                out = [
                    out[0].min(px),
                    out[1].min(py),
                    out[2].max(px),
                    out[3].max(py),
                ];
            }
        }
        out
    }

    /// The WKB polygon of a ring of the plane, in the layer's CRS.
    pub(super) fn polygon(&self, ring: &[[f64; 2]]) -> Vec<u8> {
        let carried: Vec<[f64; 2]> = ring.iter().map(|p| self.inverse(*p)).collect();
        let mut out = Vec::with_capacity(9 + 16 * carried.len());
        wkb::write_ring_polygon(&carried, &mut out);
        out
    }
}

/// The envelope of every non-empty geometry of `layer` (`None` when it has none).
pub(super) fn layer_extent(layer: &Layer) -> Result<Option<[f64; 4]>, NativeError> {
    let envelopes = feature_envelopes(layer)?;
    Ok(envelopes.into_iter().map(|f| f.envelope).reduce(|a, b| {
        [
            a[0].min(b[0]),
            a[1].min(b[1]),
            a[2].max(b[2]),
            a[3].max(b[3]),
        ]
    }))
}

/// A non-empty geometry: its row, WKB and envelope.
struct Feature<'a> {
    row: usize,
    bytes: &'a [u8],
    envelope: [f64; 4],
}

/// Each non-empty geometry of the layer.
fn feature_envelopes(layer: &Layer) -> Result<Vec<Feature<'_>>, NativeError> {
    let geom = layer.geometry_index()?;
    let mut features = Vec::new();
    for batch in &layer.batches {
        let wkbs = Wkb::of(batch, geom)?;
        for i in 0..wkbs.len() {
            if let Some(bytes) = wkbs.get(i) {
                features.push((features.len(), bytes));
            }
        }
    }
    features
        .into_par_iter()
        .map(|(row, bytes)| {
            let g = to_geos(bytes, row)?;
            if g.is_empty().map_err(NativeError::geos)? {
                return Ok(None);
            }
            let e = [
                g.get_x_min().map_err(NativeError::geos)?,
                g.get_y_min().map_err(NativeError::geos)?,
                g.get_x_max().map_err(NativeError::geos)?,
                g.get_y_max().map_err(NativeError::geos)?,
            ];
            Ok(Some(Feature {
                row,
                bytes,
                envelope: e,
            }))
        })
        .filter_map(Result::transpose)
        .collect()
}

/// The extent a grid covers: its bounding box, or the layer's extent.
fn grid_extent(layer: &Layer, grid: &GridSpec) -> Result<Option<[f64; 4]>, NativeError> {
    match grid.bbox {
        Some(bbox) => Ok(Some(bbox)),
        None => layer_extent(layer),
    }
}

/// The cells of `grid` over the layer's extent (or its bbox); with `touching`, only the
/// cells that intersect a feature.
pub fn grid(layer: &Layer, grid: &GridSpec, touching: bool) -> Result<Layer, NativeError> {
    let Some(extent) = grid_extent(layer, grid)? else {
        return cells_layer(layer, Vec::new(), None);
    };
    let plane = Plane::of(grid, extent);
    let in_plane = plane.envelope(extent);
    if grid.anchor == GridAnchor::OffsetRows {
        return offset_rows_grid(layer, &plane, in_plane, grid.size, touching);
    }
    let lattice = Lattice::of(grid, in_plane)?;
    let mut cells = lattice.cells_over(in_plane)?;
    if touching {
        let touched = touched_cells(layer, &lattice, &plane)?;
        cells.retain(|cell| touched.contains(cell));
    }
    let rows = cells
        .into_par_iter()
        .map(|(i, j)| (i, j, plane.polygon(&lattice.ring(i, j))))
        .collect();
    cells_layer(layer, rows, None)
}

/// GISPulse's hexagon rows over `extent` (in the plane); with `touching`, only the cells that
/// intersect a feature.
fn offset_rows_grid(
    layer: &Layer,
    plane: &Plane,
    extent: [f64; 4],
    size: f64,
    touching: bool,
) -> Result<Layer, NativeError> {
    let cells = super::hex_rows::offset_rows(extent, size)?;
    let polygons: Vec<Vec<u8>> = cells
        .par_iter()
        .map(|(_, _, ring)| plane.polygon(ring))
        .collect();
    let keep: Option<HashSet<usize>> = if touching {
        let features = feature_envelopes(layer)?;
        let features: Vec<(usize, &[u8], [f64; 4])> = features
            .iter()
            .map(|f| (f.row, f.bytes, f.envelope))
            .collect();
        Some(super::hex_rows::touched(&polygons, &features)?)
    } else {
        None
    };
    let rows = cells
        .into_iter()
        .zip(polygons)
        .enumerate()
        .filter(|(n, _)| keep.as_ref().is_none_or(|k| k.contains(n)))
        .map(|(_, ((i, j, _), polygon))| (i, j, polygon))
        .collect();
    cells_layer(layer, rows, None)
}

/// The cells that intersect a feature of `layer`: each feature (in parallel) tests the cells
/// its envelope meets.
fn touched_cells(
    layer: &Layer,
    lattice: &Lattice,
    plane: &Plane,
) -> Result<HashSet<(i64, i64)>, NativeError> {
    let features = feature_envelopes(layer)?;
    let per_feature: Vec<Vec<(i64, i64)>> = features
        .into_par_iter()
        .map(
            |Feature {
                 row,
                 bytes,
                 envelope,
             }| {
                let feature = to_geos(bytes, row)?;
                let prepared = feature.to_prepared_geom().map_err(NativeError::geos)?;
                let in_plane = plane.envelope(envelope);
                let ([i0, i1], [j0, j1]) = lattice.ranges(in_plane);
                let mut hits = Vec::new();
                for i in i0..=i1 {
                    for j in j0..=j1 {
                        if !lattice.meets(i, j, in_plane) {
                            continue;
                        }
                        let cell = to_geos(&plane.polygon(&lattice.ring(i, j)), row)?;
                        if prepared.intersects(&cell).map_err(NativeError::geos)? {
                            hits.push((i, j));
                        }
                    }
                }
                Ok(hits)
            },
        )
        .collect::<Result<_, NativeError>>()?;
    Ok(per_feature.into_iter().flatten().collect())
}

/// A layer of cells: `cell_id` (0, 1, … in order), `i`, `j`, the geometry and, when given,
/// `density`; in the CRS of `source`.
pub(super) fn cells_layer(
    source: &Layer,
    rows: Vec<(i64, i64, Vec<u8>)>,
    density: Option<Vec<f64>>,
) -> Result<Layer, NativeError> {
    let ids: Int64Array = (0..rows.len()).map(|n| i64::try_from(n).ok()).collect();
    let is: Int64Array = rows.iter().map(|r| Some(r.0)).collect();
    let js: Int64Array = rows.iter().map(|r| Some(r.1)).collect();
    let geometries: BinaryArray = rows.iter().map(|r| Some(r.2.as_slice())).collect();
    let mut fields = vec![
        Field::new("cell_id", DataType::Int64, false),
        Field::new("i", DataType::Int64, false),
        Field::new("j", DataType::Int64, false),
        Field::new(GEOM, DataType::Binary, true),
    ];
    let mut columns: Vec<ArrayRef> = vec![
        Arc::new(ids),
        Arc::new(is),
        Arc::new(js),
        Arc::new(geometries),
    ];
    if let Some(density) = density {
        fields.push(Field::new("density", DataType::Float64, true));
        columns.push(Arc::new(Float64Array::from(density)));
    }
    let schema = Arc::new(Schema::new(fields));
    let batch = RecordBatch::try_new(schema.clone(), columns).map_err(NativeError::arrow)?;
    Layer::new(schema, vec![batch], GEOM, source.crs.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_anchored_at_the_extent_follow_numpy_arange() {
        assert_eq!(
            arange(0.0, 1.0, 0.3),
            vec![0.0, 0.3, 0.6, 0.8999999999999999]
        );
        assert!(arange(2.0, 2.0, 1.0).is_empty());
        let grid = GridSpec {
            shape: GridShape::Square,
            size: 10.0,
            geodesic: false,
            bbox: None,
            anchor: GridAnchor::Extent,
        };
        let lattice = Lattice::of(&grid, [3.0, 1.0, 25.0, 11.0]).unwrap();
        let cells = lattice.cells_over([3.0, 1.0, 25.0, 11.0]).unwrap();
        // ceil(22 / 10) = 3 columns, ceil(10 / 10) = 1 row, from the corner.
        assert_eq!(cells, vec![(0, 0), (1, 0), (2, 0)]);
        assert_eq!(lattice.envelope(2, 0), [23.0, 1.0, 33.0, 11.0]);
        assert_eq!(lattice.ranges([24.0, 2.0, 40.0, 3.0]), ([1, 2], [0, 0]));
    }

    #[test]
    fn square_cells_follow_postgis_numbering() {
        let lattice = Lattice {
            shape: GridShape::Square,
            size: 10.0,
            corners: None,
        };
        let cells = lattice.cells_over([-5.0, 0.0, 12.0, 9.0]).unwrap();
        assert_eq!(cells, [(-1, 0), (0, 0), (1, 0)]);
        assert_eq!(lattice.ring(1, 0)[2], [20.0, 10.0]);
    }

    #[test]
    fn hexagons_tile_without_gaps() {
        let lattice = Lattice {
            shape: GridShape::Hexagon,
            size: 1.0,
            corners: None,
        };
        // Odd columns sit half a row up; neighbouring hexagons share an edge.
        let a = lattice.ring(0, 0);
        let b = lattice.ring(1, 0);
        assert!((a[3][0] - b[1][0]).abs() < 1e-12 || (a[4][0] - b[0][0]).abs() < 1e-12);
        let cells = lattice.cells_over([0.0, 0.0, 3.0, 3.0]).unwrap();
        assert!(
            cells
                .iter()
                .all(|&(i, j)| lattice.meets(i, j, [0.0, 0.0, 3.0, 3.0]))
        );
        assert!(cells.contains(&(0, 0)) && cells.contains(&(2, 1)));
    }

    #[test]
    fn too_many_cells_is_an_input_error() {
        let lattice = Lattice {
            shape: GridShape::Square,
            size: 1e-6,
            corners: None,
        };
        assert!(matches!(
            lattice.cells_over([0.0, 0.0, 10.0, 10.0]),
            Err(NativeError::Input(_))
        ));
    }
}
