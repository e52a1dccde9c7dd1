//! `temporal_join`: bring the fields of a second layer's rows close in time to each row.

use schemars::JsonSchema;
use serde::Deserialize;

use super::attribute_join::join_keys;
use super::checks::require_columns;
use super::temporal_filter::field_as_timestamp;
use super::{CapabilityParams, CommonParams, Group, LowerContext};
use crate::error::Problem;
use crate::plan::operator::{JoinHow, JoinOp, Operator, TimeMatch};
use crate::schema::GEOM;

/// Join the attributes of the rows of `other` (a step or a dataset layer) whose date or
/// timestamp `other_field` (default: `field`) is within `tolerance` of the input row's `field`
/// (both ends included), and, with `on`, whose key fields equal the input's. `match: nearest`
/// (the default) brings only the row nearest in time (equal distances broken by the lowest MD5
/// hash of the other row's geometry's WKB, alike on every engine); `all` brings every row in
/// the window (an input row then appears once per match). `how: left` (default) keeps input
/// rows without a match (NULL fields), `inner` drops them. Times are compared as timestamps
/// without time zone (a date is its midnight); NULL times match nothing. `columns`, `suffix`
/// and the dropped geometry of `other` are as in `attribute_join`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct TemporalJoin {
    /// The step or dataset layer whose fields are brought.
    #[schemars(length(min = 1))]
    pub other: String,
    /// The input's date or timestamp field.
    #[schemars(length(min = 1))]
    pub field: String,
    /// The other layer's date or timestamp field (default: `field`).
    #[serde(default)]
    pub other_field: Option<String>,
    /// How far apart the two times may be.
    pub tolerance: Tolerance,
    /// Key fields both layers have, which must also be equal.
    #[serde(default)]
    pub on: Vec<String>,
    /// `nearest` (default): the nearest row in time; `all`: every row within the tolerance.
    #[serde(default, rename = "match")]
    pub matching: TimeMatching,
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

/// `amount` of `unit`.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Tolerance {
    #[schemars(range(min = 0))]
    pub amount: f64,
    pub unit: ToleranceUnit,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ToleranceUnit {
    Seconds,
    Minutes,
    Hours,
    Days,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum TimeMatching {
    #[default]
    Nearest,
    All,
}

fn default_how() -> JoinHow {
    JoinHow::Left
}

fn default_suffix() -> String {
    "_right".to_owned()
}

impl CapabilityParams for TemporalJoin {
    const NAME: &'static str = "temporal_join";
    const GROUP: Group = Group::Attributes;

    fn common(&self) -> &CommonParams {
        &self.common
    }

    fn other_inputs(&self) -> Vec<(&'static str, String)> {
        vec![("other", self.other.clone())]
    }

    fn lower(&self, ctx: &LowerContext<'_>) -> Result<Vec<Operator>, Vec<Problem>> {
        let other = ctx.others.first().copied().flatten();
        let right = self.other_field.clone().unwrap_or_else(|| self.field.clone());
        require_columns(ctx.input, std::slice::from_ref(&self.field), ctx.at("field"))?;
        require_columns(other, std::slice::from_ref(&right), ctx.at("other_field"))?;
        field_as_timestamp(&self.field, "", ctx, "field")?;
        let seconds = self.tolerance.amount
            * match self.tolerance.unit {
                ToleranceUnit::Seconds => 1.0,
                ToleranceUnit::Minutes => 60.0,
                ToleranceUnit::Hours => 3600.0,
                ToleranceUnit::Days => 86400.0,
            };
        if !seconds.is_finite() || seconds < 0.0 {
            return Err(vec![Problem::new(
                ctx.at("tolerance.amount"),
                "must be a finite number, 0 or more",
            )]);
        }
        let on = join_keys(&self.on, &self.on, ctx, ("on", "on"))?;
        if self.columns.iter().any(|c| c == GEOM) {
            return Err(vec![Problem::new(
                ctx.at("columns"),
                "the other layer's geometry is not brought",
            )]);
        }
        require_columns(other, &self.columns, ctx.at("columns"))?;
        Ok(vec![Operator::Join(JoinOp {
            how: self.how,
            on,
            columns: self.columns.iter().map(|c| (c.clone(), c.clone())).collect(),
            suffix: self.suffix.clone(),
            time: Some(TimeMatch {
                left: self.field.clone(),
                right,
                tolerance_seconds: seconds,
                nearest: self.matching == TimeMatching::Nearest,
            }),
        })])
    }
}
