//! Seeded generators of the standard workloads' inputs, shared by the engine benches: clustered
//! points and irregular, non-overlapping polygons, built in DuckDB from fixed hashes.

use geomill_backends::duckdb::EmbeddedEngine;

/// A uniform number in [0, 1) from the hash of `(i, seed)`: the same on every run.
pub fn uniform(i: &str, seed: u32) -> String {
    format!("(CAST(hash({i}, {seed}) % 1000000 AS DOUBLE) / 1e6)")
}

/// `n` star-shaped polygons of 24 vertices with jittered radii, one per cell of a grid over
/// [0, 30]² degrees: irregular, never overlapping.
pub fn polygons(engine: &EmbeddedEngine, table: &str, n: u64) {
    let side = (n as f64).sqrt().ceil() as u64;
    let step = 30.0 / side as f64;
    let radius = format!("{step} * 0.5 * (0.55 + 0.4 * {})", uniform("i * 24 + k", 3));
    engine
        .execute_batch(&format!(
            "CREATE OR REPLACE TABLE {table} AS
             WITH verts AS (
               SELECT i, k,
                 (i % {side} + 0.5) * {step} + cos(2 * pi() * k / 24) * {radius} AS x,
                 (i // {side} + 0.5) * {step} + sin(2 * pi() * k / 24) * {radius} AS y
               FROM range({n}) a(i), range(24) b(k)),
             rings AS (SELECT i, list(ST_Point(x, y) ORDER BY k) AS pts FROM verts GROUP BY i)
             SELECT i AS id, CAST(hash(i, 5) % 1000 AS INTEGER) AS weight,
                    ST_MakePolygon(ST_MakeLine(list_append(pts, pts[1]))) AS geom
             FROM rings"
        ))
        .unwrap();
}

/// `n` points around 500 cluster centres over [0, 30]² degrees (roughly normal spread).
pub fn points(engine: &EmbeddedEngine, table: &str, n: u64) {
    let spread = |a: u32, b: u32, c: u32| {
        format!(
            "0.6 * ({} + {} + {} - 1.5)",
            uniform("i", a),
            uniform("i", b),
            uniform("i", c)
        )
    };
    engine
        .execute_batch(&format!(
            "CREATE OR REPLACE TABLE {table} AS
             WITH centres AS (SELECT j, 30 * {} AS x, 30 * {} AS y FROM range(500) t(j))
             SELECT i AS id, CAST(hash(i, 9) % 100 AS INTEGER) AS value,
                    ST_Point(c.x + {}, c.y + {}) AS geom
             FROM range({n}) t(i) JOIN centres c ON c.j = hash(i, 6) % 500",
            uniform("j", 1),
            uniform("j", 2),
            spread(3, 4, 5),
            spread(7, 8, 10),
        ))
        .unwrap();
}
