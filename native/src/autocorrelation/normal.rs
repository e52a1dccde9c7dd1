//! The standard normal upper tail, by way of the complementary error function.

/// Upper tail of the standard normal distribution, `P(Z > z)`, to about 1e-15 relative.
pub fn normal_sf(z: f64) -> f64 {
    0.5 * erfc(z * std::f64::consts::FRAC_1_SQRT_2)
}

/// The complementary error function by W. J. Cody's rational Chebyshev approximations
/// ("Rational Chebyshev approximations for the error function", Math. Comp. 1969; the
/// coefficients of his CALERF routine), on |x| <= 0.46875, <= 4 and beyond.
fn erfc(x: f64) -> f64 {
    const A: [f64; 5] = [
        3.1611237438705655,
        113.86415415105016,
        377.485237685302,
        3209.3775891384694,
        0.18577770618460315,
    ];
    const B: [f64; 4] = [
        23.601290952344122,
        244.02463793444417,
        1282.6165260773723,
        2844.236833439171,
    ];
    const C: [f64; 9] = [
        0.5641884969886701,
        8.883149794388377,
        66.11919063714163,
        298.6351381974001,
        881.952221241769,
        1712.0476126340707,
        2051.0783778260716,
        1230.3393547979972,
        2.1531153547440383e-08,
    ];
    const D: [f64; 8] = [
        15.744926110709835,
        117.6939508913125,
        537.1811018620099,
        1621.3895745666903,
        3290.7992357334597,
        4362.619090143247,
        3439.3676741437216,
        1230.3393548037495,
    ];
    const P: [f64; 6] = [
        0.30532663496123236,
        0.36034489994980445,
        0.12578172611122926,
        0.016083785148742275,
        0.0006587491615298378,
        0.016315387137302097,
    ];
    const Q: [f64; 5] = [
        2.568520192289822,
        1.8729528499234604,
        0.5279051029514285,
        0.06051834131244132,
        0.0023352049762686918,
    ];
    const FRAC_1_SQRT_PI: f64 = 0.5641895835477563;
    let y = x.abs();
    if y <= 0.468_75 {
        let ysq = y * y;
        let (num, den) = (0..3).fold((A[4] * ysq, ysq), |(num, den), i| {
            ((num + A[i]) * ysq, (den + B[i]) * ysq)
        });
        return 1.0 - x * (num + A[3]) / (den + B[3]);
    }
    let tail = if y <= 4.0 {
        let (num, den) = (0..7).fold((C[8] * y, y), |(num, den), i| {
            ((num + C[i]) * y, (den + D[i]) * y)
        });
        gaussian(y) * (num + C[7]) / (den + D[7])
    } else if y >= 26.543 {
        0.0
    } else {
        let ysq = 1.0 / (y * y);
        let (num, den) = (0..4).fold((P[5] * ysq, ysq), |(num, den), i| {
            ((num + P[i]) * ysq, (den + Q[i]) * ysq)
        });
        gaussian(y) * (FRAC_1_SQRT_PI - ysq * (num + P[4]) / (den + Q[4])) / y
    };
    if x < 0.0 { 2.0 - tail } else { tail }
}

/// `exp(-y^2)` without the rounding error of squaring `y`: `y` split at a multiple of 1/16.
fn gaussian(y: f64) -> f64 {
    let head = (y * 16.0).trunc() / 16.0;
    (-head * head).exp() * (-(y - head) * (y + head)).exp()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-12 * b.abs().max(1.0)
    }

    #[test]
    fn normal_tail_values() {
        assert!(close(normal_sf(0.0), 0.5));
        assert!((normal_sf(1.959_963_984_540_054) - 0.025).abs() < 1e-16);
        assert!((normal_sf(-1.0) - 0.841_344_746_068_542_9).abs() < 1e-15);
        // scipy.stats.norm.sf(8) and sf(30)
        assert!((normal_sf(8.0) / 6.220_960_574_271_784e-16 - 1.0).abs() < 1e-13);
        assert!((normal_sf(30.0) / 4.906_713_927_148_187e-198 - 1.0).abs() < 1e-13);
        assert!(normal_sf(f64::NAN).is_nan());
    }

    #[test]
    fn erfc_across_its_ranges() {
        // math.erfc at points in each of Cody's three intervals, and its symmetry.
        for (x, expected) in [
            (0.3, 0.671_373_240_540_872_6),
            (2.0, 0.004_677_734_981_047_265),
            (6.0, 2.151_973_671_249_891_6e-17),
        ] {
            assert!((erfc(x) / expected - 1.0).abs() < 1e-14);
            assert!((erfc(-x) - (2.0 - expected)).abs() < 1e-15);
        }
        assert_eq!(erfc(30.0), 0.0);
    }
}
