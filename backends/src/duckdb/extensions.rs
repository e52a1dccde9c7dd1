//! Which extensions a database loads, and whether their files are the releases pinned here.
//!
//! DuckDB checks an extension's signature on every load by hashing the whole file with a
//! portable SHA-256: 0.2 s for `spatial` (81 MB), 0.1 s each for `sqlite` and `postgres`, paid by
//! every process that opens a database (`geomill run`, each server start). When a database is
//! locked once loaded (`lock.rs`: no extension can be loaded after the lock) and every file it
//! loads before the lock has the SHA-256 pinned below for this DuckDB version and platform,
//! computed here with the CPU's SHA instructions (about 0.05 s for `spatial`, once per process),
//! it is opened with DuckDB's own check off and with extension autoloading and autoinstalling
//! off, so that it loads exactly the pinned bytes and, after the lock, nothing at all. A database
//! that is not locked (PostgreSQL configured), or any other file (another platform, another
//! build, a changed file), keeps DuckDB's signature check: never weaker than DuckDB.
//!
//! The remaining window, a file replaced between the hash and DuckDB's read of it, needs write
//! access to the extension directory, which already lets its owner replace what DuckDB's own check
//! reads from.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

/// The DuckDB version the extension directory is laid out for (`v1.5.5/linux_amd64/...`).
const DUCKDB_VERSION: &str = "v1.5.5";

/// The platform directory of this build, if it is one with pinned releases.
const PLATFORM: Option<&str> = if cfg!(all(target_os = "linux", target_arch = "x86_64")) {
    Some("linux_amd64")
} else {
    None
};

/// The official releases `scripts/setup.sh` installs (the `duckdb-extension-*==1.5.5` PyPI
/// packages), by file name: SHA-256 of the `linux_amd64` files.
const PINNED: &[(&str, &str)] = &[
    (
        "spatial",
        "03cbb687fbb1583af6154266dc17b9c99e11fdcc1cd4a43cec19f38ef272d4de",
    ),
    (
        "sqlite_scanner",
        "693d2bf90779df23ca5ebe0688639b9adfc11c2d55ae3466b33e28be16afaa5e",
    ),
    (
        "postgres_scanner",
        "b1ced4cfc6311313e117c2afb3eac76508718778dde0716421503c7dbfb5605c",
    ),
];

/// The files a locked database loads: `spatial` (`engine.rs`) and `sqlite` (`lock.rs`'s
/// `PRELOADED`), before its lock forbids any further load.
pub(crate) const LOADED_BEFORE_LOCK: &[&str] = &["spatial", "sqlite_scanner"];

/// DuckDB's extension directory: `configured`, or `~/.duckdb/extensions`.
fn extension_root(configured: Option<&Path>) -> Option<PathBuf> {
    match configured {
        Some(dir) => Some(dir.to_path_buf()),
        None => std::env::var_os("HOME")
            .filter(|home| !home.is_empty())
            .map(|home| PathBuf::from(home).join(".duckdb").join("extensions")),
    }
}

/// Whether every extension in `names` is, in the extension directory, the pinned release.
pub(crate) fn all_pinned(configured: Option<&Path>, names: &[&str]) -> bool {
    let (Some(root), Some(platform)) = (extension_root(configured), PLATFORM) else {
        return false;
    };
    let folder = root.join(DUCKDB_VERSION).join(platform);
    let pinned = |name: &str| {
        PINNED
            .iter()
            .find(|(pinned, _)| *pinned == name)
            .is_some_and(|(_, digest)| {
                has_digest(&folder.join(format!("{name}.duckdb_extension")), digest)
            })
    };
    // The files hashed side by side (about 0.08 s for the largest instead of 0.13 s in all).
    std::thread::scope(|scope| {
        let checks: Vec<_> = names
            .iter()
            .map(|name| scope.spawn(move || pinned(name)))
            .collect();
        checks
            .into_iter()
            .all(|check| check.join().unwrap_or(false))
    })
}

/// A file as last hashed: its identity and modification time, so a changed file is hashed again.
#[derive(Clone, PartialEq, Eq, Hash)]
struct FileState {
    path: PathBuf,
    device: u64,
    inode: u64,
    length: u64,
    modified: Option<std::time::SystemTime>,
}

fn file_state(path: &Path) -> Option<FileState> {
    use std::os::unix::fs::MetadataExt;
    let metadata = std::fs::metadata(path).ok()?;
    Some(FileState {
        path: path.to_path_buf(),
        device: metadata.dev(),
        inode: metadata.ino(),
        length: metadata.len(),
        modified: metadata.modified().ok(),
    })
}

/// The SHA-256 (hex) of the file at `path`, computed once per process per unchanged file.
fn digest_of(path: &Path) -> Option<String> {
    static DIGESTS: OnceLock<Mutex<HashMap<FileState, String>>> = OnceLock::new();
    let state = file_state(path)?;
    let digests = DIGESTS.get_or_init(Mutex::default);
    if let Some(known) = digests.lock().ok()?.get(&state) {
        return Some(known.clone());
    }
    let digest = sha256(path).ok()?;
    let hex: String = digest
        .as_ref()
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect();
    // Hashed as it was when its state was read: a file changed in between is not recorded.
    if file_state(path).as_ref() == Some(&state) {
        digests.lock().ok()?.insert(state, hex.clone());
    }
    Some(hex)
}

/// The SHA-256 of a file, read through one buffer (no copy of the whole file in memory).
fn sha256(path: &Path) -> std::io::Result<ring::digest::Digest> {
    use std::io::Read;
    let mut file = std::fs::File::open(path)?;
    let mut context = ring::digest::Context::new(&ring::digest::SHA256);
    let mut buffer = vec![0_u8; 1 << 20];
    loop {
        match file.read(&mut buffer)? {
            0 => return Ok(context.finish()),
            n => context.update(&buffer[..n]),
        }
    }
}

fn has_digest(path: &Path, expected: &str) -> bool {
    digest_of(path).is_some_and(|digest| digest == expected)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_with_other_bytes_is_not_the_pinned_release() -> Result<(), std::io::Error> {
        let root = tempfile::tempdir()?;
        let Some(platform) = PLATFORM else {
            return Ok(());
        };
        let folder = root.path().join(DUCKDB_VERSION).join(platform);
        std::fs::create_dir_all(&folder)?;
        std::fs::write(folder.join("spatial.duckdb_extension"), b"not an extension")?;
        assert!(!all_pinned(Some(root.path()), &["spatial"]));
        // Missing files and unknown names are not pinned either.
        assert!(!all_pinned(Some(root.path()), &["sqlite_scanner"]));
        assert!(!all_pinned(Some(root.path()), &["httpfs"]));
        Ok(())
    }

    #[test]
    fn a_digest_is_the_sha256_of_the_bytes() -> Result<(), std::io::Error> {
        let dir = tempfile::tempdir()?;
        let path = dir.path().join("abc");
        std::fs::write(&path, b"abc")?;
        assert_eq!(
            digest_of(&path).as_deref(),
            Some("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        );
        // Changed (another length): hashed again, not answered from the first hash.
        std::fs::write(&path, b"abcd")?;
        assert_eq!(
            digest_of(&path).as_deref(),
            Some("88d4266fd4e6338d13b845fcf289579d209c897823b9217da3e161936f031589")
        );
        Ok(())
    }
}
