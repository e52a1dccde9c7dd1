//! Each optimizer rule on its own: a pipeline lowered to a plan, the one rule run until it
//! changes nothing more, and the plan's text compared with what the rule must make of it (plan
//! in, plan text out). A case where a rule must leave the plan alone says so.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // tests fail by panicking

use geomill_planner::optimizer::{
    AssignEngine, BboxPrefilter, ConstantFold, EngineMode, FilterPushdown, FuseStages,
    OptimizerRule, PruneColumns, fixpoint,
};
use geomill_planner::plan::Plan;
use geomill_planner::plan_document;
use geomill_planner::schema::Catalog;
use geomill_planner::spec::Vars;
use serde_json::{Value, json};

fn catalog() -> Catalog {
    let path = std::env::current_dir()
        .unwrap()
        .join("../golden/catalog.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// `pipeline` lowered, not optimized.
fn lowered(pipeline: &Value) -> Plan {
    let vars = Vars::from_pairs(["output_dir=/out"]).unwrap();
    let mut plans = plan_document(pipeline, &catalog(), &vars).unwrap();
    plans.remove(0).1
}

/// Runs `rule` on `plan` as the optimizer runs it: to its fixpoint, the invariants checked.
fn run(rule: &dyn OptimizerRule, plan: &mut Plan) {
    fixpoint(rule, plan).unwrap();
}

/// The plan's text after [`run`].
fn after(rule: &dyn OptimizerRule, mut plan: Plan) -> String {
    run(rule, &mut plan);
    plan.explain()
}

/// Asserts that `rule` leaves the plan of `pipeline` as it was lowered.
fn assert_unchanged(rule: &dyn OptimizerRule, pipeline: &Value) {
    let plan = lowered(pipeline);
    let before = plan.explain();
    assert_eq!(after(rule, plan), before);
}

/// Asserts the plan text, line by line (for a readable failure).
fn assert_plan(actual: &str, expected: &str) {
    let actual: Vec<&str> = actual.lines().map(str::trim_end).collect();
    let expected: Vec<&str> = expected
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    assert_eq!(actual, expected, "\nactual plan:\n{}", actual.join("\n"));
}

fn steps(steps: Value) -> Value {
    json!({"name": "case", "steps": steps})
}

#[test]
fn constant_fold_folds_arithmetic_and_drops_true_filters() {
    let plan = lowered(&steps(json!([
        {"id": "always", "capability": "filter", "input": "countries", "params": {"where": "1 < 2"}},
        {"id": "big", "capability": "filter", "params": {"where": "pop_est > 2 * 1000"}}
    ])));
    assert_plan(
        &after(&ConstantFold, plan),
        r#"
        01)Filter "pop_est" > 2000 step=big [result]
        02)--Scan source=countries
        "#,
    );
}

#[test]
fn filter_pushdown_moves_an_attribute_filter_below_a_buffer() {
    let plan = lowered(&steps(json!([
        {"id": "ring", "capability": "buffer", "input": "boroughs", "params": {"distance": 10, "unit": "crs"}},
        {"id": "queens", "capability": "filter", "params": {"where": "BoroName = 'Queens'"}}
    ])));
    assert_plan(
        &after(&FilterPushdown, plan),
        r#"
        01)Map set=[geom=Buffer(10 crs units, 8 seg)] step=ring [result]
        02)--Map set=[geom=MakeValid] step=ring
        03)----Filter "BoroName" = 'Queens' step=queens
        04)------Scan source=boroughs
        "#,
    );
}

#[test]
fn filter_pushdown_leaves_a_filter_on_the_geometry_a_buffer_makes() {
    let pipeline = steps(json!([
        {"id": "ring", "capability": "buffer", "input": "boroughs", "params": {"distance": 10, "unit": "crs"}},
        {"id": "big", "capability": "filter", "params": {"where": "ST_Area(geom) > 1000"}}
    ]));
    assert_unchanged(&FilterPushdown, &pipeline);
}

#[test]
fn bbox_prefilter_adds_a_grown_box_below_a_planar_buffer() {
    let plan = lowered(&steps(json!([
        {"id": "ring", "capability": "buffer", "input": "boroughs", "params": {"distance": 1000, "unit": "crs"}},
        {"id": "box", "capability": "filter", "params": {"where": "ST_Intersects(geom, ST_MakeEnvelope(990000, 190000, 1000000, 200000))"}}
    ])));
    assert_plan(
        &after(&BboxPrefilter, plan),
        r#"
        01)Filter ST_Intersects("geom", ST_MakeEnvelope(990000, 190000, 1000000, 200000)) step=box [result]
        02)--Map set=[geom=Buffer(1000 crs units, 8 seg)] step=ring
        03)----Filter ST_Intersects("geom", ST_MakeEnvelope(989000, 189000, 1001000, 201000)) step=box
        04)------Map set=[geom=MakeValid] step=ring
        05)--------Scan source=boroughs
        "#,
    );
}

#[test]
fn bbox_prefilter_leaves_a_buffer_another_step_also_reads() {
    // `all` reads every ring: a box below the buffer would take rings from it.
    let pipeline = steps(json!([
        {"id": "ring", "capability": "buffer", "input": "boroughs", "params": {"distance": 1000, "unit": "crs"}},
        {"id": "box", "capability": "filter", "params": {"where": "ST_Intersects(geom, ST_MakeEnvelope(990000, 190000, 1000000, 200000))"}},
        {"id": "save", "capability": "export", "params": {"destination": "{output_dir}/near.gpkg"}},
        {"id": "all", "capability": "calculate", "input": "ring", "params": {"expressions": {"label": "upper(BoroName)"}}}
    ]));
    assert_unchanged(&BboxPrefilter, &pipeline);
}

#[test]
fn prune_columns_folds_a_drop_into_the_scan() {
    let plan = lowered(&steps(json!([
        {"id": "rich", "capability": "filter", "input": "countries", "params": {"where": "gdp_md_est > 1000000"}},
        {"id": "slim", "capability": "drop_field", "params": {"fields": ["iso_a3", "pop_est"]}}
    ])));
    assert_plan(
        &after(&PruneColumns, plan),
        r#"
        01)Filter "gdp_md_est" > 1000000 step=rich [result]
        02)--Scan source=countries columns=[continent, name, gdp_md_est, geom]
        "#,
    );
}

#[test]
fn assign_engine_in_hybrid_mode_sends_joins_native_and_attribute_work_to_postgis() {
    let plan = lowered(&steps(json!([
        {"id": "big", "capability": "filter", "input": "countries", "params": {"where": "pop_est > 1000"}},
        {"id": "counted", "capability": "spatial_aggregate", "params": {"ref_layer": "cities", "predicate": "within", "agg": {"*": "count"}}}
    ])));
    let text = after(
        &AssignEngine {
            mode: EngineMode::Hybrid,
        },
        plan,
    );
    let line = |word: &str| text.lines().find(|l| l.contains(word)).unwrap().to_owned();
    assert!(line("SpatialAggregate").contains("engine=native"), "{text}");
    assert!(line("Filter").contains("engine=postgis"), "{text}");
    assert!(
        line("Scan source=countries").contains("engine=postgis"),
        "{text}"
    );
}

#[test]
fn assign_engine_in_embedded_mode_dissolves_a_whole_layer_natively_with_its_repair() {
    let engine = AssignEngine {
        mode: EngineMode::Embedded,
    };
    let whole = after(
        &engine,
        lowered(&steps(json!([
            {"id": "merged", "capability": "dissolve", "input": "countries", "params": {}}
        ]))),
    );
    let line = |text: &str, word: &str| text.lines().find(|l| l.contains(word)).unwrap().to_owned();
    assert!(
        line(&whole, "Aggregate").contains("engine=native why=\"dissolve"),
        "{whole}"
    );
    assert!(
        line(&whole, "MakeValid").contains("engine=native why=\"make_valid"),
        "{whole}"
    );
    assert!(line(&whole, "Scan").contains("engine=duckdb"), "{whole}");
    // By groups or with aggregates, the kernel does not take it: all of it stays in DuckDB.
    let grouped = after(
        &engine,
        lowered(&steps(json!([
            {"id": "merged", "capability": "dissolve", "input": "countries", "params": {"by": ["continent"]}}
        ]))),
    );
    assert!(!grouped.contains("engine=native"), "{grouped}");
}

#[test]
fn assign_engine_in_embedded_mode_aggregates_points_per_polygon_natively() {
    let engine = AssignEngine {
        mode: EngineMode::Embedded,
    };
    let within = after(
        &engine,
        lowered(&steps(json!([
            {"id": "counted", "capability": "spatial_aggregate", "input": "countries",
             "params": {"ref_layer": "cities", "predicate": "within", "agg": {"*": "count"}}}
        ]))),
    );
    let line = |text: &str, word: &str| text.lines().find(|l| l.contains(word)).unwrap().to_owned();
    assert!(
        line(&within, "SpatialAggregate").contains("engine=native why=\"points per polygon"),
        "{within}"
    );
    // A predicate the kernel has no form for stays in DuckDB.
    let contains = after(
        &engine,
        lowered(&steps(json!([
            {"id": "counted", "capability": "spatial_aggregate", "input": "countries",
             "params": {"ref_layer": "cities", "predicate": "contains", "agg": {"*": "count"}}}
        ]))),
    );
    assert!(!contains.contains("engine=native"), "{contains}");
}

#[test]
fn fuse_stages_runs_consecutive_nodes_of_one_engine_as_one_stage() {
    let pipeline = steps(json!([
        {"id": "big", "capability": "filter", "input": "countries", "params": {"where": "pop_est > 1000"}},
        {"id": "named", "capability": "calculate", "params": {"expressions": {"label": "upper(name)"}}}
    ]));
    let mut plan = lowered(&pipeline);
    run(
        &AssignEngine {
            mode: EngineMode::Embedded,
        },
        &mut plan,
    );
    let text = after(&FuseStages, plan);
    assert!(
        text.lines()
            .filter(|l| !l.contains("Scan"))
            .all(|l| l.contains("stage=1")),
        "{text}"
    );
}

#[test]
fn assign_engine_gives_diffs_and_collected_parts_to_sql_as_attribute_joins() {
    let pipeline = steps(json!([
        {"id": "old", "capability": "filter", "input": "countries", "params": {"where": "pop_est > 1000"}},
        {"id": "changes", "capability": "vector_diff", "input": "countries",
         "params": {"ref_layer": "old", "key": ["iso_a3"]}},
        {"id": "joined", "capability": "attribute_join", "params": {"other": "old", "on": ["iso_a3"], "columns": ["gdp_md_est"]}},
        {"id": "parts", "capability": "singleparts_to_multipart", "params": {"fields": ["continent"]}}
    ]));
    for (mode, engine) in [
        (EngineMode::Native, "engine=duckdb"),
        (EngineMode::Hybrid, "engine=postgis"),
    ] {
        let text = after(&AssignEngine { mode }, lowered(&pipeline));
        let line = |word: &str| text.lines().find(|l| l.contains(word)).unwrap().to_owned();
        for operator in ["Diff", "Join", "Aggregate"] {
            assert!(
                line(operator).contains(engine),
                "{mode:?} {operator}: {text}"
            );
        }
        assert!(line("Diff").contains("Diff (no native kernel)"), "{text}");
    }
}
