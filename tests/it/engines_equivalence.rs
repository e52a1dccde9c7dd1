//! The embedded and PostGIS engines give the same results on generated inputs: seeded random
//! boxes and triangles on a half-degree grid, points on a quarter-degree grid (so many lie
//! exactly on edges and vertices: the boundary cases of predicates), attributes with NULLs, run
//! through pipelines covering the capabilities both engines execute, and compared like the
//! golden cases (same rows and attributes, geometries within the stated tolerance). The native
//! engine (kernels where they apply, DuckDB for the rest) runs the same pipelines and is
//! compared with the embedded engine the same way, both results read back from the GeoPackage
//! a run writes.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // tests fail by panicking

use crate::common;
use geomill_backends::executor::RunControl;

use common::compare::{differences, rows};
use common::golden::statements;
use geomill_backends::duckdb::{EmbeddedEngine, EmbeddedOptions};
use geomill_backends::executor::steps_of;
use geomill_backends::executor::{ScriptStep, run_embedded};
use geomill_backends::postgis::PostgisEngine;
use geomill_planner::optimizer::EngineMode;
use geomill_planner::schema::{Catalog, Column, FieldType, Schema};
use geomill_planner::spec::Vars;
use geomill_planner::sql::{Dialect, emit};
use proptest::prelude::*;
use serde_json::{Value, json};

/// A polygon: a box or a right triangle, corners on the half-degree grid.
#[derive(Debug, Clone)]
struct Shape {
    x: i32,
    y: i32,
    width: i32,
    height: i32,
    triangle: bool,
    label: Option<&'static str>,
    value: Option<i32>,
}

impl Shape {
    fn wkt(&self) -> String {
        let (x0, y0) = (f64::from(self.x) * 0.5, f64::from(self.y) * 0.5);
        let (x1, y1) = (
            x0 + f64::from(self.width) * 0.5,
            y0 + f64::from(self.height) * 0.5,
        );
        if self.triangle {
            format!("POLYGON (({x0} {y0}, {x1} {y0}, {x0} {y1}, {x0} {y0}))")
        } else {
            format!("POLYGON (({x0} {y0}, {x1} {y0}, {x1} {y1}, {x0} {y1}, {x0} {y0}))")
        }
    }
}

/// A point on the quarter-degree grid.
#[derive(Debug, Clone)]
struct Spot {
    x: i32,
    y: i32,
    label: Option<&'static str>,
    value: Option<i32>,
}

const LABELS: [Option<&str>; 4] = [Some("a"), Some("b"), Some("c"), None];

fn shapes() -> impl Strategy<Value = Vec<Shape>> {
    prop::collection::vec(
        (
            -20..20_i32,
            -20..20_i32,
            1..8_i32,
            1..8_i32,
            any::<bool>(),
            0..4_usize,
            prop::option::of(-50..50_i32),
        )
            .prop_map(|(x, y, width, height, triangle, label, value)| Shape {
                x,
                y,
                width,
                height,
                triangle,
                label: LABELS[label],
                value,
            }),
        1..12,
    )
}

fn spots() -> impl Strategy<Value = Vec<Spot>> {
    prop::collection::vec(
        (
            -44..44_i32,
            -44..44_i32,
            0..4_usize,
            prop::option::of(-50..50_i32),
        )
            .prop_map(|(x, y, label, value)| Spot {
                x,
                y,
                label: LABELS[label],
                value,
            }),
        1..60,
    )
}

fn text(value: Option<&str>) -> String {
    value.map_or_else(|| "NULL".to_owned(), |v| format!("'{v}'"))
}

fn number(value: Option<i32>) -> String {
    value.map_or_else(|| "NULL".to_owned(), |v| format!("{v}.5"))
}

/// Loads the generated layers into DuckDB as `polys` and `pts`.
fn load(duck: &EmbeddedEngine, shapes: &[Shape], spots: &[Spot]) {
    let polys: Vec<String> = shapes
        .iter()
        .enumerate()
        .map(|(i, s)| {
            format!(
                "({i}, {}, CAST({} AS DOUBLE), ST_GeomFromText('{}'))",
                text(s.label),
                number(s.value),
                s.wkt()
            )
        })
        .collect();
    let pts: Vec<String> = spots
        .iter()
        .enumerate()
        .map(|(i, p)| {
            format!(
                "({i}, {}, CAST({} AS DOUBLE), ST_Point({}, {}))",
                text(p.label),
                number(p.value),
                f64::from(p.x) * 0.25,
                f64::from(p.y) * 0.25
            )
        })
        .collect();
    duck.execute_batch(&format!(
        "CREATE OR REPLACE TABLE polys AS SELECT * FROM (VALUES {}) AS v(id, label, value, geom);
         CREATE OR REPLACE TABLE pts AS SELECT * FROM (VALUES {}) AS v(id, label, value, geom);",
        polys.join(", "),
        pts.join(", ")
    ))
    .unwrap();
}

fn catalog() -> Catalog {
    let schema = Schema {
        columns: vec![
            Column {
                name: "id".into(),
                ty: FieldType::Integer,
            },
            Column {
                name: "label".into(),
                ty: FieldType::Text,
            },
            Column {
                name: "value".into(),
                ty: FieldType::Double,
            },
            Column {
                name: "geom".into(),
                ty: FieldType::Geometry,
            },
        ],
        crs: Some("EPSG:4326".into()),
    };
    let mut catalog = Catalog::default();
    catalog.sources.insert("polys".into(), schema.clone());
    catalog.sources.insert("pts".into(), schema);
    catalog
}

/// The pipelines run on both engines, by name.
fn pipelines() -> Vec<(&'static str, Value)> {
    let step = |capability: &str, input: &str, params: Value| {
        json!({"name": capability, "steps": [
            {"id": "out", "capability": capability, "input": input, "params": params}]})
    };
    vec![
        (
            "filter",
            step(
                "filter",
                "pts",
                json!({"where": "value > 10 OR label = 'a'"}),
            ),
        ),
        (
            "join intersects",
            step(
                "spatial_join",
                "pts",
                json!({"ref_layer": "polys", "predicate": "intersects", "columns": ["id", "label"]}),
            ),
        ),
        (
            "join within, left",
            step(
                "spatial_join",
                "pts",
                json!({"ref_layer": "polys", "predicate": "within", "columns": ["id"], "how": "left"}),
            ),
        ),
        (
            "count within",
            step(
                "spatial_aggregate",
                "polys",
                json!({"ref_layer": "pts", "predicate": "within", "agg": {"*": "count", "value": "sum"}}),
            ),
        ),
        (
            "count touches",
            step(
                "spatial_aggregate",
                "polys",
                json!({"ref_layer": "pts", "predicate": "touches", "agg": {"*": "count"}}),
            ),
        ),
        (
            "semi join",
            step("intersects", "polys", json!({"ref_layer": "pts"})),
        ),
        (
            "buffer metres",
            step(
                "buffer",
                "pts",
                json!({"distance": 20000, "unit": "meters"}),
            ),
        ),
        ("centroid", step("centroid", "polys", json!({}))),
        (
            "dissolve",
            step(
                "dissolve",
                "polys",
                json!({"by": ["label"], "aggregates": {"value": "sum"}}),
            ),
        ),
        (
            "area",
            step(
                "area_length",
                "polys",
                json!({"field_area": "area_km2", "unit": "km2"}),
            ),
        ),
        ("clip", step("clip", "pts", json!({"mask": "polys"}))),
        (
            "nearest",
            step(
                "nearest_neighbor",
                "pts",
                json!({"ref_layer": "polys", "columns": ["id"], "distance_field": "d"}),
            ),
        ),
    ]
}

/// Runs `steps` as a run does and loads the GeoPackage it writes as table `table` (without the
/// GeoPackage's row numbers); answers how many native stages ran by their kernels.
fn run_to_table(duck: &EmbeddedEngine, steps: &[ScriptStep], result: &str, table: &str) -> usize {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("result.gpkg").display().to_string();
    let outcome = run_embedded(
        duck,
        &[],
        steps,
        result,
        Some(geomill_backends::executor::ResultFile {
            path: &file,
            crs: None,
        }),
        &RunControl::plain(),
    )
    .unwrap_or_else(|e| panic!("{table}: {e}"));
    duck.execute_batch(&format!(
        "CREATE OR REPLACE TABLE \"{table}\" AS SELECT * EXCLUDE (fid) FROM ST_Read('{file}')"
    ))
    .unwrap();
    outcome
        .native
        .iter()
        .filter(|r| r.declined.is_none())
        .count()
}

/// Plans `pipeline` on the native engine: its DuckDB steps with the native stages.
fn native_steps(pipeline: &Value) -> Vec<ScriptStep> {
    let planned =
        geomill_planner::compile(pipeline, &catalog(), &Vars::default(), EngineMode::Native)
            .unwrap_or_else(|e| panic!("{pipeline}: {e:?}"));
    let plan = &planned[0].optimized;
    steps_of(plan, &emit(plan, Dialect::Duckdb).unwrap())
}

/// Pipelines that must run natively on every input (none may decline): geometry kernels.
const NATIVE_KERNELS: [&str; 6] = [
    "join intersects",
    "count within",
    "count touches",
    "buffer metres",
    "centroid",
    "nearest",
];

/// Plans `pipeline` and answers (DuckDB script, PostGIS script, result table).
fn scripts(pipeline: &Value) -> (String, String, String) {
    let vars = Vars::default();
    let planned = geomill_planner::compile(pipeline, &catalog(), &vars, EngineMode::Embedded)
        .unwrap_or_else(|e| panic!("{pipeline}: {e:?}"));
    let plan = &planned[0].optimized;
    let duck = emit(plan, Dialect::Duckdb).unwrap();
    let pg = emit(plan, Dialect::Postgis).unwrap();
    (duck.to_text(), pg.to_text(), duck.result.unwrap())
}

fn compare(
    runtime: &tokio::runtime::Runtime,
    postgis: &PostgisEngine,
    dsn: &str,
    shapes: &[Shape],
    spots: &[Spot],
) -> Result<(), TestCaseError> {
    let duck = EmbeddedEngine::open(&EmbeddedOptions::default()).unwrap();
    load(&duck, shapes, spots);
    for table in ["polys", "pts"] {
        duck.copy_to_postgis(
            dsn,
            &format!("SELECT * FROM {table}"),
            ("public", table),
            Some(4326),
        )
        .unwrap();
    }
    for (name, pipeline) in pipelines() {
        let (duck_sql, pg_sql, result) = scripts(&pipeline);
        duck.execute_batch(&duck_sql)
            .unwrap_or_else(|e| panic!("{name} on DuckDB: {e}"));
        duck.execute_batch(&format!(
            "CREATE OR REPLACE TABLE duck_result AS SELECT * FROM \"{result}\""
        ))
        .unwrap();
        runtime
            .block_on(postgis.run_script(
                "results",
                &statements(&pg_sql),
                &[(result.clone(), "last".to_owned())],
                &|| false,
            ))
            .unwrap_or_else(|e| panic!("{name} on PostGIS: {e:?}"));
        duck.copy_from_postgis(dsn, ("results", "last"), "pg_result")
            .unwrap();
        let found = differences(&rows(&duck, "duck_result"), &rows(&duck, "pg_result"), None);
        prop_assert!(
            found.is_empty(),
            "{name} differs:\n  {}\nshapes {:?}\npoints {:?}",
            found.join("\n  "),
            shapes.iter().map(Shape::wkt).collect::<Vec<_>>(),
            spots
        );
        let embedded_steps = [ScriptStep {
            sql: duck_sql.clone(),
            parts: statements(&duck_sql),
            ..ScriptStep::default()
        }];
        run_to_table(&duck, &embedded_steps, &result, "embedded_file");
        let ran = run_to_table(&duck, &native_steps(&pipeline), &result, "native_file");
        prop_assert!(
            ran > 0 || !NATIVE_KERNELS.contains(&name),
            "{name}: a kernel declined the data"
        );
        let found = differences(
            &rows(&duck, "embedded_file"),
            &rows(&duck, "native_file"),
            None,
        );
        prop_assert!(
            found.is_empty(),
            "{name} differs natively:\n  {}\nshapes {:?}\npoints {:?}",
            found.join("\n  "),
            shapes.iter().map(Shape::wkt).collect::<Vec<_>>(),
            spots
        );
    }
    Ok(())
}

#[test]
fn generated_inputs_give_the_same_results_on_both_engines() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let dsn = runtime.block_on(common::postgis::fresh_database("equivalence"));
    let postgis = PostgisEngine::new(&dsn).unwrap();
    runtime
        .block_on(postgis.execute("CREATE SCHEMA results"))
        .unwrap();
    let config = ProptestConfig {
        cases: 24,
        // Seeded: the same inputs on every run and every machine.
        rng_algorithm: proptest::test_runner::RngAlgorithm::ChaCha,
        ..ProptestConfig::default()
    };
    let mut runner = proptest::test_runner::TestRunner::new_with_rng(
        config,
        proptest::test_runner::TestRng::from_seed(
            proptest::test_runner::RngAlgorithm::ChaCha,
            &[7; 32],
        ),
    );
    runner
        .run(&(shapes(), spots()), |(shapes, spots)| {
            compare(&runtime, &postgis, &dsn, &shapes, &spots)
        })
        .unwrap_or_else(|e| panic!("{e}"));
}
