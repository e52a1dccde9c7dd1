//! `continuous_ramp`: a colour per feature, interpolated along a scheme by a numeric field.

use schemars::JsonSchema;
use serde::Deserialize;

use super::classify::{known_scheme, numeric_field};
use super::{CapabilityParams, CommonParams, Group, LowerContext};
use crate::error::Problem;
use crate::plan::operator::{
    Operator, RampColors, RampPosition, RampScale, ScaleKind, ScaleOp,
};

/// The scale values are positioned on.
#[derive(Debug, Clone, Copy, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Scaling {
    /// The value itself (the default).
    #[default]
    Linear,
    /// Its natural logarithm: values, or a lower end, of 0 or less get no colour (NULL).
    Log,
    /// Its square root: negative values, or a negative lower end, get no colour (NULL).
    Sqrt,
}

/// Colour each feature by the numeric field `field` on a continuous ramp: the value's position
/// between the ends of `domain` (default: the layer's minimum and maximum), `t = (x − min) /
/// (max − min)` (of their logarithms or square roots with `scale`), clamped to 0..1, picks the
/// colour along `palette` (default `viridis`) — on matplotlib's ramps the step `floor(t · 256)`
/// of 256 as matplotlib picks it; on a ColorBrewer scheme a colour interpolated in RGB between
/// the stops of its largest set — or along the colours `stops` (the first at 0, the last at 1,
/// each channel interpolated linearly and rounded half to even, as GISPulse does). When the
/// domain's ends are equal every value sits at `equal_position` (default 0). Writes `#rrggbb`
/// into `output` (default `color`); NULL for a NULL or NaN value, and on a `log`/`sqrt` scale
/// for a value it cannot take. `reverse` runs a named scheme from its other end. Runs on the
/// native backend whatever the engine.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct ContinuousRamp {
    /// The numeric field.
    #[schemars(length(min = 1))]
    pub field: String,
    /// The colour scheme (default `viridis`; not with `stops`).
    #[serde(default)]
    pub palette: Option<String>,
    /// The ramp's colours instead of a scheme (`#rrggbb` or `#rgb`, at least 2).
    #[serde(default)]
    pub stops: Option<Vec<String>>,
    /// Run the scheme from its other end.
    #[serde(default)]
    pub reverse: bool,
    /// The values at the ramp's ends (`[low, high]`); values past them take the end colours.
    /// Default: the layer's minimum and maximum.
    #[serde(default)]
    pub domain: Option<[f64; 2]>,
    /// `linear` (default), `log` or `sqrt`.
    #[serde(default)]
    pub scale: Scaling,
    /// The position (0 to 1) of every value when the domain's ends are equal; default 0.
    #[serde(default)]
    pub equal_position: f64,
    /// The colour field (default `color`).
    #[serde(default = "default_output")]
    #[schemars(length(min = 1))]
    pub output: String,
    #[serde(flatten)]
    pub common: CommonParams,
}

/// `#rrggbb` or `#rgb` as `0xRRGGBB`.
pub(super) fn parse_color(text: &str) -> Option<u32> {
    let digits = text.strip_prefix('#')?;
    let full: String = match digits.len() {
        3 => digits.chars().flat_map(|c| [c, c]).collect(),
        6 => digits.to_owned(),
        _ => return None,
    };
    if !full.chars().all(|c| c.is_ascii_hexdigit()) {
        return None;
    }
    u32::from_str_radix(&full, 16).ok()
}

fn default_palette() -> String {
    "viridis".into()
}

fn default_output() -> String {
    "color".into()
}

impl CapabilityParams for ContinuousRamp {
    const NAME: &'static str = "continuous_ramp";
    const GROUP: Group = Group::Classification;

    fn common(&self) -> &CommonParams {
        &self.common
    }

    fn lower(&self, ctx: &LowerContext<'_>) -> Result<Vec<Operator>, Vec<Problem>> {
        numeric_field(ctx, &self.field, "field")?;
        let colors = match (&self.stops, &self.palette) {
            (Some(_), Some(_)) => {
                return Err(vec![Problem::new(
                    ctx.at("stops"),
                    "give either stops or palette, not both",
                )]);
            }
            (Some(stops), None) => {
                let parsed: Option<Vec<u32>> = stops.iter().map(|s| parse_color(s)).collect();
                match parsed {
                    Some(colors) if colors.len() >= 2 => RampColors::Stops(colors),
                    _ => {
                        return Err(vec![Problem::new(
                            ctx.at("stops"),
                            "must be at least 2 colours, each #rrggbb or #rgb",
                        )]);
                    }
                }
            }
            (None, palette) => {
                let name = palette.clone().unwrap_or_else(default_palette);
                known_scheme(ctx, &name, "palette")?;
                RampColors::Scheme {
                    name,
                    reverse: self.reverse,
                }
            }
        };
        if let Some(domain) = self.domain
            && !domain.iter().all(|v| v.is_finite())
        {
            return Err(vec![Problem::new(ctx.at("domain"), "must be two finite numbers")]);
        }
        if !(0.0..=1.0).contains(&self.equal_position) {
            return Err(vec![Problem::new(
                ctx.at("equal_position"),
                "must be between 0 and 1",
            )]);
        }
        Ok(vec![Operator::owned(ScaleOp {
            field: self.field.clone(),
            kind: ScaleKind::ColorRamp {
                colors,
                position: RampPosition {
                    domain: self.domain,
                    scale: match self.scale {
                        Scaling::Linear => RampScale::Linear,
                        Scaling::Log => RampScale::Log,
                        Scaling::Sqrt => RampScale::Sqrt,
                    },
                    equal: self.equal_position,
                },
            },
            output: self.output.clone(),
        })])
    }
}

#[cfg(test)]
mod tests {
    use super::parse_color;

    #[test]
    fn colours_parse_in_both_forms() {
        assert_eq!(parse_color("#ff8000"), Some(0xff8000));
        assert_eq!(parse_color("#f80"), Some(0xff8800));
        assert_eq!(parse_color("ff8000"), None);
        assert_eq!(parse_color("#ff80"), None);
        assert_eq!(parse_color("#gg0000"), None);
        assert_eq!(parse_color("#+12345"), None);
    }
}
