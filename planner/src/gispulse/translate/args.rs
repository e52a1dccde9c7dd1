//! [`Args`]: a GISPulse step's parameters as a translator reads them — typed getters that
//! record what was read and every problem at its path, and the native parameters being built.

use std::collections::BTreeSet;

use serde_json::{Map, Value};

use crate::error::Problem;

/// One GISPulse step's parameters being translated.
pub struct Args<'a> {
    given: &'a Map<String, Value>,
    /// JSON path of the parameters in the user's document (`[2].config`, `steps[1].params`).
    path: String,
    read: BTreeSet<String>,
    pub problems: Vec<Problem>,
    /// Where the answer would change if GISPulse's own semantics were dropped (for `migrate`).
    pub notes: Vec<String>,
    /// The native parameters.
    pub native: Map<String, Value>,
}

impl<'a> Args<'a> {
    pub fn new(given: &'a Map<String, Value>, path: impl Into<String>) -> Self {
        Self {
            given,
            path: path.into(),
            read: BTreeSet::new(),
            problems: Vec::new(),
            notes: Vec::new(),
            native: Map::new(),
        }
    }

    /// The path of parameter `key`.
    pub fn at(&self, key: &str) -> String {
        format!("{}.{key}", self.path)
    }

    pub fn problem(&mut self, key: &str, message: impl Into<String>) {
        let path = self.at(key);
        self.problems.push(Problem::new(path, message));
    }

    pub fn note(&mut self, text: impl Into<String>) {
        self.notes.push(text.into());
    }

    /// The raw value of `key` (JSON `null` counts as absent).
    pub fn value(&mut self, key: &str) -> Option<&'a Value> {
        self.read.insert(key.to_owned());
        self.given.get(key).filter(|v| !v.is_null())
    }

    /// Whether `key` is given as JSON `null` (which GISPulse may read apart from absent).
    pub fn is_null(&mut self, key: &str) -> bool {
        self.read.insert(key.to_owned());
        self.given.get(key).is_some_and(Value::is_null)
    }

    pub fn has(&self, key: &str) -> bool {
        self.given.get(key).is_some_and(|v| !v.is_null())
    }

    pub fn f64(&mut self, key: &str) -> Option<f64> {
        let value = self.value(key)?;
        // GISPulse reads numbers given as strings too ("100").
        let number = value
            .as_f64()
            .or_else(|| value.as_str().and_then(|s| s.trim().parse().ok()));
        if number.is_none() {
            self.problem(key, format!("expected a number, got {value}"));
        }
        number.filter(|n| n.is_finite())
    }

    pub fn integer(&mut self, key: &str) -> Option<i64> {
        let number = self.f64(key)?;
        if number.fract() != 0.0 || number.abs() > 1e15 {
            self.problem(key, format!("expected a whole number, got {number}"));
            return None;
        }
        Some(number as i64)
    }

    pub fn string(&mut self, key: &str) -> Option<String> {
        let value = self.value(key)?;
        match value.as_str() {
            Some(s) => Some(s.to_owned()),
            None => {
                self.problem(key, format!("expected a string, got {value}"));
                None
            }
        }
    }

    pub fn bool(&mut self, key: &str) -> Option<bool> {
        let value = self.value(key)?;
        match value {
            Value::Bool(b) => Some(*b),
            Value::String(s) if matches!(s.to_ascii_lowercase().as_str(), "true" | "false") => {
                Some(s.eq_ignore_ascii_case("true"))
            }
            _ => {
                self.problem(key, format!("expected true or false, got {value}"));
                None
            }
        }
    }

    /// A name or a list of names (`"by": "region"` and `"by": ["region", "kind"]` alike).
    pub fn names(&mut self, key: &str) -> Option<Vec<String>> {
        let value = self.value(key)?;
        let names = match value {
            Value::String(s) => Some(vec![s.clone()]),
            Value::Array(items) => items
                .iter()
                .map(|v| v.as_str().map(str::to_owned))
                .collect::<Option<Vec<_>>>(),
            _ => None,
        };
        if names.is_none() {
            self.problem(
                key,
                format!("expected a name or a list of names, got {value}"),
            );
        }
        names
    }

    pub fn object(&mut self, key: &str) -> Option<&'a Map<String, Value>> {
        let value = self.value(key)?;
        let object = value.as_object();
        if object.is_none() {
            self.problem(key, format!("expected an object, got {value}"));
        }
        object
    }

    /// Sets native parameter `key`.
    pub fn set(&mut self, key: &str, value: impl Into<Value>) {
        self.native.insert(key.to_owned(), value.into());
    }

    /// Copies `from` to native `to` unchanged when given.
    pub fn rename(&mut self, from: &str, to: &str) {
        if let Some(value) = self.value(from) {
            self.native.insert(to.to_owned(), value.clone());
        }
    }

    /// Copies each of `keys` unchanged when given.
    pub fn keep(&mut self, keys: &[&str]) {
        for key in keys {
            self.rename(key, key);
        }
    }

    /// The parameters given but not read by the translator, in order.
    pub fn unread(&self) -> Vec<String> {
        self.given
            .keys()
            .filter(|k| !self.read.contains(*k))
            .cloned()
            .collect()
    }
}
