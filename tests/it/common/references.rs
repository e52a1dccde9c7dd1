//! The independent references the capability tests compare with, as Python scripts (run by
//! [`super::real::run_python`] in `tests/it`, where `reference_cache.py` is).

/// Compares each result (`[{path, kind, ...}]`) with scikit-learn; prints one line per
/// difference.
pub const COMPARE_CLUSTERS: &str = include_str!("../clustering_reference.py");

/// Compares each grid case with PostGIS (through `psql`, DSN in argv[2]); prints one line per
/// difference.
pub const COMPARE_GRIDS: &str = include_str!("../grids_reference.py");

/// Compares each density case with scikit-learn (gaussian, epanechnikov) and the quartic
/// kernel's formula at the cells' centres; prints one line per difference.
pub const COMPARE_DENSITY: &str = include_str!("../density_reference.py");

/// Compares each case (`{path, capability, params, ...}`, see [`statistics_case`]) with PySAL;
/// prints one line per difference. Deterministic values must agree within 1e-9; permutation
/// p-values (another generator than numpy's) within what 999 permutations allow.
pub const COMPARE_STATISTICS: &str = include_str!("../statistics_reference.py");

/// One case of [`COMPARE_STATISTICS`]: the run's result file, what ran (a one-step rules file),
/// and on which data (`threshold`: the distance band in the layer's units, metres on lon/lat).
pub fn statistics_case(
    label: &str,
    path: String,
    steps: &serde_json::Value,
    geographic: bool,
    threshold: f64,
) -> serde_json::Value {
    let step = &steps[0];
    let mut params = step["params"].clone();
    params["threshold"] = serde_json::json!(threshold);
    serde_json::json!({"label": label, "path": path, "capability": step["capability"],
        "params": params, "geographic": geographic})
}
