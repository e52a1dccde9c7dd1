//! Receiving an upload: the file name reduced to a safe base name, the body streamed to disk
//! under a size limit (text fields and the number of files limited too), and the GDAL path
//! and options that open it.

use std::path::{Path, PathBuf};

use geomill_backends::store::{Reader, SourceFile};
use tokio::io::AsyncWriteExt;

use crate::error::{AppError, ErrorKind};

/// Most files in one upload (a Shapefile and its companions fit many times).
pub const MAX_FILES: usize = 32;
/// Longest text field (`name`) of an upload, in bytes.
pub const MAX_TEXT_FIELD: usize = 1024;

/// The base name of a client-given file name (`../../etc/passwd` → `passwd`, `C:\x.shp` →
/// `x.shp`); `None` when nothing usable is left, the name has control characters or is longer
/// than 255 bytes.
pub fn base_name(name: &str) -> Option<String> {
    let base = name.rsplit(['/', '\\']).next()?.trim();
    let usable = !base.is_empty()
        && base != "."
        && base != ".."
        && base.len() <= 255
        && !base.chars().any(char::is_control);
    usable.then(|| base.to_owned())
}

/// A short text field of a multipart body, refused (400) past [`MAX_TEXT_FIELD`] bytes.
pub async fn text_field<E: std::fmt::Display>(
    mut chunks: impl futures_util::Stream<Item = Result<bytes::Bytes, E>> + Unpin,
    what: &str,
) -> Result<String, AppError> {
    use futures_util::StreamExt;
    let mut text = Vec::new();
    while let Some(chunk) = chunks.next().await {
        let chunk = chunk.map_err(|e| AppError::bad_request(format!("field {what}: {e}")))?;
        text.extend_from_slice(&chunk);
        if text.len() > MAX_TEXT_FIELD {
            return Err(AppError::bad_request(format!(
                "field {what} is longer than {MAX_TEXT_FIELD} bytes"
            )));
        }
    }
    String::from_utf8(text).map_err(|_| AppError::bad_request(format!("field {what} is not UTF-8")))
}

/// Streams `chunks` into `path`, refusing to let the upload (`already` bytes stored before this
/// file) pass `limit` bytes: 413, and the caller removes the partial files with their folder. A
/// chunk that fails is a 400 naming `what` was interrupted.
pub async fn save<E: std::fmt::Display>(
    mut chunks: impl futures_util::Stream<Item = Result<bytes::Bytes, E>> + Unpin,
    path: &Path,
    limit: u64,
    already: u64,
    what: &str,
) -> Result<u64, AppError> {
    use futures_util::StreamExt;
    let mut file = tokio::fs::File::create(path)
        .await
        .map_err(|e| AppError::internal(&e))?;
    let mut written: u64 = already;
    while let Some(chunk) = chunks.next().await {
        let chunk =
            chunk.map_err(|e| AppError::bad_request(format!("the {what} was interrupted: {e}")))?;
        written += chunk.len() as u64;
        if written > limit {
            return Err(AppError::new(
                ErrorKind::TooLarge,
                "payload_too_large",
                format!(
                    "the file is larger than the limit of {} MiB (GEOMILL_MAX_UPLOAD_MB)",
                    limit / (1024 * 1024)
                ),
            ));
        }
        file.write_all(&chunk)
            .await
            .map_err(|e| AppError::internal(&e))?;
    }
    file.flush().await.map_err(|e| AppError::internal(&e))?;
    Ok(written)
}

/// How a stored file is read: zip archives through GDAL's `/vsizip/`, CSV with the names of WKT
/// and coordinate columns to look for, (Geo)Parquet by DuckDB itself.
pub fn source_for(path: &Path) -> SourceFile {
    let text = path.display().to_string();
    let extension = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    match extension.as_deref() {
        Some("zip") => SourceFile {
            gdal_path: format!("/vsizip/{text}"),
            open_options: Vec::new(),
            reader: Reader::Gdal,
            parts: Vec::new(),
            format: None,
            point_cloud: None,
        },
        Some("csv") => SourceFile {
            gdal_path: text,
            open_options: vec![
                "GEOM_POSSIBLE_NAMES=WKT,wkt,geometry,geom,the_geom".into(),
                "X_POSSIBLE_NAMES=lon,longitude,lng,x".into(),
                "Y_POSSIBLE_NAMES=lat,latitude,y".into(),
                "KEEP_GEOM_COLUMNS=NO".into(),
            ],
            reader: Reader::Gdal,
            parts: Vec::new(),
            format: None,
            point_cloud: None,
        },
        // GML names its schema by URL; GDAL must not fetch it (request forgery).
        Some("gml") => SourceFile {
            gdal_path: text,
            open_options: vec!["DOWNLOAD_SCHEMA=NO".into()],
            reader: Reader::Gdal,
            parts: Vec::new(),
            format: None,
            point_cloud: None,
        },
        Some("parquet" | "geoparquet") => SourceFile {
            gdal_path: text,
            open_options: Vec::new(),
            reader: Reader::Parquet,
            parts: Vec::new(),
            format: None,
            point_cloud: None,
        },
        _ => SourceFile {
            gdal_path: text,
            open_options: Vec::new(),
            reader: Reader::Gdal,
            parts: Vec::new(),
            format: None,
            point_cloud: None,
        },
    }
}

/// The parts of one Parquet layer sent together (`part-00.parquet`, `part-01.parquet`, …, as
/// Spark, Sedona or DuckDB write a partitioned GeoParquet layer): two or more files, every one
/// (Geo)Parquet; in name order. `None` for any other upload.
pub fn parquet_parts(files: &[(String, PathBuf)]) -> Option<Vec<(String, PathBuf)>> {
    let is_parquet = |name: &str| {
        let name = name.to_ascii_lowercase();
        name.ends_with(".parquet") || name.ends_with(".geoparquet")
    };
    if files.len() < 2 || !files.iter().all(|(name, _)| is_parquet(name)) {
        return None;
    }
    let mut parts = files.to_vec();
    parts.sort();
    Some(parts)
}

/// The file GDAL opens among those sent together: a Shapefile's `.shp` (its `.dbf`, `.shx`,
/// `.prj` beside it), else the first.
pub fn main_file(mut files: Vec<(String, PathBuf)>) -> Option<(String, PathBuf)> {
    let shp = files
        .iter()
        .position(|(name, _)| name.to_ascii_lowercase().ends_with(".shp"));
    match shp {
        Some(index) => Some(files.swap_remove(index)),
        None if files.is_empty() => None,
        None => Some(files.swap_remove(0)),
    }
}

/// Bytes already stored in `folder` (the size limit covers all files of one upload).
pub async fn total_size(folder: &Path) -> u64 {
    let mut total = 0;
    if let Ok(mut entries) = tokio::fs::read_dir(folder).await {
        while let Ok(Some(entry)) = entries.next_entry().await {
            total += entry.metadata().await.map(|m| m.len()).unwrap_or(0);
        }
    }
    total
}

/// The folder an upload is kept in.
pub fn folder(uploads: &Path, id: &str) -> PathBuf {
    uploads.join(id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_names_are_reduced_to_their_base_name() {
        assert_eq!(base_name("../../etc/passwd").as_deref(), Some("passwd"));
        assert_eq!(base_name("C:\\\\data\\\\x.gpkg").as_deref(), Some("x.gpkg"));
        assert_eq!(base_name("dir/.."), None);
        assert_eq!(base_name(""), None);
        assert_eq!(base_name("a/b/"), None);
        assert_eq!(base_name("x\nname.csv"), None);
        assert_eq!(base_name(&"x".repeat(256)), None);
        assert_eq!(base_name("/etc/cron.d/job").as_deref(), Some("job"));
    }
}
