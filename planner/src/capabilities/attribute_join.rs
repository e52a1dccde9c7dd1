//! `attribute_join`: bring a second layer's fields to the input's rows by equal key fields.

use schemars::JsonSchema;
use serde::Deserialize;

use super::checks::require_columns;
use super::{CapabilityParams, CommonParams, Group, LowerContext};
use crate::error::Problem;
use crate::plan::operator::{JoinHow, JoinKey, JoinOp, Operator};
use crate::schema::{FieldType, GEOM, Schema};

/// Join the attributes of the rows of `other` (a step or a dataset layer) to the input's rows
/// whose key fields are equal: `on` names keys both layers have, or `left_on` (the input's) and
/// `right_on` (the other's) name them pairwise, e.g. `{"other": "stats", "left_on": ["iso_a3"],
/// "right_on": ["code"]}`. `how: left` (the default) keeps every input row (NULL fields when
/// nothing matches), `inner` only the matched ones; an input row matching several rows appears
/// once per match, and NULL keys match nothing. `columns` picks the fields brought (default:
/// every attribute of `other`, without its `on` keys, which equal the input's). A brought
/// field whose name the input already has gets `suffix` (default `_right`) appended, again
/// until the name is free. The geometry is the input's: the other layer's is not brought. An
/// integer key compared with a text key is compared as text.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct AttributeJoin {
    /// The step or dataset layer whose fields are brought.
    #[schemars(length(min = 1))]
    pub other: String,
    /// Key fields both layers have.
    #[serde(default)]
    pub on: Vec<String>,
    /// The input's key fields (with `right_on`).
    #[serde(default)]
    pub left_on: Vec<String>,
    /// The other layer's key fields, in the order of `left_on`.
    #[serde(default)]
    pub right_on: Vec<String>,
    /// `left` (default): keep every input row; `inner`: only matched rows.
    #[serde(default = "default_how")]
    pub how: JoinHow,
    /// Fields of the other layer to bring (default: all).
    #[serde(default)]
    pub columns: Vec<String>,
    /// Appended to a brought field's name the input already has (default `_right`).
    #[serde(default = "default_suffix")]
    #[schemars(length(min = 1))]
    pub suffix: String,
    #[serde(flatten)]
    pub common: CommonParams,
}

fn default_how() -> JoinHow {
    JoinHow::Left
}

fn default_suffix() -> String {
    "_right".to_owned()
}

fn type_of(schema: Option<&Schema>, name: &str) -> Option<FieldType> {
    schema?.columns.iter().find(|c| c.name == name).map(|c| c.ty)
}

/// Key pairs checked against both inputs' schemas (when known); an integer key against a text
/// one is compared as text, other differing kinds are refused.
pub(super) fn join_keys(
    left: &[String],
    right: &[String],
    ctx: &LowerContext<'_>,
    params: (&str, &str),
) -> Result<Vec<JoinKey>, Vec<Problem>> {
    let other = ctx.others.first().copied().flatten();
    let mut problems = Vec::new();
    for (names, schema, param) in [(left, ctx.input, params.0), (right, other, params.1)] {
        if names.iter().any(|n| n == GEOM) {
            problems.push(Problem::new(ctx.at(param), "the geometry cannot be a key"));
        }
        if let Err(found) = require_columns(schema, names, ctx.at(param)) {
            problems.extend(found);
        }
    }
    if !problems.is_empty() {
        return Err(problems);
    }
    let mut keys = Vec::new();
    for (i, (l, r)) in left.iter().zip(right).enumerate() {
        let as_text = match (type_of(ctx.input, l), type_of(other, r)) {
            (Some(a), Some(b)) if a == b => false,
            (Some(FieldType::Integer | FieldType::Text), Some(FieldType::Integer | FieldType::Text)) => true,
            (Some(FieldType::Integer | FieldType::Double), Some(FieldType::Integer | FieldType::Double)) => false,
            (Some(a), Some(b)) if a != FieldType::Unknown && b != FieldType::Unknown => {
                problems.push(Problem::new(
                    ctx.at(&format!("{}[{i}]", params.1)),
                    format!("{r} is {b:?} but {l} is {a:?}: the keys cannot be compared")
                        .to_lowercase(),
                ));
                false
            }
            _ => false,
        };
        keys.push(JoinKey {
            left: l.clone(),
            right: r.clone(),
            as_text,
        });
    }
    if problems.is_empty() {
        Ok(keys)
    } else {
        Err(problems)
    }
}

impl AttributeJoin {
    /// The key pairs from `on`, or from `left_on`/`right_on`.
    fn keys(&self, ctx: &LowerContext<'_>) -> Result<Vec<JoinKey>, Vec<Problem>> {
        let pairwise = !self.left_on.is_empty() || !self.right_on.is_empty();
        match (self.on.is_empty(), pairwise) {
            (false, true) => Err(vec![Problem::new(
                ctx.at("on"),
                "give either on or left_on/right_on, not both",
            )]),
            (true, false) => Err(vec![Problem::new(
                ctx.at("on"),
                "give the key fields: on, or left_on and right_on",
            )]),
            (false, false) => join_keys(&self.on, &self.on, ctx, ("on", "on")),
            (true, true) if self.left_on.len() != self.right_on.len() => Err(vec![Problem::new(
                ctx.at("right_on"),
                format!(
                    "names {} fields but left_on names {}: give one per key",
                    self.right_on.len(),
                    self.left_on.len()
                ),
            )]),
            (true, true) => join_keys(&self.left_on, &self.right_on, ctx, ("left_on", "right_on")),
        }
    }
}

impl CapabilityParams for AttributeJoin {
    const NAME: &'static str = "attribute_join";
    const GROUP: Group = Group::Attributes;

    fn common(&self) -> &CommonParams {
        &self.common
    }

    fn other_inputs(&self) -> Vec<(&'static str, String)> {
        vec![("other", self.other.clone())]
    }

    fn lower(&self, ctx: &LowerContext<'_>) -> Result<Vec<Operator>, Vec<Problem>> {
        let on = self.keys(ctx)?;
        if self.columns.iter().any(|c| c == GEOM) {
            return Err(vec![Problem::new(
                ctx.at("columns"),
                "the other layer's geometry is not brought",
            )]);
        }
        require_columns(
            ctx.others.first().copied().flatten(),
            &self.columns,
            ctx.at("columns"),
        )?;
        Ok(vec![Operator::Join(JoinOp {
            how: self.how,
            on,
            columns: self.columns.iter().map(|c| (c.clone(), c.clone())).collect(),
            suffix: self.suffix.clone(),
            time: None,
        })])
    }
}
