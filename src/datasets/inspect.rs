//! What a received file really is, before any reader opens it: its format sniffed from its
//! first bytes (a known extension the bytes contradict is refused; a file without one gets the
//! extension its bytes call for), GDAL descriptions of other sources (VRT, WFS) refused, and
//! every zip archive checked from its central directory without extracting anything — entry
//! count, declared sizes, compression ratio, entry names — and its entries' first bytes.

use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use geomill_backends::duckdb::gdal_read;

use crate::error::{AppError, ErrorKind};

/// Most entries in one archive.
pub const MAX_ENTRIES: u64 = 10_000;
/// Largest declared uncompressed total of an archive, in multiples of the upload limit.
pub const MAX_EXPANSION: u64 = 20;
/// Largest compression ratio of an entry past [`RATIO_FLOOR`] bytes.
pub const MAX_RATIO: u64 = 500;
const RATIO_FLOOR: u64 = 1 << 20;

/// The formats told apart by their bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Zip,
    Sqlite,
    Parquet,
    FlatGeobuf,
    Shapefile,
    Gzip,
    Tiff,
    Las,
    Json,
    Xml,
    Text,
    Binary,
}

impl Kind {
    fn label(self) -> &'static str {
        match self {
            Self::Zip => "a zip archive",
            Self::Sqlite => "an SQLite database (GeoPackage)",
            Self::Parquet => "a Parquet file",
            Self::FlatGeobuf => "a FlatGeobuf file",
            Self::Shapefile => "a Shapefile .shp/.shx",
            Self::Gzip => "a gzip stream",
            Self::Tiff => "a TIFF image (GeoTIFF raster)",
            Self::Las => "a LAS/LAZ point cloud",
            Self::Json => "JSON text",
            Self::Xml => "XML text",
            Self::Text => "plain text",
            Self::Binary => "binary data of no known format",
        }
    }

    /// The extension a file of this kind needs for its reader to be chosen.
    fn extension(self) -> Option<&'static str> {
        match self {
            Self::Zip => Some("zip"),
            Self::Parquet => Some("parquet"),
            Self::Tiff => Some("tif"),
            Self::Las => Some("las"),
            _ => None,
        }
    }
}

/// The kind of a file from its first bytes.
pub fn sniff(head: &[u8]) -> Kind {
    let starts = |magic: &[u8]| head.starts_with(magic);
    if starts(b"PK\x03\x04") || starts(b"PK\x05\x06") || starts(b"PK\x07\x08") {
        return Kind::Zip;
    }
    if starts(b"SQLite format 3\0") {
        return Kind::Sqlite;
    }
    if starts(b"PAR1") {
        return Kind::Parquet;
    }
    if starts(b"fgb") && head.get(4..7) == Some(b"fgb") {
        return Kind::FlatGeobuf;
    }
    if starts(&[0x00, 0x00, 0x27, 0x0a]) {
        return Kind::Shapefile;
    }
    if starts(&[0x1f, 0x8b]) {
        return Kind::Gzip;
    }
    // TIFF and BigTIFF, little- and big-endian.
    if starts(b"II*\0") || starts(b"MM\0*") || starts(b"II+\0") || starts(b"MM\0+") {
        return Kind::Tiff;
    }
    if starts(b"LASF") {
        return Kind::Las;
    }
    if starts(&[0xff, 0xfe]) || starts(&[0xfe, 0xff]) {
        return Kind::Text; // UTF-16 text
    }
    if head.contains(&0) {
        return Kind::Binary;
    }
    let text = head.strip_prefix(b"\xef\xbb\xbf").unwrap_or(head);
    match text.iter().find(|b| !b.is_ascii_whitespace()) {
        Some(b'{' | b'[' | 0x1e) => Kind::Json,
        Some(b'<') => Kind::Xml,
        _ => Kind::Text,
    }
}

/// The GDAL description of other sources (`<OGRVRTDataSource`, ...) `bytes` hold, if any,
/// whatever their kind (a description padded with NUL bytes still works in GDAL).
pub fn indirection(bytes: &[u8]) -> Option<&'static str> {
    gdal_read::indirection(bytes)
}

fn unsafe_file(shown: &str, root: &str) -> AppError {
    AppError::new(
        ErrorKind::Invalid,
        "unsafe_file",
        format!(
            "{shown} is a GDAL description of other sources ({root}), which could read the server's files or reach its network: upload the data itself"
        ),
    )
}

/// The kinds a file named with `extension` may be, and what the extension promises.
fn expected(extension: &str) -> Option<(&'static [Kind], &'static str)> {
    use Kind::*;
    const TEXT: &[Kind] = &[Json, Xml, Text];
    Some(match extension {
        "zip" | "kmz" => (&[Zip], "a zip archive"),
        "gpkg" | "sqlite" | "mbtiles" => (&[Sqlite], "a GeoPackage or SQLite database"),
        "parquet" | "geoparquet" => (&[Parquet], "a Parquet file"),
        "fgb" => (&[FlatGeobuf], "a FlatGeobuf file"),
        "tif" | "tiff" => (&[Tiff], "a GeoTIFF raster"),
        "las" | "laz" => (&[Las], "a LAS/LAZ point cloud"),
        "shp" | "shx" => (&[Shapefile], "a Shapefile .shp/.shx"),
        "geojson" | "json" | "geojsonl" | "geojsons" | "topojson" => (&[Json], "GeoJSON"),
        "kml" | "gml" | "gpx" | "xml" => (&[Xml], "XML (KML, GML, GPX)"),
        "csv" | "tsv" | "txt" | "prj" | "cpg" | "wkt" => (TEXT, "text"),
        _ => return None,
    })
}

fn unsafe_archive(message: String) -> AppError {
    AppError::new(ErrorKind::Invalid, "unsafe_archive", message)
}

/// Why a zip entry's name is refused: it leaves the archive's folder or is not a plain name.
fn bad_entry_name(name: &str) -> Option<&'static str> {
    let parts: Vec<&str> = name.split(['/', '\\']).collect();
    let drive = name.len() >= 2 && name.as_bytes()[1] == b':';
    if name.starts_with(['/', '\\']) || drive {
        Some("an absolute path")
    } else if parts.contains(&"..") {
        Some("a path leaving the archive (..)")
    } else if name.chars().any(char::is_control) {
        Some("a name with control characters")
    } else {
        None
    }
}

/// The entry count and central directory size an archive declares (zip64 included), read from
/// its end of central directory record before any entry is.
fn declared_entries(file: &mut std::fs::File) -> std::io::Result<Option<u64>> {
    let length = file.metadata()?.len();
    let tail_length = length.min(22 + 65_535);
    file.seek(SeekFrom::Start(length - tail_length))?;
    let mut tail = Vec::new();
    file.take(tail_length).read_to_end(&mut tail)?;
    let Some(at) = tail.windows(4).rposition(|w| w == b"PK\x05\x06") else {
        return Ok(None);
    };
    let u16_at = |i: usize| {
        tail.get(i..i + 2)
            .map(|b| u64::from(u16::from_le_bytes([b[0], b[1]])))
    };
    let entries = u16_at(at + 10).unwrap_or(0);
    if entries != 0xffff {
        return Ok(Some(entries));
    }
    // Zip64: the locator before the record gives the offset of the zip64 record.
    let locator = at.checked_sub(20).and_then(|l| tail.get(l..l + 20));
    let Some(locator) = locator.filter(|l| l.starts_with(b"PK\x06\x07")) else {
        return Ok(Some(entries));
    };
    let mut offset = [0_u8; 8];
    offset.copy_from_slice(&locator[8..16]);
    file.seek(SeekFrom::Start(u64::from_le_bytes(offset)))?;
    let mut record = [0_u8; 40];
    file.read_exact(&mut record)?;
    if !record.starts_with(b"PK\x06\x06") {
        return Ok(Some(entries));
    }
    let mut total = [0_u8; 8];
    total.copy_from_slice(&record[32..40]);
    Ok(Some(u64::from_le_bytes(total)))
}

/// Checks an archive from its central directory: at most [`MAX_ENTRIES`] entries, at most
/// `max_total` bytes declared uncompressed, no entry past [`MAX_RATIO`], no name leaving the
/// archive, no symbolic link. `shown` is the file's name in messages.
pub fn check_archive(path: &Path, shown: &str, max_total: u64) -> Result<(), AppError> {
    let mut file = std::fs::File::open(path).map_err(|e| AppError::internal(&e))?;
    let unreadable = |e: &dyn std::fmt::Display| {
        unsafe_archive(format!("{shown} is not a readable zip archive: {e}"))
    };
    let declared = declared_entries(&mut file).map_err(|e| unreadable(&e))?;
    if declared.is_some_and(|n| n > MAX_ENTRIES) {
        return Err(unsafe_archive(format!(
            "{shown} declares {} entries, more than {MAX_ENTRIES}",
            declared.unwrap_or_default()
        )));
    }
    file.seek(SeekFrom::Start(0))
        .map_err(|e| AppError::internal(&e))?;
    let mut archive = zip::ZipArchive::new(file).map_err(|e| unreadable(&e))?;
    if archive.len() as u64 > MAX_ENTRIES {
        return Err(unsafe_archive(format!(
            "{shown} has {} entries, more than {MAX_ENTRIES}",
            archive.len()
        )));
    }
    let mut total: u64 = 0;
    for index in 0..archive.len() {
        let entry = archive.by_index_raw(index).map_err(|e| unreadable(&e))?;
        let name = String::from_utf8_lossy(entry.name_raw()).into_owned();
        if let Some(reason) = bad_entry_name(&name) {
            return Err(unsafe_archive(format!(
                "entry {name:?} of {shown} is {reason}"
            )));
        }
        if entry.is_symlink() {
            return Err(unsafe_archive(format!(
                "entry {name:?} of {shown} is a symbolic link"
            )));
        }
        let (size, packed) = (entry.size(), entry.compressed_size());
        if size > RATIO_FLOOR && size / packed.max(1) > MAX_RATIO {
            return Err(unsafe_archive(format!(
                "entry {name:?} of {shown} expands {} times (from {packed} to {size} bytes), more than {MAX_RATIO}",
                size / packed.max(1)
            )));
        }
        total = total.saturating_add(size);
        if total > max_total {
            return Err(unsafe_archive(format!(
                "{shown} expands to more than {} MiB, {MAX_EXPANSION} times the upload limit (GEOMILL_MAX_UPLOAD_MB)",
                max_total >> 20
            )));
        }
    }
    // Each entry is checked like a loose file: its first bytes, and their agreement with its
    // name. An archive inside the archive is refused, not opened in turn.
    for index in 0..archive.len() {
        let mut entry = archive.by_index(index).map_err(|e| unreadable(&e))?;
        if entry.is_dir() {
            continue;
        }
        let name = String::from_utf8_lossy(entry.name_raw()).into_owned();
        let mut start = Vec::new();
        (&mut entry)
            .take(gdal_read::INDIRECTION_SCAN)
            .read_to_end(&mut start)
            .map_err(|e| unreadable(&e))?;
        let shown_entry = format!("entry {name:?} of {shown}");
        if let Some(root) = indirection(&start) {
            return Err(unsafe_file(&shown_entry, root));
        }
        let kind = sniff(&start[..start.len().min(8192)]);
        if is_archive(&name, kind) {
            return Err(unsafe_archive(format!(
                "{shown_entry} is an archive inside the archive: nested archives are not opened; upload its files"
            )));
        }
        // macOS puts resource forks (`__MACOSX/._roads.shp`) beside the files; GDAL skips them.
        if !name.starts_with("__MACOSX/") {
            agrees_with_name(&name, kind, &shown_entry)?;
        }
    }
    Ok(())
}

/// Extensions of archives and compressed files.
const ARCHIVE_EXTENSIONS: &[&str] = &[
    "zip", "kmz", "gz", "tgz", "tar", "7z", "rar", "bz2", "xz", "zst",
];

/// Whether a file named `name` with bytes of `kind` is an archive or compressed stream.
fn is_archive(name: &str, kind: Kind) -> bool {
    matches!(kind, Kind::Zip | Kind::Gzip)
        || extension_of(name).is_some_and(|e| ARCHIVE_EXTENSIONS.contains(&e.as_str()))
}

/// The lower-case extension of a file name.
fn extension_of(name: &str) -> Option<String> {
    Path::new(name)
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
}

/// Refuses (422 `format_mismatch`) bytes of `kind` that a known extension of `name`
/// contradicts; `shown` names the file in the message.
fn agrees_with_name(name: &str, kind: Kind, shown: &str) -> Result<(), AppError> {
    let Some(extension) = extension_of(name) else {
        return Ok(());
    };
    match expected(&extension) {
        Some((kinds, promised)) if !kinds.contains(&kind) => Err(AppError::new(
            ErrorKind::Invalid,
            "format_mismatch",
            format!(
                "{shown} is named as {promised} (.{extension}) but its bytes are {}",
                kind.label()
            ),
        )),
        _ => Ok(()),
    }
}

/// Checks one received file (`shown` is the name the client gave): its bytes must agree with a
/// known extension, and an archive must pass [`check_archive`]. Answers the path to read it
/// from: the same, or renamed with the extension its bytes call for when it had none.
pub fn check_file(path: &Path, shown: &str, max_upload: u64) -> Result<PathBuf, AppError> {
    let mut start = Vec::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(gdal_read::INDIRECTION_SCAN).read_to_end(&mut start))
        .map_err(|e| AppError::internal(&e))?;
    let head = &start[..start.len().min(8192)];
    let kind = sniff(head);
    if let Some(root) = indirection(&start) {
        return Err(unsafe_file(shown, root));
    }
    let file_name = path.file_name().map(|n| n.to_string_lossy().into_owned());
    agrees_with_name(file_name.as_deref().unwrap_or_default(), kind, shown)?;
    let known = extension_of(file_name.as_deref().unwrap_or_default())
        .as_deref()
        .and_then(expected);
    if kind == Kind::Zip {
        check_archive(path, shown, max_upload.saturating_mul(MAX_EXPANSION))?;
    }
    match kind.extension() {
        Some(wanted) if known.is_none() => {
            let mut renamed = path.as_os_str().to_owned();
            renamed.push(format!(".{wanted}"));
            let renamed = PathBuf::from(renamed);
            if renamed.exists() {
                return Ok(path.to_path_buf());
            }
            std::fs::rename(path, &renamed).map_err(|e| AppError::internal(&e))?;
            Ok(renamed)
        }
        _ => Ok(path.to_path_buf()),
    }
}

/// [`check_file`] for each `(name, path)` received together, off the async threads.
pub async fn check_files(
    files: Vec<(String, PathBuf)>,
    max_upload: u64,
) -> Result<Vec<(String, PathBuf)>, AppError> {
    tokio::task::spawn_blocking(move || {
        files
            .into_iter()
            .map(|(name, path)| check_file(&path, &name, max_upload).map(|path| (name, path)))
            .collect()
    })
    .await
    .map_err(|e| AppError::internal(&e))?
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_are_told_by_their_bytes() {
        for (bytes, kind) in [
            (&b"PK\x03\x04rest"[..], Kind::Zip),
            (b"SQLite format 3\0....", Kind::Sqlite),
            (b"PAR1....", Kind::Parquet),
            (b"fgb\x03fgb\x00....", Kind::FlatGeobuf),
            (&[0, 0, 0x27, 0x0a, 0, 0], Kind::Shapefile),
            (
                b"\xef\xbb\xbf  {\"type\": \"FeatureCollection\"}",
                Kind::Json,
            ),
            (b"\x1e{\"type\": \"Feature\"}", Kind::Json),
            (b"<?xml version=\"1.0\"?><kml/>", Kind::Xml),
            (b"name,lon,lat\nParis,2.35,48.86\n", Kind::Text),
            (b"\x00\x01\x02garbage", Kind::Binary),
            (b"II*\0\x08\0\0\0", Kind::Tiff),
            (b"MM\0+\0\x08\0\0", Kind::Tiff),
        ] {
            assert_eq!(sniff(bytes), kind, "{bytes:?}");
        }
    }

    #[test]
    fn descriptions_of_other_sources_are_found() {
        let vrt =
            b"<?xml version=\"1.0\"?>\n<!-- x -->\n<OGRVRTDataSource><OGRVRTLayer name=\"a\"/>";
        assert_eq!(indirection(vrt), Some("OGRVRTDataSource"));
        assert_eq!(
            indirection(b"<ogrwfsdatasource><URL>x</URL>"),
            Some("OGRWFSDataSource")
        );
        assert_eq!(indirection(b"<kml><Document/></kml>"), None);
        assert_eq!(indirection(b"{\"OGRVRTDataSource\": 1}"), None);
    }

    #[test]
    fn entry_names_stay_inside_the_archive() {
        for name in [
            "../x.shp",
            "a/../../x.shp",
            "/etc/x.shp",
            "..\\x.shp",
            "C:\\x.shp",
        ] {
            assert!(bad_entry_name(name).is_some(), "{name}");
        }
        for name in ["x.shp", "data/x.shp", "a..b/x.shp"] {
            assert!(bad_entry_name(name).is_none(), "{name}");
        }
    }
}
