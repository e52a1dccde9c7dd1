//! `force_geometry_type`: make geometry types uniform, all Multi* or single where possible.

use schemars::JsonSchema;
use serde::Deserialize;

use super::{CapabilityParams, CommonParams, Group, LowerContext};
use crate::error::Problem;
use crate::expr::SqlExpr;
use crate::plan::operator::{Family, GeoExpr, MapOp, Operator, ReshapeOp, ValueExpr};
use crate::plan::relational::ExplodeKind;
use crate::schema::{FieldType, GEOM};

/// Single or multi-part geometries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum GeometryForm {
    /// Every Point, LineString and Polygon becomes a MultiPoint, MultiLineString or
    /// MultiPolygon of one part.
    Multi,
    /// Every Multi* of exactly one part becomes that part.
    Single,
}

/// Make the geometry types of a layer uniform, e.g. for formats that hold one type per layer.
/// With `type` `multi`, every Point, LineString and Polygon becomes a MultiPoint,
/// MultiLineString or MultiPolygon of one part (an empty one an empty 2-D Multi* of its type);
/// Multi* and geometry collections are left as they are. With `single`, every MultiPoint,
/// MultiLineString or MultiPolygon of exactly one part becomes that part; Multi* of several
/// parts or of none (empty), single geometries and geometry collections (even of one part) are
/// left as they are; `parts` takes a Multi* of several parts apart too (`explode`: one feature
/// per part, its attributes repeated; `first`: its first part). With a `family`, `others` says
/// what becomes of the geometries of another family (NULL and empty ones are of every family):
/// kept (and converted), their features dropped (with the NULL and empty ones), or the step
/// fails naming the type. Z and M values are kept; attributes are unchanged. NULL stays NULL.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct ForceGeometryType {
    /// `multi` or `single`.
    #[serde(rename = "type")]
    pub form: GeometryForm,
    /// With `type: single`, what becomes of a Multi* of several parts (default `keep`).
    #[serde(default)]
    pub parts: ManyParts,
    /// The geometry family the layer should hold (`point`, `line` or `polygon`; none by
    /// default: every family is converted).
    #[serde(default)]
    pub family: Option<Family>,
    /// With a `family`, what becomes of geometries of another family (default `keep`).
    #[serde(default)]
    pub others: OtherFamilies,
    #[serde(flatten)]
    pub common: CommonParams,
}

/// What `type: single` does with a Multi* of several parts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ManyParts {
    /// Leave it as it is.
    #[default]
    Keep,
    /// One feature per part, the attributes repeated (an empty geometry becomes NULL).
    Explode,
    /// Its first part.
    First,
}

/// What a `family` does with geometries of another.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum OtherFamilies {
    /// Keep them, converted like the others.
    #[default]
    Keep,
    /// Drop their features, and those with NULL or empty geometries.
    Drop,
    /// Fail the step, naming the first one's type.
    Error,
}

impl CapabilityParams for ForceGeometryType {
    const NAME: &'static str = "force_geometry_type";
    const GROUP: Group = Group::VectorGeometry;

    fn common(&self) -> &CommonParams {
        &self.common
    }

    fn lower(&self, ctx: &LowerContext<'_>) -> Result<Vec<Operator>, Vec<Problem>> {
        let mut problems = Vec::new();
        if self.form == GeometryForm::Multi && self.parts != ManyParts::Keep {
            problems.push(Problem::new(
                ctx.at("parts"),
                "only applies to type single",
            ));
        }
        if self.family.is_none() && self.others != OtherFamilies::Keep {
            problems.push(Problem::new(
                ctx.at("others"),
                "needs a family to tell the others from",
            ));
        }
        if !problems.is_empty() {
            return Err(problems);
        }
        let mut operators = Vec::new();
        if let Some(family) = self.family
            && self.others != OtherFamilies::Keep
        {
            let fail = self.others == OtherFamilies::Error;
            operators.push(set_geometry(GeoExpr::OfFamily { family, fail }));
            if !fail {
                operators.push(Operator::Filter {
                    predicate: SqlExpr::parse(&format!(
                        "{GEOM} IS NOT NULL AND NOT ST_IsEmpty({GEOM})"
                    ))
                    .map_err(|e| vec![Problem::new(ctx.at("others"), e)])?,
                });
            }
        }
        match (self.form, self.parts) {
            (GeometryForm::Multi, _) => operators.push(set_geometry(GeoExpr::ForceMulti)),
            (GeometryForm::Single, ManyParts::Explode) => {
                operators.push(Operator::Reshape(ReshapeOp::Explode {
                    kind: ExplodeKind::Parts,
                    index: PART_INDEX.to_owned(),
                    row_index: None,
                }));
                operators.push(Operator::Map(MapOp {
                    drop: vec![PART_INDEX.to_owned()],
                    ..MapOp::default()
                }));
            }
            (GeometryForm::Single, parts) => operators.push(set_geometry(GeoExpr::ForceSingle {
                first_part: parts == ManyParts::First,
            })),
        }
        Ok(operators)
    }
}

/// The column numbering exploded parts for a moment.
const PART_INDEX: &str = "__geomill_part";

/// A map setting the geometry to `function` of it.
fn set_geometry(function: GeoExpr) -> Operator {
    Operator::Map(MapOp {
        set: vec![(
            GEOM.to_owned(),
            ValueExpr::Geo(function),
            FieldType::Geometry,
        )],
        ..MapOp::default()
    })
}
