//! Stored triggers: reading and writing the catalog, and checking a trigger against it (the
//! watched dataset layer or table, the reference tables of predicates, the rule and the jobs
//! its actions name).

use std::collections::BTreeSet;

use geomill_backends::store::TriggerRecord;
use serde::Serialize;
use serde_json::{Value, json};

use super::model::{FieldProblem, TriggerSpec, Watched, parse};
use crate::blocking::blocking;
use crate::error::{AppError, ErrorKind};
use crate::state::AppState;

/// A trigger as the API shows it.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct Trigger {
    pub id: String,
    /// Shown with every secret as `***` (stored and used as given).
    #[serde(flatten, serialize_with = "super::secrets::serialize_masked")]
    pub spec: TriggerSpec,
    pub created_at: String,
    pub updated_at: String,
}

impl Trigger {
    fn from_record(record: TriggerRecord) -> Result<Self, AppError> {
        let mut spec: TriggerSpec =
            serde_json::from_str(&record.document).map_err(|e| AppError::internal(&e))?;
        spec.enabled = record.enabled;
        Ok(Self {
            id: record.id,
            spec,
            created_at: record.created_at,
            updated_at: record.updated_at,
        })
    }
}

/// Where a predicate's `ref_table` lives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reference {
    /// A stored layer of the embedded engine (its table in the `layers` schema).
    Layer { table_name: String },
    /// A PostgreSQL table.
    Postgres { schema: String, table: String },
}

/// The table events name a dataset layer by: `<dataset id>.<layer>` (its collection id).
pub fn layer_table(dataset_id: &str, layer: &str) -> String {
    format!("{dataset_id}.{layer}")
}

/// What `name` refers to: a stored layer (as pipelines name them) or, with PostGIS
/// configured, a PostgreSQL `schema.table`.
pub async fn reference(state: &AppState, name: &str) -> Result<Reference, String> {
    let all = crate::execute::all_datasets(state)
        .await
        .map_err(|e| e.message)?;
    let wanted = BTreeSet::from([name.to_owned()]);
    if let Ok(bindings) = crate::execute::bind_sources(wanted, None, &all)
        && let Some(binding) = bindings.into_iter().next()
    {
        return Ok(Reference::Layer {
            table_name: binding.layer.table_name,
        });
    }
    match (name.split_once('.'), state.postgres_store()) {
        (Some((schema, table)), Some(_)) if !schema.is_empty() && !table.is_empty() => {
            Ok(Reference::Postgres {
                schema: schema.to_owned(),
                table: table.to_owned(),
            })
        }
        _ => Err(format!(
            "{name:?} names no stored layer (use <dataset id or name>/<layer>, a dataset id or name{})",
            if state.postgres_store().is_some() {
                ", or a PostgreSQL schema.table"
            } else {
                "; schema.table needs GEOMILL_POSTGIS_DSN"
            }
        )),
    }
}

/// The job a RUN_PIPELINE action (or the older `rule_id`) submits.
pub fn action_job(spec: &TriggerSpec, config: &serde_json::Map<String, Value>) -> Value {
    if let Some(job) = config.get("job") {
        return job.clone();
    }
    let rule = config.get("pipeline_id").cloned().unwrap_or(Value::Null);
    let dataset = config
        .get("dataset_id")
        .cloned()
        .or_else(|| spec.dataset_id.clone().map(Value::String))
        .unwrap_or(Value::Null);
    json!({"name": spec.name, "dataset_id": dataset, "parameters": {"rule_ids": [rule]}})
}

/// Checks a parsed trigger against the catalog and fills in its watched table.
async fn resolve(
    state: &AppState,
    mut spec: TriggerSpec,
    watched: Watched,
) -> Result<TriggerSpec, Vec<FieldProblem>> {
    let mut problems = Vec::new();
    match watched {
        (Some(dataset_id), layer, None) => {
            let engine = state.store();
            let key = dataset_id.clone();
            match blocking(move || engine.dataset(&key)).await {
                Ok(Some(dataset)) => {
                    let found = match &layer {
                        Some(name) => dataset.layers.iter().find(|l| &l.name == name),
                        None => dataset.layers.first(),
                    };
                    match found {
                        Some(found) => {
                            spec.table = layer_table(&dataset.id, &found.name);
                            spec.layer = Some(found.name.clone());
                            spec.dataset_id = Some(dataset.id);
                        }
                        None => problems.push(FieldProblem::new(
                            "layer",
                            format!(
                                "dataset {dataset_id} has no layer {:?}; its layers: {}",
                                layer.unwrap_or_default(),
                                dataset
                                    .layers
                                    .iter()
                                    .map(|l| l.name.as_str())
                                    .collect::<Vec<_>>()
                                    .join(", ")
                            ),
                        )),
                    }
                }
                Ok(None) => problems.push(FieldProblem::new(
                    "dataset_id",
                    format!("no dataset {dataset_id}"),
                )),
                Err(error) => problems.push(FieldProblem::new("dataset_id", error.message)),
            }
        }
        (None, None, Some(table)) => {
            if state.postgres_store().is_none() {
                problems.push(FieldProblem::new(
                    "table",
                    "a PostgreSQL table needs the server started with GEOMILL_POSTGIS_DSN",
                ));
            }
            spec.table = table;
        }
        _ => {}
    }
    for (i, predicate) in spec.predicates.iter().enumerate() {
        if let Err(message) = reference(state, &predicate.ref_table).await {
            problems.push(FieldProblem::new(
                format!("predicates[{i}].ref_table"),
                message,
            ));
        }
    }
    if let Some(rule_id) = &spec.rule_id
        && state.rules().find(rule_id).await.is_err()
    {
        problems.push(FieldProblem::new(
            "rule_id",
            format!("no stored rule {rule_id}"),
        ));
    }
    for (i, action) in spec.actions.iter().enumerate() {
        if action.action_type == "RUN_PIPELINE" {
            let job = action_job(&spec, &action.config);
            if let Err(error) = crate::jobs::submit::job_from(state, job, Default::default()).await
            {
                problems.push(FieldProblem::new(
                    format!("actions[{i}].config"),
                    error.message,
                ));
            }
        }
    }
    if problems.is_empty() {
        Ok(spec)
    } else {
        Err(problems)
    }
}

/// Parses and checks a trigger body: the trigger, or every problem with its field path.
pub async fn check(state: &AppState, body: &Value) -> Result<TriggerSpec, Vec<FieldProblem>> {
    let (spec, watched) = parse(body)?;
    resolve(state, spec, watched).await
}

/// A 422 listing the problems (`detail.errors`), the first named in the message.
pub fn invalid(problems: &[FieldProblem]) -> AppError {
    let first = problems
        .first()
        .map(|p| {
            format!(
                "{}: {}",
                if p.path.is_empty() { "body" } else { &p.path },
                p.message
            )
        })
        .unwrap_or_default();
    AppError::new(
        ErrorKind::Invalid,
        "invalid_trigger",
        format!("invalid trigger: {first}"),
    )
    .with_detail(json!({ "errors": problems }))
}

/// One stored trigger; 404 when there is none.
pub async fn load(state: &AppState, id: &str) -> Result<Trigger, AppError> {
    let records = state.trigger_records();
    let key = id.to_owned();
    let record = blocking(move || records.get(&key))
        .await?
        .ok_or_else(|| AppError::not_found(format!("no trigger {id}")))?;
    Trigger::from_record(record)
}

/// Every stored trigger, oldest first.
pub async fn all(state: &AppState) -> Result<Vec<Trigger>, AppError> {
    let records = state.trigger_records();
    blocking(move || records.list())
        .await?
        .into_iter()
        .map(Trigger::from_record)
        .collect()
}

/// Writes a trigger.
pub async fn save(state: &AppState, trigger: Trigger) -> Result<Trigger, AppError> {
    let record = TriggerRecord {
        id: trigger.id.clone(),
        name: trigger.spec.name.clone(),
        enabled: trigger.spec.enabled,
        document: serde_json::to_string(&trigger.spec).map_err(|e| AppError::internal(&e))?,
        created_at: trigger.created_at.clone(),
        updated_at: trigger.updated_at.clone(),
    };
    let records = state.trigger_records();
    blocking(move || records.put(&record)).await?;
    Ok(trigger)
}

/// Deletes a trigger; 404 when there is none.
pub async fn delete(state: &AppState, id: &str) -> Result<(), AppError> {
    let records = state.trigger_records();
    let key = id.to_owned();
    if blocking(move || records.delete(&key)).await? {
        Ok(())
    } else {
        Err(AppError::not_found(format!("no trigger {id}")))
    }
}
