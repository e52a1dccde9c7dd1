//! Real-shaped files made by `benches/real_layers.py` (seeded), and Python with GeoPandas as the
//! independent reference the tests compare answers with.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The tests' Python (`GEOMILL_PYTHON`, set by `make test`; GeoPandas installed).
pub fn python() -> String {
    std::env::var("GEOMILL_PYTHON").unwrap_or_else(|_| "python3".into())
}

/// Runs a Python script with `args`; answers its standard output (the test fails on an error).
/// The script may import `reference_cache` (`tests/it/reference_cache.py`) to compute a
/// reference answer once per input: its key starts with the script's SHA-256, passed here.
pub fn run_python(script: &str, args: &[&str]) -> String {
    let script_hash = ring::digest::digest(&ring::digest::SHA256, script.as_bytes());
    let script_hash: String = script_hash
        .as_ref()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let here = super::golden::repo().join("tests/it");
    let output = Command::new(python())
        .arg("-c")
        .arg(script)
        .args(args)
        .env("GEOMILL_REFERENCE_SCRIPT", script_hash)
        .env("PYTHONPATH", here)
        .output()
        .expect("python");
    assert!(
        output.status.success(),
        "python failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// The longest edge, in degrees, of the tests' generated regions before their noise (the
/// benches' files take 0.02). Every kind of shape the benches' files have, with about a fifth
/// of their vertices (183,276 rather than 868,602 at 10-degree cells), so a test that buffers,
/// dissolves or validates them on four engines and in Shapely spends seconds per step; volume
/// is measured by the benches (`make bench-real`).
pub const SEGMENT_DEGREES: f64 = 0.1;

/// Files of `benches/real_layers.py` in `dir`: `regions.gpkg` (Natural Earth countries cut by
/// a grid of `cell` degrees, edges of at most [`SEGMENT_DEGREES`]: multipolygons, holes,
/// invalid polygons, NULL and empty geometries; beside it `tiles.gpkg`, the same pieces sharing
/// their borders) and, with `points` > 0, `points.parquet`.
pub fn real_layers(dir: &Path, points: u32, cell: f64) -> (PathBuf, PathBuf) {
    generate(dir, points, 1, cell);
    (dir.join("regions.gpkg"), dir.join("points.parquet"))
}

/// [`real_layers`] with the points as `parts` GeoParquet parts of one layer
/// (`points-00.parquet`, …), in name order.
pub fn real_layers_in_parts(
    dir: &Path,
    points: u32,
    parts: usize,
    cell: f64,
) -> (PathBuf, Vec<PathBuf>) {
    generate(dir, points, parts, cell);
    let parts = (0..parts)
        .map(|part| dir.join(format!("points-{part:02}.parquet")))
        .collect();
    (dir.join("regions.gpkg"), parts)
}

fn generate(dir: &Path, points: u32, parts: usize, cell: f64) {
    let script = super::golden::repo().join("benches/real_layers.py");
    let output = Command::new(python())
        .arg(&script)
        .arg(dir)
        .args(["--points", &points.to_string(), "--cell", &cell.to_string()])
        .args(["--parts", &parts.to_string()])
        .args(["--segment", &SEGMENT_DEGREES.to_string()])
        .output()
        .expect("python");
    assert!(
        output.status.success(),
        "real_layers.py: {}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// Writes `nyc_points.gpkg` and `nyc_lines.gpkg` (EPSG:2263) into the folder named by the
/// first argument: seeded points over the boroughs and beside a few hand-made lines, with
/// NULL, empty and non-point geometries at fixed ids; the boroughs' outlines as lines with
/// lines that merge, lines that do not, a line of zero length, an empty and a NULL line and a
/// polygon.
const NYC_LAYERS: &str = include_str!("../nyc_layers.py");

/// Runs [`NYC_LAYERS`] into `dir`; answers the points' and the lines' files.
pub fn generated_nyc(dir: &Path) -> (String, String) {
    let [_, _, boroughs] = super::uploads::shared_paths();
    let answer = run_python(NYC_LAYERS, &[&dir.display().to_string(), &boroughs]);
    assert_eq!(answer.trim(), "written");
    let file = |name: &str| dir.join(name).display().to_string();
    (file("nyc_points.gpkg"), file("nyc_lines.gpkg"))
}
