//! Run-time variables: `{name}` placeholders in output paths and step conditions.

use std::collections::BTreeMap;

/// Variables for one run. `strict`: a placeholder without a value is an error (execution);
/// otherwise it is left as written (validation and previews).
#[derive(Debug, Clone, Default)]
pub struct Vars {
    pub values: BTreeMap<String, String>,
    pub strict: bool,
}

impl Vars {
    /// Parses `NAME=VALUE` pairs.
    pub fn from_pairs<'a>(pairs: impl IntoIterator<Item = &'a str>) -> Result<Self, String> {
        let mut values = BTreeMap::new();
        for pair in pairs {
            let (name, value) = pair
                .split_once('=')
                .ok_or_else(|| format!("variable {pair:?} is not NAME=VALUE"))?;
            if !is_name(name) {
                return Err(format!(
                    "variable name {name:?} must be letters, digits and _"
                ));
            }
            values.insert(name.to_owned(), value.to_owned());
        }
        Ok(Self {
            values,
            strict: false,
        })
    }

    /// Replaces every `{name}`; returns the names that had no value.
    pub fn substitute(&self, text: &str) -> (String, Vec<String>) {
        let mut out = String::with_capacity(text.len());
        let mut missing = Vec::new();
        let mut rest = text;
        while let Some(start) = rest.find('{') {
            out.push_str(&rest[..start]);
            let after = &rest[start + 1..];
            match after.find('}') {
                Some(end) if is_name(&after[..end]) => {
                    let name = &after[..end];
                    match self.values.get(name) {
                        Some(value) => out.push_str(value),
                        None => {
                            missing.push(name.to_owned());
                            out.push_str(&rest[start..start + end + 2]);
                        }
                    }
                    rest = &after[end + 1..];
                }
                _ => {
                    out.push('{');
                    rest = after;
                }
            }
        }
        out.push_str(rest);
        (out, missing)
    }
}

fn is_name(text: &str) -> bool {
    !text.is_empty() && text.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_are_replaced_and_missing_ones_reported() {
        let vars = Vars::from_pairs(["date=2026-01-01"]).unwrap();
        assert_eq!(
            vars.substitute("out/{date}/x.gpkg"),
            ("out/2026-01-01/x.gpkg".into(), vec![])
        );
        assert_eq!(
            vars.substitute("{region}_{date}"),
            ("{region}_2026-01-01".into(), vec!["region".into()])
        );
        assert_eq!(vars.substitute("{ not a var }").0, "{ not a var }");
        assert!(Vars::from_pairs(["nodate"]).is_err());
    }
}
