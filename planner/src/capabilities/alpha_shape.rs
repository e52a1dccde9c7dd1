//! `alpha_shape`: replace every geometry by the alpha shape of its vertices.

use schemars::JsonSchema;
use serde::Deserialize;

use super::{CapabilityParams, CommonParams, Group, LowerContext, replace_geometry};
use crate::error::Problem;
use crate::plan::operator::{GeoExpr, Operator, ShapeExpr};

/// Replace each geometry by the alpha shape of its vertices, as GEOS 3.13+ (`ConcaveHull`'s
/// alpha shape, after JTS) defines it: the Delaunay triangles of the vertices, taken off from
/// the border, largest first, while their circumradius is at least `alpha` and the shape
/// stays one polygon (the regular alpha shape, with no isolated parts). `alpha` is a radius in
/// the data's units (degrees on lon/lat: the computation is planar): a larger alpha gives a
/// fuller shape, one above every triangle's circumradius the convex hull. With
/// `allow_holes`, triangles inside whose circumradius is at least `alpha` are taken off too,
/// leaving holes. 2-D. Fewer than three vertices off one line give the convex hull (a point or
/// a line); an empty geometry an empty polygon; NULL stays NULL. With `shape: triangles`, the
/// shape is instead the union of the faces enclosed by the edges of every Delaunay triangle of
/// circumradius below `alpha`, wherever it lies (GISPulse's alpha shape: isolated parts, the
/// gaps they enclose filled; the convex hull when there are fewer than four vertices or no such
/// triangle). For the alpha shape of a layer of points, gather them first
/// (`singleparts_to_multipart`). No SQL engine has it: it runs natively on every engine.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct AlphaShape {
    /// The radius, in the data's units, above which a border triangle is taken off.
    #[schemars(range(min = 0.0))]
    pub alpha: f64,
    /// Let the shape have holes (default false).
    #[serde(default)]
    pub allow_holes: bool,
    /// `regular` (the default: eroded from the border, one polygon) or `triangles` (the small
    /// triangles wherever they lie).
    #[serde(default)]
    pub shape: AlphaShapeKind,
    #[serde(flatten)]
    pub common: CommonParams,
}

/// Which alpha shape.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum AlphaShapeKind {
    /// GEOS's regular alpha shape: triangles taken off from the border.
    #[default]
    Regular,
    /// The faces the small triangles' edges enclose, unioned.
    Triangles,
}

impl CapabilityParams for AlphaShape {
    const NAME: &'static str = "alpha_shape";
    const GROUP: Group = Group::VectorGeometry;

    fn common(&self) -> &CommonParams {
        &self.common
    }

    fn lower(&self, ctx: &LowerContext<'_>) -> Result<Vec<Operator>, Vec<Problem>> {
        if !(self.alpha.is_finite() && self.alpha >= 0.0) {
            return Err(vec![Problem::new(
                ctx.at("alpha"),
                "must be a number of at least 0",
            )]);
        }
        let shape = match self.shape {
            AlphaShapeKind::Regular => ShapeExpr::AlphaShape {
                alpha: self.alpha,
                holes: self.allow_holes,
            },
            AlphaShapeKind::Triangles if self.allow_holes => {
                return Err(vec![Problem::new(
                    ctx.at("allow_holes"),
                    "applies to shape regular only (the triangles' shape fills its gaps)",
                )]);
            }
            AlphaShapeKind::Triangles => ShapeExpr::SmallTriangles { radius: self.alpha },
        };
        Ok(replace_geometry(GeoExpr::Shape(shape)))
    }
}
