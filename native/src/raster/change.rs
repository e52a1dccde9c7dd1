//! Change detection between two rasters of one grid, as GISPulse computes it with numpy and
//! rasterio: |after − before| of a band in float32, a change where it exceeds the threshold
//! (compared in float32) and neither raster holds its nodata value there; one polygon per
//! 4-connected region of changed cells (GDAL's polygonize, as `features.shapes`), with the mean
//! difference of its cells (numpy's float32 mean: a pairwise float32 sum over the cells in row
//! order, divided in float32).

use std::collections::VecDeque;
use std::path::Path;

use gdal::DriverManager;
use gdal::vector::{LayerAccess, LayerOptions, OGRFieldType};

use super::{RasterError, open};
use crate::classify::numpy_sum;

/// The most cells the two rasters may have: both bands, the differences and the region labels
/// (16 bytes a cell) are held at once.
pub const MAX_CHANGE_CELLS: usize = 50_000_000;

/// A changed region: its polygon (WKB) and mean difference.
#[derive(Debug, Clone, PartialEq)]
pub struct Change {
    pub wkb: Vec<u8>,
    pub diff_mean: f64,
}

/// The regions where band `band` (1-based) of `after` differs from `before` by more than
/// `threshold`, in GDAL's polygonize order.
pub fn changes(
    before: &Path,
    after: &Path,
    band: usize,
    threshold: f64,
) -> Result<Vec<Change>, RasterError> {
    let (first, second) = (open(before)?, open(after)?);
    for (name, dataset) in [("raster_before", &first), ("raster_after", &second)] {
        let count = dataset.raster_count();
        if band == 0 || band > count {
            return Err(RasterError::Input(format!(
                "band {band} is out of range: {name} has {count} band{}",
                if count == 1 { "" } else { "s" }
            )));
        }
    }
    let (size, transform) = (first.raster_size(), first.geo_transform()?);
    if second.raster_size() != size || second.geo_transform()? != transform {
        let (other, other_transform) = (second.raster_size(), second.geo_transform()?);
        return Err(RasterError::Input(format!(
            "the rasters' grids differ: raster_before is {} × {} cells at {:?}, raster_after {} × {} at {:?} (warp one onto the other first)",
            size.0, size.1, transform, other.0, other.1, other_transform
        )));
    }
    let (width, height) = size;
    if width * height > MAX_CHANGE_CELLS {
        return Err(RasterError::Input(format!(
            "the rasters have {} cells, more than the {MAX_CHANGE_CELLS} change detection holds",
            width * height
        )));
    }
    let read = |dataset: &gdal::Dataset| -> Result<(Vec<f32>, Option<f32>), RasterError> {
        let band = dataset.rasterband(band)?;
        #[allow(clippy::cast_possible_truncation)]
        let nodata = dataset.rasterband(1)?.no_data_value().map(|v| v as f32);
        Ok((
            band.read_as::<f32>((0, 0), size, size, None)?
                .into_shape_and_vec()
                .1,
            nodata,
        ))
    };
    let ((a, nodata_a), (b, nodata_b)) = (read(&first)?, read(&second)?);
    #[allow(clippy::cast_possible_truncation)]
    let threshold = threshold as f32;
    let diff: Vec<f32> = a.iter().zip(&b).map(|(x, y)| (y - x).abs()).collect();
    let changed: Vec<bool> = a
        .iter()
        .zip(&b)
        .zip(&diff)
        .map(|((x, y), d)| {
            *d > threshold && nodata_a.is_none_or(|n| *x != n) && nodata_b.is_none_or(|n| *y != n)
        })
        .collect();
    let (labels, regions) = label_regions(&changed, width, height);
    let means: Vec<f64> = regions
        .iter()
        .map(|cells| {
            let values: Vec<f32> = cells.iter().map(|&i| diff[i]).collect();
            #[allow(clippy::cast_precision_loss)]
            let mean = numpy_sum(&values) / values.len() as f32;
            f64::from(mean)
        })
        .collect();
    polygons(&labels, &changed, size, transform, &first.projection())?
        .into_iter()
        .map(|(label, wkb)| {
            let diff_mean = usize::try_from(label)
                .ok()
                .and_then(|l| means.get(l))
                .copied()
                .ok_or_else(|| {
                    RasterError::Input(format!("polygonize gave an unknown region {label}"))
                })?;
            Ok(Change { wkb, diff_mean })
        })
        .collect()
}

/// The 4-connected regions of `changed`: each cell's region (row-major; -1 outside any) and
/// each region's cells in row order.
fn label_regions(changed: &[bool], width: usize, height: usize) -> (Vec<i32>, Vec<Vec<usize>>) {
    let mut labels = vec![-1_i32; changed.len()];
    let mut regions: Vec<Vec<usize>> = Vec::new();
    let mut queue = VecDeque::new();
    for start in 0..changed.len() {
        if !changed[start] || labels[start] >= 0 {
            continue;
        }
        let label = i32::try_from(regions.len()).unwrap_or(i32::MAX);
        let mut cells = Vec::new();
        labels[start] = label;
        queue.push_back(start);
        while let Some(cell) = queue.pop_front() {
            cells.push(cell);
            let (row, col) = (cell / width, cell % width);
            let mut visit = |next: usize| {
                if changed[next] && labels[next] < 0 {
                    labels[next] = label;
                    queue.push_back(next);
                }
            };
            if col > 0 {
                visit(cell - 1);
            }
            if col + 1 < width {
                visit(cell + 1);
            }
            if row > 0 {
                visit(cell - width);
            }
            if row + 1 < height {
                visit(cell + width);
            }
        }
        cells.sort_unstable();
        regions.push(cells);
    }
    (labels, regions)
}

/// GDAL's polygons of the labelled regions (each with its label), in its order.
fn polygons(
    labels: &[i32],
    changed: &[bool],
    size: (usize, usize),
    transform: [f64; 6],
    projection: &str,
) -> Result<Vec<(i32, Vec<u8>)>, RasterError> {
    let mem = DriverManager::get_driver_by_name("MEM")?;
    let mut grid = mem.create_with_band_type::<i32, _>("", size.0, size.1, 1)?;
    grid.set_geo_transform(&transform)?;
    if !projection.is_empty() {
        grid.set_projection(projection)?;
    }
    let mask = mem.create_with_band_type::<u8, _>("", size.0, size.1, 1)?;
    let mut values = gdal::raster::Buffer::new(size, labels.to_vec());
    grid.rasterband(1)?.write((0, 0), size, &mut values)?;
    let mut flags = gdal::raster::Buffer::new(size, changed.iter().map(|&c| u8::from(c)).collect());
    mask.rasterband(1)?.write((0, 0), size, &mut flags)?;
    let vectors = DriverManager::get_driver_by_name("Memory")?;
    let mut store = vectors.create_vector_only("")?;
    let layer = store.create_layer(LayerOptions {
        name: "changes",
        ty: gdal::vector::OGRwkbGeometryType::wkbPolygon,
        ..Default::default()
    })?;
    layer.create_defn_fields(&[("region", OGRFieldType::OFTInteger)])?;
    super::ffi::polygonize(&grid.rasterband(1)?, &mask.rasterband(1)?, &layer, 0)?;
    let mut layer = layer;
    let mut found = Vec::new();
    for feature in layer.features() {
        let label = feature.field_as_integer(0)?.unwrap_or(-1);
        let wkb = match feature.geometry() {
            Some(geometry) => geometry.wkb()?,
            None => continue,
        };
        found.push((label, wkb));
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::label_regions;

    #[test]
    fn regions_are_four_connected() {
        // Two cells touching at a corner are two regions; an L is one.
        let changed = [
            true, false, true, //
            false, true, true, //
            false, false, false,
        ];
        let (labels, regions) = label_regions(&changed, 3, 3);
        assert_eq!(regions.len(), 2);
        assert_eq!(regions[0], vec![0]);
        assert_eq!(regions[1], vec![2, 4, 5]);
        assert_eq!(labels[4], 1);
        assert_eq!(labels[3], -1);
    }
}
