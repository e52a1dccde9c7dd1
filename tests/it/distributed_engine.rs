//! The distributed engine through the real server and a real cluster of the same binary (a
//! scheduler and two executors as processes): uploaded real-shaped regions and a million
//! uploaded points aggregated on the cluster equal the native engine's answer and an
//! independent one (GeoPandas), the cluster's scheduler shows the job it ran; an executor lost
//! before a run leaves the answer right (or fails the run saying so, never a wrong answer); a
//! 20,000,000-point layer uploaded as 16 GeoParquet parts runs on executors under 1 GB each, and
//! again with an executor killed mid-run; and a server without a cluster refuses the engine by
//! name.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;

use common::cluster::Cluster;
use common::http::HttpApi;
use common::real::{real_layers, real_layers_in_parts, run_python};
use reqwest::StatusCode;
use serde_json::{Value, json};

/// Per result row: count, value_sum, id_max, as both engines' GeoPackages hold them; with a
/// third argument, GeoPandas' own count per region (points within, NULL/empty/invalid regions
/// as GEOS takes them) for the valid regions.
const COMPARE: &str = r#"
import json, sys, math
import geopandas as gpd
a = gpd.read_file(sys.argv[1])
b = gpd.read_file(sys.argv[2])
out = {"rows": [len(a), len(b)], "differences": []}
for i, (x, y) in enumerate(zip(a.itertuples(), b.itertuples())):
    for col in ["count", "value_sum", "id_max"]:
        u, v = getattr(x, col), getattr(y, col)
        same = (u is None or u != u) and (v is None or v != v) or (
            u is not None and v is not None and u == u and v == v
            and math.isclose(float(u), float(v), rel_tol=1e-9, abs_tol=1e-6))
        if not same:
            out["differences"].append([i, col, repr(u), repr(v)])
if len(sys.argv) > 3:
    points = gpd.read_parquet(sys.argv[3])
    valid = a[a.geometry.notna() & ~a.geometry.is_empty & a.geometry.is_valid]
    joined = gpd.sjoin(points[["geometry"]], valid[["geometry"]], predicate="within")
    counts = joined.groupby("index_right").size()
    wrong = [[int(i), int(counts.get(i, 0)), int(a["count"].iloc[i])]
             for i in valid.index if int(counts.get(i, 0)) != int(a["count"].iloc[i])]
    out["reference_checked"] = len(valid)
    out["reference_wrong"] = wrong[:10]
    out["matched"] = int(a["count"].sum())
print(json.dumps(out))
"#;

/// Each region with its points (`points`: the dataset that holds them, by id).
fn aggregate(points: &str) -> Value {
    json!({"name": "points_per_region", "steps": [
        {"id": "counted", "capability": "spatial_aggregate", "input": "regions",
         "params": {"ref_layer": points, "predicate": "within",
                    "agg": {"*": "count", "value": "sum", "id": "max"}}}]})
}

/// Uploads the regions and the points; answers the regions' dataset id and the aggregate of
/// the points per region.
async fn upload_layers(
    api: &HttpApi,
    regions: &std::path::Path,
    points: &std::path::Path,
) -> (String, Value) {
    let mut ids = Vec::new();
    for (name, path) in [("regions.gpkg", regions), ("points.parquet", points)] {
        let dataset = api.upload(name, std::fs::read(path).unwrap()).await;
        ids.push(dataset["id"].as_str().unwrap().to_owned());
    }
    let pipeline = aggregate(&ids[1]);
    (ids.swap_remove(0), pipeline)
}

async fn execute(
    api: &HttpApi,
    dataset: &str,
    pipeline: &Value,
    engine: &str,
) -> (StatusCode, Value) {
    api.post(
        "/api/pipelines/execute",
        &json!({"dataset_id": dataset, "pipeline": pipeline, "engine": engine}),
    )
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cluster_aggregates_uploaded_points_as_native_and_geopandas_do() {
    let cluster = Cluster::start(2, 512).await;
    let work = tempfile::tempdir().unwrap();
    let (regions, points) = real_layers(work.path(), 1_000_000, 10.0);
    let shared = cluster.shared.path().display().to_string();
    let api = HttpApi::start(&[
        ("GEOMILL_BALLISTA_URL", &cluster.url()),
        ("GEOMILL_DISTRIBUTED_DIR", &shared),
        ("GEOMILL_DISTRIBUTED_PARTS", "6"),
    ]);
    let (status, health) = api.get("/health").await;
    assert_eq!(status, StatusCode::OK, "{health}");
    assert_eq!(health["components"]["cluster"], "ok", "{health}");
    let (_, listing) = api.get("/capabilities").await;
    let listing = listing.as_array().unwrap();
    assert!(listing.len() > 100);
    for capability in listing {
        assert_eq!(
            capability["run_engines"],
            json!(["embedded", "native", "distributed"]),
            "{capability}"
        );
    }

    // Two datasets, both through the upload path.
    let (regions_id, pipeline) = upload_layers(&api, &regions, &points).await;

    // The plan says which node goes to the cluster.
    let (status, preview) = api
        .post(
            "/api/pipelines/preview",
            &json!({"pipeline": pipeline, "engine": "distributed"}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{preview}");
    let optimized = preview["optimized"].as_str().unwrap_or_default();
    assert!(optimized.contains("on the cluster"), "{optimized}");

    let (status, distributed) = execute(&api, &regions_id, &pipeline, "distributed").await;
    assert_eq!(status, StatusCode::OK, "{distributed}");
    let (status, native) = execute(&api, &regions_id, &pipeline, "native").await;
    assert_eq!(status, StatusCode::OK, "{native}");
    assert_eq!(
        distributed["result_features"], native["result_features"],
        "{distributed} {native}"
    );
    let compared: Value = serde_json::from_str(&run_python(
        COMPARE,
        &[
            distributed["result_path"].as_str().unwrap(),
            native["result_path"].as_str().unwrap(),
            &points.display().to_string(),
        ],
    ))
    .unwrap();
    assert_eq!(compared["rows"][0], compared["rows"][1], "{compared}");
    assert_eq!(compared["differences"], json!([]), "{compared}");
    assert_eq!(compared["reference_wrong"], json!([]), "{compared}");
    assert!(
        compared["reference_checked"].as_i64() > Some(300),
        "{compared}"
    );
    assert!(
        compared["matched"].as_i64().unwrap() > 500_000,
        "{compared}"
    );

    // The scheduler ran it: a job finished, the staged files are gone.
    let jobs = cluster.rest("/api/jobs").await;
    let finished = jobs
        .as_array()
        .map(|jobs| {
            jobs.iter()
                .filter(|j| j["status"] == "Completed" && j["num_stages"].as_u64() >= Some(2))
                .count()
        })
        .unwrap_or_default();
    assert!(finished >= 1, "{jobs}");
    let left: Vec<_> = walk(cluster.shared.path());
    assert!(left.is_empty(), "staged files left: {left:?}");
}

/// Files under `dir`, at any depth.
fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            found.extend(walk(&path));
        } else {
            found.push(path);
        }
    }
    found
}

#[tokio::test]
async fn without_a_cluster_the_engine_is_refused_by_name() {
    let api = HttpApi::start(&[]);
    let dataset = api.upload_world().await;
    let pipeline = json!({"name": "counted", "steps": [
        {"id": "counted", "capability": "spatial_aggregate", "input": "countries",
         "params": {"ref_layer": "cities", "predicate": "within", "agg": {"*": "count"}}}]});
    let (status, answer) = execute(&api, &dataset, &pipeline, "distributed").await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{answer}");
    let message = answer["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("GEOMILL_BALLISTA_URL"), "{answer}");
    let (_, health) = api.get("/health").await;
    assert_eq!(health["components"]["cluster"], "unavailable", "{health}");
    assert_eq!(health["status"], "ok", "{health}");
    let (_, buffer) = api.get("/capabilities/buffer").await;
    assert_eq!(
        buffer["run_engines"],
        json!(["embedded", "native"]),
        "{buffer}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lost_executor_never_gives_a_wrong_answer() {
    let mut cluster = Cluster::start(2, 256).await;
    let shared = cluster.shared.path().display().to_string();
    let api = HttpApi::start(&[
        ("GEOMILL_BALLISTA_URL", &cluster.url()),
        ("GEOMILL_DISTRIBUTED_DIR", &shared),
        ("GEOMILL_DISTRIBUTED_PARTS", "4"),
    ]);
    let work = tempfile::tempdir().unwrap();
    let (regions, points) = real_layers(work.path(), 50_000, 10.0);
    let (dataset, pipeline) = upload_layers(&api, &regions, &points).await;
    let (status, native) = execute(&api, &dataset, &pipeline, "native").await;
    assert_eq!(status, StatusCode::OK, "{native}");
    // One executor dies without a word; the scheduler still lists it when the run starts.
    let lost = &mut cluster.executors[0];
    lost.kill().unwrap();
    lost.wait().unwrap();
    let started = std::time::Instant::now();
    let (status, distributed) = tokio::time::timeout(
        std::time::Duration::from_secs(180),
        execute(&api, &dataset, &pipeline, "distributed"),
    )
    .await
    .expect("the run neither finished nor failed within 3 minutes");
    if status == StatusCode::OK {
        // Ballista ran the lost executor's tasks on the other one: the answer is the native one.
        assert_eq!(differences(&distributed, &native), json!([]));
    } else {
        failed_naming_the_cluster(status, &distributed);
    }
    eprintln!(
        "a lost executor: {status} after {:.1} s",
        started.elapsed().as_secs_f64()
    );
}

#[tokio::test]
async fn a_cluster_that_does_not_answer_is_a_503() {
    // A port nothing listens on: the server starts (the cluster may come later), /health says
    // the cluster is missing, and a distributed run is refused as unavailable, not as a bad pipeline.
    let url = format!("df://127.0.0.1:{}", common::free_port());
    let shared = tempfile::tempdir().unwrap();
    let api = HttpApi::start(&[
        ("GEOMILL_BALLISTA_URL", &url),
        (
            "GEOMILL_DISTRIBUTED_DIR",
            &shared.path().display().to_string(),
        ),
    ]);
    let (status, health) = api.get("/health").await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{health}");
    assert_eq!(health["components"]["cluster"], "unavailable", "{health}");
    let dataset = api.upload_world().await;
    let pipeline = json!({"name": "counted", "steps": [
        {"id": "counted", "capability": "spatial_aggregate", "input": "countries",
         "params": {"ref_layer": "cities", "predicate": "within", "agg": {"*": "count"}}}]});
    let (status, answer) = execute(&api, &dataset, &pipeline, "distributed").await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{answer}");
    let message = answer["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("scheduler"), "{answer}");
}

/// The most memory process `pid` held so far (`VmHWM`), in MiB.
fn peak_mib(pid: u32) -> f64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let kib: f64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap();
    kib / 1024.0
}

/// The differences between two results of [`aggregate`] (their GeoPackages), per COMPARE.
fn differences(a: &Value, b: &Value) -> Value {
    let compared: Value = serde_json::from_str(&run_python(
        COMPARE,
        &[
            a["result_path"].as_str().unwrap(),
            b["result_path"].as_str().unwrap(),
        ],
    ))
    .unwrap();
    assert_eq!(compared["rows"][0], compared["rows"][1], "{compared}");
    compared["differences"].clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn twenty_million_points_in_sixteen_parts_run_in_executors_under_1_gb() {
    const POINTS: u32 = 20_000_000;
    let mut cluster = Cluster::start(2, 768).await;
    let work = tempfile::tempdir().unwrap();
    let (regions, parts) = real_layers_in_parts(work.path(), POINTS, 16, 10.0);
    let shared = cluster.shared.path().display().to_string();
    let api = HttpApi::start(&[
        ("GEOMILL_BALLISTA_URL", &cluster.url()),
        ("GEOMILL_DISTRIBUTED_DIR", &shared),
        ("GEOMILL_DISTRIBUTED_PARTS", "16"),
        ("GEOMILL_MAX_UPLOAD_MB", "1024"),
    ]);
    let regions = api
        .upload("regions.gpkg", std::fs::read(&regions).unwrap())
        .await;
    let regions = regions["id"].as_str().unwrap().to_owned();
    // The 16 parts in one upload: one layer of every part's rows.
    let names: Vec<String> = parts
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    let files: Vec<(&str, Vec<u8>)> = names
        .iter()
        .zip(&parts)
        .map(|(name, path)| (name.as_str(), std::fs::read(path).unwrap()))
        .collect();
    let points = api.upload_files(&files).await;
    drop(files);
    assert_eq!(points["layers"][0]["feature_count"], POINTS, "{points}");
    let pipeline = aggregate(points["id"].as_str().unwrap());

    let (status, native) = execute(&api, &regions, &pipeline, "native").await;
    assert_eq!(status, StatusCode::OK, "{native}");
    let (status, distributed) = execute(&api, &regions, &pipeline, "distributed").await;
    assert_eq!(status, StatusCode::OK, "{distributed}");
    assert_eq!(differences(&distributed, &native), json!([]));
    let peaks: Vec<f64> = cluster.executors.iter().map(|e| peak_mib(e.id())).collect();
    eprintln!("executors' peak memory: {peaks:?} MiB");
    assert!(peaks.iter().all(|&mib| mib < 1024.0), "{peaks:?} MiB");

    // Again, one executor killed while the cluster runs the job.
    let done_before = completed_jobs(&cluster).await;
    let kill_mid_run = async {
        for _ in 0..3000 {
            let jobs = cluster.rest("/api/jobs").await;
            let running = jobs
                .as_array()
                .is_some_and(|jobs| jobs.iter().any(|j| j["status"] == "Running"));
            if running {
                tokio::time::sleep(std::time::Duration::from_millis(500)).await;
                let peak = peak_mib(cluster.executors[0].id());
                cluster.executors[0].kill().unwrap();
                cluster.executors[0].wait().unwrap();
                return Some(peak);
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
        None
    };
    let run = tokio::time::timeout(
        std::time::Duration::from_secs(300),
        execute(&api, &regions, &pipeline, "distributed"),
    );
    let (outcome, killed) = tokio::join!(run, kill_mid_run);
    let (status, again) = outcome.expect("the run neither finished nor failed within 5 minutes");
    let peak = killed.expect("the cluster never showed the job running");
    assert!(peak < 1024.0, "the killed executor held {peak} MiB");
    eprintln!("an executor killed mid-run: {status}");
    if status == StatusCode::OK {
        assert_eq!(differences(&again, &native), json!([]));
        assert!(completed_jobs(&cluster).await > done_before);
    } else {
        failed_naming_the_cluster(status, &again);
    }
}

/// Checks that a run that did not succeed failed as a 422 or 503 naming the distributed engine
/// or the cluster (never anything else).
fn failed_naming_the_cluster(status: StatusCode, answer: &Value) {
    let message = answer["error"]["message"].as_str().unwrap_or_default();
    assert!(
        status == StatusCode::UNPROCESSABLE_ENTITY || status == StatusCode::SERVICE_UNAVAILABLE,
        "{status} {answer}"
    );
    assert!(
        message.contains("distributed") || message.contains("cluster"),
        "{answer}"
    );
}

/// How many jobs the cluster's scheduler finished.
async fn completed_jobs(cluster: &Cluster) -> usize {
    let jobs = cluster.rest("/api/jobs").await;
    jobs.as_array()
        .map(|jobs| jobs.iter().filter(|j| j["status"] == "Completed").count())
        .unwrap_or_default()
}
