//! The input forms a user writes — a Rule, a rules file, a PipelineSpec v2, a scenario — and
//! their normalisation into one pipeline model.

pub mod document;
pub mod pipeline;
pub mod rule;
pub mod scenario;
pub mod trigger;
pub mod vars;

pub use document::SpecDocument;
pub use pipeline::{PipelineSpec, Step};
pub use rule::{Rule, RuleStep};
pub use scenario::{RunMode, Scenario, ScenarioJob};
pub use trigger::{Trigger, TriggerAction, TriggerEvent, TriggerPredicate};
pub use vars::Vars;
