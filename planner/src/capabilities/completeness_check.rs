//! `completeness_check`: what the input lacks against a reference layer, by key or by area.

use schemars::JsonSchema;
use serde::Deserialize;

use super::attribute_join::join_keys;
use super::checks::require_columns;
use super::validation_key::feature_key;
use crate::plan::validate::FeatureKey;
use super::{CapabilityParams, CommonParams, Group, LowerContext};
use crate::error::Problem;
use crate::plan::operator::{Operator, ValidateCheck, ValidateOp};
use crate::plan::validate::Completeness;

/// How the input is compared with the reference layer.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum CompletenessMode {
    /// Expected features, matched by key. The default.
    #[default]
    Keys,
    /// Expected coverage: the area of the reference features.
    Coverage,
}

/// Check the input against `ref_layer` (a step or a dataset layer) and report what is lacking,
/// one row per problem: `feature` (the input feature's `key`), `related` (the reference
/// feature's `ref_key`), `problem`, `field` (NULL), `reason` and `geom`.
/// `mode: keys` (default): `missing` for each reference feature whose `ref_key` (default: the
/// same name as `key`) no input feature has (its geometry), `unexpected` for each input
/// feature whose `key` no reference feature has (its geometry); a NULL key matches nothing;
/// keys of an integer and a text field are compared as text. `mode: coverage`: `uncovered`
/// for each reference feature with a part that no input feature covers, at least
/// `min_fraction` (default 0) of its area (the part: the reference feature less the union of
/// the input features meeting it; for lines and points, whose area is 0, any uncovered part).
/// NULL, empty and invalid geometries take no part in coverage (`make_valid` first). Both
/// layers must be in the same CRS. `key` defaults to the input's first integer field. With
/// `summary: true` the output is one row per problem kind with its `count`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct CompletenessCheck {
    /// The reference layer: a step or a dataset layer.
    #[schemars(length(min = 1))]
    pub ref_layer: String,
    /// `keys` (default) or `coverage`.
    #[serde(default)]
    pub mode: CompletenessMode,
    /// The input's field identifying features (default: its first integer field).
    #[serde(default)]
    pub key: Option<String>,
    /// The reference layer's field identifying features (default: the name of `key`).
    #[serde(default)]
    pub ref_key: Option<String>,
    /// The smallest uncovered share of a reference feature's area reported (coverage mode;
    /// default 0: any uncovered part).
    #[serde(default)]
    #[schemars(range(min = 0.0, max = 1.0))]
    pub min_fraction: f64,
    /// One row per problem kind with its count instead of one row per problem.
    #[serde(default)]
    pub summary: bool,
    #[serde(flatten)]
    pub common: CommonParams,
}

impl CapabilityParams for CompletenessCheck {
    const NAME: &'static str = "completeness_check";
    const GROUP: Group = Group::Topology;

    fn common(&self) -> &CommonParams {
        &self.common
    }

    fn other_inputs(&self) -> Vec<(&'static str, String)> {
        vec![("ref_layer", self.ref_layer.clone())]
    }

    fn lower(&self, ctx: &LowerContext<'_>) -> Result<Vec<Operator>, Vec<Problem>> {
        let mut problems = Vec::new();
        if !(0.0..=1.0).contains(&self.min_fraction) {
            problems.push(Problem::new(
                ctx.at("min_fraction"),
                "must be a share between 0 and 1",
            ));
        }
        let reference = ctx.others.first().copied().flatten();
        if let (Some(crs), Some(ref_crs)) = (ctx.crs(), reference.and_then(|s| s.crs.as_deref()))
            && crs != ref_crs
        {
            problems.push(Problem::new(
                ctx.at("ref_layer"),
                format!("is in {ref_crs} but the input is in {crs}: reproject one layer first"),
            ));
        }
        let key = match feature_key(self.key.as_deref(), ctx) {
            Ok(key) => key,
            Err(found) => {
                problems.extend(found);
                return Err(problems);
            }
        };
        let ref_key = self.ref_key.clone().unwrap_or_else(|| key.clone());
        // Keys are compared in keys mode only: in coverage mode they only name features.
        let keys = match self.mode {
            CompletenessMode::Keys => join_keys(
                std::slice::from_ref(&key),
                std::slice::from_ref(&ref_key),
                ctx,
                ("key", "ref_key"),
            ),
            CompletenessMode::Coverage => {
                require_columns(reference, std::slice::from_ref(&ref_key), ctx.at("ref_key"))
                    .map(|()| Vec::new())
            }
        };
        let keys = match keys {
            Ok(keys) => keys,
            Err(found) => {
                problems.extend(found);
                return Err(problems);
            }
        };
        if !problems.is_empty() {
            return Err(problems);
        }
        let check = match self.mode {
            CompletenessMode::Keys => Completeness::Keys {
                ref_key,
                as_text: keys.first().is_some_and(|k| k.as_text),
            },
            CompletenessMode::Coverage => Completeness::Coverage {
                ref_key,
                min_fraction: self.min_fraction,
            },
        };
        Ok(vec![Operator::Validate(ValidateOp {
            key: FeatureKey::Field(key),
            check: ValidateCheck::Completeness(check),
            summary: self.summary,
        })])
    }
}
