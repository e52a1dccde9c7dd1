//! Writing a layer as a GeoPackage: one feature table with its spatial reference, contents and
//! geometry-column rows and its R-tree index, laid out as GDAL lays them out.

use std::path::Path;

use arrow::array::{Array, AsArray, RecordBatch};
use arrow::datatypes::{
    DataType, Float32Type, Float64Type, Int8Type, Int16Type, Int32Type, Int64Type, UInt8Type,
    UInt16Type, UInt32Type,
};
use geomill_geometry::wkb;
use rusqlite::{Connection, params};

use super::{REQUIRED_SRS, quoted};
use crate::{Layer, NativeError, Wkb};

/// `GPKG` as the file's application id, and the standard's version 1.2 as its user version.
const APPLICATION_ID: i32 = 0x4750_4B47;
const USER_VERSION: i32 = 10_200;

const SCHEMA: &str = "
CREATE TABLE gpkg_spatial_ref_sys (srs_name TEXT NOT NULL, srs_id INTEGER NOT NULL PRIMARY KEY,
  organization TEXT NOT NULL, organization_coordsys_id INTEGER NOT NULL,
  definition TEXT NOT NULL, description TEXT);
CREATE TABLE gpkg_contents (table_name TEXT NOT NULL PRIMARY KEY, data_type TEXT NOT NULL,
  identifier TEXT UNIQUE, description TEXT DEFAULT '',
  last_change DATETIME NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')),
  min_x DOUBLE, min_y DOUBLE, max_x DOUBLE, max_y DOUBLE, srs_id INTEGER,
  CONSTRAINT fk_gc_r_srs_id FOREIGN KEY (srs_id) REFERENCES gpkg_spatial_ref_sys(srs_id));
CREATE TABLE gpkg_geometry_columns (table_name TEXT NOT NULL, column_name TEXT NOT NULL,
  geometry_type_name TEXT NOT NULL, srs_id INTEGER NOT NULL, z TINYINT NOT NULL,
  m TINYINT NOT NULL,
  CONSTRAINT pk_geom_cols PRIMARY KEY (table_name, column_name),
  CONSTRAINT uk_gc_table_name UNIQUE (table_name),
  CONSTRAINT fk_gc_tn FOREIGN KEY (table_name) REFERENCES gpkg_contents(table_name),
  CONSTRAINT fk_gc_srs FOREIGN KEY (srs_id) REFERENCES gpkg_spatial_ref_sys (srs_id));
CREATE TABLE gpkg_extensions (table_name TEXT, column_name TEXT,
  extension_name TEXT NOT NULL, definition TEXT NOT NULL, scope TEXT NOT NULL,
  CONSTRAINT ge_tce UNIQUE (table_name, column_name, extension_name));
CREATE TABLE gpkg_ogr_contents (table_name TEXT NOT NULL PRIMARY KEY,
  feature_count INTEGER DEFAULT NULL);
";

/// The GeoPackage column type of an attribute (`None`: none that GDAL reads back as it is).
fn column_type(data_type: &DataType) -> Option<&'static str> {
    Some(match data_type {
        DataType::Boolean => "BOOLEAN",
        DataType::Int8 | DataType::Int16 | DataType::UInt8 => "SMALLINT",
        DataType::Int32 | DataType::UInt16 => "MEDIUMINT",
        DataType::Int64 | DataType::UInt32 => "INTEGER",
        DataType::Float32 => "FLOAT",
        DataType::Float64 => "REAL",
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => "TEXT",
        DataType::Date32 => "DATE",
        DataType::Binary | DataType::LargeBinary | DataType::BinaryView => "BLOB",
        _ => return None,
    })
}

/// The `srs_id` of a CRS this writer can declare (`None` for a CRS it cannot).
fn srs_id(crs: Option<&str>) -> Option<i32> {
    match crs {
        None => Some(-1),
        Some("EPSG:4326") => Some(4326),
        Some(_) => None,
    }
}

/// The geometry type name of the column: the one base type every value has, else `GEOMETRY`.
fn geometry_type_name(bases: impl Iterator<Item = u32>) -> &'static str {
    const NAMES: [&str; 8] = [
        "GEOMETRY",
        "POINT",
        "LINESTRING",
        "POLYGON",
        "MULTIPOINT",
        "MULTILINESTRING",
        "MULTIPOLYGON",
        "GEOMETRYCOLLECTION",
    ];
    let mut seen = None;
    for base in bases {
        match seen {
            None => seen = Some(base),
            Some(first) if first != base => return NAMES[0],
            Some(_) => {}
        }
    }
    seen.and_then(|b| NAMES.get(b as usize).copied())
        .unwrap_or(NAMES[0])
}

/// One geometry as a GeoPackage geometry blob: the `GP` header (little-endian, the envelope
/// when it is not a point, the empty flag) followed by the WKB as it is.
fn geometry_blob(wkb_value: &[u8], srs: i32, base: u32, envelope: Option<[f64; 4]>) -> Vec<u8> {
    let with_envelope = envelope.is_some() && base != 1;
    let mut blob = Vec::with_capacity(wkb_value.len() + 40);
    blob.extend_from_slice(b"GP");
    blob.push(0);
    let mut flags = 1u8; // little-endian header values
    if with_envelope {
        flags |= 1 << 1; // envelope [min_x, max_x, min_y, max_y]
    }
    if envelope.is_none() {
        flags |= 1 << 4; // empty geometry
    }
    blob.push(flags);
    blob.extend_from_slice(&srs.to_le_bytes());
    if let (true, Some([min_x, min_y, max_x, max_y])) = (with_envelope, envelope) {
        for v in [min_x, max_x, min_y, max_y] {
            blob.extend_from_slice(&v.to_le_bytes());
        }
    }
    blob.extend_from_slice(wkb_value);
    blob
}

/// Binds row `row` of an attribute column (types from [`column_type`]) as parameter `index`
/// of `insert`, without copying its text or bytes.
fn bind_cell(
    insert: &mut rusqlite::Statement<'_>,
    index: usize,
    column: &dyn Array,
    row: usize,
) -> Result<(), NativeError> {
    let bound = if column.is_null(row) {
        insert.raw_bind_parameter(index, rusqlite::types::Null)
    } else {
        match column.data_type() {
            DataType::Boolean => insert.raw_bind_parameter(index, column.as_boolean().value(row)),
            DataType::Int8 => {
                insert.raw_bind_parameter(index, column.as_primitive::<Int8Type>().value(row))
            }
            DataType::Int16 => {
                insert.raw_bind_parameter(index, column.as_primitive::<Int16Type>().value(row))
            }
            DataType::Int32 => {
                insert.raw_bind_parameter(index, column.as_primitive::<Int32Type>().value(row))
            }
            DataType::Int64 => {
                insert.raw_bind_parameter(index, column.as_primitive::<Int64Type>().value(row))
            }
            DataType::UInt8 => {
                insert.raw_bind_parameter(index, column.as_primitive::<UInt8Type>().value(row))
            }
            DataType::UInt16 => {
                insert.raw_bind_parameter(index, column.as_primitive::<UInt16Type>().value(row))
            }
            DataType::UInt32 => {
                insert.raw_bind_parameter(index, column.as_primitive::<UInt32Type>().value(row))
            }
            DataType::Float32 => insert.raw_bind_parameter(
                index,
                f64::from(column.as_primitive::<Float32Type>().value(row)),
            ),
            DataType::Float64 => {
                insert.raw_bind_parameter(index, column.as_primitive::<Float64Type>().value(row))
            }
            DataType::Utf8 => {
                insert.raw_bind_parameter(index, column.as_string::<i32>().value(row))
            }
            DataType::LargeUtf8 => {
                insert.raw_bind_parameter(index, column.as_string::<i64>().value(row))
            }
            DataType::Utf8View => {
                insert.raw_bind_parameter(index, column.as_string_view().value(row))
            }
            DataType::Binary => {
                insert.raw_bind_parameter(index, column.as_binary::<i32>().value(row))
            }
            DataType::LargeBinary => {
                insert.raw_bind_parameter(index, column.as_binary::<i64>().value(row))
            }
            DataType::BinaryView => {
                insert.raw_bind_parameter(index, column.as_binary_view().value(row))
            }
            DataType::Date32 => {
                let days = column
                    .as_primitive::<arrow::datatypes::Date32Type>()
                    .value(row);
                let date = arrow::temporal_conversions::date32_to_datetime(days)
                    .ok_or_else(|| NativeError::Input(format!("day {days} is not a date")))?;
                insert.raw_bind_parameter(index, date.format("%Y-%m-%d").to_string())
            }
            other => {
                return Err(NativeError::Declined(format!(
                    "a {other} column in a GeoPackage"
                )));
            }
        }
    };
    bound.map_err(|e| NativeError::Arrow(format!("binding a value: {e}")))
}

/// What [`write_geopackage`] needs of a layer, checked before the file is created: the
/// attribute columns (position, name, GeoPackage type), the geometry column and the `srs_id`.
struct Plan {
    geometry: usize,
    srs: i32,
    attributes: Vec<(usize, String, &'static str)>,
}

fn plan_for(layer: &Layer, crs: Option<&str>) -> Result<Plan, NativeError> {
    let declined = |what: String| NativeError::Declined(format!("{what} in a GeoPackage"));
    let geometry = layer.geometry_index()?;
    let srs = srs_id(crs).ok_or_else(|| declined(format!("the CRS {}", crs.unwrap_or(""))))?;
    let mut attributes = Vec::new();
    for (index, field) in layer.schema.fields().iter().enumerate() {
        if index == geometry {
            continue;
        }
        if ["fid", "geom"].contains(&field.name().to_ascii_lowercase().as_str()) {
            return Err(declined(format!("an attribute named {}", field.name())));
        }
        let kind = column_type(field.data_type())
            .ok_or_else(|| declined(format!("a {} column", field.data_type())))?;
        attributes.push((index, field.name().clone(), kind));
    }
    Ok(Plan {
        geometry,
        srs,
        attributes,
    })
}

/// A batch's geometries as GeoPackage blobs (`None`: NULL), their base types and envelopes;
/// declines Z or M ordinates.
type Encoded = (Option<Vec<u8>>, Option<u32>, Option<[f64; 4]>);

fn encode_geometries(
    batch: &RecordBatch,
    geometry: usize,
    srs: i32,
) -> Result<Vec<Encoded>, NativeError> {
    let values = Wkb::of(batch, geometry)?;
    (0..values.len())
        .map(|row| {
            let Some(value) = values.get(row) else {
                return Ok((None, None, None));
            };
            let bad = |e: wkb::WkbError| NativeError::Geometry {
                row,
                reason: e.to_string(),
            };
            let (base, z_or_m) = wkb::base_type(value).map_err(bad)?;
            if z_or_m {
                return Err(NativeError::Declined(
                    "Z or M ordinates in a GeoPackage".into(),
                ));
            }
            let envelope = wkb::envelope(value).map_err(bad)?;
            Ok((
                Some(geometry_blob(value, srs, base, envelope)),
                Some(base),
                envelope,
            ))
        })
        .collect()
}

/// Writes `layer` to a new GeoPackage at `path` as the feature table `table` (geometry column
/// `geom`, an integer `fid` key, the R-tree index GDAL maintains) in `crs`. Declines, before
/// creating the file, what [`plan_for`] cannot declare.
pub fn write_geopackage(
    layer: &Layer,
    path: &Path,
    table: &str,
    crs: Option<&str>,
) -> Result<(), NativeError> {
    let plan = plan_for(layer, crs)?;
    let encoded: Vec<Vec<Encoded>> = {
        use rayon::prelude::*;
        layer
            .batches
            .par_iter()
            .map(|batch| encode_geometries(batch, plan.geometry, plan.srs))
            .collect::<Result<_, _>>()?
    };
    let failed = |e: rusqlite::Error| NativeError::File {
        path: path.display().to_string(),
        reason: e.to_string(),
    };
    let _ = std::fs::remove_file(path);
    // One connection, one thread: no locking between SQLite's calls.
    let mut connection = Connection::open_with_flags(
        path,
        rusqlite::OpenFlags::SQLITE_OPEN_READ_WRITE
            | rusqlite::OpenFlags::SQLITE_OPEN_CREATE
            | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(failed)?;
    connection
        .execute_batch(&format!(
            "PRAGMA application_id = {APPLICATION_ID}; PRAGMA user_version = {USER_VERSION};
             PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF;"
        ))
        .map_err(failed)?;
    let transaction = connection.transaction().map_err(failed)?;
    transaction.execute_batch(SCHEMA).map_err(failed)?;
    for (name, id, organization, code, definition, description) in REQUIRED_SRS {
        transaction
            .execute(
                "INSERT INTO gpkg_spatial_ref_sys VALUES (?, ?, ?, ?, ?, ?)",
                params![name, id, organization, code, definition, description],
            )
            .map_err(failed)?;
    }
    let t = quoted(table);
    let rtree = quoted(&format!("rtree_{table}_geom"));
    let geometry_type = geometry_type_name(encoded.iter().flatten().filter_map(|e| e.1));
    let mut columns = vec![
        "\"fid\" INTEGER PRIMARY KEY AUTOINCREMENT NOT NULL".to_owned(),
        format!("\"geom\" {geometry_type}"),
    ];
    columns.extend(
        plan.attributes
            .iter()
            .map(|(_, name, kind)| format!("{} {kind}", quoted(name))),
    );
    transaction
        .execute_batch(&format!(
            "CREATE TABLE {t} ({});
             CREATE VIRTUAL TABLE {rtree} USING rtree(\"id\", \"minx\", \"maxx\", \"miny\", \"maxy\");",
            columns.join(", ")
        ))
        .map_err(failed)?;
    let mut bounds: Option<[f64; 4]> = None;
    let mut envelopes: Vec<(i64, [f64; 4])> = Vec::new();
    {
        let placeholders = vec!["?"; plan.attributes.len() + 2].join(", ");
        let mut insert = transaction
            .prepare(&format!("INSERT INTO {t} VALUES ({placeholders})"))
            .map_err(failed)?;
        let mut fid = 0i64;
        for (batch, geometries) in layer.batches.iter().zip(encoded) {
            for (row, (blob, _, envelope)) in geometries.into_iter().enumerate() {
                fid += 1;
                insert.raw_bind_parameter(1, fid).map_err(failed)?;
                match &blob {
                    Some(blob) => insert.raw_bind_parameter(2, blob.as_slice()),
                    None => insert.raw_bind_parameter(2, rusqlite::types::Null),
                }
                .map_err(failed)?;
                for (k, (position, _, _)) in plan.attributes.iter().enumerate() {
                    bind_cell(&mut insert, k + 3, batch.column(*position).as_ref(), row)?;
                }
                insert.raw_execute().map_err(failed)?;
                if let Some([min_x, min_y, max_x, max_y]) = envelope {
                    envelopes.push((fid, [min_x, min_y, max_x, max_y]));
                    bounds = Some(bounds.map_or([min_x, min_y, max_x, max_y], |b| {
                        [
                            b[0].min(min_x),
                            b[1].min(min_y),
                            b[2].max(max_x),
                            b[3].max(max_y),
                        ]
                    }));
                }
            }
        }
    }
    super::rtree::fill(&transaction, &format!("rtree_{table}_geom"), &envelopes).map_err(failed)?;
    let [min_x, min_y, max_x, max_y] = bounds.map_or([None; 4], |b| b.map(Some));
    transaction
        .execute(
            "INSERT INTO gpkg_contents (table_name, data_type, identifier, min_x, min_y, max_x, max_y, srs_id)
             VALUES (?, 'features', ?, ?, ?, ?, ?, ?)",
            params![table, table, min_x, min_y, max_x, max_y, plan.srs],
        )
        .map_err(failed)?;
    transaction
        .execute(
            "INSERT INTO gpkg_geometry_columns VALUES (?, 'geom', ?, ?, 0, 0)",
            params![table, geometry_type, plan.srs],
        )
        .map_err(failed)?;
    transaction
        .execute(
            "INSERT INTO gpkg_extensions VALUES (?, 'geom', 'gpkg_rtree_index',
             'http://www.geopackage.org/spec120/#extension_rtree', 'write-only')",
            params![table],
        )
        .map_err(failed)?;
    // GDAL's feature count: without it, GDAL 3.8's threaded Arrow reader (DuckDB's ST_Read)
    // can hand out a batch while still filling it (GDAL bug #12934).
    transaction
        .execute(
            "INSERT INTO gpkg_ogr_contents VALUES (?, ?)",
            params![table, i64::try_from(layer.num_rows()).unwrap_or(i64::MAX)],
        )
        .map_err(failed)?;
    transaction
        .execute_batch(&rtree_triggers(&t, &rtree, table))
        .map_err(failed)?;
    transaction
        .execute_batch(&count_triggers(&t, table))
        .map_err(failed)?;
    transaction.commit().map_err(failed)?;
    Ok(())
}

/// GDAL's triggers that keep `gpkg_ogr_contents`' count in step with later edits.
fn count_triggers(t: &str, table: &str) -> String {
    let literal = format!("'{}'", table.replace('\'', "''"));
    let name = |suffix: &str| quoted(&format!("trigger_{suffix}_feature_count_{table}"));
    format!(
        "CREATE TRIGGER {insert} AFTER INSERT ON {t}
           BEGIN UPDATE gpkg_ogr_contents SET feature_count = feature_count + 1
                 WHERE lower(table_name) = lower({literal}); END;
         CREATE TRIGGER {delete} AFTER DELETE ON {t}
           BEGIN UPDATE gpkg_ogr_contents SET feature_count = feature_count - 1
                 WHERE lower(table_name) = lower({literal}); END;",
        insert = name("insert"),
        delete = name("delete"),
    )
}

/// The triggers of the R-tree extension that keep the index in step with later edits (by
/// GDAL, QGIS or any GeoPackage-aware writer: they call its `ST_` functions), made once the
/// rows are in.
fn rtree_triggers(t: &str, rtree: &str, table: &str) -> String {
    let name = |suffix: &str| quoted(&format!("rtree_{table}_geom_{suffix}"));
    let values = "(NEW.\"fid\", ST_MinX(NEW.\"geom\"), ST_MaxX(NEW.\"geom\"), ST_MinY(NEW.\"geom\"), ST_MaxY(NEW.\"geom\"))";
    let present =
        |row: &str| format!("({row}.\"geom\" NOTNULL AND NOT ST_IsEmpty({row}.\"geom\"))");
    let absent = |row: &str| format!("({row}.\"geom\" ISNULL OR ST_IsEmpty({row}.\"geom\"))");
    format!(
        "CREATE TRIGGER {insert} AFTER INSERT ON {t} WHEN {new_present}
           BEGIN INSERT OR REPLACE INTO {rtree} VALUES {values}; END;
         CREATE TRIGGER {update1} AFTER UPDATE OF \"geom\" ON {t}
           WHEN OLD.\"fid\" = NEW.\"fid\" AND {new_present}
           BEGIN INSERT OR REPLACE INTO {rtree} VALUES {values}; END;
         CREATE TRIGGER {update2} AFTER UPDATE OF \"geom\" ON {t}
           WHEN OLD.\"fid\" = NEW.\"fid\" AND {new_absent}
           BEGIN DELETE FROM {rtree} WHERE id = OLD.\"fid\"; END;
         CREATE TRIGGER {update3} AFTER UPDATE ON {t}
           WHEN OLD.\"fid\" != NEW.\"fid\" AND {new_present}
           BEGIN DELETE FROM {rtree} WHERE id = OLD.\"fid\";
                 INSERT OR REPLACE INTO {rtree} VALUES {values}; END;
         CREATE TRIGGER {update4} AFTER UPDATE ON {t}
           WHEN OLD.\"fid\" != NEW.\"fid\" AND {new_absent}
           BEGIN DELETE FROM {rtree} WHERE id IN (OLD.\"fid\", NEW.\"fid\"); END;
         CREATE TRIGGER {delete} AFTER DELETE ON {t} WHEN OLD.\"geom\" NOT NULL
           BEGIN DELETE FROM {rtree} WHERE id = OLD.\"fid\"; END;",
        insert = name("insert"),
        update1 = name("update1"),
        update2 = name("update2"),
        update3 = name("update3"),
        update4 = name("update4"),
        delete = name("delete"),
        new_present = present("NEW"),
        new_absent = absent("NEW"),
    )
}
