//! `vector_diff` against a pandas merge: two versions of the Natural Earth countries made in
//! Python (rows dropped from each, values changed, set to NULL, a type changed, geometries
//! moved, re-started, set to NULL or empty, NULL keys, a field in one version only), written
//! as GeoPackages and uploaded, diffed through `/api/pipelines/execute` on every engine mode
//! (native runs the step on DuckDB, hybrid on PostGIS), and every output row compared with the
//! reference: the same keys, change, changed fields and values, geometries equal. A key on
//! several rows fails the run, naming it.

use axum::http::StatusCode;
use serde_json::json;

use crate::common;
use common::pipeline::ENGINES;
use common::real::run_python;
use common::uploads::{countries_on_every_engine, run, shared_paths, upload};
use common::{call, post_json};

/// Writes `old.gpkg` and `new.gpkg` into the folder `argv[2]` from the countries `argv[1]`.
const VERSIONS: &str = r##"
import sys, warnings
import geopandas as gpd, numpy as np, shapely
warnings.filterwarnings("ignore")
src = gpd.read_file(sys.argv[1]).sort_values("iso_a3").reset_index(drop=True)
out = sys.argv[2]
old = src.copy()
old["legacy"] = "v1"                         # a field of the old version only
new = src.copy()
new["note"] = "v2"                           # a field of the new version only
new["gdp_md_est"] = new.gdp_md_est.astype("float64")   # an integer became a double
iso = list(src.iso_a3)
pick = lambda i: src.index[src.iso_a3 == iso[i]][0]
# Added: only in the new version; removed: only in the old one.
old = old.drop(index=[pick(i) for i in (3, 40, 90, 150)])
new = new.drop(index=[pick(i) for i in (10, 60, 120)])
def set_new(i, field, value):
    new.loc[pick(i), field] = value
def set_both(i, field, value):
    old.loc[pick(i), field] = value
    new.loc[pick(i), field] = value
for i in range(0, 170, 11):                  # populations revised
    set_new(i, "pop_est", new.loc[pick(i), "pop_est"] + 1000)
set_new(5, "name", "Renamed land")
set_new(7, "gdp_md_est", 123456.5)           # a double where the old integer was
set_new(8, "continent", None)                # a value became NULL
set_both(9, "continent", None)               # NULL in both: no change
g = new.loc[pick(12), "geometry"]
set_new(12, "geometry", shapely.affinity.translate(g, 0.1, 0))        # moved
ring = np.asarray(new.loc[pick(13), "geometry"].exterior.coords) if new.loc[pick(13), "geometry"].geom_type == "Polygon" else None
assert ring is not None, "row 13 must be a polygon"
set_new(13, "geometry", shapely.Polygon(np.vstack([ring[2:-1], ring[:3]])))  # another start vertex
set_new(14, "geometry", None)                # geometry became NULL
set_both(15, "geometry", None)               # NULL in both: no change
set_new(16, "geometry", shapely.Polygon())   # geometry became empty
set_both(17, "iso_a3", None)                 # a NULL key matches nothing
new = new.sample(frac=1.0, random_state=7)   # row order does not matter
old.to_file(f"{out}/countries_old.gpkg", driver="GPKG")
new.to_file(f"{out}/countries_new.gpkg", driver="GPKG")
print(len(old), len(new))
"##;

/// Compares each diff with the reference; prints one line per case that differs.
const COMPARE: &str = r##"
import json, sys, warnings
import geopandas as gpd, numpy as np, pandas as pd, shapely
warnings.filterwarnings("ignore")
cases = json.load(open(sys.argv[1]))
problems = []

def null(v):
    return v is None or (isinstance(v, float) and np.isnan(v)) or v is pd.NA or v is pd.NaT

def equal(a, b):
    if null(a) or null(b):
        return null(a) and null(b)
    if isinstance(a, (int, float, np.number)) and isinstance(b, (int, float, np.number)):
        return float(a) == float(b)
    return str(a) == str(b)

def wkb(g, normalized):
    if g is None:
        return None
    return shapely.to_wkb(shapely.normalize(g) if normalized else g)

def same_shape(a, b):
    if a is None or b is None or a.is_empty or b.is_empty:
        return (a is None) == (b is None) and (a is None or a.is_empty == b.is_empty)
    return shapely.equals_exact(shapely.normalize(a), shapely.normalize(b), 1e-12)

def reference(new, old, p):
    """Rows as (change, changed fields, values of the new version's columns and geometry)."""
    key, geometry = "iso_a3", p.get("compare_geometry", "exact")
    fields = p.get("fields") or [c for c in new.columns if c in old.columns and c not in (key, "geometry")]
    fields = [c for c in new.columns if c in fields]
    def values(row, columns, suffix=""):
        """The new version's columns, from `row`'s `columns` (their `suffix`ed names), else None."""
        taken = lambda c: row[c + suffix] if c + suffix in row.index else row[c]
        return {c: taken(c) if c in columns else None for c in new.columns}
    rows = [("added", None, values(r, new.columns)) for _, r in new[new[key].isna()].iterrows()]
    rows += [("removed", None, values(r, old.columns)) for _, r in old[old[key].isna()].iterrows()]
    merged = new[new[key].notna()].merge(old[old[key].notna()], on=key, how="outer",
                                         suffixes=("", "__old"), indicator=True)
    for _, m in merged.iterrows():
        if m["_merge"] == "left_only":
            rows.append(("added", None, values(m, new.columns)))
        elif m["_merge"] == "right_only":
            rows.append(("removed", None, values(m, old.columns, "__old")))
        else:
            changed = [c for c in fields if not equal(m[c], m[c + "__old"])]
            if geometry != "ignore" and wkb(m["geometry"], geometry == "normalized") != wkb(m["geometry__old"], geometry == "normalized"):
                changed.append("geometry")
            if changed:
                rows.append(("changed", ",".join(changed), values(m, new.columns)))
    return rows

def ident(change, row):
    return (change, "" if null(row["iso_a3"]) else row["iso_a3"], str(row["name"]))

for case in cases:
    label, p = case["label"], case["params"]
    new, old = gpd.read_file(case["new"]), gpd.read_file(case["old"])
    ours = gpd.read_file(case["path"])
    change_field = p.get("change_field", "change")
    expected = {ident(c, r): (f, r) for c, f, r in reference(new, old, p)}
    mine = {ident(r[change_field], r): r for _, r in ours.iterrows()}
    if len(mine) != len(ours) or set(mine) != set(expected):
        problems.append(f"{label}: rows {sorted(set(mine) ^ set(expected))[:6]} differ ({len(ours)} rows, reference {len(expected)})")
        continue
    columns = [c for c in new.columns if c != "geometry"]
    extra = [c for c in ours.columns if c not in columns + ["geometry", change_field, "changed_fields"]]
    if extra or list(ours.columns[: len(columns)]) != columns:
        problems.append(f"{label}: columns {list(ours.columns)}")
    bad = []
    for k, (fields, row) in expected.items():
        r = mine[k]
        if not equal(r["changed_fields"], fields):
            bad.append(f"{k} changed_fields {r['changed_fields']!r} vs {fields!r}")
        bad += [f"{k} {c}: {r[c]!r} vs {row[c]!r}" for c in columns if not equal(r[c], row[c])]
        if not same_shape(r.geometry, row["geometry"]):
            bad.append(f"{k} geometry")
    if bad:
        problems.append(f"{label}: {len(bad)} differences, first {bad[:3]}"[:600])
    counts = pd.Series([k[0] for k in expected]).value_counts().to_dict()
    if p.get("compare_geometry", "exact") == "exact" and not p.get("fields") and counts != {"added": 5, "removed": 4, "changed": 23}:
        problems.append(f"{label}: the reference itself found {counts}")
print("\n".join(problems) or f"compared {len(cases)} cases")
"##;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn vector_diff_equals_a_pandas_merge_on_every_engine() {
    let (dir, state, _countries) = countries_on_every_engine("vector_diff").await;
    let [countries_path, _, _] = shared_paths();
    let folder = dir.path().display().to_string();
    let written = run_python(VERSIONS, &[&countries_path, &folder]);
    assert_eq!(written.trim(), "173 174", "{written}");
    let (old_path, new_path) = (
        dir.path().join("countries_old.gpkg"),
        dir.path().join("countries_new.gpkg"),
    );
    let old = upload(
        &state,
        &[("countries_old.gpkg", std::fs::read(&old_path).unwrap())],
    )
    .await;
    let new = upload(
        &state,
        &[("countries_new.gpkg", std::fs::read(&new_path).unwrap())],
    )
    .await;
    let cases = [
        json!({"ref_layer": old, "key": ["iso_a3"]}),
        json!({"ref_layer": old, "key": ["iso_a3"], "compare_geometry": "normalized"}),
        json!({"ref_layer": old, "key": ["iso_a3"], "fields": ["pop_est", "name"],
               "compare_geometry": "ignore", "change_field": "kind"}),
    ];
    let mut manifest = Vec::new();
    for params in cases {
        for engine in ENGINES {
            let steps = json!([{"id": "diff", "capability": "vector_diff", "params": params}]);
            let path = run(&state, &new, engine, steps).await;
            manifest.push(json!({"label": format!("{engine} {params}"), "path": path,
                "params": params, "new": new_path, "old": old_path}));
        }
    }
    let file = dir.path().join("diffs.json");
    std::fs::write(&file, serde_json::to_vec(&manifest).unwrap()).unwrap();
    let answer = run_python(COMPARE, &[&file.display().to_string()]);
    assert_eq!(answer.trim(), format!("compared {} cases", manifest.len()));

    // A key on several rows fails the run on every engine, naming the key and a value.
    for engine in ENGINES {
        let steps = json!([{"id": "diff", "capability": "vector_diff",
            "params": {"ref_layer": old, "key": ["continent"]}}]);
        let request = json!({"dataset_id": new, "engine": engine,
            "pipeline": {"name": "run", "steps": steps}});
        let (status, body) = call(&state, post_json("/api/pipelines/execute", &request)).await;
        assert_ne!(status, StatusCode::OK, "{engine}: {body}");
        let text = body.to_string();
        assert!(
            text.contains("vector_diff: key (continent) = ")
                && text.contains(" rows of the ")
                && !text.contains("invalid input syntax"),
            "{engine}: {body}"
        );
    }
}
