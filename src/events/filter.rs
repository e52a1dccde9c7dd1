//! A subscriber's filter: `topics` (event types), `trigger_id` and `table` (repeatable). The
//! filters combine with AND; an event whose data lacks the key a filter tests (`trigger_id`,
//! `table`) is not excluded by that filter.

use std::collections::BTreeSet;

use serde_json::Value;

use super::{Event, TOPICS};

/// What one subscriber wants; empty parts let everything through.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Filter {
    pub topics: BTreeSet<String>,
    pub trigger_ids: BTreeSet<String>,
    pub tables: BTreeSet<String>,
}

impl Filter {
    /// The filter of a query string's pairs; unknown topics are refused, naming the known ones.
    pub fn from_pairs(pairs: &[(String, String)]) -> Result<Self, String> {
        let mut filter = Self::default();
        for (name, value) in pairs {
            match name.as_str() {
                "topics" => {
                    for topic in value.split(',').map(str::trim).filter(|t| !t.is_empty()) {
                        if !TOPICS.contains(&topic) {
                            return Err(format!(
                                "unknown topic {topic:?}; topics are {}",
                                TOPICS.join(", ")
                            ));
                        }
                        filter.topics.insert(topic.to_owned());
                    }
                }
                "trigger_id" => {
                    filter.trigger_ids.insert(value.clone());
                }
                "table" => {
                    filter.tables.insert(value.clone());
                }
                _ => {}
            }
        }
        Ok(filter)
    }

    /// Whether `event` passes every part of the filter.
    pub fn matches(&self, event: &Event) -> bool {
        self.matches_parts(event.kind, &event.data)
    }

    fn matches_parts(&self, kind: &str, data: &Value) -> bool {
        let passes = |wanted: &BTreeSet<String>, key: &str| {
            if wanted.is_empty() {
                return true;
            }
            match data.get(key) {
                None | Some(Value::Null) => true,
                Some(Value::String(value)) => wanted.contains(value),
                Some(other) => wanted.contains(&other.to_string()),
            }
        };
        (self.topics.is_empty() || self.topics.contains(kind))
            && passes(&self.trigger_ids, "trigger_id")
            && passes(&self.tables, "table")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn filter(query: &[(&str, &str)]) -> Filter {
        let pairs: Vec<(String, String)> = query
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        Filter::from_pairs(&pairs).unwrap_or_else(|e| unreachable!("{e}"))
    }

    #[test]
    fn the_filter_rules_hold_case_by_case() {
        let fired_on_parcels = (
            "trigger_fired",
            json!({"trigger_id": "t1", "table": "public.parcels"}),
        );
        let fired_no_table = ("trigger_fired", json!({"trigger_id": "t2"}));
        let job = ("job_created", json!({"job_id": "j1"}));
        let layer_on_roads = ("layer_updated", json!({"table": "public.roads"}));
        let numeric_trigger = ("trigger_fired", json!({"trigger_id": 7}));
        // (query, event, expected)
        type Case<'a> = (Vec<(&'a str, &'a str)>, (&'a str, Value), bool);
        let cases: Vec<Case<'_>> = vec![
            // No filter: everything.
            (vec![], job.clone(), true),
            (vec![], fired_on_parcels.clone(), true),
            // Topics.
            (
                vec![("topics", "trigger_fired,layer_updated")],
                fired_on_parcels.clone(),
                true,
            ),
            (
                vec![("topics", "trigger_fired,layer_updated")],
                layer_on_roads.clone(),
                true,
            ),
            (vec![("topics", "trigger_fired")], job.clone(), false),
            // trigger_id: listed passes, other fails, missing key passes.
            (vec![("trigger_id", "t1")], fired_on_parcels.clone(), true),
            (vec![("trigger_id", "t9")], fired_on_parcels.clone(), false),
            (vec![("trigger_id", "t9")], job.clone(), true),
            (
                vec![("trigger_id", "t9"), ("trigger_id", "t2")],
                fired_no_table.clone(),
                true,
            ),
            (vec![("trigger_id", "7")], numeric_trigger.clone(), true),
            // table: listed passes, other fails, missing key passes.
            (
                vec![("table", "public.parcels")],
                fired_on_parcels.clone(),
                true,
            ),
            (
                vec![("table", "public.parcels")],
                layer_on_roads.clone(),
                false,
            ),
            (
                vec![("table", "public.parcels")],
                fired_no_table.clone(),
                true,
            ),
            (
                vec![("table", "public.parcels"), ("table", "public.roads")],
                layer_on_roads.clone(),
                true,
            ),
            // AND across filters.
            (
                vec![("topics", "trigger_fired"), ("table", "public.parcels")],
                fired_on_parcels.clone(),
                true,
            ),
            (
                vec![("topics", "trigger_fired"), ("table", "public.roads")],
                fired_on_parcels.clone(),
                false,
            ),
            (
                vec![("topics", "layer_updated"), ("table", "public.parcels")],
                fired_on_parcels.clone(),
                false,
            ),
            (
                vec![("trigger_id", "t1"), ("table", "public.roads")],
                fired_on_parcels.clone(),
                false,
            ),
            // Missing keys pass both key filters, the topic still decides.
            (
                vec![
                    ("topics", "job_created"),
                    ("trigger_id", "t1"),
                    ("table", "x.y"),
                ],
                job.clone(),
                true,
            ),
            (
                vec![
                    ("topics", "trigger_fired"),
                    ("trigger_id", "t1"),
                    ("table", "x.y"),
                ],
                job,
                false,
            ),
        ];
        for (query, (kind, data), expected) in cases {
            assert_eq!(
                filter(&query).matches_parts(kind, &data),
                expected,
                "{query:?} on {kind} {data}"
            );
        }
    }

    #[test]
    fn unknown_topics_are_refused_by_name() {
        let message = Filter::from_pairs(&[("topics".into(), "job_created,jobs".into())])
            .err()
            .unwrap_or_default();
        assert!(
            message.contains("\"jobs\"") && message.contains("job_created"),
            "{message}"
        );
    }
}
