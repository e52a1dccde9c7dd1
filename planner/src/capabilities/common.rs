//! What every capability shares: its group and tier, the parameters every step may carry
//! (`input`, `output`, `format`, `on_empty`), and what lowering gets to see.

use serde::{Deserialize, Serialize};

use crate::plan::operator::ExportFormat;
use crate::schema::Schema;

/// The capability groups of the spec.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Group {
    VectorGeometry,
    CrossLayer,
    Attributes,
    Classification,
    Statistics,
    Topology,
    PointCloud,
    RasterNetwork,
    Other,
}

/// The licence tier a capability belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Tier {
    Community,
    Pro,
    Enterprise,
}

/// What to do when a step produces no rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum OnEmpty {
    /// Log a warning and go on (the default).
    Warn,
    /// Fail the run.
    Error,
    /// Go on silently.
    Ignore,
}

/// Parameters every step may carry.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CommonParams {
    /// The step whose output this step reads, or a dataset layer. Default: the previous step
    /// (the run's input for the first step).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input: Option<String>,
    /// Also write this step's output to this path; `{name}` placeholders are replaced by run
    /// variables (`{date}`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<String>,
    /// Format of `output` (default: from its extension).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<ExportFormat>,
    /// What to do when the step produces no rows (default `warn`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on_empty: Option<OnEmpty>,
}

/// What a capability sees when it lowers: its step, where its parameters are in the spec (for
/// error paths), and the schemas of its inputs when known.
#[derive(Debug, Clone, Copy)]
pub struct LowerContext<'a> {
    pub step_id: &'a str,
    /// JSON path of the step's parameters, e.g. `steps[2].params`.
    pub path: &'a str,
    /// Schema of the main input.
    pub input: Option<&'a Schema>,
    /// Schemas of the other inputs, in the order `other_inputs` named them.
    pub others: &'a [Option<&'a Schema>],
    /// The raster datasets the run may read, and where it writes rasters (see
    /// [`Catalog::rasters`]).
    ///
    /// [`Catalog::rasters`]: crate::schema::Catalog::rasters
    pub rasters: Option<&'a crate::schema::RasterCatalog>,
}

impl LowerContext<'_> {
    /// The path of one parameter, for error messages.
    pub fn at(&self, param: &str) -> String {
        format!("{}.{param}", self.path)
    }

    /// The CRS of the main input, when known.
    pub fn crs(&self) -> Option<&str> {
        self.input.and_then(|s| s.crs.as_deref())
    }
}

/// The one operator of a capability that replaces every geometry by `expr` of it.
pub fn replace_geometry(
    expr: crate::plan::operator::GeoExpr,
) -> Vec<crate::plan::operator::Operator> {
    use crate::plan::operator::{MapOp, Operator, ValueExpr};
    use crate::schema::{FieldType, GEOM};
    vec![Operator::Map(MapOp {
        set: vec![(GEOM.to_owned(), ValueExpr::Geo(expr), FieldType::Geometry)],
        ..MapOp::default()
    })]
}
