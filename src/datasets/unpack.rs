//! Zip archives unpacked into a folder before GDAL reads them: the locked embedded database
//! opens no `/vsizip/` path (DuckDB refuses every GDAL virtual file system once external access
//! is off). The archive was checked first (`inspect::check_archive`: entry names, sizes,
//! ratios); unpacking checks names again and writes nothing outside the folder.

use std::io::Read;
use std::path::{Path, PathBuf};

/// Unpacks `archive` into `folder` (created) and answers what GDAL opens there, as
/// `/vsizip/` did: the one file the archive holds, else the folder (a folder of Shapefiles is
/// one dataset, a layer per file). A folder holding only one folder is looked into.
pub fn unpack(archive: &Path, folder: &Path, max_total: u64) -> std::io::Result<PathBuf> {
    let invalid = |message: String| std::io::Error::new(std::io::ErrorKind::InvalidData, message);
    let mut zip =
        zip::ZipArchive::new(std::fs::File::open(archive)?).map_err(|e| invalid(e.to_string()))?;
    std::fs::create_dir_all(folder)?;
    let mut written: u64 = 0;
    for index in 0..zip.len() {
        let mut entry = zip.by_index(index).map_err(|e| invalid(e.to_string()))?;
        let Some(relative) = entry.enclosed_name() else {
            return Err(invalid(format!(
                "entry {:?} leaves the archive",
                entry.name()
            )));
        };
        let target = folder.join(relative);
        if entry.is_dir() {
            std::fs::create_dir_all(&target)?;
            continue;
        }
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent)?;
        }
        let budget = max_total.saturating_sub(written);
        let copied = std::io::copy(
            &mut (&mut entry).take(budget.saturating_add(1)),
            &mut std::fs::File::create(&target)?,
        )?;
        written += copied;
        if written > max_total {
            return Err(invalid(format!(
                "the archive expands to more than {} MiB",
                max_total >> 20
            )));
        }
    }
    opened_path(folder)
}

/// What GDAL opens in an unpacked folder: its one Shapefile (the `.shp`, its sidecars beside
/// it), else its one file, else the folder itself; a folder holding only a folder is looked
/// into.
fn opened_path(folder: &Path) -> std::io::Result<PathBuf> {
    let mut current = folder.to_path_buf();
    loop {
        let entries: Vec<PathBuf> = std::fs::read_dir(&current)?
            .map(|e| e.map(|e| e.path()))
            .collect::<Result<_, _>>()?;
        let shapefiles: Vec<&PathBuf> = entries
            .iter()
            .filter(|p| p.extension().is_some_and(|e| e.eq_ignore_ascii_case("shp")))
            .collect();
        match (entries.as_slice(), shapefiles.as_slice()) {
            (_, [shp]) => return Ok((*shp).clone()),
            ([only], _) if only.is_dir() => current.clone_from(only),
            ([only], _) => return Ok(only.clone()),
            _ => return Ok(current),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;

    fn archive(dir: &Path, entries: &[(&str, &[u8])]) -> PathBuf {
        let path = dir.join("a.zip");
        let mut zip = zip::ZipWriter::new(std::fs::File::create(&path).unwrap());
        for (name, bytes) in entries {
            zip.start_file(*name, zip::write::SimpleFileOptions::default())
                .unwrap();
            zip.write_all(bytes).unwrap();
        }
        zip.finish().unwrap();
        path
    }

    #[test]
    fn one_file_is_opened_itself_several_as_their_folder() {
        let dir = tempfile::tempdir().unwrap();
        let one = archive(dir.path(), &[("inner/x.geojson", b"{}")]);
        let opened = unpack(&one, &dir.path().join("one"), 1 << 20).unwrap();
        assert_eq!(opened, dir.path().join("one/inner/x.geojson"));
        let shapes = archive(dir.path(), &[("x.shp", b"1"), ("x.dbf", b"2")]);
        let opened = unpack(&shapes, &dir.path().join("two"), 1 << 20).unwrap();
        assert_eq!(opened, dir.path().join("two/x.shp"));
        let several = archive(dir.path(), &[("a.geojson", b"{}"), ("b.geojson", b"{}")]);
        let opened = unpack(&several, &dir.path().join("three"), 1 << 20).unwrap();
        assert_eq!(opened, dir.path().join("three"));
    }

    #[test]
    fn nothing_is_written_outside_the_folder_nor_past_the_size() {
        let dir = tempfile::tempdir().unwrap();
        let escaping = archive(dir.path(), &[("../evil.txt", b"x")]);
        assert!(unpack(&escaping, &dir.path().join("out"), 1 << 20).is_err());
        assert!(!dir.path().join("evil.txt").exists());
        let big = archive(dir.path(), &[("big.csv", &[b'a'; 4096])]);
        assert!(unpack(&big, &dir.path().join("big"), 1024).is_err());
    }
}
