//! Rasters merged on one grid, as rasterio's `merge` does: the first raster's cell size over
//! the union of their bounds (width and height rounded half to even), cells no raster covers
//! set to nodata (given, else the first raster's, else 0), each raster's cells (less those it
//! masks) combined into the cells not yet holding data (nodata compared as numpy's `isclose`
//! for float rasters) by the method; written strip by strip in the first raster's cell type.
//! The rasters must lie on one grid (same cell size, offsets a whole number of cells).

use std::path::Path;

use gdal::Dataset;
use geomill_planner::plan::ops::raster::MergeMethod;

use super::write::{RasterSpec, RasterWriter, bounds_of};
use super::{RasterError, open};

/// Output rows combined at once.
const STRIP_ROWS: usize = 512;

/// How far from a whole number of cells an offset may be and still be on the grid.
const ALIGNED: f64 = 1e-6;

/// Merges `sources` into `target`; answers its bounds.
pub fn merge(
    sources: &[&Path],
    method: MergeMethod,
    nodata: Option<f64>,
    target: &Path,
) -> Result<[f64; 4], RasterError> {
    let datasets: Vec<Dataset> = sources.iter().map(|p| open(p)).collect::<Result<_, _>>()?;
    let first = datasets
        .first()
        .ok_or_else(|| RasterError::Input("a merge needs rasters".into()))?;
    let t = first.geo_transform()?;
    let (res_x, res_y) = (t[1], -t[5]);
    let crs = first.spatial_ref().ok();
    let bands = first.raster_count();
    let mut bounds = [
        f64::INFINITY,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NEG_INFINITY,
    ];
    for (i, dataset) in datasets.iter().enumerate() {
        let other = dataset.geo_transform()?;
        if other[2] != 0.0 || other[4] != 0.0 || other[1] <= 0.0 || other[5] >= 0.0 {
            return Err(RasterError::Input(format!(
                "raster {i} is not a north-up grid"
            )));
        }
        if dataset.spatial_ref().ok() != crs {
            return Err(RasterError::Input(format!(
                "raster {i}'s CRS is not the first's: merged rasters share their CRS"
            )));
        }
        if dataset.raster_count() != bands {
            return Err(RasterError::Input(format!(
                "raster {i} has {} bands, the first {bands}: merged rasters share their bands",
                dataset.raster_count()
            )));
        }
        if (other[1] - res_x).abs() > ALIGNED * res_x || (-other[5] - res_y).abs() > ALIGNED * res_y
        {
            return Err(RasterError::Input(format!(
                "raster {i}'s cells are {} × {}, the first's {res_x} × {res_y}: warp it onto the first's grid first",
                other[1], -other[5]
            )));
        }
        let (w, h) = dataset.raster_size();
        let b = bounds_of(&other, w, h);
        bounds = [
            bounds[0].min(b[0]),
            bounds[1].min(b[1]),
            bounds[2].max(b[2]),
            bounds[3].max(b[3]),
        ];
    }
    let [west, south, east, north] = bounds;
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let (width, height) = (
        ((east - west) / res_x).round_ties_even() as usize,
        ((north - south) / res_y).round_ties_even() as usize,
    );
    let first_band = first.rasterband(1)?;
    let fill = nodata.or(first_band.no_data_value()).unwrap_or(0.0);
    let float = first_band.band_type().name().starts_with("Float");
    let spec = RasterSpec {
        width,
        height,
        transform: [west, res_x, 0.0, north, 0.0, -res_y],
        projection: first.projection(),
        bands,
        cell_type: first_band.band_type(),
        nodata: nodata.or(first_band.no_data_value()),
    };
    let placed: Vec<Placement> = datasets
        .iter()
        .enumerate()
        .map(|(i, d)| Placement::of(d, i, west, north, res_x, res_y))
        .collect::<Result<_, _>>()?;
    let is_nodata = |v: f64| {
        if fill.is_nan() {
            v.is_nan()
        } else if float {
            (v - fill).abs() <= 1e-8 + 1e-5 * fill.abs()
        } else {
            v == fill
        }
    };
    let mut writer = RasterWriter::create(target, &spec)?;
    let mut row = 0;
    while row < height {
        let rows = STRIP_ROWS.min(height - row);
        for band in 1..=bands {
            let mut merged = vec![fill; width * rows];
            for (dataset, place) in datasets.iter().zip(&placed) {
                let Some(part) = place.rows_in(row, rows) else {
                    continue;
                };
                let source = dataset.rasterband(band)?;
                #[allow(clippy::cast_possible_wrap)]
                let window = (0, part.src_row as isize);
                let size = (place.cols, part.rows);
                let values = source.read_as::<f64>(window, size, size, None)?;
                let valid = source
                    .open_mask_band()?
                    .read_as::<u8>(window, size, size, None)?;
                for r in 0..part.rows {
                    let out = (part.out_row - row + r) * width + place.dst_col;
                    let inp = r * place.cols;
                    for c in 0..place.cols {
                        if valid.data()[inp + c] == 0 {
                            continue;
                        }
                        let old = &mut merged[out + c];
                        let new = values.data()[inp + c];
                        *old = combine(method, *old, is_nodata(*old), new);
                    }
                }
            }
            writer.write(band, (0, row), (width, rows), merged)?;
        }
        row += rows;
    }
    writer.finish()?;
    Ok(spec.bounds())
}

/// A valid cell `new` combined into the merged cell `old` (which holds no data yet when
/// `empty`), as rasterio's `copy_<method>`.
fn combine(method: MergeMethod, old: f64, empty: bool, new: f64) -> f64 {
    match method {
        MergeMethod::First if empty => new,
        MergeMethod::First => old,
        MergeMethod::Last => new,
        _ if empty && method == MergeMethod::Count => 1.0,
        _ if empty => new,
        MergeMethod::Min => old.min(new),
        MergeMethod::Max => old.max(new),
        MergeMethod::Sum => old + new,
        MergeMethod::Count => old + 1.0,
    }
}

/// Where one raster lies on the merged grid: its first column and row there, and its size.
struct Placement {
    dst_col: usize,
    cols: usize,
    dst_row: usize,
    rows: usize,
}

/// The rows of one raster within a strip: the first one in the raster, in the merged grid, and
/// how many.
struct Part {
    src_row: usize,
    out_row: usize,
    rows: usize,
}

impl Placement {
    fn of(
        dataset: &Dataset,
        index: usize,
        west: f64,
        north: f64,
        res_x: f64,
        res_y: f64,
    ) -> Result<Placement, RasterError> {
        let t = dataset.geo_transform()?;
        let (w, h) = dataset.raster_size();
        let (col, row) = ((t[0] - west) / res_x, (north - t[3]) / res_y);
        if (col - col.round()).abs() > ALIGNED || (row - row.round()).abs() > ALIGNED {
            return Err(RasterError::Input(format!(
                "raster {index} is not on the first raster's grid (it starts {col} columns and {row} rows into the merged grid): warp it onto the first's grid first"
            )));
        }
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        Ok(Placement {
            dst_col: col.round().max(0.0) as usize,
            cols: w,
            dst_row: row.round().max(0.0) as usize,
            rows: h,
        })
    }

    /// Its rows within the strip of `rows` rows from `start`, if any.
    fn rows_in(&self, start: usize, rows: usize) -> Option<Part> {
        let (from, to) = (
            self.dst_row.max(start),
            (self.dst_row + self.rows).min(start + rows),
        );
        (to > from).then(|| Part {
            src_row: from - self.dst_row,
            out_row: from,
            rows: to - from,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn methods_combine_as_rasterio_copies() {
        use MergeMethod::*;
        assert_eq!(combine(First, 0.0, true, 5.0), 5.0);
        assert_eq!(combine(First, 3.0, false, 5.0), 3.0);
        assert_eq!(combine(Last, 3.0, false, 5.0), 5.0);
        assert_eq!(combine(Min, 3.0, false, 5.0), 3.0);
        assert_eq!(combine(Max, 3.0, false, 5.0), 5.0);
        assert_eq!(combine(Max, -9.0, true, 1.0), 1.0);
        assert_eq!(combine(Sum, 3.0, false, 5.0), 8.0);
        assert_eq!(combine(Count, -9.0, true, 5.0), 1.0);
        assert_eq!(combine(Count, 1.0, false, 5.0), 2.0);
    }
}
