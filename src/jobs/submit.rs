//! What `POST /jobs` accepts, checked before anything is recorded: stored rule ids, a rules
//! file, or a pipeline; the dataset it runs on; retries and time-out. A bad request creates
//! nothing.

use std::collections::BTreeMap;

use geomill_backends::store::JobRecord;
use geomill_planner::schema::Catalog;
use geomill_planner::spec::Vars;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::error::AppError;
use crate::state::AppState;

/// Most retries a job may ask for.
pub const MAX_RETRIES: u32 = 10;
/// Longest time-out a job may ask for, in seconds.
pub const MAX_TIMEOUT_S: u64 = 86_400;

/// The object form of a job submission.
#[derive(Debug, Default, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct JobBody {
    /// Display name (default: `job`).
    #[serde(default)]
    pub name: Option<String>,
    /// The dataset the document's `input` stands for.
    #[serde(default)]
    pub dataset_id: Option<String>,
    /// Stored rules to run in order, and run settings.
    #[serde(default)]
    pub parameters: Option<JobParameters>,
    /// A rules file (array of steps) instead of stored rules.
    #[serde(default)]
    #[schema(value_type = Option<Vec<Object>>)]
    pub rules: Option<Vec<Value>>,
    /// A pipeline (PipelineSpec v2) instead of stored rules.
    #[serde(default)]
    #[schema(value_type = Option<Object>)]
    pub pipeline: Option<Value>,
    /// Retries after a failure that may pass (engine or remote service), default 0.
    #[serde(default)]
    pub max_retries: Option<u32>,
    /// Time-out of each attempt in seconds (default GEOMILL_JOB_TIMEOUT_S, 300).
    #[serde(default)]
    pub timeout_s: Option<u64>,
    /// Run variables (`{date}` in output paths, `${var}` in parameters).
    #[serde(default)]
    pub vars: Option<BTreeMap<String, String>>,
    /// Publish the result as a dataset (an OGC API collection) when the job completes.
    #[serde(default)]
    pub publish: Option<bool>,
    /// `embedded`, `native`, `postgis` or `hybrid` (default: the server's engine).
    #[serde(default)]
    pub engine: Option<geomill_planner::optimizer::EngineMode>,
}

/// `parameters` of a job submission.
#[derive(Debug, Default, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct JobParameters {
    /// Ids of stored rules, run in this order (each reads the previous one's output).
    #[serde(default)]
    pub rule_ids: Option<Vec<String>>,
    /// As the top-level field (this one wins).
    #[serde(default)]
    pub max_retries: Option<u32>,
    #[serde(default)]
    pub timeout_s: Option<u64>,
    #[serde(default)]
    pub vars: Option<BTreeMap<String, String>>,
    #[serde(default)]
    pub publish: Option<bool>,
    #[serde(default)]
    pub engine: Option<geomill_planner::optimizer::EngineMode>,
}

/// Settings that may be given in `parameters`, at the top level, or in the query string.
#[derive(Debug, Default, Clone)]
struct RunSettings {
    max_retries: Option<u32>,
    timeout_s: Option<u64>,
    vars: Option<BTreeMap<String, String>>,
    publish: Option<bool>,
    engine: Option<geomill_planner::optimizer::EngineMode>,
}

impl RunSettings {
    /// `self`, with what it leaves unset taken from `other`.
    fn or(self, other: Self) -> Self {
        Self {
            max_retries: self.max_retries.or(other.max_retries),
            timeout_s: self.timeout_s.or(other.timeout_s),
            vars: self.vars.or(other.vars),
            publish: self.publish.or(other.publish),
            engine: self.engine.or(other.engine),
        }
    }
}

/// The query string of a submission whose body is a rules file.
#[derive(Debug, Default, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct JobQuery {
    pub name: Option<String>,
    pub dataset_id: Option<String>,
    pub max_retries: Option<u32>,
    pub timeout_s: Option<u64>,
    /// Publish the result as a dataset when the job completes.
    pub publish: Option<bool>,
    /// `embedded`, `native`, `postgis` or `hybrid` (default: the server's engine).
    pub engine: Option<geomill_planner::optimizer::EngineMode>,
}

/// The document stored rules make: a rules file, one step per rule.
async fn rules_document(state: &AppState, ids: &[String]) -> Result<Value, AppError> {
    if ids.is_empty() {
        return Err(AppError::unprocessable("parameters.rule_ids is empty"));
    }
    let all = state.rules().all().await?;
    let mut steps = Vec::new();
    let mut unknown = Vec::new();
    for id in ids {
        match all.iter().find(|r| &r.id == id) {
            Some(rule) if rule.enabled == Some(false) => {
                return Err(AppError::unprocessable(format!(
                    "rule {id} ({}) is disabled; enable it or leave it out",
                    rule.name
                )));
            }
            Some(rule) => steps.push(json!({
                "name": rule.name,
                "capability": rule.capability,
                "params": serde_json::from_str::<Value>(&rule.config).unwrap_or(Value::Null),
            })),
            None => unknown.push(id.as_str()),
        }
    }
    if !unknown.is_empty() {
        return Err(AppError::unprocessable(format!(
            "parameters.rule_ids: no rule {}",
            unknown.join(", ")
        ))
        .with_detail(json!({ "unknown_rule_ids": unknown })));
    }
    Ok(Value::Array(steps))
}

/// A checked job, ready to record, and whether its result is to be published.
pub struct Submission {
    pub job: JobRecord,
    pub publish: bool,
}

/// Checks a job body (as `POST /jobs` takes it, with `query`'s settings) and submits it: the
/// one way jobs, schedules and scenarios start a job.
pub async fn submit(state: &AppState, body: Value, query: JobQuery) -> Result<JobRecord, AppError> {
    let submission = job_from(state, body, query).await?;
    super::runner::submit(state, submission.job, submission.publish).await
}

/// A checked job, ready to record: the body parsed, the document valid and its sources bound.
pub async fn job_from(
    state: &AppState,
    body: Value,
    query: JobQuery,
) -> Result<Submission, AppError> {
    let query_settings = RunSettings {
        max_retries: query.max_retries,
        timeout_s: query.timeout_s,
        vars: None,
        publish: query.publish,
        engine: query.engine,
    };
    let (name, dataset_id, document, settings) = match body {
        Value::Array(_) => (query.name, query.dataset_id, body, query_settings),
        Value::Object(_) => {
            let body: JobBody = serde_json::from_value(body)
                .map_err(|e| AppError::unprocessable(format!("the job body: {e}")))?;
            let parameters = body.parameters.unwrap_or_default();
            let forms = [
                parameters.rule_ids.is_some(),
                body.rules.is_some(),
                body.pipeline.is_some(),
            ];
            let document = match (parameters.rule_ids, body.rules, body.pipeline) {
                _ if forms.iter().filter(|f| **f).count() != 1 => {
                    return Err(AppError::unprocessable(
                        "give exactly one of parameters.rule_ids, rules (a rules file) or pipeline",
                    ));
                }
                (Some(ids), _, _) => rules_document(state, &ids).await?,
                (_, Some(rules), _) => Value::Array(rules),
                (_, _, Some(pipeline)) => pipeline,
                _ => return Err(AppError::unprocessable("the job names nothing to run")),
            };
            let settings = RunSettings {
                max_retries: parameters.max_retries,
                timeout_s: parameters.timeout_s,
                vars: parameters.vars,
                publish: parameters.publish,
                engine: parameters.engine,
            }
            .or(RunSettings {
                max_retries: body.max_retries,
                timeout_s: body.timeout_s,
                vars: body.vars,
                publish: body.publish,
                engine: body.engine,
            })
            .or(query_settings);
            (
                body.name.or(query.name),
                body.dataset_id.or(query.dataset_id),
                document,
                settings,
            )
        }
        _ => {
            return Err(AppError::unprocessable(
                "the body is a job object or a rules file (an array of steps)",
            ));
        }
    };
    let max_retries = settings.max_retries.unwrap_or(0);
    if max_retries > MAX_RETRIES {
        return Err(AppError::unprocessable(format!(
            "max_retries is at most {MAX_RETRIES}, got {max_retries}"
        )));
    }
    let timeout_s = settings.timeout_s.unwrap_or(state.config().job_timeout_s);
    if !(1..=MAX_TIMEOUT_S).contains(&timeout_s) {
        return Err(AppError::unprocessable(format!(
            "timeout_s is from 1 to {MAX_TIMEOUT_S}, got {timeout_s}"
        )));
    }
    if let Some(id) = &dataset_id
        && uuid::Uuid::parse_str(id).is_err()
    {
        return Err(AppError::unprocessable(format!(
            "dataset_id {id:?} is not a UUID"
        )));
    }
    let vars = settings.vars.unwrap_or_default();
    let engine = settings
        .engine
        .unwrap_or_else(|| state.default_run_engine());
    if engine.on_postgis() && state.postgis().is_none() {
        return Err(AppError::unprocessable(format!(
            "engine \"{}\" needs GEOMILL_POSTGIS_DSN, which this server was started without",
            engine.as_str()
        )));
    }
    check_document(state, &document, dataset_id.as_deref(), &vars).await?;
    let job = JobRecord {
        id: uuid::Uuid::new_v4().to_string(),
        name: name
            .filter(|n| !n.trim().is_empty())
            .unwrap_or_else(|| "job".to_owned()),
        status: super::runner::PENDING.into(),
        dataset_id,
        document: document.to_string(),
        vars: serde_json::to_string(&vars).map_err(|e| AppError::internal(&e))?,
        max_retries: i32::try_from(max_retries).unwrap_or(0),
        timeout_s: i64::try_from(timeout_s).unwrap_or(i64::MAX),
        attempts: 0,
        reason: None,
        error: None,
        result_path: None,
        result_features: None,
        steps_executed: None,
        created_at: crate::timestamp::now(),
        started_at: None,
        completed_at: None,
        engine: engine.as_str().to_owned(),
    };
    Ok(Submission {
        job,
        publish: settings.publish.unwrap_or(false),
    })
}

/// The document is valid and every source it reads names a stored layer (remote layers are
/// not fetched here).
async fn check_document(
    state: &AppState,
    document: &Value,
    dataset_id: Option<&str>,
    vars: &BTreeMap<String, String>,
) -> Result<(), AppError> {
    let loose = Vars {
        values: vars.clone(),
        strict: false,
    };
    if matches!(
        geomill_planner::spec::SpecDocument::from_value(document)?,
        geomill_planner::spec::SpecDocument::Scenario(_)
    ) {
        return Err(AppError::unprocessable(
            "a scenario runs through /scenarios/{id}/run, not as a job",
        ));
    }
    geomill_planner::plan_document(document, &Catalog::default(), &loose)?;
    let all = crate::execute::all_datasets(state).await?;
    let input = match dataset_id {
        Some(id) => Some(
            all.iter()
                .find(|d| d.id == id)
                .ok_or_else(|| AppError::unprocessable(format!("dataset_id: no dataset {id}")))?,
        ),
        None => None,
    };
    let sources = geomill_planner::document_sources(document, &loose)?;
    let bindings = crate::execute::bind_sources(sources, input, &all)?;
    // Planned again with the layers' real columns (a remote layer not fetched yet has none to
    // offer: its columns are checked when the job runs).
    let mut catalog = Catalog::default();
    for binding in bindings {
        let unfetched = all.iter().any(|d| {
            d.remote.as_ref().is_some_and(|r| r.loaded_at.is_none())
                && d.layers
                    .iter()
                    .any(|l| l.table_name == binding.layer.table_name)
        });
        if unfetched {
            continue;
        }
        let engine = state.store();
        let layer = binding.layer.clone();
        let schema = crate::blocking::blocking(move || engine.layer_schema(&layer)).await?;
        catalog.sources.insert(binding.source, schema);
    }
    catalog.rasters = crate::datasets::raster::catalog_for(state, document).await?;
    geomill_planner::plan_document(document, &catalog, &loose)?;
    Ok(())
}
