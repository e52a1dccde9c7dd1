//! The GISPulse front-end: GISPulse rules files (v1) and pipelines (v2) parsed into their own
//! model and lowered into native pipelines with GISPulse's parameter names, defaults and
//! semantics, so that they plan, run and preview like any native document.

pub mod document;
pub mod lower;
pub mod pandas;
pub mod translate;

pub use document::{Form, detect};

use serde_json::Value;

use crate::error::PlanError;

/// The native pipeline a GISPulse document becomes, with the remarks for `geomill migrate` and
/// `POST /rules/convert`; an error when `value` is not a GISPulse document or cannot be
/// translated.
pub fn migrate(value: &Value) -> Result<lower::Lowered, PlanError> {
    let form = detect(value).ok_or_else(|| {
        PlanError::invalid(
            "",
            "not a GISPulse document: expected a rules file (a JSON array of {name, capability, config}) or a pipeline ({\"version\": 2, \"steps\": [...]})",
        )
    })?;
    let document = document::read(value, form).map_err(PlanError::Invalid)?;
    lower::lower(&document).map_err(PlanError::Invalid)
}
