//! `assign_projection`: declare the CRS of a layer without transforming it.

use schemars::JsonSchema;
use serde::Deserialize;

use super::reproject::check_crs;
use super::{CapabilityParams, CommonParams, Group, LowerContext, replace_geometry};
use crate::error::Problem;
use crate::plan::operator::{GeoExpr, Operator};

/// Declare the coordinate reference system of the data, `EPSG:<code>`, without changing any
/// coordinate: for a layer whose CRS is missing or wrong (a Shapefile without its `.prj`,
/// coordinates in a national grid declared WGS 84). Later steps and the written files use
/// the new CRS. To convert coordinates from one CRS to another, use `reproject`. NULL and
/// empty geometries are unchanged; so are attributes.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct AssignProjection {
    /// The CRS to declare, `EPSG:<code>` (e.g. `EPSG:2263`).
    #[schemars(length(min = 1))]
    pub crs: String,
    #[serde(flatten)]
    pub common: CommonParams,
}

impl CapabilityParams for AssignProjection {
    const NAME: &'static str = "assign_projection";
    const GROUP: Group = Group::VectorGeometry;

    fn common(&self) -> &CommonParams {
        &self.common
    }

    fn lower(&self, ctx: &LowerContext<'_>) -> Result<Vec<Operator>, Vec<Problem>> {
        check_crs(&self.crs, ctx, "crs").map_err(|problem| vec![problem])?;
        Ok(replace_geometry(GeoExpr::SetCrs {
            crs: self.crs.clone(),
        }))
    }
}
