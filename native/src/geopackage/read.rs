//! Reading a GeoPackage's one feature table into Arrow as GDAL would give it: the feature id
//! left out, the geometry as the WKB inside each GeoPackage blob, each column typed as GDAL
//! types it (INTEGER as 64-bit, MEDIUMINT as 32-bit, BOOLEAN, REAL, TEXT, BLOB).

use std::path::Path;
use std::sync::Arc;

use arrow::array::{
    ArrayBuilder, ArrayRef, BinaryBuilder, BooleanBuilder, Float64Builder, Int32Builder,
    Int64Builder, StringBuilder,
};
use arrow::datatypes::{DataType, Field, Schema};
use arrow::record_batch::RecordBatch;
use geomill_geometry::wkb;
use rusqlite::types::ValueRef;
use rusqlite::{Connection, OpenFlags};

use super::quoted;
use crate::{Layer, NativeError};

/// Rows per record batch.
const BATCH_ROWS: usize = 65_536;

/// The one feature table of a GeoPackage, read.
#[derive(Debug)]
pub struct GeoPackageLayer {
    /// The table's name (GDAL's layer name).
    pub name: String,
    /// Its rows; the geometry column is `geom`.
    pub layer: Layer,
    /// The geometry type its `gpkg_geometry_columns` row declares (`MULTIPOLYGON`, `GEOMETRY`).
    pub geometry_type: String,
}

fn declined(why: impl std::fmt::Display) -> NativeError {
    NativeError::Declined(format!("reading this GeoPackage natively: {why}"))
}

/// An attribute's Arrow type from its declared GeoPackage type (`None`: declined).
fn arrow_type(declared: &str) -> Option<DataType> {
    let base = declared
        .split('(')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_uppercase();
    Some(match base.as_str() {
        "INTEGER" | "INT" | "BIGINT" => DataType::Int64,
        "MEDIUMINT" => DataType::Int32,
        "BOOLEAN" => DataType::Boolean,
        "REAL" | "DOUBLE" => DataType::Float64,
        "TEXT" => DataType::Utf8,
        "BLOB" => DataType::Binary,
        _ => return None,
    })
}

/// The WKB inside a GeoPackage geometry blob (standard, not extended, binary).
fn wkb_of_blob(blob: &[u8]) -> Result<&[u8], NativeError> {
    let [b'G', b'P', 0, flags, ..] = blob else {
        return Err(declined("a geometry that is not a GeoPackage blob"));
    };
    if flags & (1 << 5) != 0 {
        return Err(declined("an extended GeoPackage geometry"));
    }
    let envelope = match (flags >> 1) & 0b111 {
        0 => 0,
        1 => 32,
        2 | 3 => 48,
        4 => 64,
        other => return Err(declined(format!("envelope indicator {other}"))),
    };
    let value = blob
        .get(8 + envelope..)
        .ok_or_else(|| declined("a truncated geometry"))?;
    wkb::base_type(value).map_err(|e| declined(format!("a geometry: {e}")))?;
    Ok(value)
}

/// A builder for one column, and how it takes a value.
enum Column {
    Int64(Int64Builder),
    Int32(Int32Builder),
    Boolean(BooleanBuilder),
    Float64(Float64Builder),
    Text(StringBuilder),
    Binary(BinaryBuilder),
}

impl Column {
    fn new(data_type: &DataType) -> Self {
        match data_type {
            DataType::Int32 => Self::Int32(Int32Builder::new()),
            DataType::Boolean => Self::Boolean(BooleanBuilder::new()),
            DataType::Float64 => Self::Float64(Float64Builder::new()),
            DataType::Utf8 => Self::Text(StringBuilder::new()),
            DataType::Binary => Self::Binary(BinaryBuilder::new()),
            _ => Self::Int64(Int64Builder::new()),
        }
    }

    /// Appends one SQLite value; declines a value of another storage class than the column's.
    fn push(&mut self, value: ValueRef<'_>, column: &str) -> Result<(), NativeError> {
        let mismatch = || declined(format!("column {column} holds a value of another type"));
        match (self, value) {
            (Self::Int64(b), ValueRef::Null) => b.append_null(),
            (Self::Int32(b), ValueRef::Null) => b.append_null(),
            (Self::Boolean(b), ValueRef::Null) => b.append_null(),
            (Self::Float64(b), ValueRef::Null) => b.append_null(),
            (Self::Text(b), ValueRef::Null) => b.append_null(),
            (Self::Binary(b), ValueRef::Null) => b.append_null(),
            (Self::Int64(b), ValueRef::Integer(v)) => b.append_value(v),
            (Self::Int32(b), ValueRef::Integer(v)) => {
                b.append_value(i32::try_from(v).map_err(|_| mismatch())?);
            }
            (Self::Boolean(b), ValueRef::Integer(v)) => b.append_value(v != 0),
            (Self::Float64(b), ValueRef::Real(v)) => b.append_value(v),
            #[expect(clippy::cast_precision_loss, reason = "SQLite's own reading of it")]
            (Self::Float64(b), ValueRef::Integer(v)) => b.append_value(v as f64),
            (Self::Text(b), ValueRef::Text(bytes)) => {
                b.append_value(std::str::from_utf8(bytes).map_err(|_| mismatch())?);
            }
            (Self::Binary(b), ValueRef::Blob(bytes)) => b.append_value(bytes),
            _ => return Err(mismatch()),
        }
        Ok(())
    }

    fn finish(&mut self) -> ArrayRef {
        match self {
            Self::Int64(b) => Arc::new(b.finish()),
            Self::Int32(b) => Arc::new(b.finish()),
            Self::Boolean(b) => Arc::new(b.finish()),
            Self::Float64(b) => Arc::new(b.finish()),
            Self::Text(b) => Arc::new(b.finish()),
            Self::Binary(b) => Arc::new(b.finish()),
        }
    }

    fn len(&self) -> usize {
        match self {
            Self::Int64(b) => b.len(),
            Self::Int32(b) => b.len(),
            Self::Boolean(b) => b.len(),
            Self::Float64(b) => b.len(),
            Self::Text(b) => b.len(),
            Self::Binary(b) => b.len(),
        }
    }
}

/// The table, its geometry column and declared type, from the GeoPackage's catalog: exactly
/// one layer, a feature table in EPSG:4326 without Z or M.
fn the_feature_table(connection: &Connection) -> Result<(String, String, String), NativeError> {
    let layers: i64 = connection
        .query_row("SELECT count(*) FROM gpkg_contents", [], |r| r.get(0))
        .map_err(|_| declined("no gpkg_contents table"))?;
    if layers != 1 {
        return Err(declined(format!("{layers} layers")));
    }
    let (table, column, kind, z, m, organization, code): (
        String,
        String,
        String,
        i64,
        i64,
        String,
        i64,
    ) = connection
        .query_row(
            "SELECT c.table_name, g.column_name, g.geometry_type_name, g.z, g.m, \
                    s.organization, s.organization_coordsys_id \
             FROM gpkg_contents c \
             JOIN gpkg_geometry_columns g ON g.table_name = c.table_name \
             JOIN gpkg_spatial_ref_sys s ON s.srs_id = g.srs_id \
             WHERE c.data_type = 'features'",
            [],
            |r| {
                Ok((
                    r.get(0)?,
                    r.get(1)?,
                    r.get(2)?,
                    r.get(3)?,
                    r.get(4)?,
                    r.get(5)?,
                    r.get(6)?,
                ))
            },
        )
        .map_err(|_| declined("no feature table with a geometry column"))?;
    if z != 0 || m != 0 {
        return Err(declined("Z or M ordinates"));
    }
    if !(organization.eq_ignore_ascii_case("EPSG") && code == 4326) {
        return Err(declined(format!("the CRS {organization}:{code}")));
    }
    let is_table: bool = connection
        .query_row(
            "SELECT count(*) = 1 FROM sqlite_master WHERE type = 'table' AND name = ?",
            [&table],
            |r| r.get(0),
        )
        .map_err(declined)?;
    if !is_table {
        return Err(declined(format!("{table} is not a table")));
    }
    Ok((table, column, kind.to_ascii_uppercase()))
}

/// Reads the one feature table of the GeoPackage at `path` (opened read-only, its schema not
/// trusted). Declines every file it cannot read exactly as GDAL would.
pub fn read_geopackage(path: &Path) -> Result<GeoPackageLayer, NativeError> {
    let connection = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(declined)?;
    connection
        .execute_batch("PRAGMA trusted_schema = OFF; PRAGMA mmap_size = 1073741824;")
        .map_err(declined)?;
    let (table, geometry, geometry_type) = the_feature_table(&connection)?;
    // Attributes: every column but the integer key (GDAL's feature id), the geometry, and a
    // column named fid or OGC_FID (dropped after GDAL reads, as the store does).
    let mut attributes: Vec<(String, DataType)> = Vec::new();
    {
        let mut info = connection
            .prepare(&format!("PRAGMA table_info({})", quoted(&table)))
            .map_err(declined)?;
        let rows = info
            .query_map([], |r| {
                Ok((
                    r.get::<_, String>(1)?,
                    r.get::<_, String>(2)?,
                    r.get::<_, i64>(5)?,
                ))
            })
            .map_err(declined)?;
        for row in rows {
            let (name, declared, key) = row.map_err(declined)?;
            let lower = name.to_ascii_lowercase();
            if key > 0 || name == geometry || lower == "fid" || lower == "ogc_fid" {
                continue;
            }
            if lower == "geom" {
                return Err(declined("an attribute named geom"));
            }
            let kind = arrow_type(&declared)
                .ok_or_else(|| declined(format!("column {name} of type {declared}")))?;
            attributes.push((name, kind));
        }
    }
    let mut fields = vec![Field::new("geom", DataType::Binary, true)];
    fields.extend(
        attributes
            .iter()
            .map(|(name, kind)| Field::new(name, kind.clone(), true)),
    );
    let schema = Arc::new(Schema::new(fields));
    let select: Vec<String> = std::iter::once(&geometry)
        .chain(attributes.iter().map(|(name, _)| name))
        .map(|name| quoted(name))
        .collect();
    let mut statement = connection
        .prepare(&format!(
            "SELECT {} FROM {}",
            select.join(", "),
            quoted(&table)
        ))
        .map_err(declined)?;
    let mut rows = statement.query([]).map_err(declined)?;
    let mut geometries = BinaryBuilder::new();
    let mut columns: Vec<Column> = attributes.iter().map(|(_, t)| Column::new(t)).collect();
    let mut batches = Vec::new();
    let mut flush =
        |geometries: &mut BinaryBuilder, columns: &mut [Column]| -> Result<(), NativeError> {
            let mut arrays: Vec<ArrayRef> = vec![Arc::new(geometries.finish())];
            arrays.extend(columns.iter_mut().map(Column::finish));
            batches.push(RecordBatch::try_new(schema.clone(), arrays).map_err(NativeError::arrow)?);
            Ok(())
        };
    while let Some(row) = rows.next().map_err(declined)? {
        match row.get_ref(0).map_err(declined)? {
            ValueRef::Null => geometries.append_null(),
            ValueRef::Blob(blob) => geometries.append_value(wkb_of_blob(blob)?),
            _ => return Err(declined("a geometry that is not a blob")),
        }
        for (i, (column, (name, _))) in columns.iter_mut().zip(&attributes).enumerate() {
            column.push(row.get_ref(i + 1).map_err(declined)?, name)?;
        }
        if geometries.len() == BATCH_ROWS {
            flush(&mut geometries, &mut columns)?;
        }
    }
    if geometries.len() > 0 || columns.first().is_some_and(|c| c.len() > 0) {
        flush(&mut geometries, &mut columns)?;
    }
    if batches.is_empty() {
        batches.push(RecordBatch::new_empty(schema.clone()));
    }
    Ok(GeoPackageLayer {
        name: table,
        layer: Layer::new(schema, batches, "geom", Some("EPSG:4326".into()))?,
        geometry_type,
    })
}
