//! Comparing two results of the same plan (embedded DuckDB and PostGIS), both held in one
//! DuckDB: same rows, same columns, equal attributes, geometries equal on their measures within
//! stated tolerances.

use std::cmp::Ordering;
use std::time::Duration;

use geomill_backends::duckdb::EmbeddedEngine;
use serde_json::{Map, Value};

/// Relative tolerance for numbers (attributes, areas, lengths): the engines link different
/// builds of GEOS and PROJ, so the last digits of computed values may differ.
pub const RELATIVE: f64 = 1e-6;
/// Absolute tolerance for coordinates of centroids, in the layer's units.
pub const COORDINATE: f64 = 1e-6;

/// A result row as compared: its attributes, and measures of its geometry computed by the same
/// engine (DuckDB) for both results.
#[derive(Debug, Clone)]
pub struct ComparedRow {
    attributes: Map<String, Value>,
    shape: Vec<Value>,
}

/// The geometry measures each row is compared on.
const SHAPE: [&str; 7] = [
    "__kind",
    "__empty",
    "__area",
    "__length",
    "__perimeter",
    "__cx",
    "__cy",
];

pub fn rows(engine: &EmbeddedEngine, table: &str) -> Vec<ComparedRow> {
    // A table without geometry (a `describe` summary) is compared on its attributes alone.
    let has_geom = engine
        .query_i64(&format!(
            "SELECT count(*) FROM information_schema.columns \
             WHERE table_name = '{table}' AND column_name = 'geom'"
        ))
        .unwrap_or_else(|e| panic!("{table}: {e}"))
        > 0;
    let sql = if has_geom {
        format!(
            "SELECT * EXCLUDE (geom), ST_GeometryType(geom) AS __kind, ST_IsEmpty(geom) AS __empty, \
             ST_Area(geom) AS __area, ST_Length(geom) AS __length, ST_Perimeter(geom) AS __perimeter, \
             ST_X(ST_Centroid(geom)) AS __cx, ST_Y(ST_Centroid(geom)) AS __cy FROM \"{table}\""
        )
    } else {
        format!("SELECT * FROM \"{table}\"")
    };
    let result = engine
        .query_rows(&[], &sql, 1_000_000, Duration::from_secs(120))
        .unwrap_or_else(|e| panic!("{table}: {e}"));
    let mut rows: Vec<ComparedRow> = result
        .rows
        .iter()
        .map(|text| {
            let mut attributes: Map<String, Value> = serde_json::from_str(text).unwrap();
            let shape = SHAPE
                .iter()
                .map(|k| attributes.remove(*k).unwrap_or(Value::Null))
                .collect();
            ComparedRow { attributes, shape }
        })
        .collect();
    rows.sort_by(order);
    rows
}

/// A value as a sort key: numbers rounded so that tolerated differences sort alike.
fn key(value: &Value) -> String {
    match value {
        Value::Number(n) => n
            .as_f64()
            .map_or_else(|| n.to_string(), |f| format!("{f:.4e}")),
        other => other.to_string(),
    }
}

fn order(a: &ComparedRow, b: &ComparedRow) -> Ordering {
    let keys = |r: &ComparedRow| {
        r.attributes
            .values()
            .chain(r.shape.iter())
            .map(key)
            .collect::<Vec<_>>()
    };
    keys(a).cmp(&keys(b))
}

/// Equal values; numbers within `absolute` or `relative` of each other.
fn close(a: &Value, b: &Value, absolute: f64, relative: f64) -> bool {
    match (a.as_f64(), b.as_f64()) {
        (Some(x), Some(y)) => (x - y).abs() <= absolute.max(relative * x.abs().max(y.abs())),
        _ => a == b,
    }
}

/// Differences between the two results, empty when they agree. Geometries are compared on
/// their measures; with `distance`, as two approximations of one shape within that distance.
pub fn differences(duck: &[ComparedRow], pg: &[ComparedRow], distance: Option<f64>) -> Vec<String> {
    if duck.len() != pg.len() {
        return vec![format!(
            "{} rows on DuckDB, {} on PostGIS",
            duck.len(),
            pg.len()
        )];
    }
    let mut found = Vec::new();
    for (index, (d, p)) in duck.iter().zip(pg).enumerate() {
        let names_d: Vec<&String> = d.attributes.keys().collect();
        let names_p: Vec<&String> = p.attributes.keys().collect();
        if names_d != names_p {
            found.push(format!("columns differ: {names_d:?} vs {names_p:?}"));
            break;
        }
        for (name, value) in &d.attributes {
            if !close(value, &p.attributes[name], 1e-9, RELATIVE) {
                found.push(format!(
                    "row {index} {name}: {value} vs {}",
                    p.attributes[name]
                ));
            }
        }
        for (measure, (x, y)) in SHAPE.iter().zip(d.shape.iter().zip(&p.shape)) {
            let perimeter = d.shape[4].as_f64().unwrap_or(0.0);
            let agree = match (distance, *measure) {
                (Some(distance), "__area") => close(x, y, 2.0 * distance * perimeter, RELATIVE),
                (Some(distance), "__cx" | "__cy") => close(x, y, distance, RELATIVE),
                (Some(_), "__length" | "__perimeter") => close(x, y, 1e-9, 0.05),
                (None, "__cx" | "__cy") => close(x, y, COORDINATE, RELATIVE),
                _ => close(x, y, 1e-9, RELATIVE),
            };
            if !agree {
                found.push(format!("row {index} {measure}: {x} vs {y}"));
            }
        }
        if found.len() > 5 {
            break;
        }
    }
    found
}
