//! NDVI of a multi-band raster, as GISPulse computes it with numpy: red and NIR read as float32,
//! (NIR − red) / (NIR + red) in float32, NaN where either band holds the raster's nodata value
//! (compared in float32) or the sum is 0; written strip by strip as a float32 raster (nodata
//! NaN), with the minimum, maximum and mean of the cells that are not NaN.

use std::path::Path;

use gdal::raster::GdalDataType;

use super::write::{RasterSpec, RasterWriter};
use super::{RasterError, open};

/// Rows read and written at once.
const STRIP_ROWS: usize = 512;

/// The figures of an NDVI raster (`None` when every cell is NaN) and its bounds.
#[derive(Debug, Clone, PartialEq)]
pub struct NdviSummary {
    pub min: Option<f64>,
    pub max: Option<f64>,
    /// Accumulated in float64 (numpy's float32 pairwise mean differs from it in the 7th digit).
    pub mean: Option<f64>,
    pub bounds: [f64; 4],
}

/// Writes the NDVI of bands `red` and `nir` (1-based) of `source` to `target`.
pub fn ndvi(
    source: &Path,
    red: usize,
    nir: usize,
    target: &Path,
) -> Result<NdviSummary, RasterError> {
    let dataset = open(source)?;
    let count = dataset.raster_count();
    for (name, band) in [("red_band", red), ("nir_band", nir)] {
        if band == 0 || band > count {
            return Err(RasterError::Input(format!(
                "{name} {band} is out of range: the raster has {count} band{}",
                if count == 1 { "" } else { "s" }
            )));
        }
    }
    let (width, height) = dataset.raster_size();
    // rasterio's `dataset.nodata`: the first band's.
    #[allow(clippy::cast_possible_truncation)]
    let nodata = dataset.rasterband(1)?.no_data_value().map(|v| v as f32);
    let spec = RasterSpec {
        width,
        height,
        transform: dataset.geo_transform()?,
        projection: dataset.projection(),
        bands: 1,
        cell_type: GdalDataType::Float32,
        nodata: Some(f64::NAN),
    };
    let mut writer = RasterWriter::create(target, &spec)?;
    let (red_band, nir_band) = (dataset.rasterband(red)?, dataset.rasterband(nir)?);
    let (mut min, mut max, mut sum, mut n) = (f32::INFINITY, f32::NEG_INFINITY, 0.0_f64, 0_u64);
    let mut row = 0;
    while row < height {
        let rows = STRIP_ROWS.min(height - row);
        #[allow(clippy::cast_possible_wrap)]
        let window = (0, row as isize);
        let reds = red_band.read_as::<f32>(window, (width, rows), (width, rows), None)?;
        let nirs = nir_band.read_as::<f32>(window, (width, rows), (width, rows), None)?;
        let values: Vec<f32> = reds
            .data()
            .iter()
            .zip(nirs.data())
            .map(|(&r, &n)| index(r, n, nodata))
            .collect();
        for &v in values.iter().filter(|v| !v.is_nan()) {
            min = min.min(v);
            max = max.max(v);
            sum += f64::from(v);
            n += 1;
        }
        writer.write(1, (0, row), (width, rows), values)?;
        row += rows;
    }
    writer.finish()?;
    #[allow(clippy::cast_precision_loss)]
    let summary = NdviSummary {
        min: (n > 0).then_some(f64::from(min)),
        max: (n > 0).then_some(f64::from(max)),
        mean: (n > 0).then(|| sum / n as f64),
        bounds: spec.bounds(),
    };
    Ok(summary)
}

/// One cell's NDVI.
fn index(red: f32, nir: f32, nodata: Option<f32>) -> f32 {
    if nodata.is_some_and(|nd| red == nd || nir == nd) {
        return f32::NAN;
    }
    let sum = nir + red;
    if sum == 0.0 {
        return f32::NAN;
    }
    (nir - red) / sum
}

#[cfg(test)]
mod tests {
    use super::index;

    #[test]
    fn nodata_and_zero_sums_are_nan() {
        assert!(index(0.0, 0.0, None).is_nan());
        assert!(index(5.0, 7.0, Some(5.0)).is_nan());
        assert!(index(7.0, 5.0, Some(5.0)).is_nan());
        assert_eq!(index(1.0, 3.0, Some(0.0)), 0.5);
        assert_eq!(index(3.0, 1.0, None), -0.5);
    }
}
