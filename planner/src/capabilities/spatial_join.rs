//! `spatial_join`: attach the attributes of `ref_layer` features that match each feature.

use schemars::JsonSchema;
use serde::Deserialize;

use super::checks::require_columns;
use super::{CapabilityParams, CommonParams, Group, LowerContext};
use crate::error::Problem;
use crate::plan::operator::{JoinHow, MapOp, Operator, SpatialJoinOp, SpatialPredicate};
use crate::plan::schema_infer::joined_columns;

/// Join the attributes of the features of `ref_layer` that satisfy `predicate` with each input
/// feature: `predicate(input.geom, ref.geom)`. `how: inner` keeps only matched input features,
/// `left` keeps every input feature (NULL attributes when nothing matches). An input feature
/// matching several reference features appears once per match. `columns` picks the reference
/// attributes to bring (default: all; a name the input already has is prefixed with `ref_`).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct SpatialJoin {
    /// The step or dataset layer to join.
    pub ref_layer: String,
    /// Spatial relation between the input and reference geometries.
    #[serde(default = "default_predicate")]
    pub predicate: SpatialPredicate,
    /// Distance in CRS units, for `predicate: dwithin`.
    #[serde(default)]
    pub distance: Option<f64>,
    #[serde(default = "default_how")]
    pub how: JoinHow,
    /// Reference attributes to bring (default: all).
    #[serde(default)]
    pub columns: Vec<String>,
    /// Names for a column both layers have, as GeoPandas gives them: `[left, right]` makes
    /// `X` the input's `X{left}` and the reference's `X{right}` (`["_left", "_right"]`).
    /// Default: the input's keeps `X`, the reference's becomes `ref_X`.
    #[serde(default)]
    pub suffixes: Option<[String; 2]>,
    #[serde(flatten)]
    pub common: CommonParams,
}

pub(super) fn default_predicate() -> SpatialPredicate {
    SpatialPredicate::Intersects
}

fn default_how() -> JoinHow {
    JoinHow::Inner
}

/// `distance` is required by `dwithin` and meaningless otherwise.
pub(super) fn check_distance(
    predicate: SpatialPredicate,
    distance: Option<f64>,
    ctx: &LowerContext<'_>,
) -> Result<(), Vec<Problem>> {
    match (predicate, distance) {
        (SpatialPredicate::Dwithin, None) => Err(vec![Problem::new(
            ctx.at("distance"),
            "is required with predicate dwithin",
        )]),
        (SpatialPredicate::Dwithin, Some(_)) | (_, None) => Ok(()),
        (_, Some(_)) => Err(vec![Problem::new(
            ctx.at("distance"),
            "only applies to predicate dwithin",
        )]),
    }
}

impl CapabilityParams for SpatialJoin {
    const NAME: &'static str = "spatial_join";
    const GROUP: Group = Group::CrossLayer;

    fn common(&self) -> &CommonParams {
        &self.common
    }

    fn other_inputs(&self) -> Vec<(&'static str, String)> {
        vec![("ref_layer", self.ref_layer.clone())]
    }

    fn lower(&self, ctx: &LowerContext<'_>) -> Result<Vec<Operator>, Vec<Problem>> {
        check_distance(self.predicate, self.distance, ctx)?;
        require_columns(
            ctx.others.first().copied().flatten(),
            &self.columns,
            ctx.at("columns"),
        )?;
        let mut operators = vec![Operator::SpatialJoin(SpatialJoinOp {
            predicate: self.predicate,
            distance: self.distance,
            how: self.how,
            columns: self.columns.clone(),
        })];
        if let Some(suffixes) = &self.suffixes {
            operators.extend(suffixed(suffixes, &self.columns, ctx)?);
        }
        Ok(operators)
    }
}

/// After a join bringing the reference's `columns`: each name both layers have renamed
/// `<name><left>` in the input's field and `<name><right>` in the reference's.
pub(super) fn suffixed(
    [left, right]: &[String; 2],
    columns: &[String],
    ctx: &LowerContext<'_>,
) -> Result<Option<Operator>, Vec<Problem>> {
    let reference = ctx.others.first().copied().flatten();
    let Some(joined) = joined_columns(ctx.input, reference, columns) else {
        return Err(vec![Problem::new(
            ctx.at("suffixes"),
            "needs the reference layer's columns (plan with a catalog or a dataset)",
        )]);
    };
    let mut rename = Vec::new();
    for (name, output) in joined.into_iter().filter(|(n, o)| n != o) {
        rename.push((name.clone(), format!("{name}{left}")));
        rename.push((output, format!("{name}{right}")));
    }
    Ok((!rename.is_empty()).then(|| {
        Operator::Map(MapOp {
            rename,
            ..MapOp::default()
        })
    }))
}
