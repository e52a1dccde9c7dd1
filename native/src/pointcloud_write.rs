//! Writing a point layer (a GeoParquet file) as LAS 1.4 or LAZ, streamed batch by batch: the
//! point format 6, 7 (RGB) or 8 (RGB and NIR) the columns call for, every dimension the layer
//! has by its LAS name (`intensity`, `classification`, `scan_angle` in degrees, `gps_time`,
//! `red`, ...; absent ones 0), Z from the geometry (else a `z` column), the CRS as the header's
//! WKT record, and scales fine enough for the extent (offsets at the minimum).

use std::fs::File;
use std::path::Path;

use arrow::array::{Array, Float64Array, RecordBatch};
use arrow::compute::cast;
use arrow::datatypes::DataType;
use gdal::spatial_ref::SpatialRef;
use geomill_geometry::wkb::read_point_z;
use las::point::Classification;
use las::{Builder, Color, Point, Transform, Vector, Writer};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

use crate::layer::Wkb;
use crate::pointcloud::CloudError;

/// The dimensions read from columns of these names (LAS's, as the point-cloud reader writes).
const DIMENSIONS: [&str; 12] = [
    "intensity",
    "return_number",
    "number_of_returns",
    "classification",
    "scan_angle",
    "user_data",
    "point_source_id",
    "gps_time",
    "red",
    "green",
    "blue",
    "nir",
];

fn write_error(e: impl std::fmt::Display) -> CloudError {
    CloudError::Write(e.to_string())
}

/// The batches of the GeoParquet file at `path`, read one at a time.
fn batches(
    path: &Path,
) -> Result<impl Iterator<Item = Result<RecordBatch, CloudError>>, CloudError> {
    let file = File::open(path).map_err(write_error)?;
    let reader = ParquetRecordBatchReaderBuilder::try_new(file)
        .map_err(write_error)?
        .with_batch_size(65_536)
        .build()
        .map_err(write_error)?;
    Ok(reader.map(|batch| batch.map_err(write_error)))
}

/// The geometry column's CRS in the file's `geo` metadata, as WKT (`None`: not said).
fn crs_wkt(path: &Path, geometry: &str) -> Result<Option<String>, CloudError> {
    let file = File::open(path).map_err(write_error)?;
    let builder = ParquetRecordBatchReaderBuilder::try_new(file).map_err(write_error)?;
    let metadata = builder.metadata().file_metadata().key_value_metadata();
    let Some(geo) = metadata
        .into_iter()
        .flatten()
        .find(|kv| kv.key == "geo")
        .and_then(|kv| kv.value.clone())
    else {
        return Ok(None);
    };
    let geo: serde_json::Value = serde_json::from_str(&geo).map_err(write_error)?;
    let crs = &geo["columns"][geometry]["crs"];
    // A PROJJSON object only: GDAL's reading of user input would open a path or a URL.
    if !crs.is_object() {
        return Ok(None);
    }
    let srs = SpatialRef::from_definition(&crs.to_string())
        .map_err(|e| write_error(format!("the layer's CRS: {e}")))?;
    srs.to_wkt()
        .map(Some)
        .map_err(|e| write_error(format!("the layer's CRS as WKT: {e}")))
}

/// Every column of `DIMENSIONS` the batch has, as doubles (NULL: absent).
fn dimension_columns(batch: &RecordBatch) -> Result<Vec<Option<Float64Array>>, CloudError> {
    DIMENSIONS
        .iter()
        .map(|name| {
            let Ok(index) = batch.schema().index_of(name) else {
                return Ok(None);
            };
            let column = batch.column(index);
            if !column.data_type().is_numeric() {
                return Ok(None);
            }
            let doubles = cast(column, &DataType::Float64).map_err(write_error)?;
            Ok(doubles.as_any().downcast_ref::<Float64Array>().cloned())
        })
        .collect()
}

/// Each point's (x, y, z) in a batch (`None` for NULL and empty geometries, which are not
/// written); Z from the geometry, else the `z` column, else 0.
fn coordinates(batch: &RecordBatch, geometry: usize) -> Result<Vec<Option<[f64; 3]>>, CloudError> {
    let wkbs = Wkb::of(batch, geometry).map_err(write_error)?;
    let z_column = match batch.schema().index_of("z") {
        Ok(index) => cast(batch.column(index), &DataType::Float64)
            .ok()
            .and_then(|a| a.as_any().downcast_ref::<Float64Array>().cloned()),
        Err(_) => None,
    };
    (0..wkbs.len())
        .map(|i| {
            let Some(bytes) = wkbs.get(i) else {
                return Ok(None);
            };
            let point = read_point_z(bytes)
                .map_err(|e| write_error(format!("a LAS file holds points only (row {i}: {e})")))?;
            Ok(point.map(|(x, y, z)| {
                let z = z.or_else(|| {
                    z_column
                        .as_ref()
                        .and_then(|c| c.is_valid(i).then(|| c.value(i)))
                });
                [x, y, z.unwrap_or(0.0)]
            }))
        })
        .collect()
}

/// The scale of an axis spanning `low..=high`: the finest power of ten (down to 1e-7) whose
/// integers reach across it.
fn scale_for(low: f64, high: f64) -> f64 {
    let span = (high - low).abs().max(1e-9);
    let mut exponent = -7;
    while span / 10f64.powi(exponent) > 2.0e9 {
        exponent += 1;
    }
    10f64.powi(exponent)
}

/// Writes the GeoParquet point layer at `source` (geometry column `geometry`) as a LAS file at
/// `target`, compressed (LAZ) when `compressed`. Answers how many points it wrote.
pub fn write_las(
    source: &Path,
    geometry: &str,
    target: &Path,
    compressed: bool,
) -> Result<u64, CloudError> {
    let mut low = [f64::INFINITY; 3];
    let mut high = [f64::NEG_INFINITY; 3];
    let (mut has_rgb, mut has_nir) = (false, false);
    for batch in batches(source)? {
        let batch = batch?;
        let schema = batch.schema();
        has_rgb |= ["red", "green", "blue"]
            .iter()
            .all(|c| schema.index_of(c).is_ok());
        has_nir |= schema.index_of("nir").is_ok();
        let index = schema.index_of(geometry).map_err(write_error)?;
        for point in coordinates(&batch, index)?.into_iter().flatten() {
            for axis in 0..3 {
                low[axis] = low[axis].min(point[axis]);
                high[axis] = high[axis].max(point[axis]);
            }
        }
    }
    if low[0] > high[0] {
        low = [0.0; 3];
        high = [0.0; 3];
    }
    let transform = |axis: usize| Transform {
        scale: scale_for(low[axis], high[axis]),
        offset: low[axis].floor(),
    };
    let mut builder = Builder::from((1, 4));
    let format = match (has_rgb, has_nir) {
        (true, true) => 8,
        (true, false) => 7,
        _ => 6,
    };
    builder.point_format = las::point::Format::new(format).map_err(write_error)?;
    builder.point_format.is_compressed = compressed;
    builder.transforms = Vector {
        x: transform(0),
        y: transform(1),
        z: transform(2),
    };
    builder.generating_software = "geomill".into();
    let mut header = builder.into_header().map_err(write_error)?;
    if let Some(wkt) = crs_wkt(source, geometry)? {
        header.set_wkt_crs(wkt.into_bytes()).map_err(write_error)?;
    }
    let file = File::create(target).map_err(write_error)?;
    let mut writer = Writer::new(std::io::BufWriter::new(file), header).map_err(write_error)?;
    let mut written = 0u64;
    for batch in batches(source)? {
        let batch = batch?;
        let index = batch.schema().index_of(geometry).map_err(write_error)?;
        let columns = dimension_columns(&batch)?;
        for (i, xyz) in coordinates(&batch, index)?.into_iter().enumerate() {
            let Some([x, y, z]) = xyz else { continue };
            let value = |d: usize| {
                columns[d]
                    .as_ref()
                    .and_then(|c| c.is_valid(i).then(|| c.value(i)))
                    .unwrap_or(0.0)
            };
            writer
                .write_point(point(x, y, z, &value, format))
                .map_err(write_error)?;
            written += 1;
        }
    }
    writer.close().map_err(write_error)?;
    Ok(written)
}

/// One point of format `format` from its coordinates and dimensions (`value(d)`: dimension `d`
/// of `DIMENSIONS`, 0 when absent). Values past a field's range saturate; class 12 (overlap,
/// which LAS 1.4 moved to a flag) is written as the flag.
#[allow(
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    clippy::cast_precision_loss
)]
fn point(x: f64, y: f64, z: f64, value: &dyn Fn(usize) -> f64, format: u8) -> Point {
    let class = value(3) as u8;
    let (classification, is_overlap) = match Classification::new(class) {
        Ok(c) => (c, false),
        Err(_) => (Classification::Unclassified, true),
    };
    Point {
        x,
        y,
        z,
        intensity: value(0) as u16,
        return_number: (value(1) as u8).min(15),
        number_of_returns: (value(2) as u8).min(15),
        classification,
        is_overlap,
        scan_angle: scan_angle(value(4)),
        user_data: value(5) as u8,
        point_source_id: value(6) as u16,
        gps_time: Some(value(7)),
        color: (format >= 7).then(|| Color {
            red: value(8) as u16,
            green: value(9) as u16,
            blue: value(10) as u16,
        }),
        nir: (format == 8).then(|| value(11) as u16),
        ..Point::default()
    }
}

/// The scan angle the `las` crate writes as the nearest 0.006° step: it divides by the step
/// and truncates (−9° would become −1499 steps), so the angle is given a quarter step past
/// the nearest one.
#[allow(clippy::cast_possible_truncation)]
fn scan_angle(degrees: f64) -> f32 {
    let steps = (degrees / 0.006).round();
    ((steps + 0.25f64.copysign(steps)) * 0.006) as f32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scales_reach_across_the_extent() {
        assert_eq!(scale_for(0.0, 100.0), 1e-7);
        assert_eq!(scale_for(600_000.0, 640_000.0), 1e-4);
        assert!(scale_for(-1e9, 1e9) >= 1.0);
    }

    #[test]
    fn scan_angles_keep_their_step() {
        for degrees in [-9.0, 0.0, 0.006, 17.994, 30.0] {
            let steps = (f64::from(scan_angle(degrees)) / 0.006).trunc();
            assert_eq!(steps, (degrees / 0.006).round(), "{degrees}");
        }
    }
}
