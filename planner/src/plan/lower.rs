//! Lowering: a pipeline (any input form, normalised) becomes a logical plan. Every problem in
//! the spec is collected and reported at once, addressed by its path in the user's document.

use std::collections::BTreeMap;

use petgraph::stable_graph::NodeIndex;

use super::graph::{Plan, PlanNode};
use super::operator::{ExportFormat, ExportOp, Operator};
use super::schema_infer::output_schema;
use crate::capabilities::registry::ParsedStep;
use crate::capabilities::{LowerContext, find, suggest};
use crate::error::{PlanError, Problem};
use crate::expr::SqlExpr;
use crate::schema::{Catalog, Schema};
use crate::spec::document::StepPath;
use crate::spec::{PipelineSpec, Step, Vars};
use serde_json::Value;

/// The source a first step reads when it names no input: the run's input dataset.
pub const DEFAULT_INPUT: &str = "input";

/// What lowering needs besides the pipeline.
#[derive(Debug, Clone, Copy)]
pub struct LowerOptions<'a> {
    /// Known sources and their schemas. When empty, any name that is not a step is a source.
    pub catalog: &'a Catalog,
    pub vars: &'a Vars,
    /// How the user's document addresses steps (for error paths), and a prefix (scenario job).
    pub paths: StepPath,
    pub prefix: &'a str,
}

/// Where a step reads from.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Ref {
    Step(usize),
    Source(String),
}

struct Resolved {
    parsed: Box<dyn ParsedStep>,
    main: Ref,
    others: Vec<Ref>,
    skipped: bool,
}

/// The sources a pipeline reads (names that are not steps), found without lowering: what an
/// executor binds before it plans with their schemas.
pub fn sources(
    pipeline: &PipelineSpec,
    options: &LowerOptions<'_>,
) -> Result<std::collections::BTreeSet<String>, PlanError> {
    let path = |i: usize, field: &str| {
        let id = pipeline.steps.get(i).map_or("", |s| s.id.as_str());
        format!("{}{}", options.prefix, options.paths.at(i, id, field))
    };
    let mut problems = Vec::new();
    check_ids(pipeline, options, &path, &mut problems);
    let ids: Vec<&str> = pipeline.steps.iter().map(|s| s.id.as_str()).collect();
    let mut names = std::collections::BTreeSet::new();
    for (i, step) in pipeline.steps.iter().enumerate() {
        if let Some(resolved) = resolve_step(i, step, &ids, options, &path, &mut problems) {
            for reference in std::iter::once(&resolved.main).chain(&resolved.others) {
                if let Ref::Source(name) = reference {
                    names.insert(name.clone());
                }
            }
        }
    }
    if problems.is_empty() {
        Ok(names)
    } else {
        Err(PlanError::Invalid(problems))
    }
}

/// Lowers a pipeline into a plan.
pub fn lower(pipeline: &PipelineSpec, options: &LowerOptions<'_>) -> Result<Plan, PlanError> {
    let path = |i: usize, field: &str| {
        let id = pipeline.steps.get(i).map_or("", |s| s.id.as_str());
        format!("{}{}", options.prefix, options.paths.at(i, id, field))
    };
    let mut problems = Vec::new();
    if pipeline.steps.is_empty() {
        problems.push(Problem::new(
            format!("{}steps", options.prefix),
            "must have at least 1 item(s)",
        ));
    }
    check_ids(pipeline, options, &path, &mut problems);
    let ids: Vec<&str> = pipeline.steps.iter().map(|s| s.id.as_str()).collect();
    let mut resolved: Vec<Option<Resolved>> = Vec::new();
    for (i, step) in pipeline.steps.iter().enumerate() {
        resolved.push(resolve_step(i, step, &ids, options, &path, &mut problems));
    }
    if !problems.is_empty() {
        return Err(PlanError::Invalid(problems));
    }
    let steps: Vec<Resolved> = resolved.into_iter().flatten().collect();
    let order = step_order(&steps, &ids).map_err(|cycle| {
        PlanError::invalid(
            format!("{}steps", options.prefix),
            format!("steps form a cycle: {}", cycle.join(" → ")),
        )
    })?;
    build(pipeline, &steps, &order, options, &path)
}

fn check_ids(
    pipeline: &PipelineSpec,
    options: &LowerOptions<'_>,
    path: &dyn Fn(usize, &str) -> String,
    problems: &mut Vec<Problem>,
) {
    for (i, step) in pipeline.steps.iter().enumerate() {
        let id = step.id.as_str();
        if id.is_empty()
            || !id
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        {
            problems.push(Problem::new(
                path(i, "id"),
                format!("{id:?} is not a valid step id (letters, digits, _ and -)"),
            ));
        } else if pipeline.steps[..i].iter().any(|s| s.id == id) {
            problems.push(Problem::new(
                path(i, "id"),
                format!("duplicate step id {id:?}"),
            ));
        } else if options.catalog.get(id).is_some() || id == DEFAULT_INPUT {
            problems.push(Problem::new(
                path(i, "id"),
                format!("step id {id:?} is also the name of a layer: rename the step"),
            ));
        }
    }
}

fn resolve_step(
    i: usize,
    step: &Step,
    ids: &[&str],
    options: &LowerOptions<'_>,
    path: &dyn Fn(usize, &str) -> String,
    problems: &mut Vec<Problem>,
) -> Option<Resolved> {
    let Some(capability) = find(&step.capability) else {
        let hint = suggest(&step.capability)
            .map(|s| format!(" (did you mean {s:?}?)"))
            .unwrap_or_default();
        problems.push(Problem::new(
            path(i, "capability"),
            format!("unknown capability {:?}{hint}", step.capability),
        ));
        return None;
    };
    let params = substitute_paths(&step.params, options.vars, &path(i, "params"), problems);
    let parsed = match capability.parse(&params, &path(i, "params")) {
        Ok(parsed) => parsed,
        Err(found) => {
            problems.extend(found);
            return None;
        }
    };
    let skipped =
        step.enabled == Some(false) || condition_is_false(i, step, options, path, problems);
    let explicit = match (&step.input, &parsed.common().input) {
        (Some(a), Some(b)) if a != b => {
            problems.push(Problem::new(
                path(i, "params.input"),
                format!("conflicts with the step's input {a:?}"),
            ));
            None
        }
        (Some(a), _) | (None, Some(a)) => Some(a.clone()),
        (None, None) => None,
    };
    let main = match explicit {
        Some(name) => reference(&name, i, ids, options, path(i, "input"), problems)?,
        None if i == 0 => Ref::Source(DEFAULT_INPUT.to_owned()),
        None => Ref::Step(i - 1),
    };
    let mut others = Vec::new();
    for (param, name) in parsed.other_inputs() {
        others.push(reference(
            &name,
            i,
            ids,
            options,
            path(i, &format!("params.{param}")),
            problems,
        )?);
    }
    Some(Resolved {
        parsed,
        main,
        others,
        skipped,
    })
}

fn reference(
    name: &str,
    i: usize,
    ids: &[&str],
    options: &LowerOptions<'_>,
    at: String,
    problems: &mut Vec<Problem>,
) -> Option<Ref> {
    if let Some(j) = ids.iter().position(|id| *id == name) {
        if j == i {
            problems.push(Problem::new(at, "a step cannot read its own output"));
            return None;
        }
        return Some(Ref::Step(j));
    }
    let catalog = &options.catalog.sources;
    // `input`, the run's input, is what a first step reads without naming it: always bound.
    if !catalog.is_empty() && !catalog.contains_key(name) && name != DEFAULT_INPUT {
        let known: Vec<&str> = ids
            .iter()
            .copied()
            .chain(catalog.keys().map(String::as_str))
            .collect();
        problems.push(Problem::new(
            at,
            format!(
                "unknown input {name:?}: not a step and not a layer (known: {})",
                known.join(", ")
            ),
        ));
        return None;
    }
    Some(Ref::Source(name.to_owned()))
}

/// Parameters that name files (`output`, `destination`) with their `{name}` placeholders
/// replaced by run variables.
fn substitute_paths(params: &Value, vars: &Vars, at: &str, problems: &mut Vec<Problem>) -> Value {
    let mut params = params.clone();
    if let Some(object) = params.as_object_mut() {
        for key in ["output", "destination"] {
            if let Some(Value::String(text)) = object.get_mut(key) {
                let (replaced, missing) = vars.substitute(text);
                if vars.strict && !missing.is_empty() {
                    problems.push(Problem::new(
                        format!("{at}.{key}"),
                        format!("no value for variable(s) {}", missing.join(", ")),
                    ));
                }
                *text = replaced;
            }
        }
    }
    params
}

/// Evaluates `when` after variable substitution. Unresolved variables (outside strict mode)
/// keep the step.
fn condition_is_false(
    i: usize,
    step: &Step,
    options: &LowerOptions<'_>,
    path: &dyn Fn(usize, &str) -> String,
    problems: &mut Vec<Problem>,
) -> bool {
    let Some(when) = &step.when else { return false };
    let (text, missing) = options.vars.substitute(when);
    if !missing.is_empty() {
        if options.vars.strict {
            problems.push(Problem::new(
                path(i, "when"),
                format!("no value for variable(s) {}", missing.join(", ")),
            ));
        }
        return false;
    }
    match SqlExpr::parse(&text).map(|e| e.folded().as_bool()) {
        Ok(Some(value)) => !value,
        Ok(None) => {
            problems.push(Problem::new(
                path(i, "when"),
                format!("must be decidable from run variables alone, got {text:?}"),
            ));
            false
        }
        Err(message) => {
            problems.push(Problem::new(path(i, "when"), message));
            false
        }
    }
}

/// Step indexes in dependency order, or the steps of a cycle.
fn step_order(steps: &[Resolved], ids: &[&str]) -> Result<Vec<usize>, Vec<String>> {
    let deps = |s: &Resolved| -> Vec<usize> {
        std::iter::once(&s.main)
            .chain(&s.others)
            .filter_map(|r| match r {
                Ref::Step(j) => Some(*j),
                Ref::Source(_) => None,
            })
            .collect()
    };
    let mut order = Vec::new();
    while order.len() < steps.len() {
        let before = order.len();
        for (i, step) in steps.iter().enumerate() {
            if !order.contains(&i) && deps(step).iter().all(|d| order.contains(d)) {
                order.push(i);
            }
        }
        if order.len() == before {
            let mut cycle: Vec<String> = (0..steps.len())
                .filter(|i| !order.contains(i))
                .map(|i| ids[i].to_owned())
                .collect();
            if let Some(first) = cycle.first().cloned() {
                cycle.push(first);
            }
            return Err(cycle);
        }
    }
    Ok(order)
}

fn build(
    pipeline: &PipelineSpec,
    steps: &[Resolved],
    order: &[usize],
    options: &LowerOptions<'_>,
    path: &dyn Fn(usize, &str) -> String,
) -> Result<Plan, PlanError> {
    let mut plan = Plan::default();
    let mut problems = Vec::new();
    let mut sources: BTreeMap<String, NodeIndex> = BTreeMap::new();
    // Output node of each step; `None` when the step failed to lower.
    let mut outputs: Vec<Option<NodeIndex>> = vec![None; steps.len()];
    for &i in order {
        let step = &steps[i];
        let spec = &pipeline.steps[i];
        let Some(main) = node_of(
            &step.main,
            &mut plan,
            &mut sources,
            &outputs,
            options.catalog,
        ) else {
            continue;
        };
        if step.skipped {
            outputs[i] = Some(main);
            continue;
        }
        let mut inputs = vec![main];
        for other in &step.others {
            match node_of(other, &mut plan, &mut sources, &outputs, options.catalog) {
                Some(node) => inputs.push(node),
                None => break,
            }
        }
        if inputs.len() != 1 + step.others.len() {
            continue;
        }
        let schemas: Vec<Option<Schema>> = inputs
            .iter()
            .map(|n| plan.node(*n).and_then(|n| n.schema.clone()))
            .collect();
        let other_schemas: Vec<Option<&Schema>> = schemas[1..].iter().map(Option::as_ref).collect();
        let params_path = path(i, "params");
        let ctx = LowerContext {
            step_id: &spec.id,
            path: &params_path,
            input: schemas[0].as_ref(),
            others: &other_schemas,
            rasters: options.catalog.rasters.as_ref(),
        };
        let operators = match step.parsed.lower(&ctx) {
            Ok(operators) => operators,
            Err(found) => {
                problems.extend(found);
                continue;
            }
        };
        let last = operators.len().saturating_sub(1);
        let mut previous: Option<NodeIndex> = None;
        for (k, op) in operators.into_iter().enumerate() {
            // A step's operators form a chain on its main input; the other inputs (a mask, a
            // reference layer) go to the first operator that takes more than one.
            let node_inputs: Vec<NodeIndex> = match (previous, op.arity()) {
                (None, Some(1)) => inputs.iter().take(1).copied().collect(),
                (None, _) => inputs.clone(),
                (Some(p), Some(1)) => vec![p],
                (Some(p), _) => std::iter::once(p)
                    .chain(inputs.iter().skip(1).copied())
                    .collect(),
            };
            let input_schemas: Vec<Option<&Schema>> = node_inputs
                .iter()
                .map(|n| plan.node(*n).and_then(|n| n.schema.as_ref()))
                .collect();
            let relation = if k == last {
                spec.id.clone()
            } else {
                format!("{}__{}", spec.id, k + 1)
            };
            let mut node = PlanNode::new(op, &spec.id, relation);
            node.schema = output_schema(&node.op, &input_schemas);
            node.capability = find(&spec.capability).map(|c| c.name());
            if k == last {
                node.on_empty = step.parsed.common().on_empty;
                node.triggers = spec.triggers.iter().map(|t| t.name.clone()).collect();
            }
            previous = Some(plan.add(node, &node_inputs));
        }
        outputs[i] = previous;
        if let (Some(output), Some(destination)) = (previous, &step.parsed.common().output) {
            match export_node(
                destination,
                step.parsed.common().format,
                &path(i, "params.output"),
            ) {
                Ok(op) => {
                    let mut node = PlanNode::new(op, &spec.id, format!("{}__export", spec.id));
                    node.schema = plan.node(output).and_then(|n| n.schema.clone());
                    plan.add(node, &[output]);
                }
                Err(problem) => problems.push(problem),
            }
        }
    }
    if !problems.is_empty() {
        return Err(PlanError::Invalid(problems));
    }
    plan.result =
        outputs
            .last()
            .copied()
            .flatten()
            .map(|node| match plan.node(node).map(|n| &n.op) {
                Some(Operator::Export(_)) => plan.inputs(node).first().copied().unwrap_or(node),
                _ => node,
            });
    plan.check().map_err(|reason| PlanError::Optimizer {
        rule: "lowering",
        reason,
    })?;
    Ok(plan)
}

/// The node a reference reads: a step's output, or the (shared) scan of a source.
fn node_of(
    r: &Ref,
    plan: &mut Plan,
    sources: &mut BTreeMap<String, NodeIndex>,
    outputs: &[Option<NodeIndex>],
    catalog: &Catalog,
) -> Option<NodeIndex> {
    match r {
        Ref::Step(j) => outputs.get(*j).copied().flatten(),
        Ref::Source(name) => Some(*sources.entry(name.clone()).or_insert_with(|| {
            let mut scan = PlanNode::new(
                Operator::Scan {
                    source: name.clone(),
                    columns: None,
                },
                "",
                name.clone(),
            );
            scan.schema = catalog.get(name).cloned();
            plan.add(scan, &[])
        })),
    }
}

fn export_node(
    destination: &str,
    format: Option<ExportFormat>,
    at: &str,
) -> Result<Operator, Problem> {
    let destination = destination.to_owned();
    let format = format
        .or_else(|| ExportFormat::from_extension(&destination))
        .ok_or_else(|| {
            Problem::new(
                at,
                format!("cannot tell the format of {destination:?}: give format"),
            )
        })?;
    if let Some(refusal) = format.step_refusal() {
        return Err(Problem::new(at, refusal));
    }
    Ok(Operator::Export(ExportOp {
        destination,
        format,
    }))
}
