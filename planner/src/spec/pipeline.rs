//! PipelineSpec v2: named steps forming a DAG; a step may be conditional (`when`) and may carry
//! inline triggers.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::rule::empty_object;
use super::trigger::Trigger;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PipelineSpec {
    #[serde(default)]
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// `"2"` when given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<Value>,
    pub steps: Vec<Step>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Step {
    pub id: String,
    pub capability: String,
    /// The step whose output this step reads, or a dataset layer. Default: the previous step,
    /// or the run's input (`input`) for the first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input: Option<String>,
    #[serde(default = "empty_object")]
    pub params: Value,
    /// A condition over run variables (`'{mode}' = 'full'`); when false the step is skipped and
    /// its consumers read its input.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub when: Option<String>,
    /// A disabled step is skipped like a step whose condition is false.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
    /// Triggers that fire on this step's output.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub triggers: Vec<Trigger>,
}
