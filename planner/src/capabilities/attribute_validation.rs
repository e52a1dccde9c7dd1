//! `attribute_validation`: a layer of the attribute values breaking rules, field by field.

use schemars::JsonSchema;
use serde::Deserialize;

use super::checks::require_columns;
use super::validation_key::report_key;
use super::{CapabilityParams, CommonParams, Group, LowerContext};
use crate::error::Problem;
use crate::plan::operator::{Operator, ValidateCheck, ValidateOp};
use crate::plan::validate::{AllowedValue, AttributeRule};
use crate::schema::{FieldType, GEOM};

/// Report every value breaking a rule, one row per (feature, rule broken): `feature` (its
/// `key`), `related` (NULL), `problem` (the rule: `not_null`, `range`, `regex`, `allowed`,
/// `unique`), `field`, `reason` (the rule in words, with the bound or pattern) and `geom`
/// (the feature's geometry). Rules, per field (`rules`, every rule given is checked):
/// `not_null` (the value is NULL); `min` and `max` (a number below or above them, bounds
/// included as valid; numeric fields only); `regex` (the value as text does not match the
/// whole pattern: DuckDB's RE2 `regexp_full_match`, PostgreSQL's `~` anchored, so use the
/// syntax both share: classes, `[]`, `|`, `*`, `+`, `?`, `{m,n}`, `\d`); `allowed` (the value
/// is not one of the listed values: compared as numbers when the field is numeric and every
/// value listed is a number, otherwise as text); `unique` (the value is on more than one row:
/// every such row is reported). NULL values break only `not_null`. `key` defaults to the
/// input's first integer field; with `position_key: true` features are identified by their
/// 0-based position in the input instead. With `summary: true` the output is one row per (problem,
/// field) with its `count`, without geometry.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct AttributeValidation {
    /// The field identifying features (default: the input's first integer field).
    #[serde(default)]
    pub key: Option<String>,
    /// Identify features by their 0-based row position in the input instead of a key field.
    #[serde(default)]
    pub position_key: bool,
    /// The rules, one entry per field.
    #[schemars(length(min = 1))]
    pub rules: Vec<FieldRules>,
    /// One row per (problem, field) with its count instead of one row per problem.
    #[serde(default)]
    pub summary: bool,
    #[serde(flatten)]
    pub common: CommonParams,
}

/// The rules of one field.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FieldRules {
    /// The field checked.
    #[schemars(length(min = 1))]
    pub field: String,
    /// A value is required.
    #[serde(default)]
    pub not_null: bool,
    /// The smallest valid number.
    #[serde(default)]
    pub min: Option<f64>,
    /// The largest valid number.
    #[serde(default)]
    pub max: Option<f64>,
    /// A pattern the whole value (as text) must match.
    #[serde(default)]
    pub regex: Option<String>,
    /// The only valid values.
    #[serde(default)]
    pub allowed: Vec<Allowed>,
    /// No two rows may share a value.
    #[serde(default)]
    pub unique: bool,
}

/// An allowed value: a number or a text.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum Allowed {
    Number(f64),
    Text(String),
}

impl FieldRules {
    fn problems(&self, at: &str, ctx: &LowerContext<'_>) -> Vec<Problem> {
        let mut problems = Vec::new();
        let mut problem = |message: &str| problems.push(Problem::new(at, message));
        if self.field == GEOM {
            problem("the geometry has no attribute rules: use topology_check");
        }
        if !self.not_null
            && !self.unique
            && self.min.is_none()
            && self.max.is_none()
            && self.regex.is_none()
            && self.allowed.is_empty()
        {
            problem("no rule: give not_null, min, max, regex, allowed or unique");
        }
        if let (Some(min), Some(max)) = (self.min, self.max)
            && min > max
        {
            problem("min is above max");
        }
        if [self.min, self.max].iter().flatten().any(|v| !v.is_finite()) {
            problem("min and max must be finite numbers");
        }
        if self.regex.as_deref().is_some_and(str::is_empty) {
            problem("regex is empty");
        }
        let ty = ctx
            .input
            .and_then(|s| s.columns.iter().find(|c| c.name == self.field))
            .map(|c| c.ty);
        if (self.min.is_some() || self.max.is_some())
            && ty.is_some_and(|t| !matches!(t, FieldType::Integer | FieldType::Double | FieldType::Unknown))
        {
            problem("min and max apply to numeric fields only");
        }
        problems
    }

    fn rule(&self) -> AttributeRule {
        AttributeRule {
            field: self.field.clone(),
            not_null: self.not_null,
            min: self.min,
            max: self.max,
            regex: self.regex.clone(),
            allowed: self
                .allowed
                .iter()
                .map(|v| match v {
                    Allowed::Number(n) => AllowedValue::Number(*n),
                    Allowed::Text(t) => AllowedValue::Text(t.clone()),
                })
                .collect(),
            unique: self.unique,
        }
    }
}

impl CapabilityParams for AttributeValidation {
    const NAME: &'static str = "attribute_validation";
    const GROUP: Group = Group::Topology;

    fn common(&self) -> &CommonParams {
        &self.common
    }

    fn lower(&self, ctx: &LowerContext<'_>) -> Result<Vec<Operator>, Vec<Problem>> {
        let mut problems = Vec::new();
        for (i, rules) in self.rules.iter().enumerate() {
            let at = ctx.at(&format!("rules[{i}]"));
            problems.extend(rules.problems(&at, ctx));
            if let Err(found) =
                require_columns(ctx.input, std::slice::from_ref(&rules.field), format!("{at}.field"))
            {
                problems.extend(found);
            }
        }
        let key = match report_key(self.key.as_deref(), self.position_key, ctx) {
            Ok(key) => Some(key),
            Err(found) => {
                problems.extend(found);
                None
            }
        };
        match key {
            Some(key) if problems.is_empty() => Ok(vec![Operator::Validate(ValidateOp {
                key,
                check: ValidateCheck::Attributes {
                    rules: self.rules.iter().map(FieldRules::rule).collect(),
                },
                summary: self.summary,
            })]),
            _ => Err(problems),
        }
    }
}
