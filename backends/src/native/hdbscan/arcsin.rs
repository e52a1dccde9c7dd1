//! NumPy's `np.arcsin` of float64 on x86-64 CPUs with AVX-512: Intel SVML's `__svml_asin8_ha`,
//! evaluated lane by lane with the same fused multiply-adds, and with the `vrsqrt14pd`
//! approximation it starts from.

/// `np.arcsin(x)` as NumPy 2 computes it on AVX-512 x86-64 (SVML's high-accuracy `asin`).
///
/// For `|x| < 0.5` the result is `|x| + |x|·P(x²)` with `P` of degree 12 in `x²`; for
/// `0.5 ≤ |x| ≤ 1` it is `π/2 − 2·asin(√y)` with `y = (1 − |x|)/2`, where `2√y` comes from a
/// 14-bit reciprocal square root refined by a cubic correction and carried as two doubles.
/// The sign of `x` is put back last. Outside `[−1, 1]` (and for NaN) the result is NaN.
pub(super) fn numpy_arcsin(x: f64) -> f64 {
    let a = x.abs();
    if a.is_nan() || a > 1.0 {
        return f64::NAN;
    }
    let sign = x.to_bits() & SIGN_BIT;
    let x2 = a * a;
    let large = a >= 0.5;
    let y = (-a).mul_add(0.5, 0.5);
    let r = if y < TINY { 0.0 } else { rsqrt14(y) };
    // The polynomial's argument: x² below 0.5, y above (the smaller of the two).
    let t = if x2 < y { x2 } else { y };
    let y2 = y + y;
    let r2 = r * r;
    // r·2y ≈ 2√y, held exactly as s + low; with e ≈ 2(r²y − 1) the cubic p(e) gives
    // 2√y ≈ s + low − s·e·p(e) = s − correction.
    let s = y2 * r;
    let e = r2.mul_add(y2, -2.0);
    let low = r.mul_add(y2, -s);
    let mut p = CORRECTION[3].mul_add(e, CORRECTION[2]);
    p = e.mul_add(p, CORRECTION[1]);
    p = e.mul_add(p, CORRECTION[0]);
    let correction = (s * e).mul_add(p, -low);
    let poly = series(t);
    // Above 0.5: π/2 − 2√y·(1 + t·P(t)), with π/2 − s split into head_pi and what its
    // rounding lost.
    let head_pi = PI_2_HI - s;
    let (base, tail) = if large {
        let lost = s - (PI_2_HI - head_pi);
        (correction - s, (PI_2_LO + correction) - lost)
    } else {
        (a, 0.0)
    };
    let sum = base.mul_add(poly, tail);
    let head = if large { head_pi } else { a };
    f64::from_bits((head + sum).to_bits() ^ sign)
}

const SIGN_BIT: u64 = 1 << 63;
/// Below this `y` the reciprocal square root is taken as 0.
const TINY: f64 = f64::from_bits(0x3000_0000_0000_0000);
/// π/2 as a sum of two doubles.
const PI_2_HI: f64 = f64::from_bits(0x3ff9_21fb_5444_2d18);
const PI_2_LO: f64 = f64::from_bits(0x3c91_a626_3314_5c07);
/// Coefficients of the cubic in `e = 2(r²y − 1)` that corrects `s = 2y·r` towards `2√y`.
const CORRECTION: [f64; 4] = [
    f64::from_bits(0x3fcf_ffff_ffff_ff9d),
    f64::from_bits(0xbfb7_ffff_ffff_fe97),
    f64::from_bits(0x3fa4_0000_6f70_d42d),
    f64::from_bits(0xbf91_8000_993b_24c3),
];
/// Coefficients of `P(t)`, `t⁰` first: `asin(u) ≈ u + u·t·P(t)` with `t = u²`.
const SERIES: [f64; 12] = [
    f64::from_bits(0x3fc5_5555_5555_529c),
    f64::from_bits(0x3fb3_3333_3337_e0de),
    f64::from_bits(0x3fa6_db6d_b3b4_45f8),
    f64::from_bits(0x3f9f_1c72_e13a_d8be),
    f64::from_bits(0x3f96_e89c_ebde_fadd),
    f64::from_bits(0x3f91_c6dc_f538_ad2e),
    f64::from_bits(0x3f8c_6dbb_cb88_bd57),
    f64::from_bits(0x3f88_f8dc_2afc_cad6),
    f64::from_bits(0x3f7a_5833_95d4_5ed5),
    f64::from_bits(0x3f94_3f44_bfbc_3bae),
    f64::from_bits(0xbf90_fb17_f7db_b0ed),
    f64::from_bits(0x3fa0_7520_c70e_b909),
];

/// `t·P(t)`, evaluated in SVML's order (pairs, then Estrin-like steps in `t²` and `t⁴`).
fn series(t: f64) -> f64 {
    let c = &SERIES;
    let t2 = t * t;
    let t4 = t2 * t2;
    let p8 = t.mul_add(c[9], c[8]);
    let p2 = t.mul_add(c[3], c[2]);
    let p10 = t.mul_add(c[11], c[10]);
    let p6 = t.mul_add(c[7], c[6]);
    let p4 = t.mul_add(c[5], c[4]);
    let upper = t2.mul_add(p10, p8);
    let middle = t2.mul_add(p6, p4);
    let mut p = t4.mul_add(upper, middle);
    p = t2.mul_add(p, p2);
    p = t.mul_add(p, c[1]);
    p = t.mul_add(p, c[0]);
    p * t
}

/// `vrsqrt14pd` for a positive normal `x`, as Intel's reference describes it: `x` is scaled
/// by an even power of two into `[1, 4)`, where a table gives a line `c − d·(x − y)` on each
/// of 32 intervals per binade (`x` truncated to 16 significant bits), and the result is
/// truncated to 17 significant bits.
/// Only positive normal `x` reach it here; other values get `1/√x`.
fn rsqrt14(x: f64) -> f64 {
    if x <= 0.0 || !x.is_normal() {
        return 1.0 / x.sqrt();
    }
    let bits = x.to_bits();
    let exponent = ((bits >> 52) & 0x7ff) as i64 - 1023;
    let odd = exponent.rem_euclid(2) == 1;
    let half = (exponent - i64::from(odd)) / 2;
    let fraction = bits & FRACTION;
    let scaled = f64::from_bits(fraction | if odd { TWO } else { ONE });
    let root = if scaled == 1.0 {
        1.0
    } else {
        // Truncated to 16 significant bits; `x − y` is then exact.
        let truncated = f64::from_bits(scaled.to_bits() & !((1 << 37) - 1));
        let (y, c, d) = if odd {
            let i = ((scaled - 2.0) * 16.0) as usize;
            let (c, d) = RSQRT14_UPPER[i];
            (2.0 + 1.0 / 32.0 + i as f64 / 16.0, c, 128.0 * d)
        } else {
            let i = ((scaled - 1.0) * 32.0) as usize;
            let (c, d) = RSQRT14_LOWER[i];
            (1.0 + 1.0 / 64.0 + i as f64 / 32.0, c, 256.0 * d)
        };
        let line = c - d * (truncated - y);
        // Keep 16 fraction bits, then divide by 2¹⁹.
        f64::from_bits((line.to_bits() & !((1 << 36) - 1)) - (19 << 52))
    };
    f64::from_bits((root.to_bits() as i64 - (half << 52)) as u64)
}

const FRACTION: u64 = (1 << 52) - 1;
const ONE: u64 = 0x3ff0_0000_0000_0000;
const TWO: u64 = 0x4000_0000_0000_0000;

/// `(c, d)` of each of the 32 intervals of `[1, 2)` (`c` scaled by 2¹⁹, `d` by 2¹¹).
#[rustfmt::skip]
const RSQRT14_LOWER: [(f64, f64); 32] = [
    (520261.0, 1001.0), (512437.0, 955.0), (504953.0, 915.0), (497790.0, 877.0),
    (490922.0, 841.0), (484331.0, 807.0), (478001.0, 775.0), (471909.0, 747.0),
    (466046.0, 719.0), (460397.0, 693.0), (454947.0, 669.0), (449688.0, 647.0),
    (444606.0, 625.0), (439694.0, 603.0), (434939.0, 585.0), (430335.0, 567.0),
    (425875.0, 549.0), (421551.0, 533.0), (417355.0, 517.0), (413284.0, 501.0),
    (409329.0, 487.0), (405487.0, 473.0), (401748.0, 461.0), (398111.0, 449.0),
    (394571.0, 437.0), (391127.0, 425.0), (387770.0, 415.0), (384498.0, 403.0),
    (381307.0, 393.0), (378194.0, 385.0), (375155.0, 375.0), (372190.0, 367.0),
];

/// `(c, d)` of each of the 32 intervals of `[2, 4)` (`c` scaled by 2¹⁹, `d` by 2¹²).
#[rustfmt::skip]
const RSQRT14_UPPER: [(f64, f64); 32] = [
    (367881.0, 707.0), (362349.0, 675.0), (357056.0, 647.0), (351992.0, 619.0),
    (347136.0, 595.0), (342475.0, 571.0), (337997.0, 549.0), (333693.0, 527.0),
    (329545.0, 509.0), (325551.0, 491.0), (321697.0, 473.0), (317977.0, 457.0),
    (314385.0, 441.0), (310910.0, 427.0), (307549.0, 413.0), (304295.0, 401.0),
    (301139.0, 389.0), (298079.0, 377.0), (295115.0, 365.0), (292237.0, 355.0),
    (289439.0, 345.0), (286722.0, 335.0), (284080.0, 325.0), (281508.0, 317.0),
    (279006.0, 309.0), (276569.0, 301.0), (274195.0, 293.0), (271882.0, 285.0),
    (269625.0, 279.0), (267425.0, 271.0), (265276.0, 265.0), (263178.0, 259.0),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arcsin_matches_numpy() {
        // (x, np.arcsin(x), the C library's asin(x)): inputs where the two differ, on both
        // sides of 0.5.
        let cases = [
            (
                0.368993123729791,
                0x3fd8_2fee_4843_85ca_u64,
                0x3fd8_2fee_4843_85cb_u64,
            ),
            (
                0.27714489253370433,
                0x3fd1_f8f9_fff2_dcab,
                0x3fd1_f8f9_fff2_dcac,
            ),
            (
                0.8391248483727817,
                0x3fef_dc8c_2a36_d8ca,
                0x3fef_dc8c_2a36_d8c9,
            ),
            (
                0.8051359898916692,
                0x3fed_f2ee_7624_8b7e,
                0x3fed_f2ee_7624_8b7d,
            ),
        ];
        for (x, numpy, libm) in cases {
            assert_eq!(numpy_arcsin(x).to_bits(), numpy);
            assert_eq!(numpy_arcsin(-x).to_bits(), numpy | SIGN_BIT);
            assert_ne!(numpy, libm);
        }
        assert_eq!(numpy_arcsin(0.0), 0.0);
        assert_eq!(numpy_arcsin(1.0), std::f64::consts::FRAC_PI_2);
        assert!(numpy_arcsin(1.5).is_nan() && numpy_arcsin(f64::NAN).is_nan());
    }

    #[test]
    fn rsqrt14_matches_the_instruction() {
        // vrsqrt14pd's results for these inputs.
        let cases = [
            (0.1, 0x4009_4c60_0000_0000_u64),
            (0.2499, 0x4000_00d0_0000_0000),
            (3.0, 0x3fe2_7990_0000_0000),
            (1e-10, 0x40f8_69f0_0000_0000),
            (123.456, 0x3fb7_0a50_0000_0000),
            (4.0, 0x3fe0_0000_0000_0000),
        ];
        for (x, bits) in cases {
            assert_eq!(rsqrt14(x).to_bits(), bits, "rsqrt14({x})");
        }
    }
}
