//! NumPy's `np.argsort` of float64 on AVX-512 x86-64 (x86-simd-sort's `avx512_argsort`),
//! including the order it gives equal values: the quicksort and its partitions.

use super::bitonic::network_argsort;
use super::std_sort::std_sort;

/// `np.argsort(values)` (default kind) as NumPy 2 computes it on AVX-512 x86-64, including
/// the order of equal values: x86-simd-sort's `avx512_argsort<double>`.
///
/// Arrays holding NaN are sorted by `std::sort` with NaN last; already ascending arrays are
/// left in index order; otherwise a quicksort with median-of-8 pivots partitions in place
/// the way the 8-lane compress-stores do, recursing at most `2·⌊log₂ n⌋` levels before
/// handing a range to `std::sort`, and sorting ranges of at most 256 elements with bitonic
/// networks of 8-lane registers.
pub(super) fn numpy_argsort(values: &[f64]) -> Vec<usize> {
    let n = values.len();
    let mut arg: Vec<usize> = (0..n).collect();
    if n < 2 {
        return arg;
    }
    if values.iter().any(|v| v.is_nan()) {
        std_sort(&mut arg, &|a, b| {
            let (x, y) = (key(values, a), key(values, b));
            if !x.is_nan() && !y.is_nan() {
                x < y
            } else {
                !x.is_nan()
            }
        });
        return arg;
    }
    if values.windows(2).all(|w| w[0] <= w[1]) {
        return arg;
    }
    let budget = 2 * n.ilog2() as usize;
    simd_argsort(values, &mut arg, 0, n - 1, budget);
    arg
}

/// The value at index `i`, +∞ past the end.
pub(super) fn key(values: &[f64], i: usize) -> f64 {
    values.get(i).copied().unwrap_or(f64::INFINITY)
}

/// x86-simd-sort's `argsort_` over `arg[left..=right]`.
fn simd_argsort(values: &[f64], arg: &mut [usize], left: usize, right: usize, budget: usize) {
    if budget == 0 {
        std_sort(&mut arg[left..=right], &|a, b| {
            key(values, a) < key(values, b)
        });
        return;
    }
    if right + 1 - left <= 256 {
        network_argsort(values, &mut arg[left..=right]);
        return;
    }
    let pivot = pivot_of_8(values, arg, left, right);
    let (split, smallest, biggest) = simd_partition(values, arg, left, right + 1, pivot);
    if pivot != smallest {
        simd_argsort(values, arg, left, split - 1, budget - 1);
    }
    if pivot != biggest {
        simd_argsort(values, arg, split, right, budget - 1);
    }
}

/// The 5th smallest of the 8 values at `left + k·⌊(right − left) / 8⌋`, `k = 1..=8`.
fn pivot_of_8(values: &[f64], arg: &[usize], left: usize, right: usize) -> f64 {
    let step = (right - left) / 8;
    let mut sample: Vec<f64> = (1..=8).map(|k| key(values, arg[left + k * step])).collect();
    sample.sort_by(f64::total_cmp);
    sample[4]
}

/// Lanes of one 8-lane register.
pub(super) const LANES: usize = 8;
/// Registers partitioned per round (x86-simd-sort's unroll factor for this partition).
const UNROLL: usize = 4;

/// The smallest and biggest values seen by a partition.
struct Extremes {
    smallest: f64,
    biggest: f64,
}

impl Extremes {
    fn see(&mut self, v: f64) {
        if v < self.smallest {
            self.smallest = v;
        }
        if self.biggest < v {
            self.biggest = v;
        }
    }
}

/// x86-simd-sort's `argpartition_unrolled<4>` over `arg[left..right]`: indices of values
/// below `pivot` first; returns the split and the range's smallest and biggest values.
fn simd_partition(
    values: &[f64],
    arg: &mut [usize],
    left: usize,
    right: usize,
    pivot: f64,
) -> (usize, f64, f64) {
    let mut seen = Extremes {
        smallest: f64::INFINITY,
        biggest: f64::NEG_INFINITY,
    };
    let (mut left, mut right) = (left, right);
    // Shorten the range to a multiple of UNROLL registers, one element at a time.
    for _ in 0..(right - left) % (UNROLL * LANES) {
        let v = key(values, arg[left]);
        seen.see(v);
        if v < pivot {
            left += 1;
        } else {
            right -= 1;
            arg.swap(left, right);
        }
    }
    if left == right {
        return (left, seen.smallest, seen.biggest);
    }
    // The first and last UNROLL registers are held back and stored at the end; in between,
    // UNROLL registers at a time are loaded from whichever side has less room to store.
    let first: Vec<Register8> = (0..UNROLL).map(|i| load(arg, left + LANES * i)).collect();
    let last: Vec<Register8> = (0..UNROLL)
        .map(|i| load(arg, right - LANES * (UNROLL - i)))
        .collect();
    let mut stores = Stores {
        left,
        right: right - LANES,
    };
    left += UNROLL * LANES;
    right -= UNROLL * LANES;
    while right != left {
        let at = if (stores.right + LANES) - right < left - stores.left {
            right -= UNROLL * LANES;
            right
        } else {
            left += UNROLL * LANES;
            left - UNROLL * LANES
        };
        let registers: Vec<Register8> = (0..UNROLL).map(|i| load(arg, at + LANES * i)).collect();
        for register in &registers {
            stores.store(values, arg, register, pivot, &mut seen);
        }
    }
    for register in first.iter().chain(&last) {
        stores.store(values, arg, register, pivot, &mut seen);
    }
    (stores.left, seen.smallest, seen.biggest)
}

/// Eight indices, as a partition loads them.
type Register8 = [usize; LANES];

/// The register at `arg[at..at + 8]`.
fn load(arg: &[usize], at: usize) -> Register8 {
    std::array::from_fn(|lane| arg[at + lane])
}

/// Where a partition stores next: indices below the pivot from `left` up, the others
/// ending at `right + LANES`.
struct Stores {
    left: usize,
    right: usize,
}

impl Stores {
    fn store(
        &mut self,
        values: &[f64],
        arg: &mut [usize],
        register: &Register8,
        pivot: f64,
        seen: &mut Extremes,
    ) {
        let ge = partition_register(values, arg, self.left, self.right + LANES, register, pivot);
        for &i in register {
            seen.see(key(values, i));
        }
        self.left += LANES - ge;
        self.right -= ge;
    }
}

/// One register's compress-stores: lanes below `pivot` to `arg[l_store..]`, the others to
/// the end of `arg[..r_end]`, each in lane order; returns how many were not below.
fn partition_register(
    values: &[f64],
    arg: &mut [usize],
    l_store: usize,
    r_end: usize,
    register: &Register8,
    pivot: f64,
) -> usize {
    let ge = register
        .iter()
        .filter(|&&i| key(values, i) >= pivot)
        .count();
    let below = register.iter().filter(|&&i| key(values, i) < pivot);
    for (at, &i) in (l_store..).zip(below) {
        arg[at] = i;
    }
    let above = register.iter().filter(|&&i| key(values, i) >= pivot);
    for (at, &i) in (r_end - ge..).zip(above) {
        arg[at] = i;
    }
    ge
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn argsort_orders_ties_as_numpy() {
        // np.argsort([0, 2, 4, 1, 3] * 4) on AVX-512 (a stable sort would give 0 5 10 15 …).
        let values: Vec<f64> = (0..20).map(|i| ((i * 7) % 5) as f64).collect();
        let expected = [
            0, 5, 15, 10, 8, 13, 3, 18, 11, 6, 16, 1, 14, 19, 4, 9, 12, 7, 2, 17,
        ];
        assert_eq!(numpy_argsort(&values), expected);
    }

    #[test]
    fn argsort_orders_values() {
        let values: Vec<f64> = (0..1000).map(|i| ((i * 7919) % 13) as f64).collect();
        let order = numpy_argsort(&values);
        assert!(order.windows(2).all(|w| values[w[0]] <= values[w[1]]));
        let mut seen = order.clone();
        seen.sort_unstable();
        assert_eq!(seen, (0..1000).collect::<Vec<_>>());
    }
}
