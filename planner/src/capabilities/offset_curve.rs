//! `offset_curve`: a line parallel to every line, at a distance to one side.

use schemars::JsonSchema;
use serde::Deserialize;

use super::checks::{DistanceUnit, resolve_distance};
use super::{CapabilityParams, CommonParams, Group, LowerContext, replace_geometry};
use crate::error::Problem;
use crate::plan::operator::{GeoExpr, OffsetJoin, Operator, ShapeExpr};

/// Which side of the line the offset curve lies on, walking from its start.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Side {
    Left,
    Right,
}

/// How corners of the offset curve are joined.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Join {
    /// Rounded, with `segments` vertices a quarter circle.
    Round,
    /// Sharp, cut at `mitre_limit` times the distance.
    Mitre,
    /// Cut straight across.
    Bevel,
}

/// Replace each line by its offset curve (GEOS `OffsetCurve`, PostGIS's `ST_OffsetCurve`): the
/// line parallel to it at `distance` on `side` (left by default, looking along the line from
/// its start). A MultiLineString gives the offset of each part. `distance` is in the data's
/// coordinates (`unit: crs`, the default) or in metres, feet, ... on projected data; on
/// geographic (lon/lat) data metric distances are refused (an offset in metres there needs a
/// projection: `reproject` first). Points, polygons and collections give NULL (offset a
/// polygon's outline with `boundary` first, or grow it with `buffer`). The result is 2-D.
/// NULL stays NULL; an empty line gives NULL. Attributes are unchanged. Every engine computes
/// it natively as GEOS 3.12 and later (and Shapely 2) do: the stretches of the line's buffer
/// boundary on that side, so that no vertex lies closer to the line than `distance`; where a
/// tight bend cuts the curve, the stretches form a MultiLineString in order along the line.
/// The offset of a closed line may differ from GEOS's at its closing vertex; grow or shrink
/// closed shapes with `buffer` instead.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct OffsetCurve {
    /// How far from the line; must be > 0.
    #[schemars(range(min = 0.0))]
    pub distance: f64,
    /// Unit of `distance` (default: the CRS's units).
    #[serde(default = "default_unit")]
    pub unit: DistanceUnit,
    /// Side of the line (default `left`).
    #[serde(default = "default_side")]
    pub side: Side,
    /// How corners are joined (default `round`).
    #[serde(default = "default_join")]
    pub join: Join,
    /// Vertices a quarter circle of a round join (1 to 100, default 8).
    #[serde(default = "default_segments")]
    #[schemars(range(min = 1, max = 100))]
    pub segments: u32,
    /// Longest mitre, as a multiple of `distance` (0 to 100, default 5).
    #[serde(default = "default_mitre_limit")]
    #[schemars(range(min = 0.0, max = 100.0))]
    pub mitre_limit: f64,
    /// Offset in this projected CRS (`"EPSG:3857"`, or `"auto"`: GISPulse v2's choice): the
    /// line is transformed to it, offset there (`distance` in its units), and transformed
    /// back. Default: none (the data's own CRS).
    #[serde(default)]
    pub work_crs: Option<String>,
    #[serde(flatten)]
    pub common: CommonParams,
}

fn default_unit() -> DistanceUnit {
    DistanceUnit::Crs
}
fn default_side() -> Side {
    Side::Left
}
fn default_join() -> Join {
    Join::Round
}
fn default_segments() -> u32 {
    8
}
/// The longest mitre: the kernel looks this many distances around each piece of the curve.
const MAX_MITRE_LIMIT: f64 = 100.0;

fn default_mitre_limit() -> f64 {
    5.0
}

impl CapabilityParams for OffsetCurve {
    const NAME: &'static str = "offset_curve";
    const GROUP: Group = Group::VectorGeometry;

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

impl OffsetCurve {
    /// The offset in the input's CRS (the work CRS's, within one).
    fn lower_here(&self, ctx: &LowerContext<'_>) -> Result<Vec<Operator>, Vec<Problem>> {
        let mut problems = Vec::new();
        if !(self.distance.is_finite() && self.distance > 0.0) {
            problems.push(Problem::new(
                ctx.at("distance"),
                format!("must be a number greater than 0, got {}", self.distance),
            ));
        }
        if !(1..=100).contains(&self.segments) {
            problems.push(Problem::new(
                ctx.at("segments"),
                format!("must be from 1 to 100, got {}", self.segments),
            ));
        }
        if !(0.0..=MAX_MITRE_LIMIT).contains(&self.mitre_limit) {
            problems.push(Problem::new(
                ctx.at("mitre_limit"),
                format!(
                    "must be a number from 0 to {MAX_MITRE_LIMIT}, got {}",
                    self.mitre_limit
                ),
            ));
        }
        if !problems.is_empty() {
            return Err(problems);
        }
        let resolved = resolve_distance(self.distance, self.unit, ctx, "distance")?;
        if resolved.geodesic {
            return Err(vec![Problem::new(
                ctx.at("unit"),
                "an offset in metres needs projected data: the input is geographic (lon/lat) or its CRS is unknown; reproject it first, or give the distance in degrees with unit \"degrees\"",
            )]);
        }
        let distance = match self.side {
            Side::Left => resolved.value,
            Side::Right => -resolved.value,
        };
        let join = match self.join {
            Join::Round => OffsetJoin::Round,
            Join::Mitre => OffsetJoin::Mitre,
            Join::Bevel => OffsetJoin::Bevel,
        };
        Ok(replace_geometry(GeoExpr::Shape(ShapeExpr::OffsetCurve {
            distance,
            join,
            segments: self.segments,
            mitre_limit: self.mitre_limit,
        })))
    }
}
