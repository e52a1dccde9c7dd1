//! `simplify`: reduce the number of vertices of every geometry.

use schemars::JsonSchema;
use serde::Deserialize;

use super::checks::{DistanceUnit, resolve_distance};
use super::{CapabilityParams, CommonParams, Group, LowerContext};
use crate::error::Problem;
use crate::plan::operator::{GeoExpr, MapOp, Operator, ValueExpr};
use crate::schema::{FieldType, GEOM};

/// Metres in one degree of latitude (and of longitude at the equator), for the approximate
/// conversion of metric tolerances on lon/lat data.
const METRES_PER_DEGREE: f64 = 111_320.0;

/// Simplify each geometry with the Douglas-Peucker algorithm: vertices closer than `tolerance`
/// to the simplified line are removed. `unit` defaults to the units of the data's CRS (`crs`).
/// On projected data, metric units (`meters`, `kilometers`, `feet`, `miles`) are converted to
/// the CRS's units; on geographic (lon/lat) data, or data whose CRS is unknown, the algorithm
/// works in degrees and a metric tolerance is converted approximately at 111 320 m per degree
/// (exact along meridians and at the equator, generous in longitude elsewhere). With
/// `preserve_topology` (the default) polygons stay valid and are never collapsed; without it
/// simplification is faster but can produce invalid or empty geometries.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct Simplify {
    /// Greatest distance a removed vertex may lie from the simplified geometry; must be > 0.
    #[schemars(range(min = 0.0))]
    pub tolerance: f64,
    /// Unit of `tolerance` (default: the CRS's units).
    #[serde(default = "default_unit")]
    pub unit: DistanceUnit,
    /// Keep polygons valid and rings from collapsing (default true).
    #[serde(default = "default_preserve_topology")]
    pub preserve_topology: bool,
    /// Compute in this projected CRS (`"EPSG:3857"`, or `"auto"`: GISPulse v2's choice):
    /// the geometry is transformed to it, the step runs in its units (the distance's unit then
    /// converts to them), and the result is transformed back. Default: true metres on lon/lat
    /// data.
    #[serde(default)]
    pub work_crs: Option<String>,
    #[serde(flatten)]
    pub common: CommonParams,
}

fn default_unit() -> DistanceUnit {
    DistanceUnit::Crs
}

fn default_preserve_topology() -> bool {
    true
}

impl CapabilityParams for Simplify {
    const NAME: &'static str = "simplify";
    const GROUP: Group = Group::VectorGeometry;

    fn common(&self) -> &CommonParams {
        &self.common
    }

    fn lower(&self, ctx: &LowerContext<'_>) -> Result<Vec<Operator>, Vec<Problem>> {
        super::work_crs::within(self.work_crs.as_deref(), super::work_crs::Output::Geometry, ctx, |ctx| {
        if !(self.tolerance.is_finite() && self.tolerance > 0.0) {
            return Err(vec![Problem::new(
                ctx.at("tolerance"),
                format!("must be a number greater than 0, got {}", self.tolerance),
            )]);
        }
        let resolved = resolve_distance(self.tolerance, self.unit, ctx, "tolerance")?;
        let tolerance = if resolved.geodesic {
            resolved.value / METRES_PER_DEGREE
        } else {
            resolved.value
        };
        let value = ValueExpr::Geo(GeoExpr::Simplify {
            tolerance,
            preserve_topology: self.preserve_topology,
        });
        Ok(vec![Operator::Map(MapOp {
            set: vec![(GEOM.to_owned(), value, FieldType::Geometry)],
            ..MapOp::default()
        })])
        })
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::schema::Schema;

    fn tolerance(params: serde_json::Value, crs: &str) -> Result<(f64, bool), Vec<Problem>> {
        let params: Simplify = serde_json::from_value(params).unwrap();
        let schema = Schema {
            columns: Vec::new(),
            crs: Some(crs.into()),
        };
        let ctx = LowerContext {
            step_id: "s",
            path: "p",
            input: Some(&schema),
            others: &[],
            rasters: None,
        };
        let ops = params.lower(&ctx)?;
        let [Operator::Map(map)] = ops.as_slice() else {
            panic!("{ops:?}")
        };
        let [
            (
                _,
                ValueExpr::Geo(GeoExpr::Simplify {
                    tolerance,
                    preserve_topology,
                }),
                _,
            ),
        ] = map.set.as_slice()
        else {
            panic!("{map:?}")
        };
        Ok((*tolerance, *preserve_topology))
    }

    #[test]
    fn tolerance_units() {
        assert_eq!(
            tolerance(json!({"tolerance": 0.01}), "EPSG:4326").unwrap(),
            (0.01, true)
        );
        let (degrees, _) =
            tolerance(json!({"tolerance": 1113.2, "unit": "meters"}), "EPSG:4326").unwrap();
        assert!((degrees - 0.01).abs() < 1e-12);
        assert_eq!(
            tolerance(
                json!({"tolerance": 2, "unit": "kilometers", "preserve_topology": false}),
                "EPSG:3857"
            )
            .unwrap(),
            (2000.0, false)
        );
        assert!(tolerance(json!({"tolerance": 0}), "EPSG:4326").is_err());
    }
}
