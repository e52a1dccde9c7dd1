//! The planner's front door: validate a document, lower it, optimise it, and emit SQL — the
//! same path for `validate`, `preview` and execution.

use serde::Serialize;
use serde_json::Value;

use crate::error::{PlanError, Problem};
use crate::optimizer::{EngineMode, optimize};
use crate::plan::Plan;
use crate::plan::lower::{LowerOptions, lower};
use crate::plan::operator::Operator;
use crate::schema::{Catalog, Column, FieldType, GEOM, Schema};
use crate::spec::document::StepPath;
use crate::spec::{SpecDocument, Vars};
use crate::sql::{Dialect, Script, emit};

/// One pipeline (one scenario job) planned.
#[derive(Debug, Clone)]
pub struct Planned {
    /// The scenario job id; empty for a lone pipeline.
    pub job: String,
    pub plan: Plan,
    pub optimized: Plan,
}

/// Parses and lowers every pipeline of `document`, collecting the problems of all of them.
pub fn plan_document(
    document: &Value,
    catalog: &Catalog,
    vars: &Vars,
) -> Result<Vec<(String, Plan)>, PlanError> {
    let document = SpecDocument::from_value(document)?;
    let paths = document.step_path();
    let pipelines = document.pipelines()?;
    let scenario = matches!(document, SpecDocument::Scenario(_));
    let mut plans = Vec::new();
    let mut problems: Vec<Problem> = Vec::new();
    for (index, (job, pipeline)) in pipelines.iter().enumerate() {
        let prefix = if scenario {
            format!("jobs[{index}].pipeline.")
        } else {
            String::new()
        };
        let options = LowerOptions {
            catalog,
            vars,
            paths: if scenario { StepPath::Pipeline } else { paths },
            prefix: &prefix,
        };
        match lower(pipeline, &options) {
            Ok(plan) => plans.push((job.clone(), plan)),
            Err(PlanError::Invalid(found)) => problems.extend(found),
            Err(other) => return Err(other),
        }
    }
    if problems.is_empty() {
        Ok(plans)
    } else {
        Err(PlanError::Invalid(problems))
    }
}

/// The sources every pipeline of `document` reads (not steps), without lowering.
pub fn document_sources(
    document: &Value,
    vars: &Vars,
) -> Result<std::collections::BTreeSet<String>, PlanError> {
    let document = SpecDocument::from_value(document)?;
    let paths = document.step_path();
    let catalog = Catalog::default();
    let mut names = std::collections::BTreeSet::new();
    for (job, pipeline) in document.pipelines()? {
        let options = LowerOptions {
            catalog: &catalog,
            vars,
            paths,
            prefix: "",
        };
        names.extend(
            crate::plan::lower::sources(&pipeline, &options).map_err(|e| {
                match (e, job.is_empty()) {
                    (error, true) => error,
                    (PlanError::Invalid(problems), false) => PlanError::Invalid(
                        problems
                            .into_iter()
                            .map(|p| Problem::new(format!("job {job}: {}", p.path), p.message))
                            .collect(),
                    ),
                    (other, false) => other,
                }
            })?,
        );
    }
    Ok(names)
}

/// A catalog for planning without one: every source `document` reads gets the same generic
/// schema, the columns its steps name (of unknown type) and `geom`, so that a dialect which
/// must list columns (PostGIS has no `* EXCLUDE`) can show its SQL. A column a step creates is
/// listed too, harmlessly: the step replaces it; but not the fields a nearest search adds (a
/// later step may read them), which the search refuses to find in its input.
pub fn generic_catalog(document: &Value, vars: &Vars) -> Result<Catalog, PlanError> {
    let sources = document_sources(document, vars)?;
    let mut named = std::collections::BTreeSet::new();
    let mut added = Vec::new();
    for (_, plan) in plan_document(document, &Catalog::default(), vars)? {
        for index in plan.topological().unwrap_or_default() {
            if let Some(node) = plan.node(index) {
                named.extend(node.op.reads());
                if let Operator::Nearest(nearest) = &node.op {
                    added.push(nearest.distance_field.clone());
                    added.extend(
                        nearest
                            .locate
                            .iter()
                            .flat_map(|l| l.fields())
                            .map(|(name, _)| name.to_owned()),
                    );
                }
            }
        }
    }
    named.remove(GEOM);
    for field in &added {
        named.remove(field);
    }
    let mut columns: Vec<Column> = named
        .into_iter()
        .map(|name| Column {
            name,
            ty: FieldType::Unknown,
        })
        .collect();
    columns.push(Column {
        name: GEOM.to_owned(),
        ty: FieldType::Geometry,
    });
    let schema = Schema { columns, crs: None };
    Ok(Catalog {
        sources: sources.into_iter().map(|s| (s, schema.clone())).collect(),
        rasters: None,
    })
}

/// Lowers and optimises every pipeline of `document`.
pub fn compile(
    document: &Value,
    catalog: &Catalog,
    vars: &Vars,
    mode: EngineMode,
) -> Result<Vec<Planned>, PlanError> {
    plan_document(document, catalog, vars)?
        .into_iter()
        .map(|(job, plan)| {
            let optimized = optimize(plan.clone(), mode)?;
            Ok(Planned {
                job,
                plan,
                optimized,
            })
        })
        .collect()
}

/// What a preview shows for one pipeline.
#[derive(Debug, Clone, Serialize)]
pub struct Preview {
    pub job: String,
    /// EXPLAIN of the plan as lowered.
    pub plan: String,
    /// EXPLAIN after optimisation.
    pub optimized: String,
    /// The optimised plan's SQL, per dialect; a dialect that cannot express the plan has an
    /// error message instead.
    pub sql: Vec<DialectSql>,
}

#[derive(Debug, Clone, Serialize)]
pub struct DialectSql {
    pub dialect: Dialect,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub script: Option<Script>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// Plans `document` and emits its SQL in `dialects`, without touching a database.
pub fn preview(
    document: &Value,
    catalog: &Catalog,
    vars: &Vars,
    mode: EngineMode,
    dialects: &[Dialect],
) -> Result<Vec<Preview>, PlanError> {
    Ok(compile(document, catalog, vars, mode)?
        .into_iter()
        .map(|planned| Preview {
            plan: planned.plan.explain(),
            optimized: planned.optimized.explain(),
            sql: dialects
                .iter()
                .map(|&dialect| match emit(&planned.optimized, dialect) {
                    Ok(script) => DialectSql {
                        dialect,
                        script: Some(script),
                        error: None,
                    },
                    Err(error) => DialectSql {
                        dialect,
                        script: None,
                        error: Some(error.to_string()),
                    },
                })
                .collect(),
            job: planned.job,
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn the_generic_schema_leaves_out_the_fields_a_nearest_search_adds() {
        let document = json!({"name": "rings", "steps": [{"id": "rings",
            "capability": "classify_by_ring", "input": "places",
            "params": {"ref_layer": "zones", "rings": [1, 2], "distance_field": "gap"}}]});
        let catalog = generic_catalog(&document, &Vars::default()).unwrap();
        let places = catalog.get("places").unwrap();
        assert_eq!(places.names(), [GEOM], "{places:?}");
        let planned = compile(&document, &catalog, &Vars::default(), EngineMode::Embedded);
        assert!(planned.is_ok(), "{planned:?}");
    }
}
