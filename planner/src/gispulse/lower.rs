//! A GISPulse document lowered into a native pipeline: each step translated
//! ([`super::translate`]), ids made native (letters, digits, `_`, `-`), inputs wired as GISPulse
//! wires them (a chain in rules files and linear pipelines; in graph pipelines each step's
//! `input`, run in GISPulse's order so that the last step is GISPulse's result).

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use serde_json::Value;

use super::document::{GpDocument, GpStep};
use super::translate::{Args, Emitted, Scope, translator};
use crate::error::Problem;
use crate::spec::pipeline::{PipelineSpec, Step};

/// The native pipeline and the remarks for `migrate`.
#[derive(Debug, Clone, PartialEq)]
pub struct Lowered {
    pub pipeline: PipelineSpec,
    pub notes: Vec<String>,
}

/// Comparison operators of GISPulse's `attr` predicates, decided by the data at run time.
const DATA_OPERATORS: &[&str] = &["eq", "neq", "gt", "lt", "gte", "lte"];

/// A native step id for GISPulse id `id`, distinct from every id in `taken`.
fn native_id(id: &str, taken: &mut BTreeSet<String>) -> String {
    let mut base: String = id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if base.is_empty() {
        base = "step".into();
    }
    let mut candidate = base.clone();
    let mut n = 2;
    while !taken.insert(candidate.clone()) {
        candidate = format!("{base}_{n}");
        n += 1;
    }
    candidate
}

/// The layer a `ref_layers` path stands for: the file's name without its extension (the name
/// of the dataset uploaded from it, or of the input `geomill run` loads it as). Paths are never
/// opened by the planner.
pub fn layer_of(path: &str) -> String {
    let file = path.rsplit(['/', '\\']).next().unwrap_or(path);
    let stem = file.split_once('.').map_or(file, |(stem, _)| stem);
    if stem.is_empty() {
        path.to_owned()
    } else {
        stem.to_owned()
    }
}

/// The order GISPulse runs a graph pipeline's steps in: Kahn's algorithm with a FIFO queue,
/// seeded with the steps reading no other step, in document order (a step named by a
/// `*_gdf` parameter counting as read, as geomill reads those names).
fn graph_order(steps: &[GpStep]) -> Vec<usize> {
    let index: BTreeMap<&str, usize> = steps
        .iter()
        .enumerate()
        .map(|(i, s)| (s.id.as_str(), i))
        .collect();
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); steps.len()];
    let mut waiting = vec![0usize; steps.len()];
    for (i, step) in steps.iter().enumerate() {
        let reference = step.params.get("ref_layer").and_then(Value::as_str);
        let references = step
            .params
            .get("ref_layers")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str);
        // geomill's form of network_allocation names its network and hubs (`*_gdf`).
        let named_frames = step
            .params
            .iter()
            .filter(|(key, _)| key.ends_with("_gdf"))
            .filter_map(|(_, value)| value.as_str());
        for parent in step
            .input
            .as_deref()
            .into_iter()
            .chain(reference)
            .chain(references)
            .chain(named_frames)
        {
            if let Some(&p) = index.get(parent).filter(|&&p| p != i) {
                children[p].push(i);
                waiting[i] += 1;
            }
        }
    }
    let mut queue: VecDeque<usize> = (0..steps.len()).filter(|&i| waiting[i] == 0).collect();
    let mut order = Vec::new();
    while let Some(i) = queue.pop_front() {
        order.push(i);
        for &child in &children[i] {
            waiting[child] -= 1;
            if waiting[child] == 0 {
                queue.push_back(child);
            }
        }
    }
    order
}

/// Lowers `document`; every problem is listed at its path in the user's document.
pub fn lower(document: &GpDocument) -> Result<Lowered, Vec<Problem>> {
    let mut problems = Vec::new();
    let mut notes = document.notes.clone();
    let order: Vec<usize> = if document.graph {
        let order = graph_order(&document.steps);
        if order.len() < document.steps.len() {
            problems.push(Problem::new(
                "steps",
                "the steps' inputs form a cycle or name no step or layer",
            ));
        }
        order
    } else {
        (0..document.steps.len()).collect()
    };
    let mut taken = BTreeSet::from(["input".to_owned()]);
    let ids: BTreeMap<&str, String> = document
        .steps
        .iter()
        .map(|s| (s.id.as_str(), native_id(&s.id, &mut taken)))
        .collect();
    // What a GISPulse name read by a step stands for: a step (graph pipelines), or a layer.
    let outputs = std::cell::RefCell::new(BTreeMap::<String, String>::new());
    let reference = |name: &str| -> String {
        if document.graph
            && let Some(output) = outputs.borrow().get(name)
        {
            return output.clone();
        }
        match document.ref_layers.get(name) {
            Some(path) => layer_of(path),
            None => name.to_owned(),
        }
    };
    let mut steps = Vec::new();
    let mut previous = "input".to_owned();
    for (position, &i) in order.iter().enumerate() {
        let step = &document.steps[i];
        if let Some(when) = &step.when {
            let kind = when.get("type").and_then(Value::as_str);
            let op = when.get("op").and_then(Value::as_str).unwrap_or_default();
            if kind == Some("attr") && DATA_OPERATORS.contains(&op) {
                problems.push(Problem::new(
                    step.when_path.clone(),
                    "a condition on the data (attr eq/neq/gt/lt/gte/lte) is not supported yet",
                ));
            } else {
                notes.push(format!("{}: always true in GISPulse (only attr comparisons are decided): the step runs", step.when_path));
            }
        }
        let chain_input = match &step.input {
            Some(name) => reference(name),
            None if document.graph && position > 0 => {
                problems.push(Problem::new(
                    step.params_path.replace(".params", ".input").replace(".config", ".input"),
                    "in a pipeline whose steps name their input, only the first step may leave it out (GISPulse gives the others no data)",
                ));
                continue;
            }
            None => previous.clone(),
        };
        let Some(translate) = translator(&step.capability) else {
            problems.push(Problem::new(
                step.params_path.rsplit_once('.').map_or(String::new(), |(p, _)| format!("{p}.capability")),
                format!("the GISPulse capability {:?} is not supported by geomill's GISPulse front-end yet", step.capability),
            ));
            continue;
        };
        let native = ids[step.id.as_str()].clone();
        let mut args = Args::new(&step.params, step.params_path.clone());
        let mut emitted = Emitted::new(&native);
        let scope = Scope {
            form: document.form,
            reference: &reference,
        };
        translate(&mut args, &scope, &mut emitted);
        // GISPulse refuses parameters its capability does not take.
        for key in args.unread() {
            args.problem(
                &key,
                format!(
                    "not a parameter of GISPulse's {} (or not supported here yet)",
                    step.capability
                ),
            );
        }
        problems.append(&mut args.problems);
        notes.extend(
            args.notes
                .iter()
                .map(|n| format!("{} ({}): {n}", step.id, step.capability)),
        );
        let last_main = emitted
            .steps
            .iter()
            .rposition(|(_, _, input)| input.is_none());
        let mut chain = emitted
            .chain_from
            .clone()
            .unwrap_or_else(|| chain_input.clone());
        for (k, (capability, params, input)) in emitted.steps.into_iter().enumerate() {
            let id = if Some(k) == last_main {
                native.clone()
            } else {
                format!("{native}__{k}")
            };
            let input = match input {
                Some(input) => input,
                None => std::mem::replace(&mut chain, id.clone()),
            };
            steps.push(Step {
                id,
                capability,
                input: Some(input),
                params: Value::Object(params),
                when: None,
                enabled: None,
                triggers: Vec::new(),
            });
        }
        outputs.borrow_mut().insert(step.id.clone(), chain.clone());
        previous = chain;
    }
    if !problems.is_empty() {
        return Err(problems);
    }
    // A document whose steps all pass their layer through (GISPulse's `describe`) answers its
    // input: one step that keeps every row.
    if steps.is_empty() {
        steps.push(Step {
            id: "passed_through".into(),
            capability: "filter".into(),
            input: None,
            params: serde_json::json!({"where": "true"}),
            when: None,
            enabled: None,
            triggers: Vec::new(),
        });
    }
    // The first step reads the run's input without naming it, as native first steps do.
    if let Some(first) = steps.first_mut()
        && first.input.as_deref() == Some("input")
    {
        first.input = None;
    }
    Ok(Lowered {
        pipeline: PipelineSpec {
            name: document.name.clone(),
            description: None,
            version: None,
            steps,
        },
        notes,
    })
}
