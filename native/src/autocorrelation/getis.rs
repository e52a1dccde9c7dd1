//! Getis–Ord G, global and local Gi / Gi* (esda `G`, `G_Local`).

use crate::weights::{Weights, WeightsError};

use super::normal::normal_sf;
use super::permutation::{Simulated, conditional, permuted};
use super::{constant, cross, total};

/// Global Getis–Ord G, esda `G` with its binary weights (`'B'`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GGlobal {
    /// `sum_ij w_ij y_i y_j / sum_{i != j} y_i y_j`.
    pub g: f64,
    /// `E[G] = s0 / (n (n - 1))`.
    pub expected: f64,
    /// Variance under randomisation (esda's `VG`) and the z-score `(G - E[G]) / sqrt(VG)`.
    pub variance: f64,
    pub z: f64,
    /// One-tailed, `sf(|z|)`, as esda (which computes `1 - cdf(|z|)`, losing digits below 1e-16).
    pub p_norm: f64,
    pub p_sim: f64,
    pub z_sim: f64,
    pub p_z_sim: f64,
}

/// Local Getis–Ord Gi or Gi* of one feature, esda `G_Local` with its default row-standardised
/// weights (`transform='R'`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GLocal {
    /// `sum_j w_ij y_j / sum_{j != i} y_j` (Gi) or `/ sum_j y_j` (Gi*), `w` row-standardised.
    pub g: f64,
    /// Analytical expectation and variance (esda's `EGs`, `VGs`).
    pub expected: f64,
    pub variance: f64,
    /// `(g - expected) / sqrt(variance)`: NaN for an island (0 / 0) or constant `y`.
    pub z: f64,
    /// One-tailed, `sf(|z|)`, as esda.
    pub p_norm: f64,
    /// Conditional permutation test; NaN for an island (see
    /// [`MoranLocal::p_sim`](super::MoranLocal::p_sim)).
    pub p_sim: f64,
    pub z_sim: f64,
    pub p_z_sim: f64,
}

/// Global Getis–Ord G of `y` (meant for positive values) over binary weights. The variance,
/// z and p-values are NaN when `y` is constant or every row is an island.
pub fn getis_ord_global(
    y: &[f64],
    w: &Weights,
    permutations: usize,
    seed: u64,
) -> Result<GGlobal, WeightsError> {
    w.validate(y.len())?;
    let w = w.binary();
    let n = y.len() as f64;
    let (s0, s1, s2) = w.sums();
    let power_sum = |p: i32| total(y.iter().map(|v| v.powi(p)));
    let (sy, sy2, sy3, sy4) = (power_sum(1), power_sum(2), power_sum(3), power_sum(4));
    let den = sy * sy - sy2;
    let g = cross(&w, y) / den;
    let expected = s0 / (n * (n - 1.0));
    let b0 = (n * n - 3.0 * n + 3.0) * s1 - n * s2 + 3.0 * s0 * s0;
    let b1 = -((n * n - n) * s1 - 2.0 * n * s2 + 6.0 * s0 * s0);
    let b2 = -(2.0 * n * s1 - (n + 3.0) * s2 + 6.0 * s0 * s0);
    let b3 = 4.0 * (n - 1.0) * s1 - 2.0 * (n + 1.0) * s2 + 8.0 * s0 * s0;
    let b4 = s1 - s2 + s0 * s0;
    let eg2 = b0 * sy2 * sy2 + b1 * sy4 + b2 * sy * sy * sy2 + b3 * sy * sy3 + b4 * sy.powi(4);
    let eg2 = eg2 / (den * den * n * (n - 1.0) * (n - 2.0) * (n - 3.0));
    let variance = if constant(y) {
        f64::NAN
    } else {
        eg2 - expected * expected
    };
    let z = (g - expected) / variance.sqrt();
    // No test without pairs of neighbours or spread: every permutation would tie.
    let sims = if variance > 0.0 {
        permuted(y, permutations, seed, |v| cross(&w, v) / den)
    } else {
        Vec::new()
    };
    let sim = Simulated::of(g, &sims);
    let (p_sim, z_sim, p_z_sim) = (sim.p_sim, sim.z_sim, sim.p_z_sim);
    Ok(GGlobal {
        g,
        expected,
        variance,
        z,
        p_norm: normal_sf(z.abs()),
        p_sim,
        z_sim,
        p_z_sim,
    })
}

/// Local Getis–Ord Gi (`star == false`) or Gi* (`star == true`) of every feature. As esda, the
/// weights lose any self weight for Gi; for Gi* a row without one gets its largest weight as
/// self weight (1 for binary weights; an island gets none) and the rows are then
/// row-standardised; with `binary` the weights are 1 per neighbour instead, and for Gi* every
/// feature, an island too, is its own neighbour (Getis and Ord's 1995 Gi*). Gi divides by the sum of the other values, Gi* by the sum of all. If no
/// row ends up with a self weight (all islands), Gi* falls back to Gi, as in esda.
pub fn getis_ord_local(
    y: &[f64],
    w: &Weights,
    star: bool,
    binary: bool,
    permutations: usize,
    seed: u64,
) -> Result<Vec<GLocal>, WeightsError> {
    w.validate(y.len())?;
    let w = if binary {
        with_self_weights(&w.binary(), star, true).binary()
    } else {
        with_self_weights(w, star, false).row_standardised()
    };
    let star = w
        .neighbours
        .iter()
        .enumerate()
        .any(|(i, _)| w.weight(i, i) > 0.0);
    let remove_self = if star { 0.0 } else { 1.0 };
    let big_n = y.len() as f64 - remove_self;
    let (sum, sum2) = (total(y.iter().copied()), total(y.iter().map(|v| v * v)));
    let undefined = constant(y);
    let lag = w.lag(y);
    let g: Vec<f64> = y
        .iter()
        .zip(&lag)
        .map(|(yi, li)| li / (sum - yi * remove_self))
        .collect();
    let sims = if undefined {
        y.iter().map(|_| Simulated::NONE).collect()
    } else if star {
        conditional(&w, y, &g, permutations, seed, |i, others, own| {
            (others + own * y[i]) / sum
        })
    } else {
        conditional(&w, y, &g, permutations, seed, |i, others, _| {
            others / (sum - y[i])
        })
    };
    let rows = w
        .neighbours
        .iter()
        .zip(sims)
        .enumerate()
        .map(|(i, (row, sim))| {
            let mean = (sum - y[i] * remove_self) / big_n;
            let spread = (sum2 - y[i] * y[i] * remove_self) / big_n - mean * mean;
            let card: f64 = row.iter().map(|&(_, v)| v).sum();
            let variance =
                card * (big_n - card) / (big_n - 1.0) / (big_n * big_n) * spread / (mean * mean);
            let expected = card / big_n;
            let z = if undefined {
                f64::NAN
            } else {
                (g[i] - expected) / variance.sqrt()
            };
            let (p_sim, z_sim, p_z_sim) = (sim.p_sim, sim.z_sim, sim.p_z_sim);
            GLocal {
                g: g[i],
                expected,
                variance,
                z,
                p_norm: normal_sf(z.abs()),
                p_sim,
                z_sim,
                p_z_sim,
            }
        });
    Ok(rows.collect())
}

/// The weights Gi or Gi* work on, before row standardisation (see [`getis_ord_local`]);
/// `islands` gives an island a self weight of 1 too.
fn with_self_weights(w: &Weights, star: bool, islands: bool) -> Weights {
    let rows = w.neighbours.iter().enumerate().map(|(i, row)| {
        let mut row = row.clone();
        let has_self = row.iter().any(|&(j, _)| j == i);
        if !star {
            row.retain(|&(j, _)| j != i);
        } else if !has_self && row.is_empty() && islands {
            row.push((i, 1.0));
        } else if !has_self && !row.is_empty() {
            let largest = row
                .iter()
                .map(|&(_, v)| v)
                .fold(f64::NEG_INFINITY, f64::max);
            let at = row.partition_point(|&(j, _)| j < i);
            row.insert(at, (i, largest));
        }
        row
    });
    Weights {
        neighbours: rows.collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::super::fixtures::{close, path};
    use super::*;

    #[test]
    fn g_local_star_and_not() {
        let y = [1.0, 2.0, 3.0, 4.0, 5.0];
        let gi = getis_ord_local(&y, &path(), false, false, 0, 0).unwrap();
        // Gi_1 = (1 + 3) / 2 / (15 - 2).
        assert!(close(gi[1].g, 2.0 / 13.0));
        assert!(gi[4].z.is_nan() && close(gi[4].g, 0.0));
        let star = getis_ord_local(&y, &path(), true, false, 0, 0).unwrap();
        // Gi*_1 = (1 + 2 + 3) / 3 / 15; E = 1 / 5.
        assert!(close(star[1].g, 6.0 / 3.0 / 15.0) && close(star[1].expected, 0.2));
    }

    #[test]
    fn g_local_star_on_binary_weights_is_getis_and_ords() {
        let y = [1.0, 2.0, 3.0, 4.0, 5.0];
        let star = getis_ord_local(&y, &path(), true, true, 0, 0).unwrap();
        // z_i = (Σ_j w_ij y_j − ȳ W_i) / (s √((n W_i − W_i²) / (n − 1))), s the population
        // standard deviation, each feature its own neighbour: the island 4 too (W_4 = 1).
        let (mean, s) = (3.0, 2.0_f64.sqrt());
        let z = |sum: f64, w: f64| (sum - mean * w) / (s * ((5.0 * w - w * w) / 4.0).sqrt());
        assert!(close(star[1].z, z(6.0, 3.0)), "{}", star[1].z);
        assert!(close(star[0].z, z(3.0, 2.0)), "{}", star[0].z);
        assert!(close(star[4].z, z(5.0, 1.0)), "{}", star[4].z);
        assert!(close(star[4].g, 5.0 / 15.0));
    }

    #[test]
    fn g_global_by_hand() {
        let y = [1.0, 2.0, 3.0, 4.0, 5.0];
        let g = getis_ord_global(&y, &path(), 0, 0).unwrap();
        // 2 (1*2 + 2*3 + 3*4) / (15^2 - 55)
        assert!(close(g.g, 40.0 / 170.0) && close(g.expected, 6.0 / 20.0));
    }

    #[test]
    fn degenerate_inputs() {
        let flat = [3.0; 5];
        assert!(
            getis_ord_local(&flat, &path(), true, false, 9, 1)
                .unwrap()
                .iter()
                .all(|g| g.z.is_nan())
        );
        assert!(getis_ord_global(&flat, &path(), 9, 1).unwrap().z.is_nan());
        let islands = Weights {
            neighbours: vec![Vec::new(); 3],
        };
        assert!(
            getis_ord_global(&[1.0, 2.0, 4.0], &islands, 9, 1)
                .unwrap()
                .p_sim
                .is_nan()
        );
        assert!(
            getis_ord_local(&[1.0, 2.0, 4.0], &islands, true, false, 9, 1)
                .unwrap()
                .iter()
                .all(|g| g.p_sim.is_nan())
        );
        assert!(getis_ord_local(&[1.0, 2.0], &path(), false, false, 0, 0).is_err());
    }
}
