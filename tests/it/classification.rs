//! `classify` against PySAL's mapclassify: layers uploaded as users upload them, classified
//! through `/api/pipelines/execute` on every engine, and each result's classes and bounds
//! compared with mapclassify's on the same values in the tests' Python.

use axum::http::StatusCode;
use serde_json::json;

use crate::common;
use common::pipeline::ENGINES;
use common::post_json as post;
use common::real::run_python;
use common::uploads::{countries_on_every_engine, run, upload, upload_countries};
use common::{call, shared};

/// Compares every result of the manifest (`[{path, field, method, classes}]`) with mapclassify
/// on the result's own values (row order kept: head/tail and standard deviation breaks sum in
/// that order); prints one line per difference.
const COMPARE: &str = r#"
import json, sys, warnings
import geopandas as gpd, numpy as np, mapclassify as mc, pandas as pd
from palettable.colorbrewer import get_map
warnings.filterwarnings("ignore")


class Qcut:
    """pandas' qcut as a mapclassify-like scheme: upper bounds above the lowest edge."""

    def __init__(self, y, k):
        codes, edges = pd.qcut(y, k, labels=False, retbins=True, duplicates="drop")
        self.bins, self.yb = edges[1:], np.asarray(codes, dtype="int64")


schemes = {
    "qcut": lambda y, k: Qcut(y, k),
    "jenks": lambda y, k: mc.FisherJenks(y, k),
    "quantile": lambda y, k: mc.Quantiles(y, k),
    "equal_interval": lambda y, k: mc.EqualInterval(y, k),
    "std_dev": lambda y, k: mc.StdMean(y),
    "pretty": lambda y, k: mc.PrettyBreaks(y, k),
    "head_tail_breaks": lambda y, k: mc.HeadTailBreaks(y),
}
problems = []
for case in json.load(open(sys.argv[1])):
    frame = gpd.read_file(case["path"])
    label = f'{case["engine"]} {case["field"]} {case["method"]} k={case["classes"]}'
    values = frame[case["field"]].astype("float64")
    present = values.notna()
    if frame.loc[~present, "class"].notna().any():
        problems.append(f"{label}: a NULL value was classified")
    scheme = schemes[case["method"]](values[present].to_numpy(), case["classes"])
    bins = np.asarray(scheme.bins, dtype="float64")
    classes = frame.loc[present, "class"].to_numpy()
    if not np.array_equal(classes, scheme.yb):
        problems.append(f"{label}: classes {classes.tolist()} != mapclassify {scheme.yb.tolist()}")
        continue
    upper = frame.loc[present, "class_upper"].to_numpy()
    if not np.array_equal(upper, bins[scheme.yb]):
        diff = np.max(np.abs(upper - bins[scheme.yb]))
        problems.append(f"{label}: upper bounds differ by up to {diff} from mapclassify {bins.tolist()}")
    lower = frame.loc[present, "class_lower"].to_numpy()
    expected_lower = np.where(scheme.yb == 0, values[present].min(), bins[np.maximum(scheme.yb - 1, 0)])
    if not np.array_equal(lower, expected_lower):
        problems.append(f"{label}: lower bounds differ")
    if "palette" in case:
        name, kind, reverse = case["palette"]
        colors = [c.lower() for c in get_map(name, kind, len(bins), reverse=reverse).hex_colors]
        got = frame.loc[present, "color"].tolist()
        expected = [colors[c] for c in scheme.yb]
        if got != expected:
            problems.append(f"{label}: colours {got[:5]}... != ColorBrewer {name} {colors}")
    if "palette" in case and frame.loc[~present, "color"].notna().any():
        problems.append(f"{label}: a NULL value was coloured")
print("\n".join(problems))
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn classes_equal_mapclassify_on_every_method_and_engine() {
    let (dir, state, countries) = countries_on_every_engine("classify").await;
    let boroughs = upload(
        &state,
        &[(
            "nybb_16a.zip",
            std::fs::read(shared("nybb_16a.zip")).unwrap(),
        )],
    )
    .await;
    let classify = |field: &str, method: &str, classes: u32| {
        json!({"id": "classes", "capability": "classify",
            "params": {"field": field, "method": method, "classes": classes}})
    };
    let mut manifest = Vec::new();
    let mut case = |engine: &str, path: String, field: &str, method: &str, classes: u32| {
        manifest.push(
            json!({"engine": engine, "path": path, "field": field, "method": method,
            "classes": classes}),
        );
    };
    // Every method on two fields of the countries and one of the boroughs, on the default engine.
    for (dataset, field, ks) in [
        (&countries, "pop_est", &[3_u32, 5, 7][..]),
        (&countries, "gdp_md_est", &[4, 6][..]),
        (&boroughs, "Shape_Area", &[3][..]),
    ] {
        for method in ["jenks", "quantile", "qcut", "equal_interval", "pretty"] {
            for &k in ks {
                let path = run(
                    &state,
                    dataset,
                    "embedded",
                    json!([classify(field, method, k)]),
                )
                .await;
                case("embedded", path, field, method, k);
            }
        }
        for method in ["std_dev", "head_tail_breaks"] {
            let path = run(
                &state,
                dataset,
                "embedded",
                json!([classify(field, method, 5)]),
            )
            .await;
            case("embedded", path, field, method, 5);
        }
    }
    // NULLs stay unclassified, on every engine: the populations above 100 million made NULL.
    let with_nulls = json!([
        {"id": "some_null", "capability": "calculate", "params": {"expressions":
            {"pop_some": "CASE WHEN pop_est > 100000000 THEN NULL ELSE pop_est END"}}},
        {"id": "classes", "capability": "classify", "input": "some_null",
            "params": {"field": "pop_some", "method": "jenks", "classes": 5}},
    ]);
    for engine in ENGINES {
        let path = run(&state, &countries, engine, with_nulls.clone()).await;
        case(engine, path, "pop_some", "jenks", 5);
        let path = run(
            &state,
            &countries,
            engine,
            json!([classify("gdp_md_est", "head_tail_breaks", 5)]),
        )
        .await;
        case(engine, path, "gdp_md_est", "head_tail_breaks", 5);
    }
    // Choropleths: ColorBrewer's own set for the number of classes, in order (or reversed).
    for (method, k, palette, kind, reverse) in [
        ("jenks", 5, "YlOrRd", "sequential", false),
        ("quantile", 4, "Blues", "sequential", true),
        ("equal_interval", 7, "RdYlGn", "diverging", false),
    ] {
        let step = json!([{"id": "map", "capability": "choropleth", "params": {"field": "pop_est",
            "method": method, "classes": k, "palette": palette, "reverse": reverse}}]);
        let path = run(&state, &countries, "embedded", step).await;
        manifest.push(
            json!({"engine": "embedded", "path": path, "field": "pop_est",
            "method": method, "classes": k, "palette": [palette, kind, reverse]}),
        );
    }
    let file = dir.path().join("manifest.json");
    std::fs::write(&file, serde_json::to_vec(&manifest).unwrap()).unwrap();
    let problems = run_python(COMPARE, &[&file.display().to_string()]);
    assert!(problems.trim().is_empty(), "{problems}");
}

#[tokio::test]
async fn a_text_field_or_too_few_classes_is_a_clear_422() {
    let (_dir, state) = common::test_state();
    let countries = upload_countries(&state).await;
    for (params, words) in [
        (json!({"field": "name"}), "not numeric"),
        (json!({"field": "pop_est", "classes": 1}), "classes"),
        (json!({"field": "nope"}), "unknown column"),
        (json!({"field": "pop_est", "method": "kmeans"}), "method"),
    ] {
        let request = json!({"dataset_id": countries, "pipeline": {"name": "c", "steps": [
            {"id": "c", "capability": "classify", "params": params}]}});
        let (status, body) = call(&state, post("/api/pipelines/execute", &request)).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{params}: {body}");
        assert!(body.to_string().contains(words), "{params}: {body}");
    }
}

/// Checks the results of normalize, classify_categorical, continuous_ramp, graduated_size and
/// bivariate_choropleth (the manifest's `kind`) against numpy, pandas, mapclassify and the
/// published colour tables; prints one line per difference.
const COMPARE_SCALES: &str = r##"
import json, sys, warnings
import geopandas as gpd, numpy as np, pandas as pd, mapclassify as mc, scipy.stats
from palettable.colorbrewer import get_map
from palettable.matplotlib.colormaps import _VIRIDIS_DATA
warnings.filterwarnings("ignore")
hexes = lambda rows: ["#%02x%02x%02x" % tuple(c) for c in rows]
problems = []
for case in json.load(open(sys.argv[1])):
    frame = gpd.read_file(case["path"])
    kind, field, label = case["kind"], case["field"], f'{case["engine"]} {case["kind"]}'
    values = frame[field]
    present = values.notna()
    y = None if kind == "categorical" else values[present].astype("float64").to_numpy()
    if kind.startswith("normalize"):
        method = kind.split(":")[1]
        ranks = pd.Series(y).rank(method="average").to_numpy()
        expected = {"log1p": np.log1p(y), "minmax": (y - y.min()) / (y.max() - y.min()),
                    "zscore": scipy.stats.zscore(y), "log": np.log(y),
                    "rank": (ranks - 1) / (len(y) - 1), "percent": y / y.sum() * 100}[method]
        got = frame.loc[present, case["output"]].to_numpy()
        if not np.allclose(got, expected, rtol=1e-12, atol=1e-12):
            problems.append(f"{label}: max difference {np.max(np.abs(got - expected))}")
    elif kind == "categorical":
        counts = values[present].value_counts()
        order = sorted(counts.index, key=lambda v: (-counts[v], v))
        limit = case["max_classes"]
        rank = {v: min(i, limit - 1) if len(order) > limit else i for i, v in enumerate(order)}
        expected = [rank[v] for v in values[present]]
        if frame.loc[present, "class"].tolist() != expected:
            problems.append(f"{label}: classes differ")
        labels = [str(v) if rank[v] < limit - 1 or len(order) <= limit else "other" for v in values[present]]
        if frame.loc[present, "class_label"].tolist() != labels:
            problems.append(f"{label}: labels differ")
    elif kind == "ramp":
        t = (y - y.min()) / (y.max() - y.min())
        lut = hexes(_VIRIDIS_DATA)
        expected = [lut[min(int(x * 256), 255)] for x in t]
        if frame.loc[present, "color"].tolist() != expected:
            problems.append(f"{label}: ramp colours differ")
    elif kind == "size":
        r = np.sqrt(y)
        expected = 2 + 22 * (r - r.min()) / (r.max() - r.min())
        if not np.allclose(frame.loc[present, "size"].to_numpy(), expected, rtol=1e-12):
            problems.append(f"{label}: sizes differ")
    elif kind == "bivariate":
        other = frame[case["other"]]
        both = present & other.notna()
        x = mc.Quantiles(values[both].astype("float64").to_numpy(), 3)
        z = mc.Quantiles(other[both].astype("float64").to_numpy(), 3)
        if frame.loc[both, "class_x"].tolist() != x.yb.tolist() or frame.loc[both, "class_y"].tolist() != z.yb.tolist():
            problems.append(f"{label}: classes differ")
        blues = [c for c in get_map("Blues", "sequential", 3).colors]
        reds = [c for c in get_map("Reds", "sequential", 3).colors]
        blend = lambda a, b: "#%02x%02x%02x" % tuple((p * q + 127) // 255 for p, q in zip(a, b))
        expected = [blend(blues[i], reds[j]) for i, j in zip(x.yb, z.yb)]
        if frame.loc[both, "color"].tolist() != expected:
            problems.append(f"{label}: colours differ")
        if frame.loc[~both, "class"].notna().any():
            problems.append(f"{label}: a NULL pair was classified")
print("\n".join(problems))
"##;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scales_equal_numpy_pandas_and_mapclassify() {
    let (dir, state, countries) = countries_on_every_engine("scales").await;
    let mut manifest = Vec::new();
    for engine in ["embedded", "postgis"] {
        for method in ["log1p", "minmax", "zscore", "log", "rank", "percent"] {
            let step = json!([{"id": "n", "capability": "normalize",
                "params": {"field": "gdp_md_est", "method": method}}]);
            let path = run(&state, &countries, engine, step).await;
            manifest.push(
                json!({"engine": engine, "path": path, "kind": format!("normalize:{method}"),
                "field": "gdp_md_est", "output": format!("gdp_md_est_{method}")}),
            );
        }
    }
    for (field, limit) in [("continent", 5), ("continent", 12)] {
        let step = json!([{"id": "c", "capability": "classify_categorical",
            "params": {"field": field, "max_classes": limit, "palette": "Set2"}}]);
        let path = run(&state, &countries, "embedded", step).await;
        let qml = common::gdal(
            "ogrinfo",
            &[
                "-ro",
                "-q",
                &path,
                "-sql",
                "SELECT styleQML FROM layer_styles",
            ],
        );
        assert!(
            qml.contains(r#"type="categorizedSymbol" attr="continent""#),
            "{qml}"
        );
        manifest.push(
            json!({"engine": "embedded", "path": path, "kind": "categorical",
            "field": field, "max_classes": limit}),
        );
    }
    let ramp =
        json!([{"id": "r", "capability": "continuous_ramp", "params": {"field": "pop_est"}}]);
    let path = run(&state, &countries, "native", ramp).await;
    manifest.push(json!({"engine": "native", "path": path, "kind": "ramp", "field": "pop_est"}));
    let size = json!([{"id": "s", "capability": "graduated_size",
        "params": {"field": "pop_est", "scale": "sqrt"}}]);
    let path = run(&state, &countries, "hybrid", size).await;
    manifest.push(json!({"engine": "hybrid", "path": path, "kind": "size", "field": "pop_est"}));
    let bivariate = json!([
        {"id": "some_null", "capability": "calculate", "params": {"expressions":
            {"gdp_some": "CASE WHEN gdp_md_est > 1000000 THEN NULL ELSE gdp_md_est END"}}},
        {"id": "b", "capability": "bivariate_choropleth", "input": "some_null",
            "params": {"field_x": "pop_est", "field_y": "gdp_some"}},
    ]);
    let path = run(&state, &countries, "embedded", bivariate).await;
    manifest.push(
        json!({"engine": "embedded", "path": path, "kind": "bivariate",
        "field": "pop_est", "other": "gdp_some"}),
    );
    let file = dir.path().join("scales.json");
    std::fs::write(&file, serde_json::to_vec(&manifest).unwrap()).unwrap();
    let problems = run_python(COMPARE_SCALES, &[&file.display().to_string()]);
    assert!(problems.trim().is_empty(), "{problems}");
}
