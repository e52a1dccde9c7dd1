//! The spatial weights parameters `spatial_weights`, `morans_i` and `getis_ord_g` share, and
//! their lowering to a [`WeightsSpec`].

use schemars::JsonSchema;
use serde::Deserialize;

use super::LowerContext;
use super::checks::{DistanceUnit, measures_geodesic, resolve_distance};
use crate::error::Problem;
use crate::plan::operator::{WeightsKind, WeightsSpec, WeightsTransform};

/// How neighbours are found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum WeightsMethod {
    /// Polygons sharing at least one vertex (PySAL's `Queen`).
    #[default]
    Queen,
    /// Polygons sharing at least one edge (PySAL's `Rook`).
    Rook,
    /// The `k` nearest features by their points (PySAL's `KNN`).
    Knn,
    /// Features whose points lie within `distance` (PySAL's `DistanceBand`, binary).
    DistanceBand,
    /// Features within `distance`, weighted `1 / d^power` (PySAL's `DistanceBand` with
    /// `binary=False`, `alpha = −power`).
    InverseDistance,
}

/// How weights are scaled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TransformParam {
    /// As built: 1 per neighbour, or the inverse distance.
    Original,
    /// Each feature's weights divided by their sum (PySAL's `r`).
    Row,
    /// 1 per neighbour (PySAL's `b`).
    Binary,
}

impl From<TransformParam> for WeightsTransform {
    fn from(value: TransformParam) -> Self {
        match value {
            TransformParam::Original => Self::Original,
            TransformParam::Row => Self::Row,
            TransformParam::Binary => Self::Binary,
        }
    }
}

/// Which features neighbour which. Points stand for features by themselves, lines and
/// polygons by their centroids (k-nearest and distance methods); contiguity needs polygons.
/// Features with no neighbour (islands) stay, with no weights. Distances are in metres by
/// default: great-circle distances on a sphere of the Earth's mean radius on longitude/latitude
/// data, converted to the CRS's units on projected data; unit `crs` takes the layer's units.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct WeightsParams {
    /// How neighbours are found (default `queen`).
    #[serde(default)]
    pub method: WeightsMethod,
    /// Neighbours per feature, for `knn` (default 8).
    #[serde(default = "default_k")]
    #[schemars(range(min = 1, max = 1000))]
    pub k: u32,
    /// The distance band, for `distance_band` and `inverse_distance`.
    #[serde(default)]
    pub distance: Option<f64>,
    /// Unit of `distance` (default metres).
    #[serde(default)]
    pub unit: DistanceUnit,
    /// The exponent of `inverse_distance` (default 1).
    #[serde(default = "default_power")]
    pub power: f64,
}

fn default_k() -> u32 {
    8
}

fn default_power() -> f64 {
    1.0
}

impl WeightsParams {
    /// The weights, scaled by `transform`.
    pub fn lower(
        &self,
        transform: WeightsTransform,
        ctx: &LowerContext<'_>,
    ) -> Result<WeightsSpec, Vec<Problem>> {
        let band = |power: Option<f64>| -> Result<WeightsKind, Vec<Problem>> {
            let Some(distance) = self.distance else {
                return Err(vec![Problem::new(
                    ctx.at("distance"),
                    "is required by methods distance_band and inverse_distance",
                )]);
            };
            if !(distance.is_finite() && distance > 0.0) {
                return Err(vec![Problem::new(
                    ctx.at("distance"),
                    "must be a number above 0",
                )]);
            }
            let resolved = resolve_distance(distance, self.unit, ctx, "distance")?;
            Ok(WeightsKind::Band {
                distance: resolved.value,
                power,
                geodesic: resolved.geodesic,
            })
        };
        let kind = match self.method {
            WeightsMethod::Queen => WeightsKind::Queen,
            WeightsMethod::Rook => WeightsKind::Rook,
            WeightsMethod::Knn => {
                if self.k == 0 {
                    return Err(vec![Problem::new(ctx.at("k"), "must be at least 1")]);
                }
                WeightsKind::Knn {
                    k: self.k,
                    geodesic: measures_geodesic(ctx),
                }
            }
            WeightsMethod::DistanceBand => band(None)?,
            WeightsMethod::InverseDistance => {
                if !(self.power.is_finite() && self.power > 0.0) {
                    return Err(vec![Problem::new(
                        ctx.at("power"),
                        "must be a number above 0",
                    )]);
                }
                band(Some(self.power))?
            }
        };
        Ok(WeightsSpec { kind, transform })
    }
}
