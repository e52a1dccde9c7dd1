//! A raster clipped to polygons, as rasterio's `mask` does it: the window of the polygons'
//! bounds in the raster's cells (floor and ceil, within the raster) when cropping, else the
//! whole raster; cells outside the polygons (by GDAL's burn: centre inside, or every touched
//! cell) and cells the raster masks (its nodata) set to the nodata value; written strip by
//! strip in the raster's cell type.

use std::path::Path;

use gdal::vector::Geometry;

use super::write::{RasterSpec, RasterWriter, burn};
use super::{RasterError, open};

/// Rows read, burned and written at once.
const STRIP_ROWS: usize = 512;

/// How a clip is made.
#[derive(Debug, Clone, Copy)]
pub struct ClipOptions {
    pub all_touched: bool,
    /// Cover only the polygons' bounds.
    pub crop: bool,
    /// The value of cells left out (default: the raster's nodata, else 0).
    pub nodata: Option<f64>,
}

/// Clips `source` to `shapes` (in the raster's CRS) into `target`; answers its bounds.
pub fn clip(
    source: &Path,
    shapes: &[Geometry],
    options: ClipOptions,
    target: &Path,
) -> Result<[f64; 4], RasterError> {
    if shapes.is_empty() {
        return Err(RasterError::Input(
            "no polygon to clip with (the input has no geometry)".into(),
        ));
    }
    let dataset = open(source)?;
    let t = dataset.geo_transform()?;
    if t[2] != 0.0 || t[4] != 0.0 || t[1] == 0.0 || t[5] == 0.0 {
        return Err(RasterError::Input(
            "a rotated or degenerate geotransform (a clip needs a north-up grid)".into(),
        ));
    }
    let (width, height) = dataset.raster_size();
    let (col0, row0, cols, rows) = if options.crop {
        window_of(shapes, &t, width, height)?
    } else {
        (0, 0, width, height)
    };
    let first = dataset.rasterband(1)?;
    let source_nodata = first.no_data_value();
    let fill = options.nodata.or(source_nodata).unwrap_or(0.0);
    let transform = window_transform(&t, col0, row0);
    let spec = RasterSpec {
        width: cols,
        height: rows,
        transform,
        projection: dataset.projection(),
        bands: dataset.raster_count(),
        cell_type: first.band_type(),
        nodata: options.nodata.or(source_nodata),
    };
    let mut writer = RasterWriter::create(target, &spec)?;
    let mut row = 0;
    while row < rows {
        let strip = STRIP_ROWS.min(rows - row);
        let strip_transform = window_transform(&t, col0, row0 + row);
        let inside = burn(shapes, strip_transform, (cols, strip), options.all_touched)?;
        #[allow(clippy::cast_possible_wrap)]
        let window = ((col0) as isize, (row0 + row) as isize);
        for index in 1..=spec.bands {
            let band = dataset.rasterband(index)?;
            let values = band.read_as::<f64>(window, (cols, strip), (cols, strip), None)?;
            let valid =
                band.open_mask_band()?
                    .read_as::<u8>(window, (cols, strip), (cols, strip), None)?;
            let clipped: Vec<f64> = values
                .data()
                .iter()
                .zip(valid.data())
                .zip(&inside)
                .map(|((&v, &ok), &inside)| if inside && ok != 0 { v } else { fill })
                .collect();
            writer.write(index, (0, row), (cols, strip), clipped)?;
        }
        row += strip;
    }
    writer.finish()?;
    Ok(spec.bounds())
}

/// A point's column and row (fractional) as rasterio maps it, through affine's inverse of the
/// north-up transform (`1 / (a·e)` times each term, not a division by the cell size: the same
/// roundings).
fn to_cell(t: &[f64; 6], x: f64, y: f64) -> (f64, f64) {
    let inverse_determinant = 1.0 / (t[1] * t[5]);
    let (ra, re) = (t[5] * inverse_determinant, t[1] * inverse_determinant);
    let (rc, rf) = (-t[0] * ra, -t[3] * re);
    (x * ra + rc, y * re + rf)
}

/// The transform of the window from column `col`, row `row`, as rasterio's `window_transform`
/// computes it (the same roundings).
#[allow(clippy::cast_precision_loss)]
fn window_transform(t: &[f64; 6], col: usize, row: usize) -> [f64; 6] {
    let (col, row) = (col as f64, row as f64);
    let x = col * t[1] + row * t[2] + t[0];
    let y = col * t[4] + row * t[5] + t[3];
    [t[0] + (x - t[0]), t[1], t[2], t[3] + (y - t[3]), t[4], t[5]]
}

/// rasterio's `geometry_window`: the shapes' bounds in the raster's cells, floor and ceil,
/// within the raster; refused when they do not overlap it.
fn window_of(
    shapes: &[Geometry],
    t: &[f64; 6],
    width: usize,
    height: usize,
) -> Result<(usize, usize, usize, usize), RasterError> {
    let (mut c_min, mut c_max, mut r_min, mut r_max) = (
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::INFINITY,
        f64::NEG_INFINITY,
    );
    for shape in shapes {
        if shape.is_empty() {
            continue;
        }
        let e = shape.envelope();
        for (x, y) in [(e.MinX, e.MinY), (e.MaxX, e.MaxY)] {
            let (c, r) = to_cell(t, x, y);
            c_min = c_min.min(c);
            c_max = c_max.max(c);
            r_min = r_min.min(r);
            r_max = r_max.max(r);
        }
    }
    if !(c_min.is_finite() && c_max.is_finite() && r_min.is_finite() && r_max.is_finite()) {
        return Err(RasterError::Input(
            "no polygon to clip with (every geometry is empty)".into(),
        ));
    }
    #[allow(clippy::cast_precision_loss)]
    let (w, h) = (width as f64, height as f64);
    let (c0, c1) = (c_min.floor().max(0.0), c_max.ceil().min(w));
    let (r0, r1) = (r_min.floor().max(0.0), r_max.ceil().min(h));
    if c1 <= c0 || r1 <= r0 {
        return Err(RasterError::Input(
            "the polygons do not overlap the raster".into(),
        ));
    }
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    Ok((
        c0 as usize,
        r0 as usize,
        (c1 - c0) as usize,
        (r1 - r0) as usize,
    ))
}
