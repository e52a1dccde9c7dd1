//! `convex_hull`: replace every geometry by its convex hull.

use schemars::JsonSchema;
use serde::Deserialize;

use super::{CapabilityParams, CommonParams, Group, LowerContext};
use crate::error::Problem;
use crate::plan::operator::{GeoExpr, MapOp, Operator, ValueExpr};
use crate::schema::{FieldType, GEOM};

/// Replace each geometry by its convex hull, the smallest convex polygon containing it;
/// attributes are unchanged. The hull of a single point is that point and the hull of collinear
/// points a line. Each feature gets its own hull: `union` first for one hull of the whole layer.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct ConvexHull {
    #[serde(flatten)]
    pub common: CommonParams,
}

impl CapabilityParams for ConvexHull {
    const NAME: &'static str = "convex_hull";
    const GROUP: Group = Group::VectorGeometry;

    fn common(&self) -> &CommonParams {
        &self.common
    }

    fn lower(&self, _ctx: &LowerContext<'_>) -> Result<Vec<Operator>, Vec<Problem>> {
        Ok(vec![Operator::Map(MapOp {
            set: vec![(
                GEOM.to_owned(),
                ValueExpr::Geo(GeoExpr::ConvexHull),
                FieldType::Geometry,
            )],
            ..MapOp::default()
        })])
    }
}
