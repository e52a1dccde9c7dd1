//! Named colour schemes for classes and ramps: the ColorBrewer 2.0 schemes (Cynthia Brewer,
//! Mark Harrower and The Pennsylvania State University; Apache License 2.0), each as its sets of
//! 3 to 9 (up to 12) colours, and matplotlib's perceptually uniform ramps (viridis, magma,
//! inferno, plasma; CC0) as 256 steps. Colours are `0xRRGGBB`.

mod diverging;
pub mod gispulse;
mod qualitative;
mod ramps;
mod sequential;

use ramps::RAMPS;

/// ColorBrewer's schemes with their kind: name, kind, and the sets of 3, 4, ... colours.
fn brewer() -> impl Iterator<Item = (&'static str, SchemeKind, &'static [&'static [u32]])> {
    let kind = |schemes: &'static [(&'static str, &'static [&'static [u32]])], kind: SchemeKind| {
        schemes.iter().map(move |(name, sets)| (*name, kind, *sets))
    };
    kind(sequential::SEQUENTIAL, SchemeKind::Sequential)
        .chain(kind(diverging::DIVERGING, SchemeKind::Diverging))
        .chain(kind(qualitative::QUALITATIVE, SchemeKind::Qualitative))
}

/// What a scheme is made for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SchemeKind {
    /// Ordered values, light to dark.
    Sequential,
    /// Values around a midpoint.
    Diverging,
    /// Categories without order.
    Qualitative,
    /// A continuous perceptually uniform ramp.
    Ramp,
}

/// Every scheme's name and kind.
pub fn schemes() -> Vec<(&'static str, SchemeKind)> {
    brewer()
        .map(|(name, kind, _)| (name, kind))
        .chain(RAMPS.iter().map(|(name, _)| (*name, SchemeKind::Ramp)))
        .collect()
}

/// `n` colours of the scheme `name` (matched without regard to case), from the low end:
/// ColorBrewer's own set of `n` where it has one, else its largest set interpolated (or its
/// smallest thinned out); for a ramp, matplotlib's sampling of its 256 steps at `n` evenly
/// spaced points. `None` for an unknown name.
pub fn colors(name: &str, n: usize) -> Option<Vec<u32>> {
    if n == 0 {
        return Some(Vec::new());
    }
    if let Some((_, _, sets)) = brewer().find(|(s, _, _)| s.eq_ignore_ascii_case(name)) {
        let smallest = sets.first()?.len();
        if let Some(set) = sets.get(n.wrapping_sub(smallest)) {
            return Some(set.to_vec());
        }
        let stops = if n < smallest {
            sets.first()?
        } else {
            sets.last()?
        };
        return Some(sample(stops, n));
    }
    let (_, steps) = RAMPS.iter().find(|(s, _)| s.eq_ignore_ascii_case(name))?;
    Some(
        (0..n)
            .map(|i| {
                let x = if n == 1 {
                    0.0
                } else {
                    i as f64 / (n - 1) as f64
                };
                // matplotlib: floor(x * 256), the top end in the last step.
                #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
                let step = ((x * 256.0) as usize).min(255);
                steps[step]
            })
            .collect(),
    )
}

/// The colour at `t` (0 to 1, clamped) along the scheme `name`: on a ramp, the step
/// `floor(t · 256)` of 256 as matplotlib picks it; on a ColorBrewer scheme, interpolated in RGB
/// between the stops of its largest set. `None` for an unknown name.
pub fn at(name: &str, t: f64) -> Option<u32> {
    let t = if t.is_nan() { 0.0 } else { t.clamp(0.0, 1.0) };
    if let Some((_, steps)) = RAMPS.iter().find(|(s, _)| s.eq_ignore_ascii_case(name)) {
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let step = ((t * 256.0) as usize).min(255);
        return Some(steps[step]);
    }
    let (_, _, sets) = brewer().find(|(s, _, _)| s.eq_ignore_ascii_case(name))?;
    let stops = sets.last()?;
    Some(blend(stops, t * (stops.len() - 1) as f64))
}

/// The colour at position `x` (in stops) along `stops`, interpolated in RGB.
fn blend(stops: &[u32], x: f64) -> u32 {
    let channel = |c: u32, shift: u32| f64::from((c >> shift) & 0xff);
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let below = (x.floor().max(0.0) as usize).min(stops.len() - 1);
    let above = (below + 1).min(stops.len() - 1);
    let t = x - below as f64;
    [16, 8, 0].iter().fold(0, |color, &shift| {
        let (a, b) = (channel(stops[below], shift), channel(stops[above], shift));
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let value = (a + (b - a) * t).round() as u32;
        color | (value.min(255) << shift)
    })
}

/// The channels of `a` and `b` multiplied (`a · b / 255`, rounded): the two colours laid one
/// over the other, as a bivariate map blends its two schemes.
pub fn multiply(a: u32, b: u32) -> u32 {
    [16, 8, 0].iter().fold(0, |color, &shift| {
        let (x, y) = ((a >> shift) & 0xff, (b >> shift) & 0xff);
        color | (((x * y + 127) / 255) << shift)
    })
}

/// `n` colours evenly spaced along `stops`, interpolated in RGB.
fn sample(stops: &[u32], n: usize) -> Vec<u32> {
    (0..n)
        .map(|i| {
            let x = if n == 1 {
                0.0
            } else {
                i as f64 * (stops.len() - 1) as f64 / (n - 1) as f64
            };
            blend(stops, x)
        })
        .collect()
}

/// A colour as CSS hex text (`#rrggbb`).
pub fn hex(color: u32) -> String {
    format!("#{color:06x}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn brewer_sets_and_ramps() {
        assert_eq!(colors("YlOrRd", 3).unwrap(), [0xffeda0, 0xfeb24c, 0xf03b20]);
        assert_eq!(colors("blues", 9).unwrap().len(), 9);
        let twelve = colors("Blues", 12).unwrap();
        assert_eq!(twelve.len(), 12);
        assert_eq!(twelve[0], 0xf7fbff);
        assert_eq!(twelve[11], 0x08306b);
        assert_eq!(colors("Blues", 2).unwrap(), [0xdeebf7, 0x3182bd]);
        assert_eq!(colors("viridis", 2).unwrap(), [0x440154, 0xfde725]);
        assert_eq!(hex(0x0a0b0c), "#0a0b0c");
        assert_eq!(at("viridis", 1.0), Some(0xfde725));
        assert_eq!(at("Blues", 0.0), Some(0xf7fbff));
        assert_eq!(multiply(0xffffff, 0x336699), 0x336699);
        assert!(colors("nope", 3).is_none());
        assert!(
            schemes()
                .iter()
                .any(|(n, k)| *n == "RdBu" && *k == SchemeKind::Diverging)
        );
    }
}
