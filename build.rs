//! Build script: records the directory of the prebuilt `libduckdb.so` (`DUCKDB_LIB_DIR`, set by
//! the Makefile) as the binaries' run path, so `geomill` starts from any shell without
//! `LD_LIBRARY_PATH`.

fn main() {
    println!("cargo:rerun-if-env-changed=DUCKDB_LIB_DIR");
    if let Ok(dir) = std::env::var("DUCKDB_LIB_DIR") {
        println!("cargo:rustc-link-arg=-Wl,-rpath,{dir}");
    }
}
