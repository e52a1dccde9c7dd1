//! GISPulse's palettes, resolved as GISPulse resolves them: a ColorBrewer name gives the set
//! GISPulse keeps for that count (its sets of 3, 5, 7 and 9 colours — 8 for Set2, Dark2 and
//! Accent, 12 too for Set3 — which are ColorBrewer's own), any other count its largest set
//! resampled in RGB, each channel rounded half to even; and a colour along a list of stops as
//! GISPulse's continuous ramp interpolates it. GISPulse's own tables (Viridis, Plasma, Magma,
//! Inferno and Cividis at 3/5/7/9, its Urban* palettes) are not matplotlib's ramps and are not
//! known here.

/// The set sizes GISPulse keeps of each ColorBrewer scheme it knows.
const KEPT: &[(&str, &[usize])] = &[
    ("Blues", &[3, 5, 7, 9]),
    ("Greens", &[3, 5, 7, 9]),
    ("Oranges", &[3, 5, 7, 9]),
    ("Reds", &[3, 5, 7, 9]),
    ("Purples", &[3, 5, 7, 9]),
    ("Greys", &[3, 5, 7, 9]),
    ("YlOrRd", &[3, 5, 7, 9]),
    ("YlOrBr", &[3, 5, 7, 9]),
    ("YlGnBu", &[3, 5, 7, 9]),
    ("YlGn", &[3, 5, 7, 9]),
    ("BuPu", &[3, 5, 7, 9]),
    ("PuRd", &[3, 5, 7, 9]),
    ("RdBu", &[3, 5, 7, 9]),
    ("RdYlGn", &[3, 5, 7, 9]),
    ("RdYlBu", &[3, 5, 7, 9]),
    ("BrBG", &[3, 5, 7, 9]),
    ("PiYG", &[3, 5, 7, 9]),
    ("PuOr", &[3, 5, 7, 9]),
    ("Spectral", &[3, 5, 7, 9]),
    ("Set1", &[3, 5, 7, 9]),
    ("Set2", &[3, 5, 7, 8]),
    ("Set3", &[3, 5, 7, 9, 12]),
    ("Pastel1", &[3, 5, 7, 9]),
    ("Dark2", &[3, 5, 7, 8]),
    ("Accent", &[3, 5, 7, 8]),
];

/// GISPulse's names whose colours are its own tables.
const OWN_TABLES: &[&str] = &[
    "Viridis",
    "Plasma",
    "Magma",
    "Inferno",
    "Cividis",
    "UrbanRose",
    "UrbanSage",
    "UrbanTerracotta",
    "UrbanAtlas",
    "UrbanPaper",
];

/// `n` colours of GISPulse's palette `name` (matched without regard to case), or why not.
pub fn colors(name: &str, n: usize) -> Result<Vec<u32>, String> {
    if n < 2 {
        return Err(format!(
            "a palette of {n} colours: GISPulse needs at least 2"
        ));
    }
    let Some((known, sizes)) = KEPT.iter().find(|(s, _)| s.eq_ignore_ascii_case(name)) else {
        return Err(if OWN_TABLES.iter().any(|s| s.eq_ignore_ascii_case(name)) {
            format!(
                "GISPulse's {name} is its own colour table, not known here: give the colours as a list, or a ColorBrewer name"
            )
        } else {
            format!("unknown palette {name:?}")
        });
    };
    let set = |size: usize| {
        super::colors(known, size).ok_or_else(|| format!("{known} has no set of {size}"))
    };
    if sizes.contains(&n) {
        return set(n);
    }
    let largest = sizes.iter().copied().max().unwrap_or(3);
    Ok(resample(&set(largest)?, n))
}

/// `n` colours evenly along `stops` as GISPulse resamples a palette (`n` ≥ 2).
fn resample(stops: &[u32], n: usize) -> Vec<u32> {
    if n == stops.len() {
        return stops.to_vec();
    }
    (0..n)
        .map(|i| {
            let pos = i as f64 / (n - 1) as f64 * (stops.len() - 1) as f64;
            between(stops, pos)
        })
        .collect()
}

/// The colour at `pos` (in stops) along `stops`: the stop itself at a whole position (and past
/// the last one), else each channel interpolated and rounded half to even.
fn between(stops: &[u32], pos: f64) -> u32 {
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let lo = pos.max(0.0) as usize;
    let frac = pos - lo as f64;
    if lo >= stops.len() - 1 {
        return stops[stops.len() - 1];
    }
    if frac == 0.0 {
        return stops[lo];
    }
    let channel = |c: u32, shift: u32| f64::from((c >> shift) & 0xff);
    [16, 8, 0].iter().fold(0, |color, &shift| {
        let (a, b) = (channel(stops[lo], shift), channel(stops[lo + 1], shift));
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let value = (a + (b - a) * frac).round_ties_even() as u32;
        color | (value.min(255) << shift)
    })
}

/// The colour at `t` along `stops` as GISPulse's continuous ramp picks it: the first stop at
/// `t` ≤ 0, the last at `t` ≥ 1, else at position `t · (stops − 1)`. `None` without stops.
pub fn along(stops: &[u32], t: f64) -> Option<u32> {
    let (first, last) = (stops.first()?, stops.last()?);
    Some(if t <= 0.0 {
        *first
    } else if t >= 1.0 {
        *last
    } else {
        between(stops, t * (stops.len() - 1) as f64)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kept_sizes_are_colorbrewer_sets() {
        assert_eq!(
            colors("YlOrRd", 3).unwrap(),
            vec![0xffeda0, 0xfeb24c, 0xf03b20]
        );
        assert_eq!(
            colors("ylorrd", 9).unwrap(),
            super::super::colors("YlOrRd", 9).unwrap()
        );
    }

    #[test]
    fn other_sizes_resample_the_largest_half_to_even() {
        // YlOrRd 9 from #ffffcc to #800026; 2 colours: its ends.
        assert_eq!(colors("YlOrRd", 2).unwrap(), vec![0xffffcc, 0x800026]);
        // 4 colours: positions 0, 8/3, 16/3, 8 of the 9-set.
        let four = colors("YlOrRd", 4).unwrap();
        assert_eq!(four.len(), 4);
        assert_eq!(four[0], 0xffffcc);
        assert_eq!(four[3], 0x800026);
    }

    #[test]
    fn half_channels_round_to_even() {
        // 0 → 5 halfway is 2.5 → 2; 0 → 7 is 3.5 → 4.
        assert_eq!(along(&[0x000000, 0x050705], 0.5), Some(0x020402));
    }

    #[test]
    fn gispulse_tables_are_refused_by_name() {
        assert!(
            colors("Viridis", 5)
                .unwrap_err()
                .contains("own colour table")
        );
        assert!(colors("Nope", 5).unwrap_err().contains("unknown"));
        assert!(colors("Blues", 1).is_err());
    }
}
