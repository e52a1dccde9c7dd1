//! The planner over HTTP: capabilities, SQL previews, rule and pipeline validation, pipeline
//! previews.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // tests fail by panicking

use crate::common;

use common::post_json as post;

use axum::http::StatusCode;
use common::{call, get, test_state, world_state};
use serde_json::{Value, json};

fn golden(path: &str) -> Value {
    let text = std::fs::read_to_string(format!("golden/{path}")).unwrap();
    serde_json::from_str(&text).unwrap()
}

#[tokio::test]
async fn capabilities_list_every_capability_with_a_schema_as_in_the_snapshot() {
    let (_dir, state) = test_state();
    let (status, mut body) = call(&state, get("/capabilities")).await;
    assert_eq!(status, StatusCode::OK);
    // The engines this server offers (no PostGIS, no cluster) are the server's, not the
    // registry's: the snapshot holds the rest.
    for entry in body.as_array_mut().unwrap() {
        let offered = entry.as_object_mut().unwrap().remove("run_engines");
        assert_eq!(offered, Some(json!(["embedded", "native"])), "{entry}");
    }
    let list = body.as_array().unwrap();
    for name in [
        "filter",
        "buffer",
        "clip",
        "union",
        "dissolve",
        "centroid",
        "reproject",
        "simplify",
        "convex_hull",
        "spatial_join",
        "spatial_aggregate",
        "intersects",
        "nearest_neighbor",
        "erase",
        "overlay_intersection",
        "merge_layers",
        "area_length",
        "calculate",
        "add_field",
        "drop_field",
        "rename_field",
        "cast_field",
        "sort",
        "top_n",
        "deduplicate",
        "random_sample",
        "case_when",
        "coalesce_fields",
        "export",
    ] {
        let entry = list
            .iter()
            .find(|c| c["name"] == name)
            .unwrap_or_else(|| panic!("{name} missing"));
        assert_eq!(entry["schema"]["type"], "object", "{name}");
        assert!(!entry["description"].as_str().unwrap().is_empty(), "{name}");
        assert_eq!(entry["engines"], json!(["duckdb", "postgis"]));
    }
    assert_eq!(
        body,
        golden("capabilities.json"),
        "the API and the golden snapshot differ"
    );

    let (status, one) = call(&state, get("/capabilities/buffer")).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(one["schema"]["properties"]["distance"]["type"], "number");
    assert_eq!(one["group"], "vector_geometry");
    assert_eq!(one["tier"], "community");
}

#[tokio::test]
async fn an_unknown_capability_is_404_with_a_suggestion() {
    let (_dir, state) = test_state();
    let (status, body) = call(&state, get("/capabilities/bufer")).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("did you mean \"buffer\""),
        "{body}"
    );
    let (status, _) = call(&state, get("/capabilities/bufer/sql-preview")).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn sql_preview_in_the_query_string() {
    let (_dir, state) = test_state();
    let uri = "/capabilities/buffer/sql-preview?engine=duckdb&params=%7B%22distance%22%3A500%7D";
    let (status, body) = call(&state, get(uri)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let sql = body["sql"].as_str().unwrap();
    assert!(
        sql.contains("geomill_geodesic_buffer(ST_AsWKB(\"geom\"), 500, 8)"),
        "{sql}"
    );
    assert!(sql.contains("FROM \"input\""), "{sql}");
    assert_eq!(body["engine"], "duckdb");
    assert_eq!(body["statements"].as_array().unwrap().len(), 1);

    let (status, body) = call(
        &state,
        get("/capabilities/buffer/sql-preview?params=%7Bnope"),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    let (status, body) = call(
        &state,
        get("/capabilities/buffer/sql-preview?engine=oracle"),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    let (status, body) = call(
        &state,
        get("/capabilities/buffer/sql-preview?params=%7B%22distance%22%3A%22far%22%7D"),
    )
    .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert_eq!(
        body["error"]["detail"]["problems"][0]["path"],
        "steps[0].params.distance"
    );
}

#[tokio::test]
async fn a_native_preview_says_which_steps_run_natively_and_by_what_kernel() {
    let (_dir, state) = test_state();
    let uri = "/capabilities/buffer/sql-preview?engine=native&params=%7B%22distance%22%3A500%7D";
    let (status, body) = call(&state, get(uri)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let plan = body["plan"].as_str().unwrap();
    assert!(
        plan.contains("step=buffer engine=native why=\"native kernel\""),
        "{plan}"
    );
    let sql = body["sql"].as_str().unwrap();
    // The input made valid first (`on_invalid: fix`), then buffered: both by kernels.
    assert!(
        sql.contains("-- runs natively: per-feature geometry, rows in parallel: geom = make valid"),
        "{sql}"
    );
    assert!(
        sql.contains(
            "; then per-feature geometry, rows in parallel: geom = geodesic buffer of 500 m"
        ),
        "{sql}"
    );
    // The SQL that runs if the kernel declines the data is still shown.
    assert!(sql.contains("geomill_geodesic_buffer("), "{sql}");
    let kernel = body["statements"][0]["native"].as_str().unwrap();
    assert!(kernel.contains("geodesic buffer"), "{kernel}");

    // A relational step runs on DuckDB, where the run's tables are.
    let uri = "/capabilities/sort/sql-preview?engine=native&params=%7B%22by%22%3A%5B%7B%22field%22%3A%22name%22%7D%5D%7D";
    let (status, body) = call(&state, get(uri)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let plan = body["plan"].as_str().unwrap();
    assert!(
        plan.contains("engine=duckdb why=\"Sort (relational"),
        "{plan}"
    );
    assert!(body["statements"][0].get("native").is_none(), "{body}");

    // A step without a kernel stays on DuckDB, and the plan says why.
    let uri = "/capabilities/reproject/sql-preview?engine=native&params=%7B%22to%22%3A%22EPSG%3A3857%22%2C%22from%22%3A%22EPSG%3A4326%22%7D";
    let (status, body) = call(&state, get(uri)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let plan = body["plan"].as_str().unwrap();
    assert!(
        plan.contains("engine=duckdb why=\"Map mixing geometry and attribute values, or computing a geometry function without a kernel\""),
        "{plan}"
    );
    assert!(body["statements"][0].get("native").is_none(), "{body}");
}

/// Parameters for a preview of each registered capability (other layers by name).
fn preview_params(capability: &str) -> Value {
    match capability {
        "add_field" => json!({"name": "source", "type": "text", "value": "survey"}),
        "area_length" => json!({}),
        "buffer" => json!({"distance": 500}),
        "calculate" => json!({"expressions": {"density": "pop_est / 2"}}),
        "case_when" => {
            json!({"field": "size", "cases": [{"when": "pop_est > 100", "then": "large"}], "else": "small"})
        }
        "cast_field" => json!({"field": "pop_est", "type": "integer"}),
        "classify" | "head_tail_breaks" | "choropleth" | "continuous_ramp" | "graduated_size" => {
            json!({"field": "pop_est"})
        }
        "normalize" => json!({"field": "pop_est", "method": "zscore"}),
        "cluster_kmeans" => json!({"k": 3}),
        "cluster_dbscan" => json!({"eps": 1.0}),
        "cluster_hdbscan" => json!({"min_cluster_size": 5}),
        "spatial_weights" => json!({"method": "knn", "k": 4}),
        "morans_i" => json!({"field": "pop_est"}),
        "getis_ord_g" => json!({"field": "pop_est", "method": "distance_band", "distance": 100}),
        "kde_heatmap" => json!({"bandwidth": 1000}),
        "grid_create" | "hexgrid_create" => json!({"size": 1000}),
        "classify_categorical" => json!({"field": "continent"}),
        "bivariate_choropleth" => json!({"field_x": "pop_est", "field_y": "gdp_md_est"}),
        "centroid" | "convex_hull" | "dissolve" | "union" => json!({}),
        "boundary" | "envelope" | "make_valid" | "swap_xy" | "reverse_lines" | "drop_z"
        | "drop_m" | "line_merge" => json!({}),
        "add_z" | "add_m" => json!({"value": 10}),
        "line_substring" => json!({"start": 0.25, "end": 0.75}),
        "snap_to_grid" => json!({"size": 0.001}),
        "affine_transform" => json!({"xoff": 100, "yoff": -50}),
        "oriented_bbox"
        | "voronoi_polygons"
        | "delaunay_triangulation"
        | "polygonize"
        | "concave_hull" => {
            json!({})
        }
        "min_bounding_circle" => json!({"segments": 4}),
        "polygon_fix_gaps" | "polygon_remove_slivers" => json!({"max_area": 0.5}),
        "polygon_fix_overlaps" => json!({"owner": "smallest"}),
        "polygon_snap_borders" => json!({"tolerance": 0.01}),
        "network_node_lines" => json!({}),
        "network_remove_duplicates" => json!({"tolerance": 0.001, "order_by": ["name"]}),
        "network_snap_endpoints" => json!({"tolerance": 0.01, "target": "lines"}),
        "network_remove_pseudo_nodes" => json!({"fields": ["name"]}),
        "network_extend_dangles" => json!({"max_distance": 0.05}),
        "alpha_shape" => json!({"alpha": 5}),
        "od_matrix" | "shortest_path" => json!({"origins": "input", "origin_id": "name",
            "destinations": "input", "destination_id": "name"}),
        "isochrone" => json!({"origins": "input", "origin_id": "name", "bands": [1000]}),
        "network_allocation" => json!({"facilities": "input", "facility_id": "name"}),
        "connectivity_check" | "mst" => json!({}),
        "connected_components" => json!({"tolerance": 0.01, "unit": "crs"}),
        "cluster_network_dbscan" => {
            json!({"ref_layer": "places", "eps": 0.5, "unit": "crs", "min_samples": 2})
        }
        "cluster_st_dbscan" => json!({"time_field": "founded", "eps": 1000}),
        "build_network_graph" | "planarize" => json!({"id_field": "name"}),
        "steiner_tree" => json!({"ref_layer": "places"}),
        "community_detection" => json!({"method": "greedy_modularity"}),
        "snap_points_to_lines" => json!({"ref_layer": "places", "ref_id_field": "name", "k": 2}),
        "split_lines_at_points" => json!({"ref_layer": "places", "tolerance": 0.01, "unit": "crs"}),
        "densify_vertices" => json!({"max_length": 10, "unit": "kilometers"}),
        "chaikin_smooth" => json!({"iterations": 2}),
        "offset_curve" => json!({"distance": 0.1, "unit": "degrees"}),
        "assign_projection" => json!({"crs": "EPSG:4269"}),
        "multipart_to_singleparts" | "extract_vertices" | "extract_segments" | "extract_holes" => {
            json!({})
        }
        "singleparts_to_multipart" => {
            json!({"fields": ["continent"], "aggregates": {"pop_est": "sum"}})
        }
        "vector_diff" => json!({"ref_layer": "places", "key": ["name"]}),
        // Without a catalog the input's fields are unknown: name the key.
        "topology_check" => json!({"key": "name", "tolerance": 0.01}),
        "duplicate_geometry" => json!({"key": "name"}),
        "completeness_check" => json!({"ref_layer": "places", "key": "name"}),
        "attribute_validation" => json!({"key": "name", "rules": [
            {"field": "pop_est", "not_null": true, "min": 0},
            {"field": "name", "regex": "[A-Z].*", "unique": true, "allowed": ["Chile", 3]}]}),
        "force_geometry_type" => json!({"type": "multi"}),
        // Without a catalog the input's columns are unknown: name the ones that make a duplicate.
        "deduplicate" => json!({"fields": ["name"]}),
        "clip" | "erase" => json!({"mask": "zones"}),
        "coalesce_fields" => json!({"fields": ["iso_a3", "name"], "field": "label"}),
        "drop_field" => json!({"fields": ["iso_a3"]}),
        "export" => json!({"destination": "out.gpkg"}),
        "filter" => json!({"where": "pop_est > 1000"}),
        "intersects"
        | "nearest_neighbor"
        | "overlay_intersection"
        | "spatial_join"
        | "symmetric_difference"
        | "overlay_union" => {
            json!({"ref_layer": "places"})
        }
        "classify_by_ring" => json!({"ref_layer": "places", "rings": [1, 5, 10]}),
        "line_locate_point" => json!({"ref_layer": "places", "fraction_field": "along"}),
        "merge_layers" => json!({"layers": ["places"]}),
        "random_sample" => json!({"n": 10}),
        "rename_field" => json!({"fields": {"pop_est": "population"}}),
        "reproject" => json!({"to": "EPSG:3857", "from": "EPSG:4326"}),
        "simplify" => json!({"tolerance": 0.01}),
        "sort" => json!({"by": [{"field": "name"}]}),
        "spatial_aggregate" => json!({"ref_layer": "places", "agg": {"*": "count", "pop": "sum"}}),
        "top_n" => json!({"n": 5, "by": "pop_est"}),
        "attribute_join" => json!({"other": "places", "on": ["name"]}),
        "lookup_table" => {
            json!({"field": "continent", "output": "region", "map": {"Africa": "EMEA"}, "default": "other"})
        }
        "pivot" => json!({"index": ["continent"], "columns": "income", "values": "pop_est",
            "column_values": ["high", "low"]}),
        "unpivot" => json!({"fields": ["pop_est", "gdp_md_est"]}),
        "describe" => json!({"fields": ["pop_est", "name"]}),
        "temporal_join" => json!({"other": "places", "field": "observed",
            "tolerance": {"amount": 2, "unit": "hours"}}),
        "select_columns" => json!({"fields": ["name", "pop_est"], "reorder": true}),
        "temporal_filter" => json!({"field": "observed", "from": "2024-01-01", "to": "2024-06-30"}),
        "zonal_stats" => json!({"raster": "slope", "stats": "*"}),
        "pointcloud_filter_classification" => json!({"drop": [7, 18]}),
        "pointcloud_grid_summary" => json!({"cell_size": 2.5, "stats": ["max", "p95"]}),
        "pointcloud_load_las" => json!({"max_points": 10, "crs": "EPSG:2994"}),
        "pointcloud_zonal_height" => json!({"ref_layer": "places", "stats": ["max", "min"]}),
        "raster_clip" => json!({"raster": "slope", "all_touched": true}),
        "ndvi" => json!({"raster": "scene", "output": "scene_ndvi"}),
        "raster_reproject" => {
            json!({"raster": "slope", "target_crs": "EPSG:3857", "resampling": "bilinear"})
        }
        "raster_merge" => json!({"rasters": ["west", "east"], "method": "max"}),
        "change_detection" => {
            json!({"raster_before": "y2020", "raster_after": "y2024", "threshold": 2})
        }
        other => panic!("no preview parameters for {other}: add them here"),
    }
}

fn urlencode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

#[tokio::test]
async fn every_capability_previews_postgis_sql_without_a_catalog() {
    let (_dir, state) = test_state();
    let (status, list) = call(&state, get("/capabilities")).await;
    assert_eq!(status, StatusCode::OK);
    let names: Vec<String> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap().to_owned())
        .collect();
    assert!(names.len() >= 29, "{names:?}");
    for name in &names {
        let params = urlencode(&preview_params(name).to_string());
        let uri = format!("/capabilities/{name}/sql-preview?engine=postgis&params={params}");
        let (status, body) = call(&state, get(&uri)).await;
        assert_eq!(status, StatusCode::OK, "{name}: {body}");
        let sql = body["sql"].as_str().unwrap_or_default();
        assert!(!sql.is_empty(), "{name}: {body}");
        assert_eq!(body["engine"], "postgis", "{name}");
        // The generic schema names the columns the step reads, never DuckDB's `* EXCLUDE`.
        assert!(!sql.contains("EXCLUDE"), "{name}: {sql}");
    }
    // A buffer lists the input's columns as the generic schema: the geometry replaced.
    let uri = format!(
        "/capabilities/buffer/sql-preview?engine=postgis&params={}",
        urlencode(r#"{"distance": 10, "unit": "crs"}"#)
    );
    let (_, body) = call(&state, get(&uri)).await;
    assert!(
        body["sql"]
            .as_str()
            .unwrap()
            .contains("ST_Buffer(\"geom\", 10"),
        "{body}"
    );
}

#[tokio::test]
async fn postgis_previews_use_a_stored_layer_or_a_catalog() {
    let (_dir, state, _) = world_state(|_| {}).await;
    let (_, datasets) = call(&state, get("/datasets")).await;
    let id = datasets
        .as_array()
        .or_else(|| datasets["datasets"].as_array())
        .and_then(|list| list.first())
        .and_then(|d| d["id"].as_str())
        .unwrap_or_else(|| panic!("{datasets}"))
        .to_owned();
    let params = urlencode(r#"{"distance": 1000}"#);
    let uri = format!(
        "/capabilities/buffer/sql-preview?engine=postgis&params={params}&dataset_id={id}&layer=countries"
    );
    let (status, body) = call(&state, get(&uri)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let sql = body["sql"].as_str().unwrap();
    // The stored layer's columns, and its CRS: metres on longitude/latitude are geodesic.
    assert!(sql.contains("\"pop_est\""), "{sql}");
    assert!(sql.contains("+proj=aeqd"), "{sql}");
    let (status, body) = call(
        &state,
        get(&format!(
            "/capabilities/buffer/sql-preview?engine=postgis&params={params}&layer=countries"
        )),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");

    let catalog = json!({"sources": {"input": {"crs": "EPSG:2263", "columns": [
        {"name": "BoroName", "type": "text"}, {"name": "geom", "type": "geometry"}]}}});
    let with = json!({"engine": "postgis", "params": {"distance": 100, "unit": "meters"}, "catalog": catalog});
    let (status, body) = call(&state, post("/capabilities/buffer/sql-preview", &with)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let sql = body["sql"].as_str().unwrap();
    // 100 m in US survey feet on a state-plane CRS: a plain buffer of 328.08… units.
    assert!(
        sql.contains("SELECT \"BoroName\", ST_Buffer(\"geom\", 328.08"),
        "{sql}"
    );
    assert!(sql.contains("DROP TABLE IF EXISTS"), "{sql}");
}

#[tokio::test]
async fn rules_validate_reports_every_problem_with_its_path() {
    let (_dir, state) = test_state();
    let rules = json!([
        {"name": "far", "capability": "buffer", "config": {"distance": "far"}},
        {"capability": "bufer", "config": {}},
        {"name": "f", "capability": "filter", "params": {"where": "pop >"}},
        {"name": "ok", "capability": "centroid", "config": {}}
    ]);
    let (status, body) = call(&state, post("/rules/validate", &rules)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["valid"], false);
    let paths: Vec<&str> = body["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["path"].as_str().unwrap())
        .collect();
    assert_eq!(
        paths,
        ["[0].config.distance", "[1].capability", "[2].params.where"]
    );
    assert_eq!(body["results"][1]["name"], "rule_1");
    assert!(
        body["errors"][1]["message"]
            .as_str()
            .unwrap()
            .contains("did you mean \"buffer\"")
    );
    assert_eq!(body["results"][3]["valid"], true);

    let (status, body) = call(
        &state,
        post(
            "/rules/validate",
            &json!([{"capability": "centroid", "config": {}}]),
        ),
    )
    .await;
    assert_eq!(
        (status, body["valid"].clone()),
        (StatusCode::OK, json!(true))
    );
    let (status, _) = call(
        &state,
        post("/rules/validate", &json!({"capability": "centroid"})),
    )
    .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
}

#[tokio::test]
async fn pipelines_validate_under_both_paths() {
    let (_dir, state) = test_state();
    let cycle = golden("errors/cycle.json");
    for path in ["/api/pipelines/validate", "/pipelines/validate"] {
        let (status, body) = call(&state, post(path, &cycle)).await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(body["valid"], false, "{body}");
        assert_eq!(
            body["errors"][0]["message"],
            "steps form a cycle: a → b → a"
        );
    }
    let wrapped = json!({"pipeline": golden("pipelines/issue_pipeline/pipeline.json"), "catalog": golden("catalog.json")});
    let (status, body) = call(&state, post("/api/pipelines/validate", &wrapped)).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["valid"], true, "{body}");
    assert_eq!(body["steps"], 5);
    assert!(body["plan"].as_str().unwrap().contains("SpatialAggregate"));
}

#[tokio::test]
async fn pipeline_preview_gives_plans_and_sql_for_both_engines() {
    let (_dir, state) = test_state();
    let request = json!({
        "pipeline": golden("pipelines/issue_pipeline/pipeline.json"),
        "catalog": golden("catalog.json"),
        "vars": {"date": "2026-01-01", "output_dir": "/tmp/out"}
    });
    let (status, body) = call(&state, post("/api/pipelines/preview", &request)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(
        body["plan"]
            .as_str()
            .unwrap()
            .starts_with("01)Export destination=/tmp/out/counted_2026-01-01.gpkg")
    );
    assert!(
        body["optimized"]
            .as_str()
            .unwrap()
            .contains("engine=duckdb")
    );
    assert_eq!(
        body["sql"]["duckdb"]["statements"]
            .as_array()
            .unwrap()
            .len(),
        5
    );
    assert_eq!(body["sql"]["duckdb"]["result"], "counted");
    assert!(
        body["sql"]["postgis"]["text"]
            .as_str()
            .unwrap()
            .contains("CREATE TEMP TABLE \"counted\"")
    );

    let (status, body) = call(
        &state,
        post(
            "/api/pipelines/preview",
            &golden("pipelines/scenario_two_jobs/pipeline.json"),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let jobs: Vec<&str> = body["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j["job"].as_str().unwrap())
        .collect();
    assert_eq!(jobs, ["prepare", "report"]);
    // Counting keeps every input column (`t.*`), so both dialects work without a catalog.
    assert!(
        body["jobs"][1]["sql"]["postgis"]["text"]
            .as_str()
            .unwrap()
            .contains("count(*)")
    );
    assert!(body["jobs"][1]["sql"]["duckdb"]["text"].is_string());

    let (status, body) = call(
        &state,
        post(
            "/api/pipelines/preview",
            &golden("errors/bad_expressions.json"),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(body["error"]["code"], "invalid_spec");
    assert_eq!(
        body["error"]["detail"]["problems"]
            .as_array()
            .unwrap()
            .len(),
        3,
        "{body}"
    );
}
