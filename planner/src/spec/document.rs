//! Recognising which form a JSON document is, and normalising every form into a PipelineSpec.

use serde_json::Value;

use super::pipeline::{PipelineSpec, Step};
use super::rule::{Rule, RuleStep};
use super::scenario::Scenario;
use crate::error::PlanError;
use crate::gispulse::{self, document::GpDocument};

/// The most steps one document may hold: the steps of a pipeline or rules file, or of all the
/// jobs of a scenario together. Planning, validation and the run's statements grow with them.
pub const MAX_STEPS: usize = 100;

/// Any document geomill plans.
#[derive(Debug, Clone, PartialEq)]
pub enum SpecDocument {
    /// A JSON array of `{name, capability, params}`.
    RulesFile(Vec<RuleStep>),
    /// `{name, steps: [...]}`.
    Pipeline(PipelineSpec),
    /// `{name, mode, jobs: [...]}`.
    Scenario(Scenario),
    /// One `{name, capability, config|params}`.
    Rule(Rule),
    /// A GISPulse rules file (v1) or pipeline (v2), read as GISPulse reads it.
    GisPulse(GpDocument),
}

impl SpecDocument {
    /// Recognises the form by its shape and parses it; a parse error names the field.
    pub fn from_value(value: &Value) -> Result<Self, PlanError> {
        let parse_error = |e: serde_json::Error| PlanError::invalid("", e.to_string());
        if let Some(form) = gispulse::detect(value) {
            return gispulse::document::read(value, form)
                .map(Self::GisPulse)
                .map_err(PlanError::Invalid);
        }
        match value {
            Value::Array(_) => serde_json::from_value(value.clone())
                .map(Self::RulesFile)
                .map_err(parse_error),
            Value::Object(object) if object.contains_key("steps") => {
                serde_json::from_value(value.clone())
                    .map(Self::Pipeline)
                    .map_err(parse_error)
            }
            Value::Object(object) if object.contains_key("jobs") => {
                serde_json::from_value(value.clone())
                    .map(Self::Scenario)
                    .map_err(parse_error)
            }
            Value::Object(object) if object.contains_key("capability") => {
                serde_json::from_value(value.clone())
                    .map(Self::Rule)
                    .map_err(parse_error)
            }
            _ => Err(PlanError::invalid(
                "",
                "expected a rules file (array of steps), a pipeline ({name, steps}), a scenario ({name, jobs}) or a rule ({name, capability, config})",
            )),
        }
    }

    /// The pipelines to plan: one, or one per scenario job (with the job's id); refused past
    /// [`MAX_STEPS`] steps.
    pub fn pipelines(&self) -> Result<Vec<(String, PipelineSpec)>, PlanError> {
        // A scenario's dependency checks grow with the square of its jobs: counted first.
        if let Self::Scenario(scenario) = self
            && scenario.jobs.len() > MAX_STEPS
        {
            return Err(PlanError::invalid(
                "jobs",
                format!(
                    "{} jobs: a scenario may have at most {MAX_STEPS} jobs (the step limit)",
                    scenario.jobs.len()
                ),
            ));
        }
        let pipelines = self.unchecked_pipelines()?;
        let steps: usize = pipelines.iter().map(|(_, p)| p.steps.len()).sum();
        if steps > MAX_STEPS {
            let path = match self {
                Self::RulesFile(_) | Self::GisPulse(_) => "",
                Self::Scenario(_) => "jobs",
                Self::Pipeline(_) | Self::Rule(_) => "steps",
            };
            return Err(PlanError::invalid(
                path,
                format!(
                    "{steps} steps: a document may have at most {MAX_STEPS} steps (the step limit)"
                ),
            ));
        }
        Ok(pipelines)
    }

    fn unchecked_pipelines(&self) -> Result<Vec<(String, PipelineSpec)>, PlanError> {
        match self {
            Self::RulesFile(steps) => Ok(vec![(String::new(), rules_file_pipeline(steps))]),
            Self::Pipeline(pipeline) => Ok(vec![(String::new(), pipeline.clone())]),
            Self::GisPulse(document) => gispulse::lower::lower(document)
                .map(|lowered| vec![(String::new(), lowered.pipeline)])
                .map_err(PlanError::Invalid),
            Self::Rule(rule) => {
                let problems = rule.problems("");
                if !problems.is_empty() {
                    return Err(PlanError::Invalid(problems));
                }
                let params = rule
                    .parameters("config")
                    .map_err(|p| PlanError::Invalid(vec![p]))?;
                Ok(vec![(
                    String::new(),
                    single_step(&rule.name, &rule.capability, params, rule.enabled),
                )])
            }
            Self::Scenario(scenario) => {
                let problems = scenario.problems();
                if !problems.is_empty() {
                    return Err(PlanError::Invalid(problems));
                }
                Ok(scenario
                    .jobs
                    .iter()
                    .map(|job| (job.id.clone(), job.pipeline.clone()))
                    .collect())
            }
        }
    }

    /// The JSON path prefix of step `i` in this form (for rules files, `[i]`).
    pub fn step_path(&self) -> StepPath {
        match self {
            Self::RulesFile(_) => StepPath::RulesFile,
            Self::Rule(_) => StepPath::Rule,
            Self::Pipeline(_) | Self::Scenario(_) => StepPath::Pipeline,
            Self::GisPulse(_) => StepPath::Translated,
        }
    }
}

/// How the user's document addresses a step, so that errors point into what they wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StepPath {
    RulesFile,
    Pipeline,
    Rule,
    /// A GISPulse document's native translation (`geomill migrate` shows it).
    Translated,
}

impl StepPath {
    /// The path of step `index`'s field `field` (`params`, `id`, ...); `id` is the step's id
    /// (a translated step's names the GISPulse step it comes from: `{id}` or `{id}__{k}`).
    pub fn at(self, index: usize, id: &str, field: &str) -> String {
        match (self, field) {
            (Self::RulesFile, "id") => format!("[{index}].name"),
            (Self::RulesFile, _) => format!("[{index}].{field}"),
            (Self::Rule, "params") => "config".to_owned(),
            (Self::Rule, "id") => "name".to_owned(),
            (Self::Rule, _) => field.to_owned(),
            (Self::Pipeline, _) => format!("steps[{index}].{field}"),
            (Self::Translated, _) => {
                let gispulse_step = id.split("__").next().unwrap_or(id);
                format!(
                    "(GISPulse step {gispulse_step:?}, native translation) steps[{index}].{field}"
                )
            }
        }
    }
}

fn rules_file_pipeline(steps: &[RuleStep]) -> PipelineSpec {
    PipelineSpec {
        name: String::new(),
        description: None,
        version: None,
        steps: steps
            .iter()
            .map(|step| Step {
                id: step.name.clone(),
                capability: step.capability.clone(),
                input: None,
                params: step.params.clone(),
                when: None,
                enabled: None,
                triggers: Vec::new(),
            })
            .collect(),
    }
}

fn single_step(name: &str, capability: &str, params: Value, enabled: Option<bool>) -> PipelineSpec {
    PipelineSpec {
        name: name.to_owned(),
        description: None,
        version: None,
        steps: vec![Step {
            id: name.to_owned(),
            capability: capability.to_owned(),
            input: None,
            params,
            when: None,
            enabled,
            triggers: Vec::new(),
        }],
    }
}

#[cfg(test)]
mod tests {
    use super::StepPath;

    #[test]
    fn paths_point_into_what_the_user_wrote() {
        assert_eq!(StepPath::RulesFile.at(2, "b", "params"), "[2].params");
        assert_eq!(StepPath::Rule.at(0, "b", "params"), "config");
        assert_eq!(StepPath::Pipeline.at(1, "b", "input"), "steps[1].input");
        // A translated step names the GISPulse step it comes from, side steps included.
        assert_eq!(
            StepPath::Translated.at(3, "merged__1", "params.by"),
            "(GISPulse step \"merged\", native translation) steps[3].params.by"
        );
    }
}
