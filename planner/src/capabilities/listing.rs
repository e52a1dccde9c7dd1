//! The public description of every capability: what `/capabilities` answers and what the
//! golden snapshot holds.

use serde::Serialize;
use serde_json::Value;

use super::{Capability, Group, Tier, all_capabilities};
use crate::sql::Dialect;

/// One capability as clients see it.
#[derive(Debug, Clone, Serialize)]
pub struct CapabilityInfo {
    pub name: &'static str,
    pub description: String,
    pub group: Group,
    pub tier: Tier,
    /// The SQL dialects the planner emits this capability in.
    pub engines: Vec<Dialect>,
    /// JSON Schema of the parameters.
    pub schema: Value,
}

impl CapabilityInfo {
    pub fn of(capability: &dyn Capability) -> Self {
        Self {
            name: capability.name(),
            description: capability.description().to_owned(),
            group: capability.group(),
            tier: capability.tier(),
            engines: Dialect::ALL.to_vec(),
            schema: capability.schema().clone(),
        }
    }
}

/// Every capability, sorted by name.
pub fn listing() -> Vec<CapabilityInfo> {
    all_capabilities()
        .iter()
        .map(|c| CapabilityInfo::of(c.as_ref()))
        .collect()
}
