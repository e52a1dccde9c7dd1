//! Triggers: an event, predicates on the changed data, and actions (inline in a pipeline step,
//! or stored on their own).

use serde::{Deserialize, Serialize};
use serde_json::Value;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum TriggerEvent {
    FeatureCreated,
    FeatureUpdated,
    FeatureDeleted,
    DataChanged,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Trigger {
    pub name: String,
    pub event: TriggerEvent,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trigger_type: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub predicates: Vec<TriggerPredicate>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub actions: Vec<TriggerAction>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
}

/// `geom intersects ref_table`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TriggerPredicate {
    #[serde(rename = "type")]
    pub kind: String,
    pub op: crate::plan::operator::SpatialPredicate,
    pub ref_table: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TriggerAction {
    pub action_type: String,
    #[serde(default)]
    pub config: Value,
}
