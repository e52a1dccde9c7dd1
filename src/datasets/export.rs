//! Exporting a stored layer to a file: written by the embedded engine into a scratch folder of
//! the data directory, zipped for Shapefiles, read back, and the folder removed.

use std::io::Write;
use std::path::{Path, PathBuf};

use geomill_backends::store::LayerRecord;
use geomill_planner::plan::operator::ExportFormat;

use crate::error::AppError;
use crate::state::AppState;

/// A file ready to send.
pub struct ExportedFile {
    pub file_name: String,
    pub content_type: &'static str,
    pub bytes: Vec<u8>,
}

fn extension(format: ExportFormat) -> &'static str {
    match format {
        ExportFormat::Gpkg => "gpkg",
        ExportFormat::Geojson => "geojson",
        ExportFormat::Fgb => "fgb",
        ExportFormat::Parquet => "parquet",
        ExportFormat::Shp => "zip",
        ExportFormat::Csv => "csv",
        ExportFormat::Kml => "kml",
        ExportFormat::Gml => "gml",
        ExportFormat::Las => "las",
        ExportFormat::Laz => "laz",
    }
}

fn content_type(format: ExportFormat) -> &'static str {
    match format {
        ExportFormat::Gpkg => "application/geopackage+sqlite3",
        ExportFormat::Geojson => "application/geo+json",
        ExportFormat::Fgb => "application/flatgeobuf",
        ExportFormat::Parquet => "application/vnd.apache.parquet",
        ExportFormat::Shp => "application/zip",
        ExportFormat::Csv => "text/csv",
        ExportFormat::Kml => "application/vnd.google-earth.kml+xml",
        ExportFormat::Gml => "application/gml+xml",
        ExportFormat::Las => "application/vnd.las",
        ExportFormat::Laz => "application/vnd.laszip",
    }
}

/// Zips every file of `folder` (flat) into one archive.
fn zip_folder(folder: &Path) -> std::io::Result<Vec<u8>> {
    let mut archive = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let options = zip::write::SimpleFileOptions::default();
    let mut entries: Vec<PathBuf> = std::fs::read_dir(folder)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    entries.sort();
    for path in entries {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        archive
            .start_file(name, options)
            .map_err(std::io::Error::other)?;
        archive.write_all(&std::fs::read(&path)?)?;
    }
    Ok(archive
        .finish()
        .map_err(std::io::Error::other)?
        .into_inner())
}

/// A name made safe for a file name: its extension dropped, anything but letters, digits,
/// `-` and `_` replaced by `_`.
pub fn file_stem(name: &str) -> String {
    name.rsplit_once('.')
        .map_or(name, |(stem, _)| stem)
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// What is exported: a stored layer, or the first layer of a file the server wrote (a job's
/// result).
pub enum ExportSource {
    /// A stored layer, with its style (a GeoPackage carries it in `layer_styles`).
    Layer {
        dataset_id: String,
        layer: LayerRecord,
    },
    File {
        path: String,
        layer_name: String,
    },
}

impl ExportSource {
    fn name(&self) -> &str {
        match self {
            Self::Layer { layer, .. } => &layer.name,
            Self::File { layer_name, .. } => layer_name,
        }
    }
}

/// Writes `source` to `destination` in `format`: by the embedded engine, or for LAS and LAZ as a
/// GeoParquet copy beside it first (the engine's writer, with the CRS) that the native crate's
/// LAS writer then reads point by point.
pub fn write_file(
    store: &geomill_backends::store::Store,
    engine: &geomill_backends::duckdb::EmbeddedEngine,
    source: &ExportSource,
    destination: &str,
    format: ExportFormat,
) -> Result<(), AppError> {
    let write = |destination: &str, format: ExportFormat| match source {
        ExportSource::Layer { layer, .. } => store.export_layer(layer, destination, format),
        ExportSource::File { path, layer_name } => {
            engine.export_file(path, layer_name, destination, format)
        }
    };
    if !matches!(format, ExportFormat::Las | ExportFormat::Laz) {
        return write(destination, format).map_err(AppError::from);
    }
    let parquet = format!("{destination}.parquet");
    write(&parquet, ExportFormat::Parquet).map_err(AppError::from)?;
    let written = geomill_native::pointcloud_write::write_las(
        std::path::Path::new(&parquet),
        "geom",
        std::path::Path::new(destination),
        format == ExportFormat::Laz,
    );
    let _ = std::fs::remove_file(&parquet);
    written
        .map(drop)
        .map_err(|e| AppError::unprocessable(format!("{}: {e}", format.as_str())))
}

/// Writes `source` in `format` and returns the file.
pub async fn export(
    state: &AppState,
    dataset_name: &str,
    source: ExportSource,
    format: ExportFormat,
) -> Result<ExportedFile, AppError> {
    let scratch = state
        .config()
        .data_dir
        .join("tmp")
        .join(uuid::Uuid::new_v4().to_string());
    tokio::fs::create_dir_all(&scratch)
        .await
        .map_err(|e| AppError::internal(&e))?;
    let stem = file_stem(dataset_name);
    let file_name = format!("{stem}_{}.{}", source.name(), extension(format));
    let style = match (&source, format) {
        (ExportSource::Layer { dataset_id, layer }, ExportFormat::Gpkg) => {
            crate::styles::stored::stored_qml(state, dataset_id, layer).await?
        }
        _ => None,
    };
    let (store, engine) = (state.store(), state.embedded());
    let folder = scratch.clone();
    let written = tokio::task::spawn_blocking(move || -> Result<Vec<u8>, AppError> {
        let target = match format {
            ExportFormat::Shp => folder.join("shapefile"),
            _ => folder.join(format!("export.{}", extension(format))),
        };
        let destination = target.display().to_string();
        write_file(&store, &engine, &source, &destination, format)?;
        if let (ExportSource::Layer { layer, .. }, Some(qml)) = (&source, &style) {
            store
                .write_gpkg_style(
                    &destination,
                    &layer.name,
                    "geom",
                    qml,
                    &crate::timestamp::now(),
                )
                .map_err(AppError::from)?;
        }
        match format {
            ExportFormat::Shp => zip_folder(&target),
            _ => std::fs::read(&target),
        }
        .map_err(|e| AppError::internal(&e))
    })
    .await
    .map_err(|e| AppError::internal(&e));
    let _ = tokio::fs::remove_dir_all(&scratch).await;
    let bytes = written??;
    Ok(ExportedFile {
        file_name,
        content_type: content_type(format),
        bytes,
    })
}
