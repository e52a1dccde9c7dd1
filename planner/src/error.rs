//! Planner errors: validation problems addressed by the path of the offending field, and
//! failures of a later phase (optimizer rule, SQL emission) that name where they happened.

use serde::Serialize;

/// One problem in a spec, at a JSON path such as `steps[2].params.distance`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Problem {
    pub path: String,
    pub message: String,
}

impl Problem {
    pub fn new(path: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            path: path.into(),
            message: message.into(),
        }
    }
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.path.is_empty() {
            write!(f, "{}", self.message)
        } else {
            write!(f, "{}: {}", self.path, self.message)
        }
    }
}

/// Everything the planner can fail with.
#[derive(Debug, Clone, thiserror::Error)]
pub enum PlanError {
    /// The spec is invalid; every problem found is listed, not only the first.
    #[error("{} problem(s): {}", .0.len(), join(.0))]
    Invalid(Vec<Problem>),
    /// An optimizer rule produced an invalid plan (a bug in the rule, never the user's input).
    #[error("optimizer rule {rule} produced an invalid plan: {reason}")]
    Optimizer { rule: &'static str, reason: String },
    /// The plan cannot be expressed in a dialect (for example PostGIS without known columns).
    #[error("cannot emit {dialect} SQL for step {step}: {reason}")]
    Emit {
        dialect: &'static str,
        step: String,
        reason: String,
    },
}

impl PlanError {
    pub fn invalid(path: impl Into<String>, message: impl Into<String>) -> Self {
        Self::Invalid(vec![Problem::new(path, message)])
    }

    /// The problems of an `Invalid` error (empty for the other kinds).
    pub fn problems(&self) -> &[Problem] {
        match self {
            Self::Invalid(problems) => problems,
            _ => &[],
        }
    }
}

fn join(problems: &[Problem]) -> String {
    problems
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("; ")
}
