//! The backend's random generator, SplitMix64 (Steele, Lea and Flood, "Fast splittable
//! pseudorandom number generators", OOPSLA 2014): small and fixed, so a seed gives the same
//! numbers on every platform and with any number of threads.

/// SplitMix64: a 64-bit state advanced by a fixed odd increment, each output a bit-mixing of
/// the new state.
#[derive(Clone, Debug)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    /// The increment, the golden ratio's fractional part in 64 bits.
    const GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;

    /// The generator whose state starts at `seed`.
    pub fn new(seed: u64) -> Self {
        Self(seed)
    }

    /// A stream keyed by a seed and an index (a permutation, a feature): the same numbers for
    /// the same pair whichever thread draws them, unrelated numbers for other indices.
    pub fn stream(seed: u64, index: usize) -> Self {
        let mut keyed = Self::new(seed ^ mix(index as u64 ^ 0xD1B5_4A32_D192_ED03));
        Self::new(keyed.next_u64())
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(Self::GAMMA);
        mix(self.0)
    }

    /// Uniform in `[0, 1)`: the top 53 bits of the next output over `2^53`.
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1_u64 << 53) as f64
    }

    /// Uniform in `0..bound` (Lemire's multiply-and-reject, no modulo bias); 0 when `bound` is 0.
    pub fn below(&mut self, bound: usize) -> usize {
        let bound = (bound as u64).max(1);
        let threshold = bound.wrapping_neg() % bound;
        loop {
            let product = u128::from(self.next_u64()) * u128::from(bound);
            if (product as u64) >= threshold {
                return (product >> 64) as usize;
            }
        }
    }
}

/// SplitMix64's finaliser (Stafford's "Mix13" variant of MurmurHash3's).
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_outputs() {
        // The reference implementation (Vigna's splitmix64.c) seeded with 1234567.
        let mut rng = SplitMix64::new(1_234_567);
        let first: Vec<u64> = (0..3).map(|_| rng.next_u64()).collect();
        assert_eq!(
            first,
            [
                6_457_827_717_110_365_317,
                3_203_168_211_198_807_973,
                9_817_491_932_198_370_423
            ]
        );
        let mut rng = SplitMix64::new(1_234_567);
        assert_eq!(
            rng.next_f64(),
            (6_457_827_717_110_365_317_u64 >> 11) as f64 / 9_007_199_254_740_992.0
        );
    }

    #[test]
    fn unit_interval() {
        let mut rng = SplitMix64::new(0);
        let draws: Vec<f64> = (0..100_000).map(|_| rng.next_f64()).collect();
        assert!(draws.iter().all(|&u| (0.0..1.0).contains(&u)));
        let mean = draws.iter().sum::<f64>() / draws.len() as f64;
        assert!((mean - 0.5).abs() < 0.005);
    }

    #[test]
    fn streams_repeat_per_key() {
        let draw = |seed, index| {
            let mut rng = SplitMix64::stream(seed, index);
            [rng.next_u64(), rng.next_u64()]
        };
        assert_eq!(draw(42, 3), draw(42, 3));
        assert_ne!(draw(42, 3), draw(42, 4));
        assert_ne!(draw(42, 3), draw(43, 3));
    }

    #[test]
    fn bounded_draws_are_uniform() {
        let mut rng = SplitMix64::stream(42, 3);
        let mut counts = [0_usize; 7];
        for _ in 0..70_000 {
            counts[rng.below(7)] += 1;
        }
        assert!(counts.iter().all(|&c| (9_500..10_500).contains(&c)));
        assert_eq!(rng.below(0), 0);
        assert_eq!(rng.below(1), 0);
    }
}
