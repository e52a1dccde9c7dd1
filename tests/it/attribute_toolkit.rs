//! The attribute and reshape capabilities against pandas: the Natural Earth countries and the
//! NYC boroughs uploaded, each capability (select_columns, temporal_filter, lookup_table,
//! attribute_join, pivot over listed values and over the values found in the data, unpivot,
//! describe, temporal_join with the uploaded cities) run
//! through `/api/pipelines/execute` on the
//! embedded and PostGIS engines, and each result file compared with pandas' answer computed
//! from the source file: the same rows (in any order), the same fields, equal values (numbers
//! within 1e-6 relative).

use serde_json::{Value, json};

use crate::common;
use common::pipeline::named_step;
use common::real::run_python;
use common::uploads::{run, shared_datasets, shared_paths};

/// Compares each case with pandas; prints one line per case that differs.
const COMPARE: &str = r##"
import hashlib, json, sys, warnings
import geopandas as gpd, numpy as np, pandas as pd, shapely
warnings.filterwarnings("ignore")
problems = []
cases = json.load(open(sys.argv[1]))

def close(a, b):
    if a is None or b is None or (isinstance(a, float) and np.isnan(a)) or (isinstance(b, float) and np.isnan(b)):
        return pd.isna(a) and pd.isna(b)
    if isinstance(a, (int, float, np.number)) and isinstance(b, (int, float, np.number)):
        return bool(np.isclose(float(a), float(b), rtol=1e-6, atol=1e-9))
    return str(a) == str(b)

def same_mapping(ours, theirs, what):
    """ours and theirs: dict key -> value; answers a problem or None."""
    if set(ours) != set(theirs):
        return f"{what}: keys differ: {sorted(set(ours) ^ set(theirs))[:5]}"
    bad = [k for k in theirs if not close(ours[k], theirs[k])]
    return f"{what}: {len(bad)} differ, first {bad[0]}: {ours[bad[0]]} vs {theirs[bad[0]]}" if bad else None

def select_columns(ours, src, p):
    cols = [c for c in ours.columns if c != "geometry"]
    if cols != p["fields"]:
        return f"columns {cols}, expected {p['fields']}"
    if len(ours) != len(src):
        return f"{len(ours)} rows, the source has {len(src)}"
    return same_mapping(dict(zip(ours.iso_a3 + "|" + ours.name, ours.name)),
                        dict(zip(src.iso_a3 + "|" + src.name, src.name)), "names")

def founded(src):
    return pd.Timestamp("2000-01-01") + pd.to_timedelta(src.gdp_md_est % 7000, unit="D")

def temporal_filter(ours, src, p):
    when = founded(src)
    keep = src[(when >= pd.Timestamp("2005-01-01")) & (when < pd.Timestamp("2011-01-01"))]
    if sorted(ours.name) != sorted(keep.name):
        return f"kept {len(ours)} rows, pandas {len(keep)}"

def lookup_map(ours, src, p):
    expected = src.continent.map(p["map"]).fillna(p["default"])
    return same_mapping(dict(zip(ours.name, ours.region)), dict(zip(src.name, expected)), "region")

def continent_sums(src):
    return src.groupby("continent").pop_est.sum()

def lookup_table(ours, src, p):
    sums = continent_sums(src)
    return same_mapping(dict(zip(ours.name, ours.continent_pop)),
                        dict(zip(src.name, src.continent.map(sums))), "continent_pop")

def attribute_join(ours, src, p):
    if len(ours) != len(src):
        return f"{len(ours)} rows, the source has {len(src)}"
    sums = continent_sums(src)
    merged = src.merge(sums.rename("pop_est_sum").reset_index(), on="continent", how="left")
    problem = same_mapping(dict(zip(ours.name, ours.pop_est_sum)),
                           dict(zip(merged.name, merged.pop_est_sum)), "pop_est_sum")
    if problem:
        return problem
    return same_mapping(dict(zip(ours.name, ours.pop_est)), dict(zip(src.name, src.pop_est)), "pop_est")

def pivot(ours, src, p):
    df = src.assign(size=np.where(src.pop_est > 50000000, "large", "small"))
    table = df.pivot_table(index="continent", columns="size", values="pop_est", aggfunc="sum")
    for value in ["large", "small"]:
        problem = same_mapping(dict(zip(ours.continent, ours[value])),
                               {k: v for k, v in table[value].items()}, value)
        if problem:
            return problem

def pivot_found(ours, src, p):
    size = np.where(src.pop_est > 50000000, "large", np.where(src.pop_est > 5000000, "medium", "small"))
    df = src.assign(size=size)
    table = df.pivot_table(index="continent", columns="size", values="gdp_md_est", aggfunc="median", fill_value=-1)
    names = sorted(c for c in ours.columns if c not in ("continent", "geometry"))
    if names != sorted("gdp_" + c for c in table.columns):
        return f"columns {names}, pandas {list(table.columns)}"
    for value in table.columns:
        problem = same_mapping(dict(zip(ours.continent, ours["gdp_" + value])), dict(table[value].items()), value)
        if problem:
            return problem
    for continent, geometry in zip(*df.drop_duplicates("continent")[["continent", "geometry"]].T.values):
        mine = ours.geometry[ours.continent == continent].iloc[0]
        if shapely.hausdorff_distance(mine, geometry) > 1e-9:
            return f"{continent}: not the group's first geometry"

def unpivot(ours, src, p):
    melted = src.melt(id_vars=["name"], value_vars=p["fields"], var_name="measure", value_name="amount")
    return same_mapping(dict(zip(ours.name + "|" + ours.measure, ours.amount)),
                        dict(zip(melted.name + "|" + melted.measure, melted.amount)), "amount")

def describe(ours, src, p):
    rows = {r["field"]: r for r in ours.to_dict("records")}
    fields = [c for c in src.columns if c != "geometry"]
    if sorted(rows) != sorted(fields):
        return f"fields {sorted(rows)}, expected {sorted(fields)}"
    for f in fields:
        s, r = src[f], rows[f]
        expected = {"count": s.count(), "nulls": s.isna().sum(), "distinct": s.nunique()}
        if pd.api.types.is_numeric_dtype(s):
            expected.update(min=s.min(), max=s.max(), mean=s.mean(), stddev=s.std(ddof=1))
        else:
            expected.update(min=None, max=None, mean=None, stddev=None)
        problem = same_mapping({k: r[k] for k in expected}, expected, f"describe {f}")
        if problem:
            return problem

def temporal_join(ours, src, p):
    """Every (country, city) pair whose dates are within the tolerance (both ends included; any
    gap without one), the city's date at or before the country's with `direction: backward`;
    `nearest`: per country the pair of the smallest gap, ties to the earlier date, then to the
    city whose WKB hashes lowest, countries without one kept with NULLs; `all`: every pair.
    With `keep_other_field: false` the city's date is not brought."""
    countries = src.assign(founded=founded(src))
    cities = gpd.read_file(p["cities"])
    cities["when"] = pd.Timestamp("2000-01-01") + pd.to_timedelta(cities.name.str.len() * 300, unit="D")
    cities["tie"] = [hashlib.md5(shapely.to_wkb(g, hex=True).lower().encode()).hexdigest() for g in cities.geometry]
    pairs = countries[["name", "founded"]].merge(
        cities[["name", "when", "tie"]].rename(columns={"name": "name_right"}), how="cross")
    pairs["gap"] = (pairs.when - pairs.founded).abs()
    if "tolerance" in p:
        pairs = pairs[pairs.gap <= pd.Timedelta(days=p["tolerance"]["amount"])]
    if p.get("direction") == "backward":
        pairs = pairs[pairs.when <= pairs.founded]
    if ("founded_right" in ours.columns) != p.get("keep_other_field", True):
        return f"the city's date brought: {'founded_right' in ours.columns}"
    if p.get("match", "nearest") == "nearest":
        if len(ours) != len(countries):
            return f"{len(ours)} rows, the source has {len(countries)}"
        best = pairs.sort_values(["gap", "when", "tie"]).drop_duplicates("name")
        if best.empty or len(best) == len(countries):
            return f"the reference matched {len(best)} of {len(countries)} countries: pick another tolerance"
        return same_mapping(dict(zip(ours.name, ours.name_right)),
                            dict(zip(countries.name, countries.name.map(dict(zip(best.name, best.name_right))))),
                            "name_right")
    got, want = sorted(zip(ours.name, ours.name_right)), sorted(zip(pairs.name, pairs.name_right))
    if got != want:
        return f"{len(got)} pairs, pandas {len(want)}: {sorted(set(got) ^ set(want))[:4]}"

CHECKS = {"select_columns": select_columns, "temporal_join": temporal_join, "temporal_filter": temporal_filter,
          "lookup_map": lookup_map, "lookup_table": lookup_table, "attribute_join": attribute_join,
          "pivot": pivot, "pivot_found": pivot_found, "unpivot": unpivot, "describe": describe}

for case in cases:
    label, p = case["label"], case["params"]
    ours = gpd.read_file(case["path"])
    source = gpd.read_file(case["source"])
    problem = CHECKS[case["check"]](ours, source, p)
    if problem:
        problems.append(f"{label}: {problem}"[:400])
print("\n".join(problems) or f"compared {len(cases)} cases")
"##;

/// The continents' population totals, as the step `totals`.
fn totals() -> Value {
    json!({"id": "totals", "capability": "dissolve",
        "params": {"by": ["continent"], "aggregates": {"pop_est": "sum"}}})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn attribute_capabilities_equal_pandas_on_both_engines() {
    let (dir, state, [countries, cities, _boroughs]) = shared_datasets("attributes").await;
    let [countries_path, cities_path, _] = shared_paths();
    let select = json!({"fields": ["iso_a3", "name"], "reorder": true});
    let range = json!({"field": "founded", "from": "2005-01-01", "to": "2010-12-31"});
    let lookup_map = json!({"field": "continent", "output": "region", "default": "other",
        "map": {"Africa": "EMEA", "Europe": "EMEA", "Asia": "APAC", "Oceania": "APAC"}});
    let lookup_table = json!({"input": "input", "field": "continent", "output": "continent_pop",
        "table": "totals", "value": "pop_est_sum"});
    let join = json!({"input": "input", "other": "totals", "on": ["continent"]});
    let pivot = json!({"index": ["continent"], "columns": "size", "values": "pop_est",
        "column_values": ["large", "small"]});
    // The columns found in the data (native kernel), pandas' median, a fill, the first geometry.
    let pivot_found = json!({"index": ["continent"], "columns": "size", "values": "gdp_md_est",
        "aggregate": "median", "fill_value": -1, "prefix": "gdp_", "geometry": "first"});
    let unpivot = json!({"fields": ["pop_est", "gdp_md_est"], "name_field": "measure",
        "value_field": "amount"});
    let mut cases: Vec<(&str, Value, Value)> = vec![
        (
            "select_columns",
            select.clone(),
            json!([named_step("s", "select_columns", &select)]),
        ),
        (
            "temporal_filter",
            range.clone(),
            json!([
                {"id": "dated", "capability": "calculate", "params": {"expressions": {
                    "founded": "CAST('2000-01-01' AS DATE) + CAST(gdp_md_est % 7000 AS INTEGER)"}}},
                named_step("s", "temporal_filter", &range)
            ]),
        ),
        (
            "lookup_map",
            lookup_map.clone(),
            json!([named_step("s", "lookup_table", &lookup_map)]),
        ),
        (
            "lookup_table",
            lookup_table.clone(),
            json!([totals(), named_step("s", "lookup_table", &lookup_table)]),
        ),
        (
            "attribute_join",
            join.clone(),
            json!([totals(), named_step("s", "attribute_join", &join)]),
        ),
        (
            "pivot",
            pivot.clone(),
            json!([
                {"id": "sized", "capability": "case_when", "params": {"field": "size",
                    "cases": [{"when": "pop_est > 50000000", "then": "large"}], "else": "small"}},
                named_step("s", "pivot", &pivot)
            ]),
        ),
        (
            "pivot_found",
            pivot_found.clone(),
            json!([
                {"id": "sized", "capability": "case_when", "params": {"field": "size",
                    "cases": [{"when": "pop_est > 50000000", "then": "large"},
                              {"when": "pop_est > 5000000", "then": "medium"}], "else": "small"}},
                named_step("s", "pivot", &pivot_found)
            ]),
        ),
        (
            "unpivot",
            unpivot.clone(),
            json!([named_step("s", "unpivot", &unpivot)]),
        ),
        (
            "describe",
            json!({}),
            json!([named_step("s", "describe", json!({}))]),
        ),
    ];
    let dated = json!([
        {"id": "dated", "capability": "calculate", "params": {"expressions": {
            "founded": "CAST('2000-01-01' AS DATE) + CAST(gdp_md_est % 7000 AS INTEGER)"}}},
        {"id": "events", "capability": "calculate", "input": cities, "params": {"expressions": {
            "founded": "CAST('2000-01-01' AS DATE) + CAST(length(name) * 300 AS INTEGER)"}}}
    ]);
    for params in [
        json!({"input": "dated", "other": "events", "field": "founded",
               "tolerance": {"amount": 60, "unit": "days"}}),
        json!({"input": "dated", "other": "events", "field": "founded", "match": "all",
               "how": "inner", "tolerance": {"amount": 10, "unit": "days"}}),
        json!({"input": "dated", "other": "events", "field": "founded",
               "direction": "backward", "keep_other_field": false}),
    ] {
        let mut steps = dated.clone();
        if let Some(list) = steps.as_array_mut() {
            list.push(named_step("s", "temporal_join", &params));
        }
        let mut reference = params.clone();
        reference["cities"] = json!(cities_path);
        cases.push(("temporal_join", reference, steps));
    }
    let mut manifest = Vec::new();
    for (check, params, steps) in cases {
        for engine in ["embedded", "postgis"] {
            let path = run(&state, &countries, engine, steps.clone()).await;
            manifest.push(json!({"label": format!("{engine} {check}"), "path": path,
                "check": check, "params": params, "source": countries_path}));
        }
    }
    let file = dir.path().join("attributes.json");
    std::fs::write(&file, serde_json::to_vec(&manifest).unwrap()).unwrap();
    let answer = run_python(COMPARE, &[&file.display().to_string()]);
    assert_eq!(answer.trim(), format!("compared {} cases", manifest.len()));
}
