//! `spatial_weights`: which features neighbour which, as a count per feature or as a table.

use schemars::JsonSchema;
use serde::Deserialize;

use super::checks::require_columns;
use super::weights::{TransformParam, WeightsParams};
use super::{CapabilityParams, CommonParams, Group, LowerContext};
use crate::error::Problem;
use crate::plan::operator::{GenerateOp, Operator, StatisticKind, StatisticOp, WeightsTransform};

/// What the step outputs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum WeightsOutput {
    /// The layer, with each feature's neighbour count in `field` (0: an island).
    #[default]
    Fields,
    /// A table of `focal`, `neighbor` (row positions from 0, in the layer's order) and
    /// `weight`, one row per pair, with a line from the focal feature's point to the
    /// neighbour's; an island has one row with `neighbor` and `weight` NULL.
    Table,
}

/// Find each feature's neighbours (spatial weights): contiguity (queen, rook), k nearest,
/// distance band or inverse distance, with the neighbour sets of PySAL's `libpysal.weights`.
/// Outputs the layer with a neighbour count per feature, or a neighbours table; features
/// without neighbours (islands) are kept and reported, never dropped. `work_crs` (an
/// `EPSG:<code>`) finds them in that CRS (the layer transformed, the output back), as
/// GISPulse's `crs_meters`. Runs on the native backend whatever the engine.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct SpatialWeights {
    #[serde(flatten)]
    pub weights: WeightsParams,
    /// How the table's weights are scaled (default `original`).
    #[serde(default = "default_transform")]
    pub transform: TransformParam,
    /// `fields` (default) or `table`.
    #[serde(default, rename = "as")]
    pub output_as: WeightsOutput,
    /// The neighbour count field, for `as: fields` (default `neighbors`).
    #[serde(default = "default_field")]
    #[schemars(length(min = 1))]
    pub field: String,
    /// A field naming the features in the table's `focal_id` and `neighbor_id` (as text).
    #[serde(default)]
    pub id_field: Option<String>,
    /// Find the neighbours in this CRS (`EPSG:<code>`): the layer transformed, the output back.
    #[serde(default)]
    pub work_crs: Option<String>,
    #[serde(flatten)]
    pub common: CommonParams,
}

fn default_transform() -> TransformParam {
    TransformParam::Original
}

fn default_field() -> String {
    "neighbors".into()
}

impl CapabilityParams for SpatialWeights {
    const NAME: &'static str = "spatial_weights";
    const GROUP: Group = Group::Statistics;

    fn common(&self) -> &CommonParams {
        &self.common
    }

    fn lower(&self, ctx: &LowerContext<'_>) -> Result<Vec<Operator>, Vec<Problem>> {
        super::work_crs::within(
            self.work_crs.as_deref(),
            super::work_crs::Output::Geometry,
            ctx,
            |ctx| self.lower_here(ctx),
        )
    }
}

impl SpatialWeights {
    fn lower_here(&self, ctx: &LowerContext<'_>) -> Result<Vec<Operator>, Vec<Problem>> {
        let weights = self
            .weights
            .lower(WeightsTransform::from(self.transform), ctx)?;
        Ok(vec![match self.output_as {
            WeightsOutput::Fields => Operator::owned(StatisticOp {
                field: None,
                weights,
                kind: StatisticKind::NeighbourCount,
                output: self.field.clone(),
            }),
            WeightsOutput::Table => {
                if let Some(id) = &self.id_field {
                    require_columns(ctx.input, std::slice::from_ref(id), ctx.at("id_field"))?;
                }
                Operator::owned(GenerateOp::Neighbours {
                    weights,
                    id_field: self.id_field.clone(),
                })
            }
        }])
    }
}
