//! `affine_transform`: apply a 2-D affine transformation to every geometry.

use schemars::JsonSchema;
use serde::Deserialize;

use super::{CapabilityParams, CommonParams, Group, LowerContext};
use crate::error::Problem;
use crate::plan::operator::{GeoExpr, MapOp, Operator, ValueExpr};
use crate::schema::{FieldType, GEOM};

/// Apply the 2-D affine transformation `x' = a·x + b·y + xoff`, `y' = d·x + e·y + yoff` to
/// every vertex: scaling, rotation, shear and translation in one step. Every parameter
/// defaults to the identity's (`a` and `e` 1, the others 0), so `{"xoff": 100}` moves
/// geometries 100 units along x; a rotation by θ is `a` = cos θ, `b` = −sin θ, `d` = sin θ,
/// `e` = cos θ. Coordinates are taken in the data's CRS, which stays as declared. Z values are
/// left unchanged; M values are kept, except on geometries with both Z and M, which lose M.
/// Every geometry type; attributes are unchanged. NULL stays NULL; empty geometries are left
/// as they are.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct AffineTransform {
    /// Factor of x in x' (default 1).
    #[serde(default = "one")]
    pub a: f64,
    /// Factor of y in x' (default 0).
    #[serde(default)]
    pub b: f64,
    /// Factor of x in y' (default 0).
    #[serde(default)]
    pub d: f64,
    /// Factor of y in y' (default 1).
    #[serde(default = "one")]
    pub e: f64,
    /// Added to x' (default 0).
    #[serde(default)]
    pub xoff: f64,
    /// Added to y' (default 0).
    #[serde(default)]
    pub yoff: f64,
    #[serde(flatten)]
    pub common: CommonParams,
}

fn one() -> f64 {
    1.0
}

impl CapabilityParams for AffineTransform {
    const NAME: &'static str = "affine_transform";
    const GROUP: Group = Group::VectorGeometry;

    fn common(&self) -> &CommonParams {
        &self.common
    }

    fn lower(&self, _ctx: &LowerContext<'_>) -> Result<Vec<Operator>, Vec<Problem>> {
        Ok(vec![Operator::Map(MapOp {
            set: vec![(
                GEOM.to_owned(),
                ValueExpr::Geo(GeoExpr::Affine {
                    a: self.a,
                    b: self.b,
                    d: self.d,
                    e: self.e,
                    xoff: self.xoff,
                    yoff: self.yoff,
                }),
                FieldType::Geometry,
            )],
            ..MapOp::default()
        })])
    }
}
