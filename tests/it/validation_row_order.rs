//! The validation reports a GeoPandas script makes, against such a script written here: a
//! hand-made layer (overlapping, nested and equal polygons, a bow tie, a line crossing itself,
//! a MultiPoint repeating a point, NULL and empty geometries; integers with a NULL, texts with
//! quotes, floats with NaN) uploaded as a GeoPackage, then `topology_check` with
//! `predicates: shapely`, `duplicate_geometry` with `rule: first_in_row_order` and
//! `attribute_validation` with `rules_as: python`, features named by `position_key`, through
//! `/api/pipelines/execute` on every engine mode; `position_key` on geomill's own (SQL)
//! topology checks too.

use serde_json::{Value, json};

use crate::common;
use crate::common::uploads::upload_file;
use common::pipeline::ENGINES;
use common::real::run_python;
use common::uploads::{countries_on_every_engine, run};

/// Writes `shapes.gpkg` into the folder `argv[1]`.
const MADE: &str = r##"
import sys, warnings
import geopandas as gpd, numpy as np, pandas as pd, shapely
warnings.filterwarnings("ignore")
w = shapely.from_wkt
shapes = [
    w("POLYGON ((0 0, 4 0, 4 4, 0 4, 0 0))"),
    w("POLYGON ((2 2, 6 2, 6 6, 2 6, 2 2))"),              # overlaps the one before
    w("POLYGON ((3 3, 3.5 3, 3.5 3.5, 3 3.5, 3 3))"),      # inside both: no overlap
    w("POLYGON ((10 0, 14 4, 14 0, 10 4, 10 0))"),         # a bow tie: invalid, not simple
    None,
    w("POLYGON EMPTY"),
    w("LINESTRING (20 0, 30 10, 30 0, 20 10)"),            # crosses itself
    w("MULTIPOINT ((1 1), (1 1))"),                        # repeats a point: not simple
    w("LINESTRING (40 0, 41 0)"),
    w("POLYGON ((0 0, 4 0, 4 4, 0 4, 0 0))"),              # prints as the first
    w("POLYGON ((4 4, 0 4, 0 0, 4 0, 4 4))"),              # the first restarted: prints otherwise
    w("POINT (40.5 1)"),                                   # 1 from the line 40-41
    w("POLYGON EMPTY"),                                    # prints as row 5
]
n = len(shapes)
frame = gpd.GeoDataFrame({
    "sid": range(1, n + 1),
    "label": ["ok", "it's", None, "Bow tie", "x", 'say "hi"', "line", "pts", "short", "copy", "turned", "pt", "e"],
    "score": [1.5, 2.0, np.nan, 1e20, -3.25, 0.1 + 0.2, 7.0, 100.0, 5.0, 1.5, 1.5, 2.5, 0.0],
    "count": pd.array([1, 2, None, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13], dtype="Int64"),
}, geometry=gpd.GeoSeries(shapes), crs="EPSG:3857")
frame.to_file(f"{sys.argv[1]}/shapes.gpkg", driver="GPKG", engine="pyogrio", promote_to_multi=False,
              geometry_type="Unknown")
"##;

/// Each case's rows against a GeoPandas script's, as sets; prints one line per case that
/// differs, then the verdict.
const COMPARE: &str = r##"
import json, math, re, sys, warnings
import geopandas as gpd, numpy as np, pandas as pd, shapely
warnings.filterwarnings("ignore")
cases = json.load(open(sys.argv[1]))

def topology(df):
    rows = []
    for i, g in enumerate(df.geometry):
        if g is None:
            rows.append((i, None, "null_geometry", "the geometry is NULL"))
            continue
        if not g.is_valid:
            rows.append((i, None, "invalid", shapely.is_valid_reason(g)))
        if not g.is_simple:
            rows.append((i, None, "self_intersection", "the geometry is not simple"))
    polys = [(i, g) for i, g in enumerate(df.geometry)
             if g is not None and not g.is_empty and g.geom_type in ("Polygon", "MultiPolygon")]
    for a, (i, gi) in enumerate(polys):
        for j, gj in polys[a + 1:]:
            if gi.overlaps(gj):
                rows.append((i, j, "overlap", f"the polygons overlap (area={gi.intersection(gj).area:.6f})"))
    return rows

def duplicates(df, tolerance):
    rows, first = [], {}
    geoms = list(df.geometry)
    if tolerance == 0:
        for i, g in enumerate(geoms):
            if g is None:
                continue
            if g.wkt in first:
                rows.append((i, first[g.wkt], "duplicate"))
            else:
                first[g.wkt] = i
        return rows
    claimed = set()
    for i, g in enumerate(geoms):
        if g is None or g.is_empty or i in claimed:
            continue
        for j in range(i + 1, len(geoms)):
            h = geoms[j]
            if j in claimed or h is None or h.is_empty:
                continue
            if g.distance(h) <= tolerance:
                claimed.add(j)
                rows.append((j, i, "near_duplicate"))
    return rows

def attributes(df, schema):
    rows = []
    classes = {"int": (int,), "float": (float, int), "str": (str,)}
    for col, rules in schema.items():
        if col not in df.columns:
            rows += [(i, col, "missing_column", "N/A", f"Column '{col}' does not exist in the layer.")
                     for i in range(len(df))]
            continue
        for i, val in enumerate(df[col]):
            def add(rule, text):
                rows.append((i, col, rule, str(val), text))
            if pd.isna(val):
                if rules.get("nullable", True) is False:
                    add("nullable", f"Column '{col}' does not allow null values.")
                continue
            kind = rules.get("type")
            if kind and not isinstance(val, classes[kind]):
                add("type", f"Column '{col}': expected {kind}, got {type(val).__name__} (value={val!r}).")
                continue
            for bound, sign, broken in (("min", "<", lambda v, b: v < b), ("max", ">", lambda v, b: v > b)):
                if bound in rules:
                    b = rules[bound]
                    if isinstance(val, str):
                        if broken(len(val), b):
                            add(bound, f"Column '{col}': string length {len(val)} {sign} {bound} {b}.")
                    elif broken(val, b):
                        add(bound, f"Column '{col}': value {val} {sign} {bound} {b}.")
            if "pattern" in rules and isinstance(val, str) and not re.fullmatch(rules["pattern"], val):
                add("pattern", f"Column '{col}': value {val!r} does not match pattern {rules['pattern']!r}.")
            if "allowed" in rules and val not in rules["allowed"]:
                add("allowed", f"Column '{col}': value {val!r} not in allowed list {rules['allowed']}.")
    return rows

def text(v):
    return None if v is None or (isinstance(v, float) and math.isnan(v)) else v

problems = []
for case in cases:
    source = gpd.read_file(case["source"])
    got = gpd.read_file(case["path"])
    def cell(r, c):
        v = r[c]
        return None if v is None or (isinstance(v, float) and math.isnan(v)) else (int(v) if c in ("feature", "related") else v)
    kind = case["kind"]
    if kind == "topology":
        want = topology(source)
        ours = [(cell(r, "feature"), cell(r, "related"), r["problem"], r["reason"]) for _, r in got.iterrows()]
        for _, r in got.iterrows():
            if r["problem"] in ("invalid", "self_intersection"):
                if not r.geometry.equals_exact(source.geometry.iloc[int(r["feature"])], 0):
                    problems.append(f"{case['label']}: row {r['feature']} is reported with another geometry")
    elif kind == "positions":
        want = [(i, "null_geometry") for i, g in enumerate(source.geometry) if g is None]
        want += [(i, "empty_geometry") for i, g in enumerate(source.geometry) if g is not None and g.is_empty]
        want += [(i, "invalid") for i, g in enumerate(source.geometry) if g is not None and not g.is_empty and not g.is_valid]
        ours = [(cell(r, "feature"), r["problem"]) for _, r in got.iterrows()]
    elif kind == "duplicates":
        by_sid = case["params"].get("key") == "sid"
        want = duplicates(source, case["params"].get("tolerance", 0))
        if by_sid:
            want = [(int(source.sid.iloc[a]), int(source.sid.iloc[b]), p) for a, b, p in want]
        ours = [(cell(r, "feature"), cell(r, "related"), r["problem"]) for _, r in got.iterrows()]
    else:
        schema = {r["field"]: {k: v for k, v in [("type", r.get("type")), ("min", r.get("min")), ("max", r.get("max")),
                                                   ("pattern", r.get("regex")), ("allowed", r.get("allowed")),
                                                   ("nullable", not r.get("not_null", False))] if v is not None}
                  for r in case["params"]["rules"]}
        want = attributes(source, schema)
        ours = [(cell(r, "feature"), r["field"], r["problem"], r["value"], r["reason"]) for _, r in got.iterrows()]
    if sorted(map(repr, ours)) != sorted(map(repr, want)):
        extra = sorted(set(map(repr, ours)) - set(map(repr, want)))
        missing = sorted(set(map(repr, want)) - set(map(repr, ours)))
        problems.append(f"{case['label']}: {len(ours)} rows, {len(want)} expected; extra {extra[:3]}, missing {missing[:3]}")
    elif len(want) < case["least"]:
        problems.append(f"{case['label']}: only {len(want)} rows")
print("\n".join(problems) or f"compared {len(cases)} cases")
"##;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn row_order_reports_equal_a_geopandas_script_on_every_engine() {
    let (dir, state, _) = countries_on_every_engine("validation_rows").await;
    let made = dir.path().display().to_string();
    run_python(MADE, &[&made]);
    let source = format!("{made}/shapes.gpkg");
    let shapes = upload_file(&state, &source).await;
    let rules = json!([
        {"field": "label", "type": "str", "not_null": true, "min": 3, "max": 5, "regex": "[a-z]+"},
        {"field": "score", "type": "float", "min": 0, "max": 50.5, "allowed": [1.5, 2, 7.0, true]},
        {"field": "count", "type": "int", "max": 10},
        {"field": "sid", "allowed": [1, 2.0, 3]},
        {"field": "absent", "not_null": true},
    ]);
    let runs: Vec<(&str, &str, Value, usize)> = vec![
        (
            "topology_check",
            "topology",
            json!({"predicates": "shapely", "position_key": true, "checks": ["null_geometry", "invalid", "self_intersection", "overlap"]}),
            6,
        ),
        (
            "topology_check",
            "positions",
            json!({"position_key": true, "checks": ["null_geometry", "empty_geometry", "invalid"]}),
            4,
        ),
        (
            "duplicate_geometry",
            "duplicates",
            json!({"rule": "first_in_row_order", "position_key": true}),
            2,
        ),
        (
            "duplicate_geometry",
            "duplicates",
            json!({"rule": "first_in_row_order", "tolerance": 1.0, "key": "sid"}),
            4,
        ),
        (
            "attribute_validation",
            "attributes",
            json!({"rules_as": "python", "position_key": true, "rules": rules}),
            30,
        ),
    ];
    let mut manifest = Vec::new();
    for (capability, kind, params, least) in &runs {
        for engine in ENGINES {
            let steps = json!([{"id": "report", "capability": capability, "params": params}]);
            let path = run(&state, &shapes, engine, steps).await;
            manifest.push(
                json!({"label": format!("{engine} {capability} {params}"), "path": path,
                "source": source, "params": params, "kind": kind, "least": least}),
            );
        }
    }
    let file = dir.path().join("rows.json");
    std::fs::write(&file, serde_json::to_vec(&manifest).unwrap()).unwrap();
    let answer = run_python(COMPARE, &[&file.display().to_string()]);
    assert_eq!(
        answer.trim().lines().last().unwrap_or_default(),
        format!("compared {} cases", manifest.len()),
        "{answer}"
    );
}
