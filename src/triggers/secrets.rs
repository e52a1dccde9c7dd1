//! A webhook's signing secret (`config.secret` of a NOTIFY action) is write-only: every answer
//! that shows a trigger shows it as `***`, and a write that sends `***` back, or leaves the
//! secret out, keeps the secret stored for the action at the same position. `"secret": null`
//! removes it.

use serde_json::Value;

use super::model::{FieldProblem, TriggerSpec};
use crate::auth::secrets::MASK;

/// The key of an action's config that holds its signing secret.
const SECRET: &str = "secret";

/// `spec` as answers show it: every action's secret replaced by `***`.
pub fn masked(spec: &TriggerSpec) -> TriggerSpec {
    let mut shown = spec.clone();
    for action in &mut shown.actions {
        if let Some(secret) = action.config.get_mut(SECRET)
            && secret.is_string()
        {
            *secret = Value::String(MASK.to_owned());
        }
    }
    shown
}

/// Serializes a trigger's fields with its secrets masked (see [`masked`]).
pub fn serialize_masked<S: serde::Serializer>(
    spec: &TriggerSpec,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    serde::Serialize::serialize(&masked(spec), serializer)
}

/// Resolves the secrets of a trigger about to be written: `***` or no secret keeps the secret
/// of the action at the same position in `stored` (the trigger being replaced, if any); `null`
/// removes it. A `***` with no stored secret behind it is a problem of its field.
pub fn keep_stored(
    spec: &mut TriggerSpec,
    stored: Option<&TriggerSpec>,
) -> Result<(), Vec<FieldProblem>> {
    let mut problems = Vec::new();
    for (i, action) in spec.actions.iter_mut().enumerate() {
        let kept = stored
            .and_then(|s| s.actions.get(i))
            .filter(|s| s.action_type == action.action_type)
            .and_then(|s| s.config.get(SECRET))
            .and_then(Value::as_str)
            .map(str::to_owned);
        match action.config.get(SECRET).cloned() {
            Some(Value::Null) => {
                action.config.remove(SECRET);
            }
            Some(Value::String(given)) if given != MASK => {}
            given => match kept {
                Some(kept) => {
                    action.config.insert(SECRET.to_owned(), Value::String(kept));
                }
                None if given.is_some() => problems.push(FieldProblem::new(
                    format!("actions[{i}].config.{SECRET}"),
                    format!(
                        "{MASK:?} stands for a stored secret and this action has none: send the secret itself"
                    ),
                )),
                None => {}
            },
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems)
    }
}
