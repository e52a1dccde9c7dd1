//! Spatial autocorrelation after PySAL's esda: global and local Moran's I, global Getis–Ord G
//! and local Gi / Gi*, with esda's analytical moments and seeded permutation tests.
//!
//! Conventions shared by every statistic:
//! - `y` has one value per weights row; NaN values propagate (drop missing values first).
//! - The weights are transformed as esda does by default (each function says which).
//! - `y` constant (all values equal) leaves the statistics' inference undefined: the affected
//!   values are NaN (esda divides by a zero variance).
//! - Permutation tests use esda's folded count: with `larger` the number of simulated values
//!   at or above the observed one, `p_sim = (min(larger, P - larger) + 1) / (P + 1)`. They are
//!   drawn from SplitMix64 streams ([`SplitMix64::stream`]) keyed by `seed` and the permutation
//!   (global) or the feature (local), so results depend only on `seed`, never on the number of
//!   threads. With `permutations == 0` the simulated values are NaN. `z_sim` standardises the
//!   observed value by the simulated mean and (population) standard deviation; `p_z_sim` is
//!   one-tailed, `sf(|z_sim|)`.
//!
//! Moran's I is in `moran`, Getis–Ord G in `getis`, the permutation tests in `permutation` and
//! the normal tail in `normal`; the sums they share are here.
//!
//! [`SplitMix64::stream`]: super::random::SplitMix64::stream

mod getis;
mod moran;
mod normal;
mod permutation;

use super::weights::Weights;

pub use getis::{GGlobal, GLocal, getis_ord_global, getis_ord_local};
pub use moran::{MoranGlobal, MoranLocal, moran, moran_local};
pub use normal::normal_sf;

/// Each value's deviation from the mean.
fn deviations(y: &[f64]) -> Vec<f64> {
    let mean = total(y.iter().copied()) / y.len() as f64;
    y.iter().map(|v| v - mean).collect()
}

/// True when all values are equal (so also for fewer than two).
fn constant(y: &[f64]) -> bool {
    y.windows(2).all(|pair| pair[0] == pair[1])
}

/// `sum_i v_i sum_j w_ij v_j`.
fn cross(w: &Weights, v: &[f64]) -> f64 {
    let rows = w.neighbours.iter().zip(v);
    total(rows.map(|(row, vi)| vi * row.iter().map(|&(j, wij)| wij * v[j]).sum::<f64>()))
}

/// Neumaier's compensated sum: totals over many values keep (nearly) every digit whatever the
/// order, so results agree with any careful summation to the last bits.
fn total(values: impl Iterator<Item = f64>) -> f64 {
    let (mut sum, mut carry) = (0.0_f64, 0.0_f64);
    for v in values {
        let next = sum + v;
        carry += if sum.abs() >= v.abs() {
            (sum - next) + v
        } else {
            (v - next) + sum
        };
        sum = next;
    }
    sum + carry
}

/// The weights and comparison the statistics' tests share.
#[cfg(test)]
mod fixtures {
    use super::Weights;

    /// A path 0 - 1 - 2 - 3 plus an island 4.
    pub(super) fn path() -> Weights {
        let rows = vec![
            vec![(1, 1.0)],
            vec![(0, 1.0), (2, 1.0)],
            vec![(1, 1.0), (3, 1.0)],
            vec![(2, 1.0)],
            vec![],
        ];
        Weights { neighbours: rows }
    }

    pub(super) fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-12 * b.abs().max(1.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compensated_sum_keeps_small_terms() {
        assert_eq!(total([1e16, 1.0, -1e16].into_iter()), 1.0);
        assert_eq!(total([1.0, 1e100, 1.0, -1e100].into_iter()), 2.0);
    }

    #[test]
    fn cross_product_and_constants() {
        let w = fixtures::path();
        // 2 (1*2 + 2*3 + 3*4)
        assert_eq!(cross(&w, &[1.0, 2.0, 3.0, 4.0, 5.0]), 40.0);
        assert_eq!(deviations(&[1.0, 2.0, 6.0]), vec![-2.0, -1.0, 3.0]);
        assert!(constant(&[2.0, 2.0, 2.0]) && constant(&[]) && !constant(&[2.0, 3.0]));
    }
}
