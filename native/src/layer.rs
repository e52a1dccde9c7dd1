//! A layer as Arrow record batches with one WKB geometry column and its CRS; GeoParquet files
//! read (row groups in parallel, only the columns asked for) and written.

use std::fs::File;
use std::path::Path;
use std::sync::Arc;

use arrow::array::{Array, ArrayRef, BinaryArray, BinaryViewArray, LargeBinaryArray, RecordBatch};
use arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use arrow::record_batch::RecordBatchReader;
use parquet::arrow::ArrowWriter;
use parquet::arrow::ProjectionMask;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::file::metadata::KeyValue;
use parquet::file::properties::WriterProperties;
use rayon::prelude::*;
use serde_json::{Value, json};

use super::NativeError;

/// Rows of one layer: `batches` share `schema`; `geometry` names the WKB column.
#[derive(Debug, Clone)]
pub struct Layer {
    pub schema: SchemaRef,
    pub batches: Vec<RecordBatch>,
    pub geometry: String,
    /// `EPSG:code` (or the CRS text the source gave); `None` when unknown.
    pub crs: Option<String>,
}

impl Layer {
    /// A layer of `batches` (at least the schema must be known).
    pub fn new(
        schema: SchemaRef,
        batches: Vec<RecordBatch>,
        geometry: &str,
        crs: Option<String>,
    ) -> Result<Self, NativeError> {
        let layer = Self {
            schema,
            batches,
            geometry: geometry.to_owned(),
            crs,
        };
        layer.geometry_index()?;
        Ok(layer)
    }

    /// How many rows the layer has.
    pub fn num_rows(&self) -> usize {
        self.batches.iter().map(RecordBatch::num_rows).sum()
    }

    /// The geometry column's position and the schema with that column as WKB (`Binary`), for
    /// a kernel that writes new geometries.
    pub fn with_binary_geometry(&self) -> Result<(usize, SchemaRef), NativeError> {
        let geom = self.geometry_index()?;
        let mut fields: Vec<Arc<Field>> = self.schema.fields().iter().cloned().collect();
        fields[geom] = Arc::new(Field::new(&self.geometry, DataType::Binary, true));
        Ok((geom, Arc::new(Schema::new(fields))))
    }

    /// The layer with its geometry column replaced by `values` (one per row, in row order).
    pub fn with_geometries(&self, values: &[Option<Vec<u8>>]) -> Result<Layer, NativeError> {
        let (geom, schema) = self.with_binary_geometry()?;
        let mut start = 0;
        let mut batches = Vec::with_capacity(self.batches.len());
        for batch in &self.batches {
            let rows = &values[start..start + batch.num_rows()];
            start += batch.num_rows();
            let array: BinaryArray = rows.iter().map(Option::as_deref).collect();
            let mut columns = batch.columns().to_vec();
            columns[geom] = Arc::new(array) as ArrayRef;
            batches
                .push(RecordBatch::try_new(schema.clone(), columns).map_err(NativeError::arrow)?);
        }
        Layer::new(schema, batches, &self.geometry, self.crs.clone())
    }

    /// The position of the geometry column; an error when it is missing or not binary.
    pub fn geometry_index(&self) -> Result<usize, NativeError> {
        let index = self.column_index(&self.geometry)?;
        match self.schema.field(index).data_type() {
            DataType::Binary | DataType::LargeBinary | DataType::BinaryView => Ok(index),
            other => Err(NativeError::Column {
                column: self.geometry.clone(),
                problem: format!("holds {other}, not WKB"),
            }),
        }
    }

    /// The position of the column `field`; an error naming it when the layer has none.
    pub fn column_index(&self, field: &str) -> Result<usize, NativeError> {
        self.schema
            .index_of(field)
            .map_err(|_| NativeError::Column {
                column: field.to_owned(),
                problem: "is not in the layer".into(),
            })
    }

    /// The values of `field` as text (cast as Arrow casts them), in row order.
    pub fn texts(&self, field: &str) -> Result<Vec<Option<String>>, NativeError> {
        let index = self.column_index(field)?;
        let mut out = Vec::with_capacity(self.num_rows());
        for batch in &self.batches {
            let text = arrow::compute::cast(batch.column(index), &DataType::Utf8)
                .map_err(NativeError::arrow)?;
            let text = text
                .as_any()
                .downcast_ref::<arrow::array::StringArray>()
                .ok_or_else(|| NativeError::Arrow("a cast to text gave another type".into()))?;
            out.extend(text.iter().map(|v| v.map(str::to_owned)));
        }
        Ok(out)
    }

    /// Whether the CRS is geographic (longitude/latitude degrees).
    pub fn is_geographic(&self) -> bool {
        matches!(
            self.crs.as_deref(),
            Some("EPSG:4326" | "OGC:CRS84" | "EPSG:4258" | "EPSG:4269")
        )
    }
}

/// The WKB values of one batch's geometry column, whatever binary layout Arrow chose.
pub enum Wkb<'a> {
    Binary(&'a BinaryArray),
    Large(&'a LargeBinaryArray),
    View(&'a BinaryViewArray),
}

impl<'a> Wkb<'a> {
    /// The geometry column of `batch` (its position from [`Layer::geometry_index`]).
    pub fn of(batch: &'a RecordBatch, index: usize) -> Result<Self, NativeError> {
        let column = batch.column(index).as_any();
        if let Some(a) = column.downcast_ref::<BinaryArray>() {
            return Ok(Self::Binary(a));
        }
        if let Some(a) = column.downcast_ref::<LargeBinaryArray>() {
            return Ok(Self::Large(a));
        }
        column
            .downcast_ref::<BinaryViewArray>()
            .map(Self::View)
            .ok_or_else(|| NativeError::Column {
                column: batch.schema().field(index).name().clone(),
                problem: "is not a binary (WKB) column".into(),
            })
    }

    pub fn len(&self) -> usize {
        match self {
            Self::Binary(a) => a.len(),
            Self::Large(a) => a.len(),
            Self::View(a) => a.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Row `i`'s WKB, `None` when NULL.
    pub fn get(&self, i: usize) -> Option<&'a [u8]> {
        match self {
            Self::Binary(a) => a.is_valid(i).then(|| a.value(i)),
            Self::Large(a) => a.is_valid(i).then(|| a.value(i)),
            Self::View(a) => a.is_valid(i).then(|| a.value(i)),
        }
    }
}

fn parquet_error(path: &Path) -> impl Fn(parquet::errors::ParquetError) -> NativeError + '_ {
    move |e| NativeError::File {
        path: path.display().to_string(),
        reason: e.to_string(),
    }
}

/// The CRS of a GeoParquet column's `crs` (PROJJSON; absent means OGC:CRS84).
fn crs_of(column: Option<&Value>) -> Option<String> {
    let Some(crs) = column.and_then(|c| c.get("crs")) else {
        return Some("EPSG:4326".into());
    };
    let id = crs.get("id")?;
    match (id.get("authority")?.as_str()?, id.get("code")?) {
        ("OGC", code) if code.as_str() == Some("CRS84") => Some("EPSG:4326".into()),
        (authority, Value::Number(code)) => Some(format!("{authority}:{code}")),
        (authority, Value::String(code)) => Some(format!("{authority}:{code}")),
        _ => None,
    }
}

/// Reads a GeoParquet file: only `columns` when given (the geometry column is always read),
/// row groups decoded in parallel on the current rayon pool.
pub fn read_geoparquet(path: &Path, columns: Option<&[&str]>) -> Result<Layer, NativeError> {
    let error = parquet_error(path);
    let open = || {
        File::open(path).map_err(|e| NativeError::File {
            path: path.display().to_string(),
            reason: e.to_string(),
        })
    };
    let builder = ParquetRecordBatchReaderBuilder::try_new(open()?).map_err(&error)?;
    let metadata = builder.metadata().clone();
    let geo: Option<Value> = metadata
        .file_metadata()
        .key_value_metadata()
        .and_then(|kv| kv.iter().find(|e| e.key == "geo"))
        .and_then(|e| e.value.as_deref())
        .and_then(|text| serde_json::from_str(text).ok());
    let geometry = geo
        .as_ref()
        .and_then(|g| g.get("primary_column"))
        .and_then(Value::as_str)
        .unwrap_or("geom")
        .to_owned();
    let crs = crs_of(
        geo.as_ref()
            .and_then(|g| g.get("columns"))
            .and_then(|c| c.get(&geometry)),
    );
    let schema_descr = builder.parquet_schema().clone();
    let mask = match columns {
        Some(names) => {
            let wanted: Vec<usize> = builder
                .schema()
                .fields()
                .iter()
                .enumerate()
                .filter(|(_, f)| f.name() == &geometry || names.contains(&f.name().as_str()))
                .map(|(i, _)| i)
                .collect();
            ProjectionMask::roots(&schema_descr, wanted)
        }
        None => ProjectionMask::all(),
    };
    let groups = metadata.num_row_groups();
    let parts: Vec<Result<(SchemaRef, Vec<RecordBatch>), NativeError>> = (0..groups.max(1))
        .into_par_iter()
        .map(|group| {
            let builder = ParquetRecordBatchReaderBuilder::try_new(open()?).map_err(&error)?;
            let builder = builder
                .with_projection(mask.clone())
                .with_batch_size(65_536);
            let builder = if groups == 0 {
                builder
            } else {
                builder.with_row_groups(vec![group])
            };
            let reader = builder.build().map_err(&error)?;
            let schema = reader.schema();
            let batches = reader
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| NativeError::File {
                    path: path.display().to_string(),
                    reason: e.to_string(),
                })?;
            Ok((schema, batches))
        })
        .collect();
    let mut schema = None;
    let mut batches = Vec::new();
    for part in parts {
        let (s, b) = part?;
        schema.get_or_insert(s);
        batches.extend(b);
    }
    let schema = schema.ok_or_else(|| NativeError::File {
        path: path.display().to_string(),
        reason: "no schema".into(),
    })?;
    Layer::new(schema, batches, &geometry, crs)
}

/// EPSG:4326 as PROJJSON (PROJ's own description of it), for readers that recognise a CRS
/// only from a whole PROJJSON document (DuckDB's Parquet reader among them).
const WGS84_PROJJSON: &str = r#"{"type":"GeographicCRS","name":"WGS 84","datum_ensemble":{"name":"World Geodetic System 1984 ensemble","members":[{"name":"World Geodetic System 1984 (Transit)","id":{"authority":"EPSG","code":1166}},{"name":"World Geodetic System 1984 (G730)","id":{"authority":"EPSG","code":1152}},{"name":"World Geodetic System 1984 (G873)","id":{"authority":"EPSG","code":1153}},{"name":"World Geodetic System 1984 (G1150)","id":{"authority":"EPSG","code":1154}},{"name":"World Geodetic System 1984 (G1674)","id":{"authority":"EPSG","code":1155}},{"name":"World Geodetic System 1984 (G1762)","id":{"authority":"EPSG","code":1156}},{"name":"World Geodetic System 1984 (G2139)","id":{"authority":"EPSG","code":1309}},{"name":"World Geodetic System 1984 (G2296)","id":{"authority":"EPSG","code":1383}}],"ellipsoid":{"name":"WGS 84","semi_major_axis":6378137,"inverse_flattening":298.257223563},"accuracy":"2.0","id":{"authority":"EPSG","code":6326}},"coordinate_system":{"subtype":"ellipsoidal","axis":[{"name":"Geodetic latitude","abbreviation":"Lat","direction":"north","unit":"degree"},{"name":"Geodetic longitude","abbreviation":"Lon","direction":"east","unit":"degree"}]},"scope":"Horizontal component of 3D system.","area":"World.","bbox":{"south_latitude":-90,"west_longitude":-180,"north_latitude":90,"east_longitude":180},"id":{"authority":"EPSG","code":4326}}"#;

/// The GeoParquet `geo` metadata of a layer whose geometries are of `geometry_types` (empty:
/// not said); `whole_crs`: EPSG:4326 as the whole PROJJSON document rather than left out.
fn geo_metadata(layer: &Layer, geometry_types: &[&str], whole_crs: bool) -> Value {
    geoparquet_metadata(
        &layer.geometry,
        layer.crs.as_deref(),
        geometry_types,
        whole_crs,
    )
}

/// The GeoParquet 1.0 `geo` metadata of a WKB column `geometry` in `crs` (`EPSG:<code>`)
/// whose geometries are of `geometry_types` (empty: not said); `whole_crs`: EPSG:4326 as the
/// whole PROJJSON document rather than left out (GeoParquet's default).
pub fn geoparquet_metadata(
    geometry: &str,
    crs: Option<&str>,
    geometry_types: &[&str],
    whole_crs: bool,
) -> Value {
    let mut column = json!({"encoding": "WKB", "geometry_types": geometry_types});
    if whole_crs && crs == Some("EPSG:4326") {
        column["crs"] = serde_json::from_str(WGS84_PROJJSON).unwrap_or(Value::Null);
    }
    if let Some((authority, code)) = crs.and_then(|c| c.split_once(':'))
        && !(authority == "EPSG" && code == "4326")
    {
        let code: Value = code.parse::<u64>().map_or(json!(code), |n| json!(n));
        column["crs"] = json!({"id": {"authority": authority, "code": code}});
    }
    json!({"version": "1.0.0", "primary_column": geometry,
           "columns": {geometry: column}})
}

/// Writes a layer as a GeoParquet 1.0 file (WKB, snappy).
pub fn write_geoparquet(layer: &Layer, path: &Path) -> Result<(), NativeError> {
    write_parquet_file(layer, path, &[], false, parquet::basic::Compression::SNAPPY)
}

/// Writes a run's result as a GeoParquet 1.0 file (WKB, snappy) in `crs` (`EPSG:<code>`; else
/// the layer's), the CRS as the whole PROJJSON document GDAL gives for it, as GeoPandas and
/// DuckDB write it.
pub fn write_result_geoparquet(
    layer: &Layer,
    path: &Path,
    crs: Option<&str>,
) -> Result<(), NativeError> {
    let mut layer = layer.clone();
    if let Some(crs) = crs {
        layer.crs = Some(crs.to_owned());
    }
    let mut metadata = geo_metadata(&layer, &[], true);
    let projjson = layer
        .crs
        .as_deref()
        .and_then(|c| c.strip_prefix("EPSG:")?.parse::<u32>().ok())
        .and_then(|code| {
            gdal::spatial_ref::SpatialRef::from_epsg(code)
                .ok()?
                .to_projjson()
                .ok()
        })
        .and_then(|text| serde_json::from_str::<Value>(&text).ok());
    if let Some(projjson) = projjson {
        metadata["columns"][layer.geometry.as_str()]["crs"] = projjson;
    }
    write_parquet_with(&layer, path, &metadata, parquet::basic::Compression::SNAPPY)
}

/// Writes a layer as an uncompressed GeoParquet 1.0 file (a scratch copy, read once soon)
/// that declares its geometries to be of `geometry_types` (GeoParquet's names: `Point`,
/// `MultiPolygon`) and its CRS even when it is EPSG:4326.
pub fn write_typed_geoparquet(
    layer: &Layer,
    path: &Path,
    geometry_types: &[&str],
) -> Result<(), NativeError> {
    write_parquet_file(
        layer,
        path,
        geometry_types,
        true,
        parquet::basic::Compression::UNCOMPRESSED,
    )
}

fn write_parquet_file(
    layer: &Layer,
    path: &Path,
    geometry_types: &[&str],
    whole_crs: bool,
    compression: parquet::basic::Compression,
) -> Result<(), NativeError> {
    let metadata = geo_metadata(layer, geometry_types, whole_crs);
    write_parquet_with(layer, path, &metadata, compression)
}

fn write_parquet_with(
    layer: &Layer,
    path: &Path,
    metadata: &Value,
    compression: parquet::basic::Compression,
) -> Result<(), NativeError> {
    let error = parquet_error(path);
    let file = File::create(path).map_err(|e| NativeError::File {
        path: path.display().to_string(),
        reason: e.to_string(),
    })?;
    // Geometries seldom repeat: a dictionary of them is work for nothing.
    let properties = WriterProperties::builder()
        .set_compression(compression)
        .set_column_dictionary_enabled(
            parquet::schema::types::ColumnPath::from(layer.geometry.as_str()),
            false,
        )
        .set_key_value_metadata(Some(vec![KeyValue::new(
            "geo".into(),
            metadata.to_string(),
        )]))
        .build();
    let mut writer =
        ArrowWriter::try_new(file, Arc::clone(&layer.schema), Some(properties)).map_err(&error)?;
    for batch in &layer.batches {
        writer.write(batch).map_err(&error)?;
    }
    writer.close().map_err(&error)?;
    Ok(())
}
