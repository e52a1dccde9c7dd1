//! Point clouds: LAS 1.0–1.4 and LAZ files (COPC read as LAZ), point formats 0–10, read with
//! the `las` crate in chunks and written as a GeoParquet point layer (every dimension a column,
//! `geom` a 3D point), so a cloud of any size passes through bounded memory.

use std::fs::File;
use std::io::{BufReader, Read, Seek, SeekFrom};
use std::path::Path;
use std::sync::Arc;

use arrow::array::{
    ArrayRef, BinaryBuilder, Float32Array, Float64Array, Int16Array, Int32Array, RecordBatch,
};
use arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use gdal::spatial_ref::SpatialRef;
use las::{PointData, PointDataBuilder, Reader};
use parquet::arrow::ArrowWriter;
use parquet::file::metadata::KeyValue;
use parquet::file::properties::WriterProperties;
use serde::Serialize;

use crate::raster::ffi::identify_epsg;

/// Points read and written at a time: about 60 MB of columns.
const CHUNK: u64 = 500_000;
/// The most bytes of point records read at a time (a format with many extra bytes per point
/// reads fewer points a chunk).
const CHUNK_BYTES: u64 = 64 << 20;
/// The point formats of LAS 1.4.
const MAX_POINT_FORMAT: u8 = 10;

/// Why a point cloud could not be read.
#[derive(Debug, thiserror::Error)]
pub enum CloudError {
    /// Not a LAS/LAZ file the reader accepts (the message says what is wrong with it).
    #[error("{0}")]
    Invalid(String),
    /// Writing the point layer failed.
    #[error("writing the point layer: {0}")]
    Write(String),
}

/// What a LAS/LAZ file holds.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct CloudInfo {
    /// `major.minor`.
    pub version: String,
    pub point_format: u8,
    pub points: u64,
    pub compressed: bool,
    /// `EPSG:<code>` from the file's WKT or GeoTIFF keys, when it names one.
    pub crs: Option<String>,
    /// min x, min y, min z, max x, max y, max z from the header.
    pub bounds: [f64; 6],
}

pub(crate) fn invalid(path: &Path, error: impl std::fmt::Display) -> CloudError {
    let name = path
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    CloudError::Invalid(format!("{name}: {error}"))
}

/// Opens `path` as a LAS/LAZ file and checks what its header promises against the file.
pub(crate) fn open(path: &Path) -> Result<(Reader, CloudInfo), CloudError> {
    let file = File::open(path).map_err(|e| invalid(path, e))?;
    let length = file.metadata().map_err(|e| invalid(path, e))?.len();
    let raw = las::raw::Header::read_from(BufReader::new(&file)).map_err(|e| invalid(path, e))?;
    let format_number = raw.point_data_record_format & 0x3f;
    if format_number > MAX_POINT_FORMAT {
        return Err(invalid(
            path,
            format!(
                "point format {format_number} is not a LAS point format (0 to {MAX_POINT_FORMAT})"
            ),
        ));
    }
    check_sizes(path, &file, length, &raw)?;
    let reader = Reader::new(BufReader::new(
        File::open(path).map_err(|e| invalid(path, e))?,
    ))
    .map_err(|e| invalid(path, e))?;
    let header = reader.header();
    let format = header.point_format();
    let points = header.number_of_points();
    if !format.is_compressed {
        // An uncompressed file's point records fill the bytes between the header's offset and
        // the first extended record or waveform packet after them (or the end).
        let start = u64::from(raw.offset_to_point_data);
        let evlrs = raw
            .evlr
            .as_ref()
            .filter(|e| e.number_of_evlrs > 0)
            .map(|e| e.start_of_first_evlr);
        let end = [evlrs, raw.start_of_waveform_data_packet_record]
            .into_iter()
            .flatten()
            .filter(|at| *at >= start)
            .fold(length, u64::min);
        let held = end.saturating_sub(start);
        let record = u64::from(raw.point_data_record_length).max(1);
        if held / record != points {
            return Err(invalid(
                path,
                format!(
                    "the header says {points} points of {record} bytes, but the file holds {} ({held} bytes of point records)",
                    held / record
                ),
            ));
        }
    }
    let bounds = header.bounds();
    let version = header.version();
    let info = CloudInfo {
        version: format!("{}.{}", version.major, version.minor),
        point_format: format.to_u8().map_err(|e| invalid(path, e))?,
        points,
        compressed: format.is_compressed,
        crs: crs_of(header),
        bounds: [
            bounds.min.x,
            bounds.min.y,
            bounds.min.z,
            bounds.max.x,
            bounds.max.y,
            bounds.max.z,
        ],
    };
    Ok((reader, info))
}

/// The little-endian integer of `N` bytes at `at`, or `None` past the end of `file`.
fn read_at<const N: usize>(mut file: &File, at: u64) -> Option<[u8; N]> {
    let mut bytes = [0_u8; N];
    file.seek(SeekFrom::Start(at)).ok()?;
    file.read_exact(&mut bytes).ok()?;
    Some(bytes)
}

/// Refuses a file whose sizes would make a reader allocate what the file does not hold: an
/// extended record longer than the rest of the file, a LAZ chunk table of more chunks than the
/// file has bytes.
fn check_sizes(
    path: &Path,
    file: &File,
    length: u64,
    raw: &las::raw::Header,
) -> Result<(), CloudError> {
    if let Some(evlr) = &raw.evlr {
        let mut at = evlr.start_of_first_evlr;
        for index in 0..evlr.number_of_evlrs {
            let size = read_at::<8>(file, at.saturating_add(20)).map(u64::from_le_bytes);
            let end = size.and_then(|s| at.checked_add(60)?.checked_add(s));
            match end {
                Some(end) if end <= length => at = end,
                _ => {
                    return Err(invalid(
                        path,
                        format!("extended record {index} passes the end of the file (truncated?)"),
                    ));
                }
            }
        }
    }
    let compressed = raw.point_data_record_format & 0x80 != 0;
    if compressed {
        let start = u64::from(raw.offset_to_point_data);
        let mut table = read_at::<8>(file, start).map(i64::from_le_bytes);
        if table.is_some_and(|t| t <= i64::try_from(start).unwrap_or(i64::MAX)) {
            // A writer that could not go back wrote the offset at the end instead.
            table = read_at::<8>(file, length.saturating_sub(8)).map(i64::from_le_bytes);
        }
        let chunks = table
            .and_then(|t| u64::try_from(t).ok())
            .and_then(|t| read_at::<4>(file, t.saturating_add(4)))
            .map(u32::from_le_bytes);
        if let Some(chunks) = chunks
            && u64::from(chunks) > length
        {
            return Err(invalid(
                path,
                format!("its chunk table claims {chunks} chunks, more than the file has bytes"),
            ));
        }
    }
    Ok(())
}

/// The EPSG code the header's CRS has: its WKT record's (its own ID, else the code PROJ
/// identifies it as with at least 70 % confidence, as pyproj's `to_epsg` does), else its
/// GeoTIFF keys' projected or geographic code (32767 means user-defined: none).
fn crs_of(header: &las::Header) -> Option<String> {
    let from_wkt = header.get_wkt_crs_bytes().and_then(|bytes| {
        let srs = wkt_srs(bytes)?;
        match (srs.auth_name(), srs.auth_code()) {
            (Some(name), Ok(code)) if name == "EPSG" => Some(format!("EPSG:{code}")),
            _ => identify_epsg(&srs, 70).map(|code| format!("EPSG:{code}")),
        }
    });
    from_wkt.or_else(|| {
        let keys = header.get_geotiff_crs().ok()??;
        [
            keys.get_projected_crs_geo_key_value(),
            keys.get_geodetic_crs_geo_key_value(),
        ]
        .into_iter()
        .flatten()
        .find(|code| *code != 0 && *code != 32767)
        .map(|code| format!("EPSG:{code}"))
    })
}

/// The CRS of a header's WKT record. GDAL's reading of user input recognises ESRI's WKT dialect
/// (`D_NAD83_...`, what many LAS writers put there) and translates it, as pyproj does; it also
/// opens a file path or fetches a URL given instead, so the record is read only when it is
/// WKT: a keyword of letters, digits and `_`, then `[`.
fn wkt_srs(bytes: &[u8]) -> Option<SpatialRef> {
    let text = String::from_utf8_lossy(bytes);
    let text = text.trim_end_matches('\0').trim();
    let keyword = &text[..text.find('[')?];
    let is_keyword = !keyword.is_empty()
        && keyword.starts_with(|c: char| c.is_ascii_alphabetic())
        && keyword
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !is_keyword {
        return None;
    }
    SpatialRef::from_definition(text).ok()
}

/// The header's WKT CRS as a PROJJSON document, when GDAL reads it.
fn wkt_projjson(header: &las::Header) -> Option<serde_json::Value> {
    let srs = wkt_srs(header.get_wkt_crs_bytes()?)?;
    serde_json::from_str(&srs.to_projjson().ok()?).ok()
}

/// What the LAS/LAZ file at `path` holds, from its header.
pub fn describe(path: &Path) -> Result<CloudInfo, CloudError> {
    open(path).map(|(_, info)| info)
}

/// The columns of a point layer of `format`: every dimension it has, then `geom`.
fn schema_for(format: &las::point::Format) -> SchemaRef {
    let mut fields = vec![
        Field::new("x", DataType::Float64, false),
        Field::new("y", DataType::Float64, false),
        Field::new("z", DataType::Float64, false),
        Field::new("intensity", DataType::Int32, false),
        Field::new("return_number", DataType::Int16, false),
        Field::new("number_of_returns", DataType::Int16, false),
        Field::new("classification", DataType::Int16, false),
        Field::new("scan_angle", DataType::Float32, false),
        Field::new("user_data", DataType::Int16, false),
        Field::new("point_source_id", DataType::Int32, false),
    ];
    if !format.is_extended {
        // The whole degrees formats 0-5 store, under laspy's name (GISPulse reads it so).
        fields.push(Field::new("scan_angle_rank", DataType::Int16, false));
    }
    if format.has_gps_time {
        fields.push(Field::new("gps_time", DataType::Float64, false));
    }
    if format.has_color {
        for band in ["red", "green", "blue"] {
            fields.push(Field::new(band, DataType::Int32, false));
        }
    }
    if format.has_nir {
        fields.push(Field::new("nir", DataType::Int32, false));
    }
    fields.push(Field::new("geom", DataType::Binary, false));
    Arc::new(Schema::new(fields))
}

/// One chunk of points as a record batch of `schema`.
fn batch_of(points: &PointData, schema: &SchemaRef) -> Result<RecordBatch, CloudError> {
    let xs: Vec<f64> = points.x().collect();
    let ys: Vec<f64> = points.y().collect();
    let zs: Vec<f64> = points.z().collect();
    let mut geometries = BinaryBuilder::with_capacity(xs.len(), xs.len() * 29);
    let mut wkb = [0_u8; 29];
    wkb[0] = 1;
    // ISO WKB: Point Z.
    wkb[1..5].copy_from_slice(&1001_u32.to_le_bytes());
    for ((x, y), z) in xs.iter().zip(&ys).zip(&zs) {
        wkb[5..13].copy_from_slice(&x.to_le_bytes());
        wkb[13..21].copy_from_slice(&y.to_le_bytes());
        wkb[21..29].copy_from_slice(&z.to_le_bytes());
        geometries.append_value(wkb);
    }
    let small = |values: Vec<u8>| -> ArrayRef {
        Arc::new(Int16Array::from_iter_values(
            values.into_iter().map(i16::from),
        ))
    };
    let wide = |values: Vec<u16>| -> ArrayRef {
        Arc::new(Int32Array::from_iter_values(
            values.into_iter().map(i32::from),
        ))
    };
    let mut columns: Vec<ArrayRef> = vec![
        Arc::new(Float64Array::from(xs)),
        Arc::new(Float64Array::from(ys)),
        Arc::new(Float64Array::from(zs)),
        wide(points.intensity().collect()),
        small(points.return_number().collect()),
        small(points.number_of_returns().collect()),
        small(points.classification().collect()),
        Arc::new(Float32Array::from_iter_values(points.scan_angle_degrees())),
        small(points.user_data().collect()),
        wide(points.point_source_id().collect()),
    ];
    if schema.index_of("scan_angle_rank").is_ok() {
        // A legacy format's angle is a whole number of degrees (an i8 rank).
        #[allow(clippy::cast_possible_truncation)]
        columns.push(Arc::new(Int16Array::from_iter_values(
            points.scan_angle_degrees().map(|d| d.round() as i16),
        )));
    }
    if let Some(times) = points.gps_time() {
        columns.push(Arc::new(Float64Array::from_iter_values(times)));
    }
    if let Some(colours) = points.rgb() {
        let (mut red, mut green, mut blue) = (Vec::new(), Vec::new(), Vec::new());
        for (r, g, b) in colours {
            red.push(r);
            green.push(g);
            blue.push(b);
        }
        columns.extend([wide(red), wide(green), wide(blue)]);
    }
    if let Some(nir) = points.nir() {
        columns.push(wide(nir.collect()));
    }
    columns.push(Arc::new(geometries.finish()));
    RecordBatch::try_new(Arc::clone(schema), columns).map_err(|e| CloudError::Write(e.to_string()))
}

/// Reads the LAS/LAZ file at `source` chunk by chunk into a GeoParquet point layer at
/// `target`, in `crs` (`EPSG:<code>`) when given, else the file's own; answers what the file
/// holds (its `crs` the layer's).
pub fn to_geoparquet(
    source: &Path,
    target: &Path,
    crs: Option<&str>,
) -> Result<CloudInfo, CloudError> {
    write_geoparquet(source, target, crs, true)
}

/// The GeoParquet point layer of the LAS/LAZ file at `source` with its columns and no rows,
/// for a store that reads the file's rows only when a statement needs them (`geomill run`):
/// the file's header is checked as [`to_geoparquet`] checks it.
pub fn columns_as_geoparquet(source: &Path, target: &Path) -> Result<CloudInfo, CloudError> {
    write_geoparquet(source, target, None, false)
}

fn write_geoparquet(
    source: &Path,
    target: &Path,
    crs: Option<&str>,
    rows: bool,
) -> Result<CloudInfo, CloudError> {
    let (mut reader, mut info) = open(source)?;
    if let Some(crs) = crs {
        info.crs = Some(crs.to_owned());
    }
    let schema = schema_for(reader.header().point_format());
    let mut metadata =
        crate::layer::geoparquet_metadata("geom", info.crs.as_deref(), &["Point Z"], true);
    // The whole PROJJSON document: DuckDB's reader recognises a CRS only from one.
    let code = info.crs.as_deref().and_then(|c| c.strip_prefix("EPSG:"));
    if let Some(projjson) = code
        .and_then(|c| c.parse::<u32>().ok())
        .and_then(|c| SpatialRef::from_epsg(c).ok()?.to_projjson().ok())
        .and_then(|text| serde_json::from_str::<serde_json::Value>(&text).ok())
    {
        metadata["columns"]["geom"]["crs"] = projjson;
    } else if info.crs.is_none() {
        // A CRS no EPSG code names is still the points' CRS (its whole PROJJSON); without
        // any, `null` says unknown (an absent `crs` would mean longitude and latitude).
        metadata["columns"]["geom"]["crs"] =
            wkt_projjson(reader.header()).unwrap_or(serde_json::Value::Null);
    }
    let properties = WriterProperties::builder()
        .set_compression(parquet::basic::Compression::SNAPPY)
        .set_key_value_metadata(Some(vec![KeyValue::new(
            "geo".into(),
            metadata.to_string(),
        )]))
        .build();
    let written = File::create(target).map_err(|e| CloudError::Write(e.to_string()))?;
    let mut writer = ArrowWriter::try_new(written, Arc::clone(&schema), Some(properties))
        .map_err(|e| CloudError::Write(e.to_string()))?;
    let mut points = PointDataBuilder::new().for_header(reader.header()).build();
    let record = u64::from(reader.header().point_format().len()).max(1);
    let chunk = (CHUNK_BYTES / record).clamp(1, CHUNK);
    let mut read = 0_u64;
    // Without rows, the header alone says how many points there are.
    let mut more = rows;
    while more {
        let count = reader.fill_points(chunk, &mut points).map_err(|e| {
            invalid(
                source,
                format!("after {read} of {} points: {e}", info.points),
            )
        })?;
        more = count > 0;
        if !more {
            break;
        }
        read += count;
        let batch = batch_of(&points, &schema)?;
        writer
            .write(&batch)
            .map_err(|e| CloudError::Write(e.to_string()))?;
    }
    if rows && read != info.points {
        return Err(invalid(
            source,
            format!(
                "the header says {} points, the file holds {read}",
                info.points
            ),
        ));
    }
    writer
        .close()
        .map_err(|e| CloudError::Write(e.to_string()))?;
    Ok(info)
}
