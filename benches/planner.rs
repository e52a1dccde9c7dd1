//! Planner compile time: validate + lower + optimise + emit (both dialects) for a 50-step
//! pipeline over the golden catalog. `cargo bench --bench planner`.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use geomill_planner::optimizer::EngineMode;
use geomill_planner::schema::Catalog;
use geomill_planner::spec::Vars;
use geomill_planner::sql::{Dialect, emit};
use geomill_planner::{compile, plan_document};
use serde_json::{Value, json};

/// A 50-step pipeline: a chain of attribute, geometry and cross-layer steps with a few branches.
fn fifty_steps() -> Value {
    let mut steps = vec![
        json!({"id": "s0", "capability": "filter", "input": "countries", "params": {"where": "pop_est > 1000"}}),
    ];
    for i in 1..50 {
        let (capability, params) = match i % 10 {
            0 => (
                "filter",
                json!({"where": format!("pop_est > {i} AND continent <> 'Antarctica'")}),
            ),
            1 => (
                "calculate",
                json!({"expressions": {format!("x{i}"): format!("pop_est * {i} / NULLIF(gdp_md_est, 0)")}}),
            ),
            2 => ("buffer", json!({"distance": i * 10, "unit": "meters"})),
            3 => (
                "add_field",
                json!({"name": format!("f{i}"), "type": "integer", "value": i}),
            ),
            4 => ("drop_field", json!({"fields": [format!("f{}", i - 1)]})),
            5 => (
                "spatial_join",
                json!({"ref_layer": "cities", "columns": ["name"], "how": "left"}),
            ),
            6 => (
                "sort",
                json!({"by": [{"field": "pop_est", "descending": true}]}),
            ),
            7 => (
                "case_when",
                json!({"field": format!("c{i}"), "cases": [{"when": "pop_est > 1000000", "then": "big"}], "else": "small"}),
            ),
            8 => (
                "area_length",
                json!({"field_area": format!("a{i}"), "unit": "km2"}),
            ),
            _ => ("simplify", json!({"tolerance": 0.001})),
        };
        steps.push(json!({"id": format!("s{i}"), "capability": capability, "params": params}));
    }
    json!({"name": "fifty", "steps": steps})
}

fn catalog() -> Catalog {
    let text = std::fs::read_to_string("golden/catalog.json").unwrap_or_default();
    serde_json::from_str(&text).unwrap_or_default()
}

fn bench(c: &mut Criterion) {
    let document = fifty_steps();
    let catalog = catalog();
    let vars = Vars::default();
    let planned = compile(&document, &catalog, &vars, EngineMode::Embedded);
    assert!(
        planned.is_ok(),
        "the bench pipeline must plan: {:?}",
        planned.err()
    );
    assert!(
        catalog.get("countries").is_some(),
        "golden/catalog.json not found"
    );
    c.bench_function("validate+lower 50 steps", |b| {
        b.iter(|| plan_document(black_box(&document), &catalog, &vars).map(|p| p.len()))
    });
    c.bench_function("validate+lower+optimise+emit 50 steps", |b| {
        b.iter(|| {
            let planned = compile(black_box(&document), &catalog, &vars, EngineMode::Embedded)
                .unwrap_or_default();
            planned
                .iter()
                .flat_map(|p| {
                    Dialect::ALL.map(|d| {
                        emit(&p.optimized, d)
                            .map(|s| s.statements.len())
                            .unwrap_or(0)
                    })
                })
                .sum::<usize>()
        })
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
