//! Files open through an allow-list of GDAL drivers: a file reaches GDAL only as
//! `ST_Read(path, allowed_drivers := [...])`, never opened by what its name or first bytes
//! suggest. The drivers on the list read data held in the file itself; those that follow
//! references to other files or URLs (OGR_VRT, WFS, OAPIF, CSW, GPSBabel, ...) are not on it.
//! A path GDAL would read through a virtual file system of its own (`/vsicurl/`, a nested
//! `/vsizip/`, ...) or with a driver prefix (`CSV:`, `GPKG:`, `VRT:`) is refused before GDAL
//! sees it. (GeoParquet is read by DuckDB's own Parquet reader, not GDAL.)

use std::io::Read;

use geomill_planner::sql::quote::string;

/// The GDAL drivers files are read with, in GDAL's registration order (the order in which it
/// tries them).
pub const ALLOWED_DRIVERS: &[&str] = &[
    "ESRI Shapefile",
    "CSV",
    "GML",
    "GPX",
    "KML",
    "GeoJSON",
    "GeoJSONSeq",
    "TopoJSON",
    "GPKG",
    "FlatGeobuf",
];

/// The formats read, in words for a refusal.
pub const READ_FORMATS: &str = "GeoPackage, Shapefile (loose or zipped), GeoJSON (also as lines or TopoJSON), FlatGeobuf, CSV, KML, GML, GPX and GeoParquet";

/// The one prefix the server itself puts before a path: a zip archive read in place.
const ZIP_PREFIX: &str = "/vsizip/";

/// XML roots that make GDAL open other files or URLs (the server's files, its network).
pub const INDIRECTIONS: &[&str] = &[
    "OGRVRTDataSource",
    "OGRWFSDataSource",
    "WFS_Capabilities",
    "GDAL_WMS",
    "VRTDataset",
];

/// How far into a file [`indirection_in_file`] looks: far past the header GDAL identifies a
/// file by (1 KiB, a few more for some drivers), NUL bytes or not.
pub const INDIRECTION_SCAN: u64 = 1 << 20;

/// The description of other sources (`<OGRVRTDataSource`, ...) `bytes` hold, in any case,
/// wherever they are among them (NUL bytes included: GDAL's XML parser stops at the first NUL,
/// so a description followed by binary padding still works).
pub fn indirection(bytes: &[u8]) -> Option<&'static str> {
    // One pass over the `<`s (a naive search per root took 0.2 s per MiB unoptimised).
    let mut found: Option<usize> = None;
    for (at, _) in bytes.iter().enumerate().filter(|(_, b)| **b == b'<') {
        let after = &bytes[at + 1..];
        for (index, root) in INDIRECTIONS.iter().enumerate() {
            let named = after
                .get(..root.len())
                .is_some_and(|name| name.eq_ignore_ascii_case(root.as_bytes()));
            if named && found.is_none_or(|first| index < first) {
                found = Some(index);
            }
        }
    }
    found.and_then(|index| INDIRECTIONS.get(index).copied())
}

/// [`indirection`] in the first [`INDIRECTION_SCAN`] bytes of the file at `path`.
pub fn indirection_in_file(path: &std::path::Path) -> std::io::Result<Option<&'static str>> {
    let mut bytes = Vec::new();
    std::fs::File::open(path)?
        .take(INDIRECTION_SCAN)
        .read_to_end(&mut bytes)?;
    Ok(indirection(&bytes))
}

/// Why GDAL must not be given `gdal_path`: a virtual file system other than the server's own
/// `/vsizip/` on a plain path, or a driver prefix (`CSV:/etc/passwd`, `GPKG:x.gpkg:table`).
pub fn refused_path(gdal_path: &str) -> Option<String> {
    let plain = gdal_path.strip_prefix(ZIP_PREFIX).unwrap_or(gdal_path);
    if plain.to_ascii_lowercase().starts_with("/vsi") {
        return Some(format!(
            "{gdal_path:?} names one of GDAL's virtual file systems"
        ));
    }
    let first_part = plain.split('/').next().unwrap_or_default();
    if first_part.contains(':') {
        return Some(format!("{gdal_path:?} starts with a GDAL driver prefix"));
    }
    if plain.is_empty() || plain.contains('\0') || plain.starts_with('<') {
        return Some(format!("{gdal_path:?} is not a file path"));
    }
    None
}

/// `allowed_drivers := ['ESRI Shapefile', ...]`.
pub fn allowed_drivers_argument() -> String {
    let drivers: Vec<String> = ALLOWED_DRIVERS.iter().map(|d| string(d)).collect();
    format!("allowed_drivers := [{}]", drivers.join(", "))
}

/// `ST_Read(path, allowed_drivers := [...], layer := ..., open_options := [...])`: the only
/// way a file is read through GDAL.
pub fn st_read(gdal_path: &str, layer: Option<&str>, open_options: &[String]) -> String {
    let mut call = format!(
        "ST_Read({}, {}",
        string(gdal_path),
        allowed_drivers_argument()
    );
    if let Some(layer) = layer {
        call.push_str(&format!(", layer := {}", string(layer)));
    }
    if !open_options.is_empty() {
        let options: Vec<String> = open_options.iter().map(|o| string(o)).collect();
        call.push_str(&format!(", open_options := [{}]", options.join(", ")));
    }
    call.push(')');
    call
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_plain_paths_reach_gdal() {
        for refused in [
            "/vsicurl/http://127.0.0.1/x.geojson",
            "/VSICURL/http://x",
            "/vsizip//vsicurl/http://x/a.zip",
            "/vsizip//vsizip/a.zip/b.zip",
            "CSV:/etc/passwd",
            "GPKG:/data/x.gpkg:table",
            "VRT:/x.vrt",
            "<OGRVRTDataSource>",
            "",
        ] {
            assert!(refused_path(refused).is_some(), "{refused}");
        }
        for allowed in [
            "/data/uploads/1/roads.gpkg",
            "/vsizip//data/uploads/1/roads.zip",
            "data/uploads/1/a:b.csv",
            "relative/roads.geojson",
        ] {
            assert!(refused_path(allowed).is_none(), "{allowed}");
        }
    }

    #[test]
    fn every_read_names_the_allowed_drivers() {
        let call = st_read("/d/x.csv", Some("x"), &["A=B".to_owned()]);
        assert!(call.starts_with("ST_Read('/d/x.csv', allowed_drivers := ['ESRI Shapefile'"));
        assert!(call.contains("layer := 'x'") && call.contains("open_options := ['A=B']"));
        for refused in ["OGR_VRT", "WFS", "OAPIF", "CSW", "GPSBabel", "SQLite"] {
            assert!(!ALLOWED_DRIVERS.contains(&refused), "{refused}");
        }
    }

    #[test]
    fn descriptions_of_other_sources_are_found_past_nul_bytes() {
        let mut padded = b"<OGRVRTDataSource><OGRVRTLayer name=\"a\"/>".to_vec();
        padded.extend_from_slice(&[0; 9000]);
        assert_eq!(indirection(&padded), Some("OGRVRTDataSource"));
        let mut late = vec![0_u8; 9000];
        late.extend_from_slice(b"<ogrwfsdatasource>");
        assert_eq!(indirection(&late), Some("OGRWFSDataSource"));
        assert_eq!(indirection(b"{\"OGRVRTDataSource\": 1}"), None);
        assert_eq!(indirection(b"<kml><Document/></kml>"), None);
    }
}
