//! Property tests over generated pipelines: lowering never panics, optimisation keeps the
//! result's schema, and the emitted SQL of both dialects re-parses.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // tests fail by panicking

use geomill_planner::optimizer::EngineMode;
use geomill_planner::schema::Catalog;
use geomill_planner::spec::Vars;
use geomill_planner::sql::{Dialect, emit};
use geomill_planner::{compile, plan_document};
use proptest::prelude::*;
use serde_json::{Value, json};
use sqlparser::dialect::{DuckDbDialect, PostgreSqlDialect};
use sqlparser::parser::Parser;

fn catalog() -> Catalog {
    let text = std::fs::read_to_string("../golden/catalog.json").unwrap();
    serde_json::from_str(&text).unwrap()
}

/// One or two steps that are valid on any relation with the countries' columns; `i` keeps the
/// names of added fields unique.
fn steps_for(kind: u8, i: usize, n: u32) -> Vec<(String, Value)> {
    let f = |name: &str| format!("{name}_{i}");
    match kind {
        0 => vec![(
            "filter".into(),
            json!({"where": format!("pop_est > {n} AND continent <> 'Antarctica'")}),
        )],
        1 => vec![(
            "buffer".into(),
            json!({"distance": n % 5000 + 1, "unit": "meters"}),
        )],
        2 => vec![("centroid".into(), json!({}))],
        3 => vec![("simplify".into(), json!({"tolerance": 0.01}))],
        4 => vec![(
            "calculate".into(),
            json!({"expressions": {f("x"): format!("pop_est * {n} + 1")}}),
        )],
        5 => vec![
            (
                "add_field".into(),
                json!({"name": f("tmp"), "type": "integer", "value": n}),
            ),
            ("drop_field".into(), json!({"fields": [f("tmp")]})),
        ],
        6 => vec![(
            "sort".into(),
            json!({"by": [{"field": "pop_est", "descending": n.is_multiple_of(2)}]}),
        )],
        7 => vec![("top_n".into(), json!({"n": n % 20 + 1, "by": "gdp_md_est"}))],
        8 => vec![(
            "area_length".into(),
            json!({"field_area": f("area"), "unit": "km2"}),
        )],
        9 => vec![(
            "case_when".into(),
            json!({"field": f("size"), "cases": [{"when": "pop_est > 1000000", "then": "big"}], "else": "small"}),
        )],
        10 => vec![(
            "spatial_join".into(),
            json!({"ref_layer": "cities", "columns": ["name"], "how": "left"}),
        )],
        11 => vec![(
            "intersects".into(),
            json!({"ref_layer": "cities", "invert": n.is_multiple_of(2)}),
        )],
        12 => vec![("convex_hull".into(), json!({}))],
        13 => vec![("reproject".into(), json!({"to": "EPSG:3857"}))],
        14 => vec![("deduplicate".into(), json!({"fields": ["continent"]}))],
        _ => vec![("random_sample".into(), json!({"n": n % 50 + 1, "seed": n}))],
    }
}

/// A pipeline over `countries`: mostly a chain, sometimes a step reading an earlier step.
fn pipeline() -> impl Strategy<Value = Value> {
    prop::collection::vec(
        (
            0u8..16,
            0u32..100_000_000,
            any::<bool>(),
            any::<prop::sample::Index>(),
        ),
        1..10,
    )
    .prop_map(|picks| {
        let mut steps: Vec<Value> = Vec::new();
        for (i, (kind, n, branch, pick)) in picks.into_iter().enumerate() {
            for (k, (capability, params)) in steps_for(kind, i, n).into_iter().enumerate() {
                let id = format!("s{}", steps.len());
                let input = if steps.is_empty() {
                    Value::String("countries".into())
                } else if branch && k == 0 {
                    steps[pick.index(steps.len())]["id"].clone()
                } else {
                    Value::Null
                };
                let mut step = json!({"id": id, "capability": capability, "params": params});
                if !input.is_null() {
                    step["input"] = input;
                }
                steps.push(step);
            }
        }
        json!({"name": "generated", "steps": steps})
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn generated_pipelines_plan_optimise_and_emit_parsable_sql(document in pipeline()) {
        let catalog = catalog();
        let vars = Vars::default();
        let planned = compile(&document, &catalog, &vars, EngineMode::Embedded)
            .map_err(|e| TestCaseError::fail(format!("{e}\n{document:#}")))?;
        for p in planned {
            let schema = |plan: &geomill_planner::plan::Plan| plan.result.and_then(|r| plan.node(r)).and_then(|n| n.schema.clone());
            prop_assert_eq!(schema(&p.plan), schema(&p.optimized), "result schema changed:\n{}\n{}", p.plan.explain(), p.optimized.explain());
            prop_assert!(schema(&p.plan).is_some());
            for dialect in Dialect::ALL {
                let script = emit(&p.optimized, dialect).map_err(|e| TestCaseError::fail(e.to_string()))?;
                let text = script.to_text();
                let parsed = match dialect {
                    Dialect::Duckdb => Parser::parse_sql(&DuckDbDialect {}, &text),
                    Dialect::Postgis => Parser::parse_sql(&PostgreSqlDialect {}, &text),
                };
                prop_assert!(parsed.is_ok(), "{:?} SQL does not parse: {:?}\n{}", dialect, parsed.err(), text);
            }
        }
    }

    #[test]
    fn arbitrary_json_never_panics_the_planner(document in any_json()) {
        let _ = plan_document(&document, &catalog(), &Vars::default());
    }
}

/// Arbitrary JSON, biased towards the shapes the planner reads.
fn any_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        prop::sample::select(vec![
            "countries",
            "buffer",
            "filter",
            "pop_est > 1",
            "s0",
            "",
            "{date}",
            "meters"
        ])
        .prop_map(|s| Value::String(s.to_owned())),
    ];
    leaf.prop_recursive(4, 32, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map(
                prop::sample::select(vec![
                    "id",
                    "name",
                    "capability",
                    "steps",
                    "params",
                    "input",
                    "where",
                    "distance",
                    "jobs",
                    "config",
                    "when"
                ]),
                inner,
                0..5
            )
            .prop_map(|m| Value::Object(m.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())),
        ]
    })
}
