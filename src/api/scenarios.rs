//! `/scenarios`: named groups of jobs (nodes) run together. `run` in `sequential` mode submits
//! the nodes one after another and stops at the first that does not complete (the rest are
//! `SKIPPED`); in `independent` mode it submits all at once and reports each. Both answer when
//! every submitted job has ended, with one line per node. `run-node` runs one node.

use std::collections::BTreeSet;
use std::time::Duration;

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::routing::{get, post};
use axum::{Json, Router};
use geomill_backends::store::ScenarioRecord;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::extract::{ApiJson, ApiQuery};
use crate::blocking::blocking;
use crate::error::AppError;
use crate::jobs::runner::{COMPLETED, PENDING, RUNNING};
use crate::state::AppState;

/// Nodes a scenario may have.
const MAX_NODES: usize = 100;
/// How often a running node's job is looked at.
const POLL: Duration = Duration::from_millis(200);

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/scenarios", get(list).post(create))
        .route("/scenarios/{id}/run", post(run))
        .route("/scenarios/{id}/run-node", post(run_node))
}

/// How a run treats its nodes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// One after another; the first node that does not complete stops the run.
    #[default]
    Sequential,
    /// All at once; every node reports.
    Independent,
}

impl Mode {
    fn as_str(self) -> &'static str {
        match self {
            Self::Sequential => "sequential",
            Self::Independent => "independent",
        }
    }
}

/// One node: a job submission, as `POST /jobs` takes it.
#[derive(Debug, Clone, Deserialize, Serialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Node {
    /// Unique in the scenario.
    pub id: String,
    #[schema(value_type = Object)]
    pub job: Value,
}

/// A scenario to create.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ScenarioBody {
    pub name: String,
    /// The default mode of its runs (default sequential).
    #[serde(default)]
    pub mode: Mode,
    /// 1 to 100 nodes, run in this order in sequential mode.
    pub nodes: Vec<Node>,
}

/// A stored scenario.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct Scenario {
    pub id: String,
    pub name: String,
    pub mode: Mode,
    pub nodes: Vec<Node>,
    pub created_at: String,
}

impl From<ScenarioRecord> for Scenario {
    fn from(r: ScenarioRecord) -> Self {
        Self {
            mode: if r.mode == "independent" {
                Mode::Independent
            } else {
                Mode::Sequential
            },
            nodes: serde_json::from_str(&r.nodes).unwrap_or_default(),
            id: r.id,
            name: r.name,
            created_at: r.created_at,
        }
    }
}

/// Create a scenario; every node's job is checked as `POST /jobs` would check it.
#[utoipa::path(post, path = "/scenarios", tag = "scenarios", request_body = ScenarioBody,
    responses((status = 201, body = Scenario), (status = 415, body = crate::api::error::ErrorBody),
        (status = 422, description = "No nodes, duplicate node ids, or a job POST /jobs would refuse", body = crate::api::error::ErrorBody)))]
pub async fn create(
    State(state): State<AppState>,
    ApiJson(body): ApiJson<ScenarioBody>,
) -> Result<(StatusCode, Json<Scenario>), AppError> {
    if body.nodes.is_empty() || body.nodes.len() > MAX_NODES {
        return Err(AppError::unprocessable(format!(
            "nodes: give 1 to {MAX_NODES}, got {}",
            body.nodes.len()
        )));
    }
    let mut ids = BTreeSet::new();
    for node in &body.nodes {
        if node.id.trim().is_empty() || !ids.insert(node.id.as_str()) {
            return Err(AppError::unprocessable(format!(
                "nodes: node ids must be unique and not empty ({:?})",
                node.id
            )));
        }
        crate::jobs::submit::job_from(&state, node.job.clone(), Default::default())
            .await
            .map_err(|e| AppError::unprocessable(format!("node {}: {}", node.id, e.message)))?;
    }
    let record = ScenarioRecord {
        id: uuid::Uuid::new_v4().to_string(),
        name: body.name,
        mode: body.mode.as_str().into(),
        nodes: serde_json::to_string(&body.nodes).map_err(|e| AppError::internal(&e))?,
        created_at: crate::timestamp::now(),
    };
    let engine = state.store();
    let stored = record.clone();
    blocking(move || engine.insert_scenario(&stored)).await?;
    Ok((StatusCode::CREATED, Json(record.into())))
}

/// Every scenario.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct ScenarioList {
    pub scenarios: Vec<Scenario>,
    pub total: usize,
}

/// List the scenarios, oldest first.
#[utoipa::path(get, path = "/scenarios", tag = "scenarios", responses((status = 200, body = ScenarioList)))]
pub async fn list(State(state): State<AppState>) -> Result<Json<ScenarioList>, AppError> {
    let engine = state.store();
    let scenarios: Vec<Scenario> = blocking(move || engine.scenarios(None))
        .await?
        .into_iter()
        .map(Scenario::from)
        .collect();
    Ok(Json(ScenarioList {
        total: scenarios.len(),
        scenarios,
    }))
}

/// How one node ended.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct NodeOutcome {
    pub node_id: String,
    /// Null when the node was skipped or its job was refused.
    pub job_id: Option<String>,
    /// The job's final status, `REFUSED` (the job no longer passes) or `SKIPPED`.
    pub status: String,
    pub error: Option<String>,
}

/// The report of a run.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct RunReport {
    pub scenario_id: String,
    pub mode: Mode,
    /// `completed` when every node completed, else `failed`.
    pub status: &'static str,
    pub nodes: Vec<NodeOutcome>,
}

/// Submits a node's job; answers its id, or the outcome when it was refused.
async fn submit(state: &AppState, node: &Node) -> Result<String, NodeOutcome> {
    crate::jobs::submit::submit(state, node.job.clone(), Default::default())
        .await
        .map(|job| job.id)
        .map_err(|e| NodeOutcome {
            node_id: node.id.clone(),
            job_id: None,
            status: "REFUSED".into(),
            error: Some(e.message),
        })
}

/// Waits until the job has ended; answers its outcome.
async fn finished(state: &AppState, node: &Node, job_id: String) -> NodeOutcome {
    loop {
        let jobs = state.job_records();
        let key = job_id.clone();
        match blocking(move || jobs.job(&key)).await {
            Ok(Some(job)) if job.status != PENDING && job.status != RUNNING => {
                return NodeOutcome {
                    node_id: node.id.clone(),
                    job_id: Some(job_id),
                    status: job.status,
                    error: job.error,
                };
            }
            Ok(Some(_)) => tokio::time::sleep(POLL).await,
            Ok(None) | Err(_) => {
                return NodeOutcome {
                    node_id: node.id.clone(),
                    job_id: Some(job_id),
                    status: "FAILED".into(),
                    error: Some("the job could not be read back".into()),
                };
            }
        }
    }
}

async fn run_nodes(state: &AppState, nodes: &[Node], mode: Mode) -> Vec<NodeOutcome> {
    let mut outcomes = Vec::new();
    match mode {
        Mode::Sequential => {
            for node in nodes {
                if outcomes.iter().any(|o: &NodeOutcome| o.status != COMPLETED) {
                    outcomes.push(NodeOutcome {
                        node_id: node.id.clone(),
                        job_id: None,
                        status: "SKIPPED".into(),
                        error: None,
                    });
                    continue;
                }
                outcomes.push(match submit(state, node).await {
                    Ok(job_id) => finished(state, node, job_id).await,
                    Err(refused) => refused,
                });
            }
        }
        Mode::Independent => {
            let mut submitted = Vec::new();
            for node in nodes {
                submitted.push(submit(state, node).await);
            }
            for (node, submitted) in nodes.iter().zip(submitted) {
                outcomes.push(match submitted {
                    Ok(job_id) => finished(state, node, job_id).await,
                    Err(refused) => refused,
                });
            }
        }
    }
    outcomes
}

async fn scenario(state: &AppState, id: &str) -> Result<Scenario, AppError> {
    let engine = state.store();
    let key = id.to_owned();
    blocking(move || engine.scenarios(Some(&key)))
        .await?
        .pop()
        .map(Scenario::from)
        .ok_or_else(|| AppError::not_found(format!("no scenario {id}")))
}

fn report(scenario_id: String, mode: Mode, nodes: Vec<NodeOutcome>) -> Json<RunReport> {
    let status = if nodes.iter().all(|n| n.status == COMPLETED) {
        "completed"
    } else {
        "failed"
    };
    Json(RunReport {
        scenario_id,
        mode,
        status,
        nodes,
    })
}

/// `mode` of a run (default: the scenario's).
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct RunQuery {
    pub mode: Option<Mode>,
}

/// Run a scenario and report each node when every submitted job has ended.
#[utoipa::path(post, path = "/scenarios/{id}/run", tag = "scenarios", params(RunQuery),
    responses((status = 200, body = RunReport), (status = 400, description = "An unknown mode", body = crate::api::error::ErrorBody),
        (status = 404, body = crate::api::error::ErrorBody)))]
pub async fn run(
    State(state): State<AppState>,
    Path(id): Path<String>,
    ApiQuery(query): ApiQuery<RunQuery>,
) -> Result<Json<RunReport>, AppError> {
    let scenario = scenario(&state, &id).await?;
    let mode = query.mode.unwrap_or(scenario.mode);
    let outcomes = run_nodes(&state, &scenario.nodes, mode).await;
    Ok(report(scenario.id, mode, outcomes))
}

/// The node to run.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct NodeQuery {
    /// A node id of the scenario.
    pub node: String,
}

/// Run one node of a scenario and report it when its job has ended.
#[utoipa::path(post, path = "/scenarios/{id}/run-node", tag = "scenarios", params(NodeQuery),
    responses((status = 200, body = RunReport), (status = 400, description = "node missing", body = crate::api::error::ErrorBody),
        (status = 404, description = "No such scenario or node", body = crate::api::error::ErrorBody)))]
pub async fn run_node(
    State(state): State<AppState>,
    Path(id): Path<String>,
    ApiQuery(query): ApiQuery<NodeQuery>,
) -> Result<Json<RunReport>, AppError> {
    let scenario = scenario(&state, &id).await?;
    let node = scenario
        .nodes
        .iter()
        .find(|n| n.id == query.node)
        .ok_or_else(|| {
            AppError::not_found(format!("scenario {id} has no node {:?}", query.node))
        })?;
    let outcomes = run_nodes(&state, std::slice::from_ref(node), Mode::Sequential).await;
    Ok(report(scenario.id, scenario.mode, outcomes))
}
