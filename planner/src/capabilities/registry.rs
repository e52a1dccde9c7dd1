//! The capability trait, its generic adapter, and the registry of every capability.

use std::sync::OnceLock;

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::common::{CommonParams, Group, LowerContext, Tier};
use crate::error::Problem;
use crate::jsonschema;
use crate::plan::operator::Operator;

/// Implemented by each capability's params struct. The struct's doc comment is the user
/// documentation (it becomes the schema's and the capability's description).
pub trait CapabilityParams: DeserializeOwned + JsonSchema + Send + Sync + 'static {
    const NAME: &'static str;
    const GROUP: Group;
    const TIER: Tier = Tier::Community;

    fn common(&self) -> &CommonParams;

    /// Inputs besides the main one, as (parameter name, step id or layer name).
    fn other_inputs(&self) -> Vec<(&'static str, String)> {
        Vec::new()
    }

    /// The operators this step becomes, applied in order (the first reads the inputs).
    fn lower(&self, ctx: &LowerContext<'_>) -> Result<Vec<Operator>, Vec<Problem>>;
}

/// A step's parameters, checked and parsed.
pub trait ParsedStep: Send + Sync {
    fn common(&self) -> &CommonParams;
    fn other_inputs(&self) -> Vec<(&'static str, String)>;
    fn lower(&self, ctx: &LowerContext<'_>) -> Result<Vec<Operator>, Vec<Problem>>;
}

impl<P: CapabilityParams> ParsedStep for P {
    fn common(&self) -> &CommonParams {
        CapabilityParams::common(self)
    }
    fn other_inputs(&self) -> Vec<(&'static str, String)> {
        CapabilityParams::other_inputs(self)
    }
    fn lower(&self, ctx: &LowerContext<'_>) -> Result<Vec<Operator>, Vec<Problem>> {
        CapabilityParams::lower(self, ctx)
    }
}

/// A capability as the registry holds it.
pub trait Capability: Send + Sync {
    fn name(&self) -> &'static str;
    fn group(&self) -> Group;
    fn tier(&self) -> Tier;
    fn description(&self) -> &str;
    /// The JSON Schema of the parameters.
    fn schema(&self) -> &Value;
    /// Checks `params` against the schema (every problem, addressed from `path`), then parses.
    fn parse(&self, params: &Value, path: &str) -> Result<Box<dyn ParsedStep>, Vec<Problem>>;
}

/// The adapter from a params struct to a [`Capability`].
pub struct Registered<P> {
    schema: Value,
    description: String,
    _params: std::marker::PhantomData<fn() -> P>,
}

impl<P: CapabilityParams> Registered<P> {
    pub fn new() -> Self {
        let mut generator = schemars::generate::SchemaSettings::draft2020_12()
            .with(|settings| settings.inline_subschemas = true)
            .into_generator();
        let mut schema = generator.root_schema_for::<P>().to_value();
        if let Some(object) = schema.as_object_mut() {
            object.insert("title".into(), Value::String(P::NAME.into()));
            object.insert("additionalProperties".into(), Value::Bool(false));
        }
        let description = schema
            .get("description")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        Self {
            schema,
            description,
            _params: std::marker::PhantomData,
        }
    }
}

impl<P: CapabilityParams> Default for Registered<P> {
    fn default() -> Self {
        Self::new()
    }
}

impl<P: CapabilityParams> Capability for Registered<P> {
    fn name(&self) -> &'static str {
        P::NAME
    }
    fn group(&self) -> Group {
        P::GROUP
    }
    fn tier(&self) -> Tier {
        P::TIER
    }
    fn description(&self) -> &str {
        &self.description
    }
    fn schema(&self) -> &Value {
        &self.schema
    }
    fn parse(&self, params: &Value, path: &str) -> Result<Box<dyn ParsedStep>, Vec<Problem>> {
        let problems = jsonschema::validate(params, &self.schema, path);
        if !problems.is_empty() {
            return Err(problems);
        }
        serde_json::from_value::<P>(params.clone())
            .map(|parsed| Box::new(parsed) as Box<dyn ParsedStep>)
            .map_err(|e| vec![Problem::new(path, e.to_string())])
    }
}

/// Every capability, sorted by name.
pub fn all_capabilities() -> &'static [Box<dyn Capability>] {
    static REGISTRY: OnceLock<Vec<Box<dyn Capability>>> = OnceLock::new();
    REGISTRY.get_or_init(|| {
        let mut list = super::registered();
        list.sort_by_key(|c| c.name());
        list
    })
}

/// The capability called `name`.
pub fn find(name: &str) -> Option<&'static dyn Capability> {
    all_capabilities()
        .iter()
        .find(|c| c.name() == name)
        .map(AsRef::as_ref)
}

/// The closest capability name to a misspelt one (edit distance at most 3), for "did you mean".
pub fn suggest(name: &str) -> Option<&'static str> {
    all_capabilities()
        .iter()
        .map(|c| (edit_distance(name, c.name()), c.name()))
        .filter(|(distance, _)| *distance <= 3)
        .min()
        .map(|(_, name)| name)
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut current = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let substitution = previous[j] + usize::from(ca != *cb);
            current.push(substitution.min(previous[j + 1] + 1).min(current[j] + 1));
        }
        previous = current;
    }
    previous[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggestions_for_typos() {
        assert_eq!(suggest("bufer"), Some("buffer"));
        assert_eq!(suggest("spatial_joins"), Some("spatial_join"));
        assert_eq!(suggest("completely_unrelated"), None);
    }

    #[test]
    fn every_capability_is_documented_and_unique() {
        let names: Vec<&str> = all_capabilities().iter().map(|c| c.name()).collect();
        let mut unique = names.clone();
        unique.dedup();
        assert_eq!(names, unique);
        for capability in all_capabilities() {
            assert!(
                !capability.description().is_empty(),
                "{} has no description",
                capability.name()
            );
            assert_eq!(
                capability.schema()["type"],
                "object",
                "{}",
                capability.name()
            );
        }
    }

    #[test]
    fn parsing_checks_the_schema() {
        let parse = |name: &str, params: serde_json::Value| {
            find(name)
                .map(|c| c.parse(&params, "steps[0].params").map(|_| ()))
                .unwrap_or_else(|| panic!("{name} is not registered"))
        };
        assert!(parse("union", serde_json::json!({})).is_ok());
        assert!(parse("union", serde_json::json!({"by": ["x"]})).is_err());
        assert!(parse("top_n", serde_json::json!({"n": 0, "by": "x"})).is_err());
        let problems = parse(
            "case_when",
            serde_json::json!({"field": "x", "cases": [{"when": "a > 1", "then": [1], "else": 2}]}),
        )
        .unwrap_err();
        let paths: Vec<&str> = problems.iter().map(|p| p.path.as_str()).collect();
        assert_eq!(
            paths,
            [
                "steps[0].params.cases[0].then",
                "steps[0].params.cases[0].else"
            ]
        );
    }
}
