//! `attribute_validation`: a layer of the attribute values breaking rules, field by field.

use schemars::JsonSchema;
use serde::Deserialize;

use super::checks::require_columns;
use super::validation_key::report_key;
use super::{CapabilityParams, CommonParams, Group, LowerContext};
use crate::error::Problem;
use crate::plan::operator::{Operator, ValidateCheck, ValidateOp};
use crate::plan::validate::{AllowedValue, AttributeRule, PythonRule, PythonType};
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
///
/// With `rules_as: python` (on the native backend) the rules are checked value by value as a
/// GeoPandas script checks them, and the report gains `value` (the value as Python's `str`
/// prints it, `nan` or `None` for NULL): NULL breaks only `not_null`; `type` (`int`,
/// `float`, `str`, `bool` or their long names) is Python's `isinstance` on the value as pandas
/// reads it (a boolean is an `int`, an integer a `float`; an integer field with NULLs is read
/// as floats), a value of another type breaking `type` and no other rule; `min` and `max`
/// bound numbers or a text's length in characters; `regex` fully matches texts only (Python's
/// `re` syntax that Rust's `regex` shares: no look-around or back-references); `allowed` is
/// Python's `in` (numbers equal across integer and float, `true` equals 1). A field the
/// input lacks gives every feature a `missing_column` row. Reasons are worded as such a
/// script words them, values printed with Python's `repr`. `unique` and `summary` are not
/// available there.
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
    /// How values are read: `sql` (default: typed values, the engines' comparisons) or
    /// `python` (value by value, as a GeoPandas script reads them).
    #[serde(default)]
    pub rules_as: RulesAs,
    #[serde(flatten)]
    pub common: CommonParams,
}

/// How `attribute_validation` reads values.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RulesAs {
    #[default]
    Sql,
    Python,
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
    /// The value's Python type (`rules_as: python` only).
    #[serde(default, rename = "type")]
    pub class: Option<PythonType>,
    /// The smallest valid number (with `rules_as: python`, a text's shortest length).
    #[serde(default)]
    pub min: Option<serde_json::Number>,
    /// The largest valid number (with `rules_as: python`, a text's longest length).
    #[serde(default)]
    pub max: Option<serde_json::Number>,
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

/// An allowed value: a number or a text (with `rules_as: python`, a boolean too).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum Allowed {
    Number(serde_json::Number),
    Text(String),
    Boolean(bool),
}

impl Allowed {
    fn json(&self) -> serde_json::Value {
        match self {
            Self::Number(n) => serde_json::Value::Number(n.clone()),
            Self::Text(t) => serde_json::Value::String(t.clone()),
            Self::Boolean(b) => serde_json::Value::Bool(*b),
        }
    }
}

/// A bound as a float.
fn bound(n: Option<&serde_json::Number>) -> Option<f64> {
    n.and_then(serde_json::Number::as_f64)
}

impl FieldRules {
    fn problems(&self, at: &str, ctx: &LowerContext<'_>, rules_as: RulesAs) -> Vec<Problem> {
        let mut problems = Vec::new();
        let mut problem = |message: &str| problems.push(Problem::new(at, message));
        if self.field == GEOM {
            problem("the geometry has no attribute rules: use topology_check");
        }
        let (min, max) = (bound(self.min.as_ref()), bound(self.max.as_ref()));
        if rules_as == RulesAs::Python {
            if self.unique {
                problem("unique is checked with rules_as sql only");
            }
            if let (Some(min), Some(max)) = (min, max)
                && min > max
            {
                problem("min is above max");
            }
            if self.regex.as_deref().is_some_and(str::is_empty) {
                problem("regex is empty");
            }
            return problems;
        }
        if self.class.is_some() {
            problem("type is checked with rules_as python only (a field's SQL type is its schema's)");
        }
        if self.allowed.iter().any(|a| matches!(a, Allowed::Boolean(_))) {
            problem("allowed booleans are checked with rules_as python only");
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
        if let (Some(min), Some(max)) = (min, max)
            && min > max
        {
            problem("min is above max");
        }
        if [min, max].iter().flatten().any(|v| !v.is_finite()) {
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
            min: bound(self.min.as_ref()),
            max: bound(self.max.as_ref()),
            regex: self.regex.clone(),
            allowed: self
                .allowed
                .iter()
                .filter_map(|v| match v {
                    Allowed::Number(n) => n.as_f64().map(AllowedValue::Number),
                    Allowed::Text(t) => Some(AllowedValue::Text(t.clone())),
                    Allowed::Boolean(_) => None,
                })
                .collect(),
            unique: self.unique,
        }
    }

    fn python_rule(&self, ctx: &LowerContext<'_>) -> PythonRule {
        PythonRule {
            field: self.field.clone(),
            missing: ctx
                .input
                .is_some_and(|s| !s.columns.iter().any(|c| c.name == self.field)),
            class: self.class,
            nullable: !self.not_null,
            min: self.min.clone(),
            max: self.max.clone(),
            pattern: self.regex.clone(),
            allowed: (!self.allowed.is_empty())
                .then(|| self.allowed.iter().map(Allowed::json).collect()),
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
            problems.extend(rules.problems(&at, ctx, self.rules_as));
            if self.rules_as == RulesAs::Python {
                continue;
            }
            if let Err(found) =
                require_columns(ctx.input, std::slice::from_ref(&rules.field), format!("{at}.field"))
            {
                problems.extend(found);
            }
        }
        if self.rules_as == RulesAs::Python && self.summary {
            problems.push(Problem::new(
                ctx.at("summary"),
                "summary is available with rules_as sql only: count the report's rows instead",
            ));
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
                check: match self.rules_as {
                    RulesAs::Sql => ValidateCheck::Attributes {
                        rules: self.rules.iter().map(FieldRules::rule).collect(),
                    },
                    RulesAs::Python => ValidateCheck::PythonAttributes {
                        rules: self.rules.iter().map(|r| r.python_rule(ctx)).collect(),
                    },
                },
                summary: self.summary,
            })]),
            _ => Err(problems),
        }
    }
}
