//! NumPy's legacy `RandomState` sample of a layer's rows, as pandas' `sample(n,
//! random_state=seed)` draws it: the 32-bit Mersenne Twister (MT19937, Matsumoto and
//! Nishimura 1998) seeded by `init_genrand`, integers in `0..=max` by masked rejection, the row
//! numbers shuffled by Fisher–Yates from the last one (or drawn independently with
//! replacement), the rows taken in the order drawn.

use arrow::array::UInt32Array;
use arrow::compute::{concat_batches, take_record_batch};
use geomill_planner::plan::ops::numpy_sample::{NumpySampleOp, SampleSize};

use crate::NativeError;
use crate::layer::Layer;

/// MT19937's state size.
const N: usize = 624;

/// The 32-bit Mersenne Twister as NumPy's legacy generator runs it.
pub struct Mt19937 {
    state: [u32; N],
    index: usize,
}

impl Mt19937 {
    /// Seeded as `init_genrand(seed)` (NumPy's `RandomState(seed)` for an integer seed).
    pub fn new(seed: u32) -> Self {
        let mut state = [0u32; N];
        state[0] = seed;
        for i in 1..N {
            let previous = state[i - 1];
            state[i] = 1_812_433_253u32
                .wrapping_mul(previous ^ (previous >> 30))
                .wrapping_add(i as u32);
        }
        Self { state, index: N }
    }

    fn twist(&mut self) {
        const M: usize = 397;
        for i in 0..N {
            let y = (self.state[i] & 0x8000_0000) | (self.state[(i + 1) % N] & 0x7fff_ffff);
            let mut next = self.state[(i + M) % N] ^ (y >> 1);
            if y & 1 == 1 {
                next ^= 0x9908_b0df;
            }
            self.state[i] = next;
        }
        self.index = 0;
    }

    /// The next 32 random bits (tempered).
    pub fn next_u32(&mut self) -> u32 {
        if self.index >= N {
            self.twist();
        }
        let mut y = self.state[self.index];
        self.index += 1;
        y ^= y >> 11;
        y ^= (y << 7) & 0x9d2c_5680;
        y ^= (y << 15) & 0xefc6_0000;
        y ^ (y >> 18)
    }

    /// Uniform in [0, 1) with 53 random bits (NumPy's legacy `random_sample`).
    pub fn random_sample(&mut self) -> f64 {
        let a = f64::from(self.next_u32() >> 5);
        let b = f64::from(self.next_u32() >> 6);
        (a * 67_108_864.0 + b) / 9_007_199_254_740_992.0
    }

    /// Uniform in `0..=max` (`max` < 2^32): outputs masked to the smallest all-ones mask
    /// covering `max`, redrawn while above it (NumPy's legacy `random_interval`).
    pub fn interval(&mut self, max: u32) -> u32 {
        if max == 0 {
            return 0;
        }
        let mask = u32::MAX >> max.leading_zeros();
        loop {
            let value = self.next_u32() & mask;
            if value <= max {
                return value;
            }
        }
    }
}

/// The row numbers `op` draws from `rows` rows, in the order drawn.
pub fn sample_rows(op: &NumpySampleOp, rows: usize) -> Result<Vec<u32>, NativeError> {
    let count = u32::try_from(rows)
        .map_err(|_| NativeError::Declined(format!("a sample of {rows} rows")))?;
    let size = match op.size {
        SampleSize::Rows(n) => usize::try_from(n).unwrap_or(usize::MAX),
        // Python's `round`: halves to even.
        SampleSize::Fraction(f) => (f * rows as f64).round_ties_even() as usize,
    };
    let mut generator = Mt19937::new(op.seed);
    if count == 0 {
        return Ok(Vec::new());
    }
    if op.replace {
        return Ok((0..size).map(|_| generator.interval(count - 1)).collect());
    }
    let mut order: Vec<u32> = (0..count).collect();
    for i in (1..rows).rev() {
        let j = generator.interval(i as u32) as usize;
        order.swap(i, j);
    }
    order.truncate(size.min(rows));
    Ok(order)
}

/// The first input's rows sampled by `op`.
pub fn run(op: &NumpySampleOp, inputs: &[&Layer]) -> Result<Layer, NativeError> {
    let layer = super::first(op, inputs)?;
    let rows = sample_rows(op, layer.num_rows())?;
    let all = concat_batches(&layer.schema, &layer.batches).map_err(NativeError::arrow)?;
    let taken = take_record_batch(&all, &UInt32Array::from(rows)).map_err(NativeError::arrow)?;
    Layer::new(
        layer.schema.clone(),
        vec![taken],
        &layer.geometry,
        layer.crs.clone(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_the_reference_mersenne_twister() {
        // The first outputs of `init_genrand(5489)`, the generator's published test vector.
        let mut generator = Mt19937::new(5489);
        let first: Vec<u32> = (0..3).map(|_| generator.next_u32()).collect();
        assert_eq!(first, [3_499_211_612, 581_869_302, 3_890_346_734]);
    }

    #[test]
    fn draws_as_numpy_permutation() {
        // numpy.random.RandomState(42).permutation(10)
        let op = NumpySampleOp {
            size: SampleSize::Rows(10),
            seed: 42,
            replace: false,
        };
        assert_eq!(
            sample_rows(&op, 10).unwrap(),
            [8, 1, 5, 0, 7, 2, 9, 4, 3, 6]
        );
        // numpy.random.RandomState(7).choice(10, 4, replace=True)
        let drawn = NumpySampleOp {
            size: SampleSize::Rows(4),
            seed: 7,
            replace: true,
        };
        assert_eq!(sample_rows(&drawn, 10).unwrap(), [4, 9, 6, 3]);
    }
}
