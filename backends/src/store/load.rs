//! Reading spatial files into layer tables: what GDAL says a file holds, `CREATE TABLE AS`
//! from `ST_Read`, the geometry column named `geom`, and in PostgreSQL the SRID, key and index.

use duckdb::Connection;
use geomill_planner::sql::quote::{ident, string};
use serde::Deserialize;

use super::location::{PG_LAYER_SCHEMA, STORE_ALIAS, StoreLocation};
use super::records::{LayerRecord, Reader, RejectedFile, SourceFile};
use crate::BackendError;
use crate::duckdb::gdal_read;
use crate::duckdb::query_error;

/// What GDAL says a file holds.
#[derive(Debug, Clone, Deserialize)]
pub(super) struct MetaLayer {
    pub(super) name: String,
    #[serde(default)]
    geometry_fields: Vec<MetaGeometryField>,
}

#[derive(Debug, Clone, Deserialize)]
struct MetaGeometryField {
    #[serde(rename = "type", default)]
    kind: Option<String>,
    #[serde(default)]
    crs: Option<MetaCrs>,
}

#[derive(Debug, Clone, Deserialize)]
struct MetaCrs {
    #[serde(default)]
    auth_name: Option<String>,
    #[serde(default)]
    auth_code: Option<String>,
}

/// The CRS DuckDB carries in a geometry type: `GEOMETRY('EPSG:2263')` → `EPSG:2263`.
pub(super) fn crs_of_type(data_type: &str) -> Option<String> {
    let inner = data_type.split_once("('")?.1.split_once("')")?.0;
    inner.starts_with("EPSG:").then(|| inner.to_owned())
}

pub(super) fn format_label(driver: &str) -> String {
    match driver {
        "ESRI Shapefile" => "SHP".to_owned(),
        "FlatGeobuf" => "FGB".to_owned(),
        "LIBKML" => "KML".to_owned(),
        other => other.to_uppercase(),
    }
}

fn epsg(crs: Option<&MetaCrs>) -> Option<String> {
    let crs = crs?;
    match (crs.auth_name.as_deref(), crs.auth_code.as_deref()) {
        (Some(name), Some(code)) if !code.is_empty() => {
            Some(format!("{}:{code}", name.to_uppercase()))
        }
        _ => None,
    }
}

/// The read of a layer (the first when `layer` is `None`) with the source's options: through
/// the allow-list of GDAL drivers, or DuckDB's Parquet reader.
fn read_call(source: &SourceFile, layer: Option<&str>) -> String {
    if source.reader.is_parquet() {
        if source.parts.is_empty() {
            return format!("read_parquet({})", string(&source.gdal_path));
        }
        let files: Vec<String> = std::iter::once(&source.gdal_path)
            .chain(&source.parts)
            .map(|path| string(path))
            .collect();
        return format!("read_parquet([{}])", files.join(", "));
    }
    gdal_read::st_read(&source.gdal_path, layer, &source.open_options)
}

/// The driver and layers of a file GDAL (or the Parquet reader) can open; `Err` names why not.
pub(super) fn inspect(
    connection: &Connection,
    source: &SourceFile,
    name: &str,
) -> Result<(String, Vec<MetaLayer>), RejectedFile> {
    for path in std::iter::once(&source.gdal_path).chain(&source.parts) {
        if let Some(reason) = gdal_read::refused_path(path) {
            return Err(RejectedFile(format!("{name} is not read: {reason}")));
        }
    }
    // ST_Read_Meta crashes the process on files GDAL cannot open (spatial 1.5.5), while
    // ST_Read fails cleanly: only a file that passes this probe is inspected further. The
    // probe opens it through the allow-list of drivers: a file no allowed driver reads stops here.
    let probe = format!("SELECT * FROM {} LIMIT 0", read_call(source, None));
    if let Err(error) = connection.execute_batch(&probe) {
        // The reason without server paths: the client knows its file by name.
        let reason =
            without_server_paths(&error.to_string().replace(&source.gdal_path, name), source);
        let reason = reason.lines().next().unwrap_or_default();
        return Err(RejectedFile(format!(
            "{name} is not a spatial file geomill reads ({}; {reason})",
            gdal_read::READ_FORMATS
        )));
    }
    let (driver, layers) = if source.reader.is_parquet() {
        let mut stem = std::path::Path::new(&source.gdal_path)
            .file_stem()
            .map_or_else(|| "layer".to_owned(), |s| s.to_string_lossy().into_owned());
        if !source.parts.is_empty() {
            stem = layer_of_parts(&stem);
        }
        (
            "PARQUET".to_owned(),
            vec![MetaLayer {
                name: stem,
                geometry_fields: Vec::new(),
            }],
        )
    } else {
        metadata(connection, source, name)?
    };
    if layers.is_empty() {
        return Err(RejectedFile(format!("{name} has no layers")));
    }
    Ok((driver, layers))
}

/// `text` with each of the source's files named by its file name alone: a client knows its
/// files by name, and the server's folders are not its business.
fn without_server_paths(text: &str, source: &SourceFile) -> String {
    let mut text = text.to_owned();
    for path in std::iter::once(&source.gdal_path).chain(&source.parts) {
        let file = std::path::Path::new(path).file_name().unwrap_or_default();
        text = text.replace(path.as_str(), &file.to_string_lossy());
    }
    text
}

/// The layer a partitioned file's first part names: its stem without the part number
/// (`points-00` → `points`, `part_0001` → `part`), `layer` when nothing else is left.
fn layer_of_parts(stem: &str) -> String {
    let name = stem
        .trim_end_matches(|c: char| c.is_ascii_digit())
        .trim_end_matches(['-', '_', '.']);
    if name.is_empty() {
        "layer".to_owned()
    } else {
        name.to_owned()
    }
}

/// The driver and layers GDAL describes, for a file the allow-listed probe opened.
///
/// `ST_Read_Meta` takes no allow-list (spatial 1.5.5): GDAL tries every driver in registration
/// order. The allowed drivers come before every driver that follows references but OGR_VRT, so
/// once an allowed driver opened the file, only a file OGR_VRT identifies (by
/// `<OGRVRTDataSource` in its first bytes) could be taken by another: such a file is refused
/// before the call, and a driver off the list in the answer refuses the file too.
fn metadata(
    connection: &Connection,
    source: &SourceFile,
    name: &str,
) -> Result<(String, Vec<MetaLayer>), RejectedFile> {
    let plain = source
        .gdal_path
        .strip_prefix("/vsizip/")
        .unwrap_or(&source.gdal_path);
    if let Ok(Some(root)) = gdal_read::indirection_in_file(std::path::Path::new(plain)) {
        return Err(RejectedFile(format!(
            "{name} holds a GDAL description of other sources ({root}): upload the data itself"
        )));
    }
    let meta_sql = format!(
        "SELECT driver_short_name, to_json(layers) FROM ST_Read_Meta({})",
        string(&source.gdal_path)
    );
    let meta: Result<(String, String), _> =
        connection.query_row(&meta_sql, [], |r| Ok((r.get(0)?, r.get(1)?)));
    let Ok((driver, layers_json)) = meta else {
        return Err(RejectedFile(format!(
            "{name} is not a spatial file GDAL can read"
        )));
    };
    if !gdal_read::ALLOWED_DRIVERS.contains(&driver.as_str()) {
        return Err(RejectedFile(format!(
            "{name} opens as GDAL's {driver}, not a format geomill reads ({})",
            gdal_read::READ_FORMATS
        )));
    }
    let layers: Vec<MetaLayer> = serde_json::from_str(&layers_json).unwrap_or_default();
    Ok((driver, layers))
}

/// `CREATE TABLE table AS` the layer. A DBF without a code page whose bytes are not UTF-8 is
/// read again as Latin-1 (GDAL's reading of Shapefiles that declare no encoding).
fn create_layer_table(
    connection: &Connection,
    table: &str,
    source: &SourceFile,
    layer: &str,
) -> Result<(), duckdb::Error> {
    let create = if source.reader == Reader::ParquetInPlace {
        in_place_view(connection, table, source)?
    } else {
        format!(
            "CREATE TABLE {table} AS SELECT * FROM {}",
            read_call(source, Some(layer))
        )
    };
    connection.execute_batch(&create)
}

/// `CREATE VIEW table AS` the Parquet file, its first geometry column read as `geom` (a view's
/// columns cannot be renamed or dropped afterwards, as a table's are below).
fn in_place_view(
    connection: &Connection,
    table: &str,
    source: &SourceFile,
) -> Result<String, duckdb::Error> {
    let read = read_call(source, None);
    let mut statement = connection.prepare(&format!("DESCRIBE SELECT * FROM {read}"))?;
    let columns: Vec<(String, String)> = statement
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<Result<_, _>>()?;
    let geometry = columns
        .iter()
        .find(|(_, kind)| kind.starts_with("GEOMETRY"))
        .map(|(name, _)| name.clone());
    let select: Vec<String> = columns
        .iter()
        .filter(|(name, _)| name != "OGC_FID")
        .map(|(name, _)| match &geometry {
            Some(g) if g == name && name != "geom" => format!("{} AS geom", ident(name)),
            _ => ident(name),
        })
        .collect();
    let mut create = format!(
        "CREATE VIEW {table} AS SELECT {} FROM {read};",
        select.join(", ")
    );
    if let Some(geometry) = geometry {
        let file = crate::duckdb::InPlaceParquet {
            geoparquet: std::path::PathBuf::from(&source.gdal_path),
            geometry,
            point_cloud: source.point_cloud.clone(),
        };
        let comment = serde_json::to_string(&file).unwrap_or_default();
        create.push_str(&format!("COMMENT ON VIEW {table} IS {};", string(&comment)));
    }
    Ok(create)
}

/// The type of the source's geometry column as DuckDB's reader gives it (with its CRS, as
/// `GEOMETRY('EPSG:4326')` for GeoParquet), read before the table is made: a table in
/// PostgreSQL (persistent mode) shows DuckDB a plain `GEOMETRY`.
fn source_geometry_type(connection: &Connection, source: &SourceFile, layer: &str) -> String {
    let sql = format!(
        "SELECT column_type FROM (DESCRIBE SELECT * FROM {}) WHERE column_type LIKE 'GEOMETRY%' LIMIT 1",
        read_call(source, Some(layer))
    );
    connection
        .query_row(&sql, [], |r| r.get::<_, String>(0))
        .unwrap_or_default()
}

/// The geometry type of a layer GDAL did not describe (GeoParquet), named as GDAL names types
/// (`Point`, `Multi Polygon`; `Unknown (any)` for several), read from its rows.
fn geometry_type_of_rows(
    connection: &Connection,
    table: &str,
) -> Result<Option<String>, BackendError> {
    let sql = format!(
        "SELECT DISTINCT ST_GeometryType(geom)::VARCHAR FROM {table} WHERE geom IS NOT NULL LIMIT 2"
    );
    let mut statement = connection.prepare(&sql).map_err(query_error(&sql))?;
    let types: Vec<String> = statement
        .query_map([], |r| r.get::<_, String>(0))
        .map_err(query_error(&sql))?
        .collect::<Result<_, _>>()
        .map_err(query_error(&sql))?;
    Ok(match types.as_slice() {
        [] => None,
        [one] => Some(gdal_type_name(one)),
        _ => Some("Unknown (any)".to_owned()),
    })
}

/// The geometry type a GeoParquet file declares for its primary column (`geometry_types` of
/// its `geo` metadata), named as [`geometry_type_of_rows`] names it; `None` when it declares
/// none. For a layer read in place, where reading the rows means reading the whole file.
fn geometry_type_of_metadata(connection: &Connection, source: &SourceFile) -> Option<String> {
    let sql = format!(
        "SELECT decode(value) FROM parquet_kv_metadata({}) WHERE decode(key) = 'geo' LIMIT 1",
        string(&source.gdal_path)
    );
    let text: String = connection.query_row(&sql, [], |r| r.get(0)).ok()?;
    let geo: serde_json::Value = serde_json::from_str(&text).ok()?;
    let primary = geo.get("primary_column")?.as_str()?;
    let declared = geo
        .get("columns")?
        .get(primary)?
        .get("geometry_types")?
        .as_array()?;
    let types: std::collections::BTreeSet<String> = declared
        .iter()
        .filter_map(|t| t.as_str())
        .map(|t| {
            let planar = t
                .trim_end_matches(" ZM")
                .trim_end_matches(" Z")
                .trim_end_matches(" M");
            planar.to_ascii_uppercase()
        })
        .collect();
    let mut types = types.into_iter();
    match (types.next(), types.next()) {
        (None, _) => None,
        (Some(one), None) => Some(gdal_type_name(&one)),
        _ => Some("Unknown (any)".to_owned()),
    }
}

/// `MULTIPOLYGON` → `Multi Polygon`, as GDAL writes geometry types.
fn gdal_type_name(upper: &str) -> String {
    let (multi, base) = match upper.strip_prefix("MULTI") {
        Some(rest) => ("Multi ", rest),
        None => ("", upper),
    };
    let base = match base {
        "POINT" => "Point",
        "LINESTRING" => "Line String",
        "POLYGON" => "Polygon",
        "GEOMETRYCOLLECTION" => "Geometry Collection",
        _ => return "Unknown (any)".to_owned(),
    };
    format!("{multi}{base}")
}

/// Loads each layer into `layers.l_<id>_<n>` and records it; `Ok(Err)` for a file problem.
pub(super) fn load_layers(
    connection: &Connection,
    store: &StoreLocation,
    id: &str,
    source: &SourceFile,
    driver: &str,
    layers: &[MetaLayer],
) -> Result<Result<Vec<LayerRecord>, RejectedFile>, BackendError> {
    // A view over a file lives in DuckDB: a store in PostgreSQL gets a copy.
    let copied;
    let source = match (store, source.reader) {
        (StoreLocation::Postgis { .. }, Reader::ParquetInPlace) => {
            copied = SourceFile {
                reader: Reader::Parquet,
                ..source.clone()
            };
            &copied
        }
        _ => source,
    };
    let mut records = Vec::new();
    let compact: String = id.chars().filter(char::is_ascii_alphanumeric).collect();
    for (position, layer) in layers.iter().enumerate() {
        let table_name = format!("l_{compact}_{position}");
        let table = store.layer(&table_name);
        let source_type = source_geometry_type(connection, source, &layer.name);
        if let Err(error) = create_layer_table(connection, &table, source, &layer.name) {
            return Ok(Err(RejectedFile(format!(
                "layer {} cannot be read: {}",
                layer.name,
                without_server_paths(&error.to_string(), source)
            ))));
        }
        let geometry_column: Option<(String, String)> = connection
            .query_row(
                &format!(
                    "SELECT column_name, data_type FROM duckdb_columns() WHERE {} \
                     AND data_type LIKE 'GEOMETRY%' ORDER BY column_index LIMIT 1",
                    store.layer_columns_filter(&table_name)
                ),
                [],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .ok();
        let geometry_type_name = geometry_column
            .as_ref()
            .map(|(_, ty)| ty.clone())
            .unwrap_or_default();
        match geometry_column.as_ref().map(|(name, _)| name.as_str()) {
            None => {
                return Ok(Err(RejectedFile(format!(
                    "layer {} has no geometry",
                    layer.name
                ))));
            }
            Some("geom") => {}
            Some(other) => {
                // Geometry always travels as `geom` (GML, for one, names it after its element).
                let rename = format!("ALTER TABLE {table} RENAME COLUMN {} TO geom", ident(other));
                connection
                    .execute_batch(&rename)
                    .map_err(query_error(&rename))?;
            }
        }
        // GDAL's feature ids are not attributes (ogrinfo does not list them); written back they
        // would collide with the FID of the file written. Features use their row number.
        // (A view's select list leaves them out already.)
        let fid_columns = match (source.reader, driver) {
            (Reader::ParquetInPlace, _) => "",
            (_, "GPKG") => "\"OGC_FID\", \"fid\"",
            _ => "\"OGC_FID\"",
        };
        let mut drop_fid = String::new();
        for column in fid_columns.split(", ").filter(|c| !c.is_empty()) {
            drop_fid.push_str(&format!(
                "ALTER TABLE {table} DROP COLUMN IF EXISTS {column};\n"
            ));
        }
        connection
            .execute_batch(&drop_fid)
            .map_err(query_error(&drop_fid))?;
        let count_sql = format!("SELECT count(*) FROM {table}");
        let feature_count: i64 = connection
            .query_row(&count_sql, [], |r| r.get(0))
            .map_err(query_error(&count_sql))?;
        let field = layer.geometry_fields.first();
        let geometry_type = match field.and_then(|f| f.kind.clone()) {
            Some(kind) => Some(kind),
            None => match source.reader {
                Reader::ParquetInPlace => geometry_type_of_metadata(connection, source),
                _ => None,
            }
            .map_or_else(
                || geometry_type_of_rows(connection, &table),
                |t| Ok(Some(t)),
            )?,
        };
        let record = LayerRecord {
            name: layer.name.clone(),
            table_name,
            geometry_type,
            feature_count: Some(feature_count),
            crs: epsg(field.and_then(|f| f.crs.as_ref()))
                .or_else(|| crs_of_type(&source_type))
                .or_else(|| crs_of_type(&geometry_type_name)),
        };
        let insert = format!(
            "INSERT INTO {} VALUES (?, ?, ?, ?, ?, ?, ?)",
            store.catalog("layers")
        );
        connection
            .execute(
                &insert,
                duckdb::params![
                    id,
                    i32::try_from(position).unwrap_or(i32::MAX),
                    record.name,
                    record.table_name,
                    record.geometry_type,
                    record.feature_count,
                    record.crs
                ],
            )
            .map_err(query_error(&insert))?;
        if let StoreLocation::Postgis { .. } = store {
            postgis_layer_keys(connection, &record.table_name, record.epsg_code())?;
        }
        records.push(record);
    }
    Ok(Ok(records))
}

/// In PostgreSQL, a layer table gets its SRID on `geom`, a `fid` identity key (the features'
/// ids) and a GiST index, in the transaction that created it.
fn postgis_layer_keys(
    connection: &Connection,
    table_name: &str,
    srid: Option<u32>,
) -> Result<(), BackendError> {
    let table = format!("{PG_LAYER_SCHEMA}.{}", ident(table_name));
    let srid = srid.unwrap_or(0);
    let index = ident(&format!("{table_name}_geom_idx"));
    let remote = format!(
        "{} \
         ALTER TABLE {table} ADD COLUMN fid bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY; \
         CREATE INDEX {index} ON {table} USING gist (geom); ANALYZE {table}",
        crate::duckdb::postgres::typed_geometry_sql(&table, srid)
    );
    let call = format!(
        "CALL postgres_execute('{STORE_ALIAS}', {})",
        string(&remote)
    );
    connection.execute_batch(&call).map_err(query_error(&call))
}

/// After tables changed in PostgreSQL, DuckDB reads their columns afresh (persistent mode).
pub(super) fn refresh_store_schemas(
    connection: &Connection,
    store: &StoreLocation,
) -> Result<(), BackendError> {
    if store.is_postgis() {
        let call = "CALL pg_clear_cache()";
        connection.execute_batch(call).map_err(query_error(call))?;
    }
    Ok(())
}
