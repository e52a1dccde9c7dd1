//! Moran's I, global and local (esda `Moran`, `Moran_Local`).

use crate::weights::{Weights, WeightsError};

use super::normal::normal_sf;
use super::permutation::{Simulated, conditional, permuted};
use super::{constant, cross, deviations, total};

/// Global Moran's I, esda `Moran` with its default row-standardised weights (`'r'`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MoranGlobal {
    /// `I = n / s0 * sum_ij w_ij z_i z_j / sum_i z_i^2`, `z` the deviations from the mean.
    pub i: f64,
    /// `E[I] = -1 / (n - 1)`.
    pub expected: f64,
    /// Variance under normality (`VI_norm`).
    pub variance: f64,
    /// `(I - E[I]) / sqrt(VI_norm)`.
    pub z: f64,
    /// Two-tailed normal p-value of `z` (esda's default `two_tailed=True`).
    pub p_norm: f64,
    /// Variance under randomisation (`VI_rand`), with its z-score and two-tailed p-value.
    pub variance_rand: f64,
    pub z_rand: f64,
    pub p_rand: f64,
    pub p_sim: f64,
    pub z_sim: f64,
    pub p_z_sim: f64,
}

/// Local Moran's I of one feature, esda `Moran_Local` with row-standardised weights (`'r'`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MoranLocal {
    /// `Is = (n - 1) z_i lag_i / sum z^2`, `z` standardised with the population deviation.
    pub ii: f64,
    /// esda's `q` (not GeoDa's): 1 HH, 2 LH, 3 LL, 4 HL from the signs of `z_i` and its lag
    /// (a zero lag, as for an island, counts as low); 0 when `y` is constant.
    pub quadrant: u8,
    /// Expectation and variance under total randomisation (esda's `EI`, `VI`).
    pub expected: f64,
    pub variance: f64,
    /// Conditional permutation test (the feature's value fixed, `k_i` of the other `n - 1`
    /// values drawn onto its neighbours). NaN for an island: esda reports `1 / (P + 1)` there,
    /// an artefact of every simulated value tying the observed 0.
    pub p_sim: f64,
    pub z_sim: f64,
    pub p_z_sim: f64,
}

/// Global Moran's I of `y` over `w` (row-standardised first). Undefined (NaN) when `y` is
/// constant or every row is an island.
pub fn moran(
    y: &[f64],
    w: &Weights,
    permutations: usize,
    seed: u64,
) -> Result<MoranGlobal, WeightsError> {
    w.validate(y.len())?;
    let w = w.row_standardised();
    let n = y.len() as f64;
    let z = deviations(y);
    let z2ss = total(z.iter().map(|v| v * v));
    let (s0, s1, s2) = w.sums();
    let scale = n / s0 / z2ss;
    let i = if constant(y) {
        f64::NAN
    } else {
        scale * cross(&w, &z)
    };
    let expected = -1.0 / (n - 1.0);
    let variance = (n * n * s1 - n * s2 + 3.0 * s0 * s0) / ((n - 1.0) * (n + 1.0) * s0 * s0)
        - expected * expected;
    let kurtosis = (total(z.iter().map(|v| v.powi(4))) / n) / (z2ss / n).powi(2);
    let a = n * ((n * n - 3.0 * n + 3.0) * s1 - n * s2 + 3.0 * s0 * s0);
    let b = kurtosis * ((n * n - n) * s1 - 2.0 * n * s2 + 6.0 * s0 * s0);
    let variance_rand =
        (a - b) / ((n - 1.0) * (n - 2.0) * (n - 3.0) * s0 * s0) - expected * expected;
    let (z_norm, z_rand) = (
        (i - expected) / variance.sqrt(),
        (i - expected) / variance_rand.sqrt(),
    );
    let sims = if i.is_finite() {
        permuted(&z, permutations, seed, |v| scale * cross(&w, v))
    } else {
        Vec::new()
    };
    let sim = Simulated::of(i, &sims);
    Ok(MoranGlobal {
        i,
        expected,
        variance,
        z: z_norm,
        p_norm: 2.0 * normal_sf(z_norm.abs()),
        variance_rand,
        z_rand,
        p_rand: 2.0 * normal_sf(z_rand.abs()),
        p_sim: sim.p_sim,
        z_sim: sim.z_sim,
        p_z_sim: sim.p_z_sim,
    })
}

/// Local Moran's I of every feature (row-standardised weights), islands included: their
/// `ii` and expectation are 0 and their quadrant follows the sign of `z_i` (LL or HL).
pub fn moran_local(
    y: &[f64],
    w: &Weights,
    permutations: usize,
    seed: u64,
) -> Result<Vec<MoranLocal>, WeightsError> {
    w.validate(y.len())?;
    let w = w.row_standardised();
    let n = y.len() as f64;
    let undefined = constant(y);
    let deviations = deviations(y);
    let sd = (total(deviations.iter().map(|v| v * v)) / n).sqrt();
    let z: Vec<f64> = deviations
        .iter()
        .map(|v| if undefined { f64::NAN } else { v / sd })
        .collect();
    let den = total(z.iter().map(|v| v * v));
    let lag = w.lag(&z);
    let ii: Vec<f64> = z
        .iter()
        .zip(&lag)
        .map(|(zi, li)| (n - 1.0) * zi * li / den)
        .collect();
    let (m2, m4) = (den / n, total(z.iter().map(|v| v.powi(4))) / n);
    let b2 = m4 / (m2 * m2);
    let scaling = (n - 1.0) / den;
    let sims = conditional(&w, &z, &ii, permutations, seed, |i, others, own| {
        z[i] * (others + own * z[i]) * scaling
    });
    let rows = w
        .neighbours
        .iter()
        .zip(sims)
        .enumerate()
        .map(|(i, (row, sim))| {
            let wi: f64 = row.iter().map(|&(_, v)| v).sum();
            let wi2: f64 = row.iter().map(|&(_, v)| v * v).sum();
            let n1 = n - 1.0;
            let variance = wi2 * (n - b2) / n1
                + (wi * wi - wi2) * (2.0 * b2 - n) / (n1 * (n - 2.0))
                - (wi / n1).powi(2);
            MoranLocal {
                ii: ii[i],
                quadrant: if undefined { 0 } else { quadrant(z[i], lag[i]) },
                expected: -wi / n1,
                variance,
                p_sim: sim.p_sim,
                z_sim: sim.z_sim,
                p_z_sim: sim.p_z_sim,
            }
        });
    Ok(rows.collect())
}

fn quadrant(z: f64, lag: f64) -> u8 {
    match (z > 0.0, lag > 0.0) {
        (true, true) => 1,
        (false, true) => 2,
        (false, false) => 3,
        (true, false) => 4,
    }
}

#[cfg(test)]
mod tests {
    use super::super::fixtures::{close, path};
    use super::*;

    #[test]
    fn moran_by_hand() {
        // z = (-2, -1, 0, 1, 2) with the island last; row-standardised lags -1, -1, 0, 0, 0.
        let y = [1.0, 2.0, 3.0, 4.0, 5.0];
        let m = moran(&y, &path(), 0, 0).unwrap();
        // sum z * lag = 2 + 1 = 3; I = n / s0 * 3 / 10 with s0 = 4.
        assert!(close(m.i, 5.0 / 4.0 * 3.0 / 10.0));
        assert!(close(m.expected, -0.25));
        assert!(m.p_sim.is_nan());
    }

    #[test]
    fn moran_local_by_hand() {
        let y = [1.0, 2.0, 3.0, 4.0, 5.0];
        let local = moran_local(&y, &path(), 99, 7).unwrap();
        // z = (-2, -1, 0, 1, 2) / sqrt(2); den = 5; Is_0 = 4 * z0 * z1 / 5 = 4 * 1 / 5.
        assert!(close(local[0].ii, 0.8));
        assert_eq!(
            local.iter().map(|l| l.quadrant).collect::<Vec<_>>(),
            vec![3, 3, 3, 4, 4]
        );
        assert!(close(local[4].ii, 0.0) && local[4].p_sim.is_nan());
        assert!(local[..4].iter().all(|l| l.p_sim > 0.0 && l.p_sim <= 1.0));
        let again = moran_local(&y, &path(), 99, 7).unwrap();
        assert_eq!(format!("{local:?}"), format!("{again:?}"));
    }

    #[test]
    fn degenerate_inputs() {
        let flat = [3.0; 5];
        assert!(moran(&flat, &path(), 9, 1).unwrap().i.is_nan());
        assert!(
            moran_local(&flat, &path(), 9, 1)
                .unwrap()
                .iter()
                .all(|l| l.quadrant == 0 && l.ii.is_nan())
        );
        let empty = Weights::default();
        assert!(moran(&[], &empty, 9, 1).unwrap().i.is_nan());
        assert!(moran_local(&[], &empty, 9, 1).unwrap().is_empty());
        let islands = Weights {
            neighbours: vec![Vec::new(); 3],
        };
        assert!(moran(&[1.0, 2.0, 4.0], &islands, 9, 1).unwrap().i.is_nan());
        assert!(moran(&[1.0, 2.0], &path(), 0, 0).is_err());
    }
}
