//! A stored Rule (`name`, `capability`, `config` or `params`, `scope`, `enabled`) and a step of a
//! rules file (`name`, `capability`, `params`).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::Problem;

/// A named, stored capability call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rule {
    pub name: String,
    pub capability: String,
    /// The capability's parameters (the spec's main form).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config: Option<Value>,
    /// The same, under the rules-file name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<Value>,
    /// Where the rule applies: `global` (default) or `dataset`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
}

/// The scopes a rule may have.
pub const RULE_SCOPES: &[&str] = &["global", "dataset"];

impl Rule {
    /// The parameters, from `config` or `params`; both given and different is a problem.
    pub fn parameters(&self, path: &str) -> Result<Value, Problem> {
        match (&self.config, &self.params) {
            (Some(config), Some(params)) if config != params => Err(Problem::new(
                path,
                "give the parameters once, as config or as params, not both",
            )),
            (Some(value), _) | (None, Some(value)) => Ok(value.clone()),
            (None, None) => Ok(Value::Object(serde_json::Map::new())),
        }
    }

    /// Problems with the rule's own fields (its parameters are checked by the planner).
    pub fn problems(&self, path: &str) -> Vec<Problem> {
        let mut problems = Vec::new();
        if self.name.trim().is_empty() {
            problems.push(Problem::new(format!("{path}name"), "must not be empty"));
        }
        if let Some(scope) = &self.scope
            && !RULE_SCOPES.contains(&scope.as_str())
        {
            problems.push(Problem::new(
                format!("{path}scope"),
                format!("expected one of {}, got {scope:?}", RULE_SCOPES.join(", ")),
            ));
        }
        if let Err(problem) = self.parameters(&format!("{path}config")) {
            problems.push(problem);
        }
        problems
    }
}

/// One step of a rules file: a later step names an earlier one as its `params.input`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RuleStep {
    pub name: String,
    pub capability: String,
    #[serde(default = "empty_object")]
    pub params: Value,
}

pub(crate) fn empty_object() -> Value {
    Value::Object(serde_json::Map::new())
}
