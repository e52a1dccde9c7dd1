//! The GISPulse front-end: GISPulse rules files (v1) and pipelines (v2) parsed into their own
//! model and lowered into native pipelines with GISPulse's parameter names, defaults and
//! semantics, so that they plan, run and preview like any native document.

pub mod document;
pub mod lower;
pub mod pandas;
pub mod translate;

pub use document::{Form, detect};
