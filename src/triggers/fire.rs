//! Firing: the one entry point every change goes through ([`on_change`]). It announces
//! `layer_updated`, finds the enabled triggers watching the changed table whose event matches,
//! evaluates their predicates on each changed row, runs the actions of those that fire, and
//! tells `/triggers/eval-stream` about every evaluation.

use serde_json::{Value, json};

use super::actions;
use super::store::{self, Reference, Trigger};
use crate::blocking::blocking;
use crate::error::AppError;
use crate::state::AppState;

/// What happened to the rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangeOp {
    Insert,
    Update,
    Delete,
}

impl ChangeOp {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Insert => "INSERT",
            Self::Update => "UPDATE",
            Self::Delete => "DELETE",
        }
    }

    /// `INSERT`, `UPDATE` or `DELETE` (any case).
    pub fn parse(text: &str) -> Option<Self> {
        match text.to_ascii_uppercase().as_str() {
            "INSERT" => Some(Self::Insert),
            "UPDATE" => Some(Self::Update),
            "DELETE" => Some(Self::Delete),
            _ => None,
        }
    }

    /// Whether a trigger on `event` fires for this operation.
    pub fn matches(self, event: &str) -> bool {
        match event {
            "FEATURE_CREATED" => self == Self::Insert,
            "DATA_CHANGED" => true,
            _ => false,
        }
    }
}

/// One changed row: its feature id, and its geometry as WKB with its SRID when known.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ChangedFeature {
    pub fid: Option<String>,
    pub wkb: Option<Vec<u8>>,
    pub srid: Option<i32>,
}

/// A change of one table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// The dataset layer the table stores, when it is one.
    pub dataset_id: Option<String>,
    pub layer: Option<String>,
    /// As events name it: `<dataset id>.<layer>` or `schema.table`.
    pub table: String,
    pub op: ChangeOp,
    pub rows: Vec<ChangedFeature>,
}

/// Whether `row` passes every predicate of `trigger` (a row without geometry passes none);
/// answers the outcome of each predicate.
pub async fn evaluate_row(
    state: &AppState,
    trigger: &Trigger,
    row: &ChangedFeature,
) -> Result<(bool, Vec<Value>), AppError> {
    let mut outcomes = Vec::new();
    let mut all = true;
    for predicate in &trigger.spec.predicates {
        let result = match &row.wkb {
            None => false,
            Some(wkb) => intersects(state, &predicate.ref_table, wkb, row.srid).await?,
        };
        all &= result;
        outcomes.push(json!({"type": predicate.kind, "op": predicate.op, "ref_table": predicate.ref_table, "result": result}));
    }
    Ok((all, outcomes))
}

/// Whether the geometry intersects a feature of the reference table.
async fn intersects(
    state: &AppState,
    name: &str,
    wkb: &[u8],
    srid: Option<i32>,
) -> Result<bool, AppError> {
    match store::reference(state, name)
        .await
        .map_err(AppError::unprocessable)?
    {
        Reference::Layer { table_name } => {
            let engine = state.store();
            let wkb = wkb.to_vec();
            blocking(move || engine.layer_intersects(&table_name, &wkb)).await
        }
        Reference::Postgres { schema, table } => {
            let engine = state
                .postgres_store()
                .ok_or_else(|| AppError::unprocessable("PostGIS is not configured"))?;
            engine
                .table_intersects(&schema, &table, wkb, srid)
                .await
                .map_err(|e| match e {
                    geomill_backends::BackendError::Query { reason, .. } => {
                        AppError::unprocessable(format!("{name}: {reason}"))
                    }
                    other => AppError::from(other),
                })?
                .ok_or_else(|| AppError::unprocessable(format!("{name} has no geometry column")))
        }
    }
}

/// The rows of `change` that pass `trigger`'s predicates, and each row's outcome.
async fn matching(
    state: &AppState,
    trigger: &Trigger,
    change: &Change,
) -> Result<(Vec<Option<String>>, Vec<Value>), AppError> {
    let mut matched = Vec::new();
    let mut results = Vec::new();
    for row in &change.rows {
        let (passes, predicates) = evaluate_row(state, trigger, row).await?;
        if passes {
            matched.push(row.fid.clone());
        }
        results.push(json!({"fid": row.fid, "matches": passes, "predicates": predicates}));
    }
    Ok((matched, results))
}

/// Tells `/triggers/eval-stream` subscribers about an evaluation.
pub fn announce(state: &AppState, evaluation: &Value) {
    // Nobody listening is not an error.
    let _ = state.triggers().evaluations().send(evaluation.clone());
}

/// Handles a change: `layer_updated`, then every enabled trigger on the table whose event
/// matches is evaluated and, when rows pass its predicates, fired. Answers the evaluations.
pub async fn on_change(state: &AppState, change: Change) -> Vec<Value> {
    let fids: Vec<&Option<String>> = change.rows.iter().take(100).map(|r| &r.fid).collect();
    state.events().publish(
        "layer_updated",
        json!({"table": change.table, "dataset_id": change.dataset_id, "layer": change.layer,
               "op": change.op.as_str(), "count": change.rows.len(), "fids": fids}),
    );
    let triggers = match store::all(state).await {
        Ok(triggers) => triggers,
        Err(error) => {
            tracing::warn!(message = %error.message, "triggers: cannot read the catalog");
            return Vec::new();
        }
    };
    let mut evaluations = Vec::new();
    for trigger in triggers.into_iter().filter(|t| {
        t.spec.enabled && t.spec.table == change.table && change.op.matches(&t.spec.event)
    }) {
        let evaluation = match matching(state, &trigger, &change).await {
            Ok((matched, results)) => {
                let fired = !matched.is_empty();
                let done = if fired {
                    actions::run(state, &trigger, &change, &matched, false).await
                } else {
                    Vec::new()
                };
                json!({"timestamp": crate::timestamp::now(), "source": "change", "trigger_id": trigger.id,
                       "name": trigger.spec.name, "table": change.table, "event": trigger.spec.event,
                       "op": change.op.as_str(), "fired": fired, "matched": matched, "rows": results, "actions": done})
            }
            Err(error) => {
                tracing::warn!(trigger = %trigger.id, message = %error.message, "trigger could not be evaluated");
                json!({"timestamp": crate::timestamp::now(), "source": "change", "trigger_id": trigger.id,
                       "name": trigger.spec.name, "table": change.table, "event": trigger.spec.event,
                       "op": change.op.as_str(), "fired": false, "error": error.message})
            }
        };
        announce(state, &evaluation);
        evaluations.push(evaluation);
    }
    evaluations
}

#[cfg(test)]
mod tests {
    use super::ChangeOp;

    #[test]
    fn feature_created_is_inserts_and_data_changed_is_every_change() {
        for (op, created, changed) in [
            (ChangeOp::Insert, true, true),
            (ChangeOp::Update, false, true),
            (ChangeOp::Delete, false, true),
        ] {
            assert_eq!(op.matches("FEATURE_CREATED"), created, "{op:?}");
            assert_eq!(op.matches("DATA_CHANGED"), changed, "{op:?}");
            assert!(!op.matches("SOMETHING_ELSE"));
            assert_eq!(ChangeOp::parse(&op.as_str().to_lowercase()), Some(op));
        }
        assert_eq!(ChangeOp::parse("MERGE"), None);
    }
}
