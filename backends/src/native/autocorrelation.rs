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
//!   drawn from SplitMix64 streams keyed by `seed` and the permutation (global) or the feature
//!   (local), so results depend only on `seed`, never on the number of threads. With
//!   `permutations == 0` the simulated values are NaN. `z_sim` standardises the observed value
//!   by the simulated mean and (population) standard deviation; `p_z_sim` is one-tailed,
//!   `sf(|z_sim|)`.

use rayon::prelude::*;

use super::weights::{Weights, WeightsError};

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
    /// Conditional permutation test; NaN for an island (see [`MoranLocal::p_sim`]).
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
/// row-standardised. Gi divides by the sum of the other values, Gi* by the sum of all. If no
/// row ends up with a self weight (all islands), Gi* falls back to Gi, as in esda.
pub fn getis_ord_local(
    y: &[f64],
    w: &Weights,
    star: bool,
    permutations: usize,
    seed: u64,
) -> Result<Vec<GLocal>, WeightsError> {
    w.validate(y.len())?;
    let w = with_self_weights(w, star).row_standardised();
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

/// The weights Gi or Gi* work on, before row standardisation (see [`getis_ord_local`]).
fn with_self_weights(w: &Weights, star: bool) -> Weights {
    let rows = w.neighbours.iter().enumerate().map(|(i, row)| {
        let mut row = row.clone();
        let has_self = row.iter().any(|&(j, _)| j == i);
        if !star {
            row.retain(|&(j, _)| j != i);
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

fn deviations(y: &[f64]) -> Vec<f64> {
    let mean = total(y.iter().copied()) / y.len() as f64;
    y.iter().map(|v| v - mean).collect()
}

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

/// A permutation test's summary for one observed value.
struct Simulated {
    p_sim: f64,
    z_sim: f64,
    p_z_sim: f64,
}

impl Simulated {
    const NONE: Self = Self {
        p_sim: f64::NAN,
        z_sim: f64::NAN,
        p_z_sim: f64::NAN,
    };

    /// esda's folded count and the standardised observed value.
    fn of(observed: f64, sims: &[f64]) -> Self {
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
fn permuted(
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
fn conditional<F>(
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

/// SplitMix64 (Steele, Lea and Flood): a small generator whose streams are keyed by a seed and
/// an index, so each permutation or feature draws the same numbers on any thread.
struct SplitMix64(u64);

impl SplitMix64 {
    const GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;

    fn stream(seed: u64, index: usize) -> Self {
        let mut keyed = Self(seed ^ mix(index as u64 ^ 0xD1B5_4A32_D192_ED03));
        keyed.0 = keyed.next();
        keyed
    }

    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(Self::GAMMA);
        mix(self.0)
    }

    /// Uniform in `0..bound` (Lemire's multiply-and-reject); 0 when `bound` is 0.
    fn below(&mut self, bound: usize) -> usize {
        let bound = (bound as u64).max(1);
        let threshold = bound.wrapping_neg() % bound;
        loop {
            let product = u128::from(self.next()) * u128::from(bound);
            if (product as u64) >= threshold {
                return (product >> 64) as usize;
            }
        }
    }
}

fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

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

    /// A path 0 - 1 - 2 - 3 plus an island 4.
    fn path() -> Weights {
        let rows = vec![
            vec![(1, 1.0)],
            vec![(0, 1.0), (2, 1.0)],
            vec![(1, 1.0), (3, 1.0)],
            vec![(2, 1.0)],
            vec![],
        ];
        Weights { neighbours: rows }
    }

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
    fn g_local_star_and_not() {
        let y = [1.0, 2.0, 3.0, 4.0, 5.0];
        let gi = getis_ord_local(&y, &path(), false, 0, 0).unwrap();
        // Gi_1 = (1 + 3) / 2 / (15 - 2).
        assert!(close(gi[1].g, 2.0 / 13.0));
        assert!(gi[4].z.is_nan() && close(gi[4].g, 0.0));
        let star = getis_ord_local(&y, &path(), true, 0, 0).unwrap();
        // Gi*_1 = (1 + 2 + 3) / 3 / 15; E = 1 / 5.
        assert!(close(star[1].g, 6.0 / 3.0 / 15.0) && close(star[1].expected, 0.2));
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
        assert!(moran(&flat, &path(), 9, 1).unwrap().i.is_nan());
        assert!(
            moran_local(&flat, &path(), 9, 1)
                .unwrap()
                .iter()
                .all(|l| l.quadrant == 0 && l.ii.is_nan())
        );
        assert!(
            getis_ord_local(&flat, &path(), true, 9, 1)
                .unwrap()
                .iter()
                .all(|g| g.z.is_nan())
        );
        assert!(getis_ord_global(&flat, &path(), 9, 1).unwrap().z.is_nan());
        let empty = Weights::default();
        assert!(moran(&[], &empty, 9, 1).unwrap().i.is_nan());
        assert!(moran_local(&[], &empty, 9, 1).unwrap().is_empty());
        let islands = Weights {
            neighbours: vec![Vec::new(); 3],
        };
        assert!(moran(&[1.0, 2.0, 4.0], &islands, 9, 1).unwrap().i.is_nan());
        assert!(
            getis_ord_global(&[1.0, 2.0, 4.0], &islands, 9, 1)
                .unwrap()
                .p_sim
                .is_nan()
        );
        assert!(
            getis_ord_local(&[1.0, 2.0, 4.0], &islands, true, 9, 1)
                .unwrap()
                .iter()
                .all(|g| g.p_sim.is_nan())
        );
        assert!(moran(&[1.0, 2.0], &path(), 0, 0).is_err());
    }

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
    fn bounded_draws_are_uniform() {
        let mut rng = SplitMix64::stream(42, 3);
        let mut counts = [0_usize; 7];
        for _ in 0..70_000 {
            counts[rng.below(7)] += 1;
        }
        assert!(counts.iter().all(|&c| (9_500..10_500).contains(&c)));
    }
}
