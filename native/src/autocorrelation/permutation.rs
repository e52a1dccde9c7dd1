//! The permutation tests: esda's folded count over simulated statistics, from random
//! orderings of all values (global tests) or conditional draws onto each feature's neighbours
//! (local tests).

use rayon::prelude::*;

use crate::random::SplitMix64;
use crate::weights::Weights;

use super::normal::normal_sf;

/// A permutation test's summary for one observed value.
pub(super) struct Simulated {
    pub(super) p_sim: f64,
    pub(super) z_sim: f64,
    pub(super) p_z_sim: f64,
}

impl Simulated {
    pub(super) const NONE: Self = Self {
        p_sim: f64::NAN,
        z_sim: f64::NAN,
        p_z_sim: f64::NAN,
    };

    /// esda's folded count and the standardised observed value.
    pub(super) fn of(observed: f64, sims: &[f64]) -> Self {
        if sims.is_empty() || !observed.is_finite() {
            return Self::NONE;
        }
        let p = sims.len();
        let larger = sims.iter().filter(|&&s| s >= observed).count();
        let mean = sims.iter().sum::<f64>() / p as f64;
        let sd = (sims.iter().map(|s| (s - mean) * (s - mean)).sum::<f64>() / p as f64).sqrt();
        let z_sim = (observed - mean) / sd;
        let p_sim = (larger.min(p - larger) + 1) as f64 / (p + 1) as f64;
        Self {
            p_sim,
            z_sim,
            p_z_sim: normal_sf(z_sim.abs()),
        }
    }
}

/// The statistic `stat` of `permutations` random orderings of `values` (global tests).
pub(super) fn permuted(
    values: &[f64],
    permutations: usize,
    seed: u64,
    stat: impl Fn(&[f64]) -> f64 + Sync,
) -> Vec<f64> {
    let shuffled = |buffer: &mut Vec<f64>, p: usize| {
        buffer.copy_from_slice(values);
        let mut rng = SplitMix64::stream(seed, p);
        for j in (1..buffer.len()).rev() {
            buffer.swap(j, rng.below(j + 1));
        }
        stat(buffer)
    };
    (0..permutations)
        .into_par_iter()
        .map_init(|| values.to_vec(), shuffled)
        .collect()
}

/// Conditional randomisation (local tests): for each feature `i` with `k_i` neighbours other
/// than itself, `permutations` draws of `k_i` distinct values among the other `n - 1`, placed
/// on those neighbours' weights in draw order. `stat(i, sum_j w_ij v_draw_j, w_ii)` gives each
/// simulated statistic; islands get no test.
pub(super) fn conditional<F>(
    w: &Weights,
    values: &[f64],
    observed: &[f64],
    permutations: usize,
    seed: u64,
    stat: F,
) -> Vec<Simulated>
where
    F: Fn(usize, f64, f64) -> f64 + Sync,
{
    let n = values.len();
    let test = |draws: &mut Draws, i: usize| {
        draws.weights.clear();
        let others = w.neighbours[i].iter().filter(|&&(j, _)| j != i);
        draws.weights.extend(others.map(|&(_, wj)| wj));
        let k = draws.weights.len();
        if k == 0 || permutations == 0 {
            return Simulated::NONE;
        }
        let own = w.weight(i, i);
        let mut rng = SplitMix64::stream(seed, i);
        draws.sims.clear();
        for _ in 0..permutations {
            draws.draw(&mut rng, k, n - 1);
            let picked = draws.picks.iter().zip(&draws.weights);
            // Index `o` among the others is row `o` below `i` and row `o + 1` from `i` on.
            let drawn: f64 = picked
                .map(|(&o, &wj)| wj * values[o + usize::from(o >= i)])
                .sum();
            draws.sims.push(stat(i, drawn, own));
        }
        Simulated::of(observed[i], &draws.sims)
    };
    (0..n)
        .into_par_iter()
        .map_init(Draws::default, test)
        .collect()
}

/// Draws of this many values or fewer, from at least four times as many, are made by rejecting
/// repeats; larger ones by a partial Fisher–Yates shuffle of an index pool.
const SMALL_DRAW: usize = 32;

/// One thread's buffers for the conditional randomisation.
#[derive(Default)]
struct Draws {
    pool: Vec<usize>,
    swaps: Vec<usize>,
    picks: Vec<usize>,
    weights: Vec<f64>,
    sims: Vec<f64>,
}

impl Draws {
    /// Puts `k <= m` distinct indices of `0..m` in `picks`, every ordered selection equally likely.
    fn draw(&mut self, rng: &mut SplitMix64, k: usize, m: usize) {
        self.picks.clear();
        if k <= SMALL_DRAW && 4 * k <= m {
            while self.picks.len() < k {
                let r = rng.below(m);
                if !self.picks.contains(&r) {
                    self.picks.push(r);
                }
            }
            return;
        }
        if self.pool.len() != m {
            self.pool = (0..m).collect();
        }
        for j in 0..k {
            let r = j + rng.below(m - j);
            self.pool.swap(j, r);
            self.swaps.push(r);
        }
        self.picks.extend_from_slice(&self.pool[..k]);
        // Undo the swaps so the pool is the identity again for the next draw.
        for (j, r) in self.swaps.drain(..).enumerate().rev() {
            self.pool.swap(j, r);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::fixtures::close;
    use super::*;

    #[test]
    fn folded_permutation_count() {
        // 3 of 9 simulated values at or above 0.5: min(3, 6) + 1 over 10.
        let sims = [0.1, 0.2, 0.3, 0.4, 0.45, 0.48, 0.5, 0.7, 0.9];
        assert!(close(Simulated::of(0.5, &sims).p_sim, 0.4));
        // 8 at or above 0.15: folded to the lower tail, min(8, 1) + 1 over 10.
        assert!(close(Simulated::of(0.15, &sims).p_sim, 0.2));
        assert!(Simulated::of(0.5, &[]).p_sim.is_nan());
    }

    #[test]
    fn conditional_draws_are_distinct_ordered_selections() {
        let mut rng = SplitMix64::stream(1, 0);
        let mut draws = Draws::default();
        // Pool path (5 of 6) and rejection path (3 of 40): distinct, in range, every index and
        // every first pick equally likely.
        for (k, m) in [(5, 6), (3, 40)] {
            let (mut seen, mut first) = (vec![0_usize; m], vec![0_usize; m]);
            for _ in 0..20_000 {
                draws.draw(&mut rng, k, m);
                let mut sorted = draws.picks.clone();
                sorted.sort_unstable();
                sorted.dedup();
                assert_eq!(sorted.len(), k);
                draws.picks.iter().for_each(|&p| seen[p] += 1);
                first[draws.picks[0]] += 1;
            }
            let expected = 20_000.0 * k as f64 / m as f64;
            assert!(
                seen.iter()
                    .all(|&c| (c as f64 - expected).abs() < 0.1 * expected)
            );
            let expected = 20_000.0 / m as f64;
            assert!(
                first
                    .iter()
                    .all(|&c| (c as f64 - expected).abs() < 0.25 * expected)
            );
        }
    }

    #[test]
    fn global_permutations_reorder_the_values() {
        let values = [1.0, 2.0, 3.0, 4.0, 5.0];
        let firsts = permuted(&values, 200, 9, |v| v[0]);
        assert_eq!(firsts, permuted(&values, 200, 9, |v| v[0]));
        assert!(values.iter().all(|x| firsts.contains(x)));
        let sums = permuted(&values, 20, 9, |v| v.iter().sum());
        assert!(sums.iter().all(|&s| s == 15.0));
    }
}
