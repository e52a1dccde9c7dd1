//! `singleparts_to_multipart` against GeoPandas and Shapely: the uploaded countries by
//! continent, the boroughs cut into their parts and collected again, the generated regions
//! (NULL, empty and invalid geometries, NULL group values) by continent and as one group, and
//! countries with cities (polygons and points: a GeometryCollection), run through
//! `/api/pipelines/execute` on every engine mode (native runs the step on DuckDB, hybrid on
//! PostGIS). Each group's geometry must be
//! the collection of the simple parts of its features' geometries (NULL when none), the parts
//! in the documented order (features by the MD5 of their WKB), and its aggregates equal
//! pandas' `groupby`.

use serde_json::json;

use crate::common;
use common::pipeline::ENGINES;
use common::real::{real_layers, run_python};
use common::uploads::{run, shared_datasets, shared_paths, upload};

/// Compares each case with the reference; prints one line per case that differs. The reference
/// groups are computed once per input (`reference_cache`), for every engine's result.
const COMPARE: &str = r##"
import hashlib, json, sys, warnings
import geopandas as gpd, numpy as np, pandas as pd, shapely
from reference_cache import remembered
warnings.filterwarnings("ignore")
cases = json.load(open(sys.argv[1]))
problems = []

def parts(g):
    """The simple, non-empty parts of `g`, nested collections flattened, in order."""
    if g is None or g.is_empty:
        return []
    if g.geom_type in ("MultiPolygon", "MultiLineString", "MultiPoint", "GeometryCollection"):
        return [p for sub in g.geoms for p in parts(sub)]
    return [g]

def collected(geometries):
    ordered = sorted((g for g in geometries if g is not None and not g.is_empty),
                     key=lambda g: hashlib.md5(shapely.to_wkb(g, hex=True).lower().encode()).hexdigest())
    found = [p for g in ordered for p in parts(g)]
    if not found:
        return None
    kinds = {p.geom_type for p in found}
    if kinds == {"Polygon"}:
        return shapely.MultiPolygon(found)
    if kinds == {"LineString"}:
        return shapely.MultiLineString(found)
    if kinds == {"Point"}:
        return shapely.MultiPoint(found)
    return shapely.GeometryCollection(found)

def label_of(values):
    return tuple("<NULL>" if pd.isna(v) else str(v) for v in values)

def reference_groups(source, fields, aggregates):
    """{group label: (the collected parts or None, {f"{field}_{func}": pandas' aggregate})} of
    the source rows grouped by `fields` (one group without fields)."""
    keys = [label_of(r) for r in source[fields].itertuples(index=False)] if fields else [()] * len(source)
    groups = {}
    for k, (_, row) in zip(keys, source.iterrows()):
        groups.setdefault(k, []).append(row)
    answers = {}
    for k, rows in groups.items():
        frame = pd.DataFrame([r.drop("geometry") for r in rows])
        wants = {}
        for field, func in aggregates.items():
            column = frame[field]
            wants[f"{field}_{func}"] = {"count": column.count, "sum": lambda: column.sum(min_count=1),
                                        "min": column.min, "max": column.max, "avg": column.mean}[func]()
        answers[k] = (collected([r.geometry for r in rows]), wants)
    return answers

sources = {}
for case in cases:
    label, fields, aggregates = case["label"], case["fields"], case["aggregates"]
    read = json.dumps([case["sources"], case["explode"]])
    if read not in sources:
        source = pd.concat([gpd.read_file(path) for path in case["sources"]], ignore_index=True)
        if case["explode"]:
            source = source.explode(index_parts=False, ignore_index=True)
        sources[read] = source
    source = sources[read]
    ours = gpd.read_file(case["path"])
    groups = remembered("groups", lambda: reference_groups(source, fields, aggregates),
                        source, fields, aggregates)
    keys = (lambda frame: [label_of(r) for r in frame[fields].itertuples(index=False)]) if fields else (lambda frame: [()] * len(frame))
    mine = dict(zip(keys(ours), ours.itertuples(index=False)))
    if len(mine) != len(ours) or set(mine) != set(groups):
        problems.append(f"{label}: groups {sorted(set(mine) ^ set(groups))[:5]} differ ({len(ours)} rows, {len(groups)} groups)")
        continue
    bad = []
    for k, (expected, wants) in groups.items():
        got = mine[k].geometry
        if expected is None or got is None:
            if (expected is None) != (got is None or got.is_empty):
                bad.append(f"{k}: {None if got is None else got.geom_type} vs {expected}")
            continue
        if got.geom_type != expected.geom_type or len(got.geoms) != len(expected.geoms):
            bad.append(f"{k}: {got.geom_type} of {len(got.geoms)} vs {expected.geom_type} of {len(expected.geoms)}")
        elif not shapely.equals_exact(got, expected, 0):
            same_parts = shapely.equals_exact(shapely.normalize(got), shapely.normalize(expected), 0)
            bad.append(f"{k}: {'the parts in another order' if same_parts else 'other parts'}")
        for name, want in wants.items():
            have = getattr(mine[k], name)
            if not ((pd.isna(want) and pd.isna(have)) or np.isclose(float(have), float(want), rtol=1e-9)):
                bad.append(f"{k}: {name} {have} vs {want}")
    if bad:
        problems.append(f"{label}: {len(bad)} of {len(groups)} groups differ, first {bad[:3]}"[:500])
print("\n".join(problems) or f"compared {len(cases)} cases")
"##;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn collected_parts_equal_shapely_on_every_engine() {
    let (dir, state, [countries, cities, boroughs]) = shared_datasets("collected").await;
    let (regions_path, _) = real_layers(dir.path(), 0, 10.0);
    let regions = upload(
        &state,
        &[("regions.gpkg", std::fs::read(&regions_path).unwrap())],
    )
    .await;
    let regions_path = regions_path.display().to_string();
    let [countries_path, cities_path, boroughs_path] = shared_paths();
    let collect = |fields: serde_json::Value, aggregates: serde_json::Value| {
        json!({"id": "collected", "capability": "singleparts_to_multipart",
               "params": {"fields": fields, "aggregates": aggregates}})
    };
    let cases = [
        (
            &countries,
            vec![countries_path.clone()],
            json!(["continent"]),
            json!({"pop_est": "sum", "name": "count"}),
            json!([collect(
                json!(["continent"]),
                json!({"pop_est": "sum", "name": "count"})
            )]),
        ),
        (
            &boroughs,
            vec![boroughs_path],
            json!(["BoroCode", "BoroName"]),
            json!({"Shape_Area": "max"}),
            json!([
                {"id": "parts", "capability": "multipart_to_singleparts", "params": {}},
                collect(json!(["BoroCode", "BoroName"]), json!({"Shape_Area": "max"}))
            ]),
        ),
        (
            &regions,
            vec![regions_path.clone()],
            json!(["continent"]),
            json!({"pop": "sum", "value": "avg", "id": "count"}),
            json!([collect(
                json!(["continent"]),
                json!({"pop": "sum", "value": "avg", "id": "count"})
            )]),
        ),
        (
            &regions,
            vec![regions_path],
            json!([]),
            json!({"id": "min"}),
            json!([collect(json!([]), json!({"id": "min"}))]),
        ),
        (
            &countries,
            vec![countries_path, cities_path],
            json!([]),
            json!({}),
            json!([
                {"id": "both", "capability": "merge_layers", "params": {"layers": [cities]}},
                collect(json!([]), json!({}))
            ]),
        ),
    ];
    let mut manifest = Vec::new();
    for (dataset, sources, fields, aggregates, steps) in cases {
        let explode = steps.to_string().contains("multipart_to_singleparts");
        for engine in ENGINES {
            let path = run(&state, dataset, engine, steps.clone()).await;
            manifest.push(json!({"label": format!("{engine} {steps}"), "path": path,
                "sources": sources, "fields": fields, "aggregates": aggregates,
                "explode": explode}));
        }
    }
    let file = dir.path().join("collected.json");
    std::fs::write(&file, serde_json::to_vec(&manifest).unwrap()).unwrap();
    let answer = run_python(COMPARE, &[&file.display().to_string()]);
    assert_eq!(answer.trim(), format!("compared {} cases", manifest.len()));
}
