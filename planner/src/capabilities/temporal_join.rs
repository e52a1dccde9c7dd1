//! `temporal_join`: bring the fields of a second layer's rows close in time to each row.

use schemars::JsonSchema;
use serde::Deserialize;

use super::attribute_join::join_keys;
use super::checks::require_columns;
use super::temporal_filter::field_as_timestamp;
use super::{CapabilityParams, CommonParams, Group, LowerContext};
use crate::error::Problem;
use crate::plan::operator::{JoinHow, JoinOp, Operator, TimeDirection, TimeMatch};
use crate::schema::GEOM;

/// Join the attributes of the rows of `other` (a step or a dataset layer) whose date or
/// timestamp `other_field` (default: `field`) is within `tolerance` of the input row's `field`
/// (both ends included; any distance when no tolerance is given, with `match: nearest` only),
/// on the side `direction` allows (`both`, the default; `backward`: at or before the input's
/// time; `forward`: at or after, as pandas' `merge_asof` directions), and, with `on`, whose key
/// fields equal the input's. `match: nearest` (the default) brings only the row nearest in time
/// (equal distances: the earlier time, as `merge_asof`'s `nearest`, then the lowest MD5 hash of
/// the other row's geometry's WKB, alike on every engine); `all` brings every row in the window
/// (an input row then appears once per match). `keep_other_field: false` leaves `other_field`
/// out of the brought fields. `how: left` (default) keeps input
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
    /// How far apart the two times may be (default: any distance, with `match: nearest`).
    #[serde(default)]
    pub tolerance: Option<Tolerance>,
    /// `both` (default), `backward` (the other time at or before) or `forward` (at or after).
    #[serde(default)]
    pub direction: TimeDirection,
    /// Bring `other_field` with the other fields (default true).
    #[serde(default = "default_true")]
    pub keep_other_field: bool,
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

fn default_true() -> bool {
    true
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
        let seconds = self.tolerance.map(|tolerance| {
            tolerance.amount
                * match tolerance.unit {
                    ToleranceUnit::Seconds => 1.0,
                    ToleranceUnit::Minutes => 60.0,
                    ToleranceUnit::Hours => 3600.0,
                    ToleranceUnit::Days => 86400.0,
                }
        });
        match seconds {
            Some(s) if !s.is_finite() || s < 0.0 => {
                return Err(vec![Problem::new(
                    ctx.at("tolerance.amount"),
                    "must be a finite number, 0 or more",
                )]);
            }
            None if self.matching == TimeMatching::All => {
                return Err(vec![Problem::new(
                    ctx.at("tolerance"),
                    "is required with match: all (every pair of rows otherwise)",
                )]);
            }
            _ => {}
        }
        let on = join_keys(&self.on, &self.on, ctx, ("on", "on"))?;
        if self.columns.iter().any(|c| c == GEOM) {
            return Err(vec![Problem::new(
                ctx.at("columns"),
                "the other layer's geometry is not brought",
            )]);
        }
        require_columns(other, &self.columns, ctx.at("columns"))?;
        let mut columns: Vec<(String, String)> =
            self.columns.iter().map(|c| (c.clone(), c.clone())).collect();
        if !self.keep_other_field {
            if columns.is_empty() {
                // Every attribute but the time: named, so the other layer's columns are needed.
                let Some(other) = other else {
                    return Err(vec![Problem::new(
                        ctx.at("keep_other_field"),
                        "false needs the other layer's fields known (a dataset or a step of one)",
                    )]);
                };
                columns = other
                    .attributes()
                    .filter(|c| c.name != right && !on.iter().any(|k| k.right == c.name && k.left == c.name))
                    .map(|c| (c.name.clone(), c.name.clone()))
                    .collect();
                if columns.is_empty() {
                    return Err(vec![Problem::new(
                        ctx.at("keep_other_field"),
                        "the other layer has no field to bring but its time",
                    )]);
                }
            } else {
                columns.retain(|(name, _)| name != &right);
            }
        }
        Ok(vec![Operator::Join(JoinOp {
            how: self.how,
            on,
            columns,
            suffix: self.suffix.clone(),
            time: Some(TimeMatch {
                left: self.field.clone(),
                right,
                tolerance_seconds: seconds,
                direction: self.direction,
                nearest: self.matching == TimeMatching::Nearest,
            }),
        })])
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::schema::{FieldType, Schema};
    use crate::sql::Dialect;
    use crate::sql::select::{Input, select};

    fn join_sql(params: serde_json::Value) -> Result<String, Vec<Problem>> {
        let params: TemporalJoin = serde_json::from_value(params).unwrap();
        let input = Schema::of(&[
            ("name", FieldType::Text),
            ("seen", FieldType::Timestamp),
            (GEOM, FieldType::Geometry),
        ], "EPSG:4326");
        let other = Schema::of(&[
            ("name", FieldType::Text),
            ("read_at", FieldType::Timestamp),
            ("value", FieldType::Double),
            (GEOM, FieldType::Geometry),
        ], "EPSG:4326");
        let others = [Some(&other)];
        let ctx = LowerContext {
            step_id: "j",
            path: "p",
            input: Some(&input),
            others: &others,
            rasters: None,
        };
        let ops = params.lower(&ctx)?;
        let inputs = [
            Input {
                from: "\"now\"",
                schema: Some(&input),
            },
            Input {
                from: "\"readings\"",
                schema: Some(&other),
            },
        ];
        Ok(select(&ops[0], &inputs, None, Dialect::Duckdb).unwrap())
    }

    #[test]
    fn an_as_of_join_looks_one_way_without_a_bound_and_leaves_the_other_time_out() {
        let sql = join_sql(json!({"other": "readings", "field": "seen", "other_field": "read_at",
            "direction": "backward", "keep_other_field": false}))
        .unwrap();
        assert!(
            sql.contains("CAST(r.\"read_at\" AS TIMESTAMP) <= CAST(t.\"seen\" AS TIMESTAMP)"),
            "{sql}"
        );
        assert!(!sql.contains("AS \"read_at\""), "{sql}");
        assert!(sql.contains("r.\"value\" AS \"value\""), "{sql}");
        // Equal distances: the earlier time first.
        assert!(
            sql.contains("ORDER BY abs(EXTRACT(EPOCH FROM CAST(r.\"read_at\" AS TIMESTAMP)) - EXTRACT(EPOCH FROM CAST(t.\"seen\" AS TIMESTAMP))), EXTRACT(EPOCH FROM CAST(r.\"read_at\" AS TIMESTAMP))"),
            "{sql}"
        );
        let forward = join_sql(json!({"other": "readings", "field": "seen", "other_field": "read_at",
            "direction": "forward", "tolerance": {"amount": 2, "unit": "hours"}}))
        .unwrap();
        assert!(
            forward.contains("BETWEEN CAST(t.\"seen\" AS TIMESTAMP) AND CAST(t.\"seen\" AS TIMESTAMP) + INTERVAL '7200 seconds'"),
            "{forward}"
        );
    }

    #[test]
    fn every_match_needs_a_window() {
        let problems = join_sql(json!({"other": "readings", "field": "seen", "other_field": "read_at",
            "match": "all"}))
        .unwrap_err();
        assert_eq!(problems[0].path, "p.tolerance");
    }
}
