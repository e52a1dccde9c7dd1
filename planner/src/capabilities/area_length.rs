//! `area_length`: measure each geometry's area and length in real units.

use schemars::JsonSchema;
use serde::Deserialize;

use super::{CapabilityParams, CommonParams, Group, LowerContext};
use crate::error::Problem;
use crate::plan::operator::{GeoExpr, MapOp, Operator, ValueExpr};
use crate::schema::{CrsUnits, FieldType, crs_units};

/// Add the area (`field_area`, in `unit`) and/or the length (`field_length`, in `length_unit`;
/// the perimeter for polygons) of each geometry. On geographic data both are measured on the
/// WGS 84 spheroid; on projected data in the CRS, converted to the unit asked for. With neither
/// field named, the area goes to `area`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct AreaLength {
    /// Field for the area.
    #[serde(default)]
    pub field_area: Option<String>,
    /// Field for the length (perimeter for polygons).
    #[serde(default)]
    pub field_length: Option<String>,
    /// Area unit.
    #[serde(default)]
    pub unit: AreaUnit,
    /// Length unit.
    #[serde(default)]
    pub length_unit: LengthUnit,
    /// Compute in this projected CRS (`"EPSG:3857"`, or `"auto"`: GISPulse v2's choice):
    /// the geometry is transformed to it, the step runs in its units (the distance's unit then
    /// converts to them), and the result is transformed back. Default: true metres on lon/lat
    /// data.
    #[serde(default)]
    pub work_crs: Option<String>,
    #[serde(flatten)]
    pub common: CommonParams,
}

#[derive(Debug, Clone, Copy, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum AreaUnit {
    #[default]
    M2,
    Km2,
    Ha,
    Ft2,
    /// Square units of the data's CRS, planar (square degrees on lon/lat data).
    Crs,
}

#[derive(Debug, Clone, Copy, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum LengthUnit {
    #[default]
    M,
    Km,
    Ft,
    Mi,
    /// Units of the data's CRS, planar (degrees on lon/lat data).
    Crs,
}

impl AreaUnit {
    /// Square metres per unit; `None` for the CRS's own units.
    fn square_metres(self) -> Option<f64> {
        Some(match self {
            Self::M2 => 1.0,
            Self::Km2 => 1e6,
            Self::Ha => 1e4,
            Self::Ft2 => 0.3048 * 0.3048,
            Self::Crs => return None,
        })
    }
}

impl LengthUnit {
    /// Metres per unit; `None` for the CRS's own units.
    fn metres(self) -> Option<f64> {
        Some(match self {
            Self::M => 1.0,
            Self::Km => 1000.0,
            Self::Ft => 0.3048,
            Self::Mi => 1609.344,
            Self::Crs => return None,
        })
    }
}

impl CapabilityParams for AreaLength {
    const NAME: &'static str = "area_length";
    const GROUP: Group = Group::Attributes;

    fn common(&self) -> &CommonParams {
        &self.common
    }

    fn lower(&self, ctx: &LowerContext<'_>) -> Result<Vec<Operator>, Vec<Problem>> {
        super::work_crs::within(self.work_crs.as_deref(), super::work_crs::Output::Measures, ctx, |ctx| {
        // Metres per CRS unit; geodesic when the data is lon/lat (or its CRS unknown).
        let in_crs_units = matches!(self.unit, AreaUnit::Crs)
            && (self.field_length.is_none() || matches!(self.length_unit, LengthUnit::Crs));
        let (geodesic, metres_per_unit) = match ctx.crs().map(|crs| (crs, crs_units(crs))) {
            _ if in_crs_units => (false, 1.0),
            Some((_, Some(CrsUnits::Linear { metres_per_unit }))) => (false, metres_per_unit),
            Some((crs, None)) => {
                return Err(vec![Problem::new(
                    ctx.path,
                    format!("the units of {crs} are not known to geomill; reproject first"),
                )]);
            }
            Some((_, Some(CrsUnits::Degrees))) | None => (true, 1.0),
        };
        let field_area = match (&self.field_area, &self.field_length) {
            (None, None) => Some("area".to_owned()),
            (area, _) => area.clone(),
        };
        let mut set = Vec::new();
        if let Some(name) = field_area {
            let (geodesic, factor) = match self.unit.square_metres() {
                Some(unit) => (geodesic, metres_per_unit * metres_per_unit / unit),
                None => (false, 1.0),
            };
            set.push((
                name,
                ValueExpr::Geo(GeoExpr::Area { geodesic, factor }),
                FieldType::Double,
            ));
        }
        if let Some(name) = &self.field_length {
            let (geodesic, factor) = match self.length_unit.metres() {
                Some(unit) => (geodesic, metres_per_unit / unit),
                None => (false, 1.0),
            };
            set.push((
                name.clone(),
                ValueExpr::Geo(GeoExpr::Length { geodesic, factor }),
                FieldType::Double,
            ));
        }
        Ok(vec![Operator::Map(MapOp {
            set,
            ..MapOp::default()
        })])
        })
    }
}
