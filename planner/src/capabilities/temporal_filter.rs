//! `temporal_filter`: keep the features whose date or time falls in a range.

use schemars::JsonSchema;
use serde::Deserialize;
use sqlparser::dialect::GenericDialect;
use sqlparser::parser::Parser;

use super::checks::require_columns;
use super::{CapabilityParams, CommonParams, Group, LowerContext};
use crate::error::Problem;
use crate::expr::SqlExpr;
use crate::plan::operator::Operator;
use crate::schema::FieldType;
use crate::sql::quote::{ident, string};

/// Keep the features whose date or timestamp field `field` is in a range: between `from` and
/// `to` (ISO 8601 dates `2024-03-01` or timestamps `2024-03-01T12:30:00`; either may be left
/// out for an open range), or within the window `last` ending now, e.g. `{"last": {"amount":
/// 7, "unit": "days"}}`. `from` is inclusive; `to` is inclusive too, and a `to` given as a date
/// includes that whole day. "Now" is the current timestamp of the run (when its SQL runs),
/// in UTC; the window is `now - amount unit` to now, so future times are excluded. Times are
/// compared as timestamps without time zone (a date is its midnight; a text field is read as
/// an ISO timestamp). Features whose time is NULL are dropped.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct TemporalFilter {
    /// The date or timestamp field.
    #[schemars(length(min = 1))]
    pub field: String,
    /// Earliest time kept (inclusive).
    #[serde(default)]
    pub from: Option<String>,
    /// Latest time kept (inclusive; a date includes its whole day).
    #[serde(default)]
    pub to: Option<String>,
    /// A window ending now, instead of `from`/`to`.
    #[serde(default)]
    pub last: Option<RelativeWindow>,
    #[serde(flatten)]
    pub common: CommonParams,
}

/// `amount` units back from now.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RelativeWindow {
    #[schemars(range(min = 1))]
    pub amount: u32,
    pub unit: TimeUnit,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum TimeUnit {
    Hours,
    Days,
    Weeks,
    Months,
}

impl TimeUnit {
    fn as_str(self) -> &'static str {
        match self {
            Self::Hours => "hours",
            Self::Days => "days",
            Self::Weeks => "weeks",
            Self::Months => "months",
        }
    }
}

/// An ISO 8601 date or timestamp, checked and written as SQL reads it.
#[derive(Debug, Clone, PartialEq)]
pub struct IsoTime {
    /// `YYYY-MM-DD HH:MM:SS[.f]`.
    pub text: String,
    /// Given as a date only.
    pub date_only: bool,
}

fn digits(text: &str, len: usize) -> Option<u32> {
    (text.len() == len && text.bytes().all(|b| b.is_ascii_digit()))
        .then(|| text.parse().ok())
        .flatten()
}

/// Parses `2024-03-01`, `2024-03-01T12:30`, `2024-03-01 12:30:05.25` (a trailing `Z` is
/// accepted: times are UTC).
pub fn parse_iso_time(text: &str) -> Result<IsoTime, String> {
    let bad = || format!("{text:?} is not an ISO 8601 date (2024-03-01) or timestamp (2024-03-01T12:30:00)");
    let trimmed = text.trim().trim_end_matches('Z');
    let (date, time) = match trimmed.split_once(['T', ' ']) {
        Some((date, time)) => (date, Some(time)),
        None => (trimmed, None),
    };
    let parts: Vec<&str> = date.split('-').collect();
    let [y, m, d] = parts.as_slice() else {
        return Err(bad());
    };
    let (year, month, day) = (
        digits(y, 4).ok_or_else(bad)?,
        digits(m, 2).ok_or_else(bad)?,
        digits(d, 2).ok_or_else(bad)?,
    );
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    let days = match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return Err(bad()),
    };
    if day == 0 || day > days {
        return Err(bad());
    }
    let Some(time) = time else {
        return Ok(IsoTime {
            text: format!("{year:04}-{month:02}-{day:02} 00:00:00"),
            date_only: true,
        });
    };
    let (clock, fraction) = match time.split_once('.') {
        Some((clock, fraction)) if !fraction.is_empty() && fraction.len() <= 6 => {
            digits(fraction, fraction.len()).ok_or_else(bad)?;
            (clock, Some(fraction))
        }
        Some(_) => return Err(bad()),
        None => (time, None),
    };
    let fields: Vec<&str> = clock.split(':').collect();
    let (hour, minute, second) = match fields.as_slice() {
        [h, m] => (digits(h, 2), digits(m, 2), Some(0)),
        [h, m, s] => (digits(h, 2), digits(m, 2), digits(s, 2)),
        _ => return Err(bad()),
    };
    let (Some(hour), Some(minute), Some(second)) = (hour, minute, second) else {
        return Err(bad());
    };
    if hour > 23 || minute > 59 || second > 59 {
        return Err(bad());
    }
    let fraction = fraction.map(|f| format!(".{f}")).unwrap_or_default();
    Ok(IsoTime {
        text: format!("{year:04}-{month:02}-{day:02} {hour:02}:{minute:02}:{second:02}{fraction}"),
        date_only: false,
    })
}

/// A condition the planner wrote (not user text: it may call functions rule expressions may
/// not, such as `now()`).
fn planner_expr(text: &str) -> Result<SqlExpr, String> {
    Parser::new(&GenericDialect {})
        .try_with_sql(text)
        .and_then(|mut p| p.parse_expr())
        .map_err(|e| e.to_string())
        .and_then(SqlExpr::from_ast)
        .map_err(|e| format!("cannot build the condition {text:?}: {e}"))
}

/// The field as a timestamp: compared as is when it is a date or timestamp, cast otherwise.
pub fn field_as_timestamp(
    field: &str,
    qualifier: &str,
    ctx: &LowerContext<'_>,
    param: &str,
) -> Result<String, Vec<Problem>> {
    let column = format!("{qualifier}{}", ident(field));
    let ty = ctx
        .input
        .and_then(|s| s.columns.iter().find(|c| c.name == field))
        .map(|c| c.ty);
    match ty {
        Some(FieldType::Date | FieldType::Timestamp) => Ok(column),
        None | Some(FieldType::Text | FieldType::Unknown) => {
            Ok(format!("CAST({column} AS TIMESTAMP)"))
        }
        Some(other) => Err(vec![Problem::new(
            ctx.at(param),
            format!("field {field} is {other:?}, not a date or timestamp").to_lowercase(),
        )]),
    }
}

impl CapabilityParams for TemporalFilter {
    const NAME: &'static str = "temporal_filter";
    const GROUP: Group = Group::Attributes;

    fn common(&self) -> &CommonParams {
        &self.common
    }

    fn lower(&self, ctx: &LowerContext<'_>) -> Result<Vec<Operator>, Vec<Problem>> {
        require_columns(ctx.input, std::slice::from_ref(&self.field), ctx.at("field"))?;
        let column = field_as_timestamp(&self.field, "", ctx, "field")?;
        let mut parts = Vec::new();
        let parse = |text: &str, param: &str| {
            parse_iso_time(text).map_err(|m| vec![Problem::new(ctx.at(param), m)])
        };
        let stamp = |text: &str| format!("CAST({} AS TIMESTAMP)", string(text));
        match (&self.last, &self.from, &self.to) {
            (Some(_), Some(_), _) | (Some(_), _, Some(_)) => {
                return Err(vec![Problem::new(
                    ctx.at("last"),
                    "give either last or from/to, not both",
                )]);
            }
            (None, None, None) => {
                return Err(vec![Problem::new(
                    ctx.path,
                    "give from, to (or both), or last",
                )]);
            }
            (Some(window), None, None) => {
                let now = "(now() AT TIME ZONE 'UTC')";
                let span = string(&format!("{} {}", window.amount, window.unit.as_str()));
                parts.push(format!("{column} >= {now} - INTERVAL {span}"));
                parts.push(format!("{column} <= {now}"));
            }
            (None, from, to) => {
                let from = from.as_deref().map(|t| parse(t, "from")).transpose()?;
                let to = to.as_deref().map(|t| parse(t, "to")).transpose()?;
                if let (Some(a), Some(b)) = (&from, &to)
                    && a.text > b.text
                {
                    return Err(vec![Problem::new(ctx.at("to"), "is before from")]);
                }
                if let Some(from) = from {
                    parts.push(format!("{column} >= {}", stamp(&from.text)));
                }
                if let Some(to) = to {
                    if to.date_only {
                        parts.push(format!(
                            "{column} < {} + INTERVAL '1 day'",
                            stamp(&to.text)
                        ));
                    } else {
                        parts.push(format!("{column} <= {}", stamp(&to.text)));
                    }
                }
            }
        }
        let predicate =
            planner_expr(&parts.join(" AND ")).map_err(|m| vec![Problem::new(ctx.path, m)])?;
        Ok(vec![Operator::Filter { predicate }])
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn lower(params: serde_json::Value) -> Result<String, Vec<Problem>> {
        let params: TemporalFilter = serde_json::from_value(params).unwrap();
        let ops = params.lower(&LowerContext {
            step_id: "s",
            path: "p",
            input: None,
            others: &[],
            rasters: None,
        })?;
        match &ops[..] {
            [Operator::Filter { predicate }] => Ok(predicate.to_sql()),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn iso_times_are_checked() {
        assert_eq!(parse_iso_time("2024-02-29").unwrap().text, "2024-02-29 00:00:00");
        assert_eq!(
            parse_iso_time("2024-03-01T12:30Z").unwrap().text,
            "2024-03-01 12:30:00"
        );
        assert_eq!(
            parse_iso_time("2024-03-01 12:30:05.25").unwrap().text,
            "2024-03-01 12:30:05.25"
        );
        for bad in ["2023-02-29", "2024-13-01", "24-01-01", "2024-01-01T25:00", "yesterday", "2024-01-01'; --"] {
            assert!(parse_iso_time(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn ranges_and_windows_become_conditions() {
        assert_eq!(
            lower(json!({"field": "day", "from": "2024-01-01", "to": "2024-01-31"})).unwrap(),
            "CAST(\"day\" AS TIMESTAMP) >= CAST('2024-01-01 00:00:00' AS TIMESTAMP) AND CAST(\"day\" AS TIMESTAMP) < CAST('2024-01-31 00:00:00' AS TIMESTAMP) + INTERVAL '1 day'"
        );
        assert_eq!(
            lower(json!({"field": "t", "last": {"amount": 7, "unit": "days"}})).unwrap(),
            "CAST(\"t\" AS TIMESTAMP) >= (now() AT TIME ZONE 'UTC') - INTERVAL '7 days' AND CAST(\"t\" AS TIMESTAMP) <= (now() AT TIME ZONE 'UTC')"
        );
        assert_eq!(lower(json!({"field": "t"})).unwrap_err()[0].path, "p");
        assert_eq!(
            lower(json!({"field": "t", "from": "2024-02-01", "to": "2024-01-01"})).unwrap_err()[0].path,
            "p.to"
        );
    }
}
