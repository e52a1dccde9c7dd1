//! A scenario: several jobs (each a pipeline) with dependencies, run in order or independently.

use serde::{Deserialize, Serialize};

use super::pipeline::PipelineSpec;
use crate::error::Problem;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RunMode {
    /// One job after the other, in dependency order; a failure stops the rest.
    #[default]
    Sequential,
    /// Every job on its own; dependencies are not allowed.
    Independent,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    pub name: String,
    #[serde(default)]
    pub mode: RunMode,
    pub jobs: Vec<ScenarioJob>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioJob {
    pub id: String,
    pub pipeline: PipelineSpec,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub depends_on: Vec<String>,
}

impl Scenario {
    /// Structural problems: duplicate ids, unknown or forbidden dependencies, cycles.
    pub fn problems(&self) -> Vec<Problem> {
        let mut problems = Vec::new();
        if self.jobs.is_empty() {
            problems.push(Problem::new("jobs", "must have at least 1 item(s)"));
        }
        let ids: Vec<&str> = self.jobs.iter().map(|j| j.id.as_str()).collect();
        for (i, job) in self.jobs.iter().enumerate() {
            if ids[..i].contains(&job.id.as_str()) {
                problems.push(Problem::new(
                    format!("jobs[{i}].id"),
                    format!("duplicate job id {:?}", job.id),
                ));
            }
            for (d, dependency) in job.depends_on.iter().enumerate() {
                let path = format!("jobs[{i}].depends_on[{d}]");
                if self.mode == RunMode::Independent {
                    problems.push(Problem::new(
                        path,
                        "independent scenarios cannot have dependencies",
                    ));
                } else if !ids.contains(&dependency.as_str()) {
                    problems.push(Problem::new(path, format!("unknown job {dependency:?}")));
                }
            }
        }
        if problems.is_empty()
            && let Some(cycle) = self.cycle()
        {
            problems.push(Problem::new(
                "jobs",
                format!("dependencies form a cycle: {}", cycle.join(" → ")),
            ));
        }
        problems
    }

    /// The job ids in an order that respects dependencies.
    pub fn order(&self) -> Vec<&str> {
        let mut done: Vec<&str> = Vec::new();
        while done.len() < self.jobs.len() {
            let before = done.len();
            for job in &self.jobs {
                if !done.contains(&job.id.as_str())
                    && job.depends_on.iter().all(|d| done.contains(&d.as_str()))
                {
                    done.push(&job.id);
                }
            }
            if done.len() == before {
                break;
            }
        }
        done
    }

    fn cycle(&self) -> Option<Vec<String>> {
        let ordered = self.order();
        let mut stuck: Vec<String> = self
            .jobs
            .iter()
            .filter(|j| !ordered.contains(&j.id.as_str()))
            .map(|j| j.id.clone())
            .collect();
        if stuck.is_empty() {
            return None;
        }
        if let Some(first) = stuck.first().cloned() {
            stuck.push(first);
        }
        Some(stuck)
    }
}
