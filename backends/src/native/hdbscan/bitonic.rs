//! x86-simd-sort's bitonic sorting networks of 8-lane key/index registers, which sort the
//! ranges of at most 256 values in NumPy's argsort.

use super::argsort::{LANES, key};

/// An 8-lane key/index register.
#[derive(Clone, Copy)]
struct Register {
    keys: [f64; LANES],
    ids: [usize; LANES],
}

impl Register {
    /// Lane `i` takes lane `partner(i)`'s content.
    fn permuted(self, partner: impl Fn(usize) -> usize) -> Register {
        Register {
            keys: std::array::from_fn(|i| self.keys[partner(i)]),
            ids: std::array::from_fn(|i| self.ids[partner(i)]),
        }
    }

    fn reversed(self) -> Register {
        self.permuted(|i| i ^ 7)
    }

    /// x86-simd-sort's key/index `cmp_merge`: each lane meets lane `partner(i)`, lanes in
    /// `max_lanes` keep the larger key and the others the smaller; a lane keeps its own
    /// index when its key is unchanged.
    fn cmp_merge(self, partner: impl Fn(usize) -> usize, max_lanes: u8) -> Register {
        let other = self.permuted(partner);
        let mut out = self;
        for lane in 0..LANES {
            let (mine, theirs) = (self.keys[lane], other.keys[lane]);
            let (low, high) = simd_min_max(theirs, mine);
            let k = if max_lanes >> lane & 1 == 1 {
                high
            } else {
                low
            };
            out.keys[lane] = k;
            out.ids[lane] = if k == mine {
                self.ids[lane]
            } else {
                other.ids[lane]
            };
        }
        out
    }

    /// Sorts the 8 lanes (x86-simd-sort's `sort_reg_8lanes`).
    fn sorted(self) -> Register {
        self.cmp_merge(|i| i ^ 1, 0xAA)
            .cmp_merge(|i| i ^ 3, 0xCC)
            .cmp_merge(|i| i ^ 1, 0xAA)
            .cmp_merge(|i| i ^ 7, 0xF0)
            .cmp_merge(|i| i ^ 2, 0xCC)
            .cmp_merge(|i| i ^ 1, 0xAA)
    }

    /// Sorts a bitonic register (x86-simd-sort's `bitonic_merge_reg_8lanes`).
    fn bitonic_merged(self) -> Register {
        self.cmp_merge(|i| i ^ 4, 0xF0)
            .cmp_merge(|i| i ^ 2, 0xCC)
            .cmp_merge(|i| i ^ 1, 0xAA)
    }
}

/// `(_mm512_min_pd(a, b), _mm512_max_pd(a, b))` lane values: the second operand unless the
/// first is strictly smaller (resp. larger).
fn simd_min_max(a: f64, b: f64) -> (f64, f64) {
    (if a < b { a } else { b }, if a > b { a } else { b })
}

/// x86-simd-sort's key/index `COEX` of two registers: lane-wise smaller keys to `a`,
/// indices following their keys, equal keys staying put.
fn coex(a: &mut Register, b: &mut Register) {
    for lane in 0..LANES {
        let (ka, kb) = (a.keys[lane], b.keys[lane]);
        let (low, high) = simd_min_max(ka, kb);
        let stays = low == ka;
        let (ia, ib) = (a.ids[lane], b.ids[lane]);
        a.keys[lane] = low;
        b.keys[lane] = high;
        a.ids[lane] = if stays { ia } else { ib };
        b.ids[lane] = if stays { ib } else { ia };
    }
}

/// x86-simd-sort's `argsort_n<…, 256>`: sorts up to 256 indices by their values with a
/// bitonic network over the smallest power-of-two number of registers that holds them
/// (missing lanes padded with +∞).
pub(super) fn network_argsort(values: &[f64], arg: &mut [usize]) {
    let n = arg.len();
    let mut count = 256 / LANES;
    while count > 1 && n * 2 <= count * LANES {
        count /= 2;
    }
    let mut registers: Vec<Register> = (0..count)
        .map(|r| {
            let lane_at = |lane: usize| arg.get(r * LANES + lane).copied();
            let ids: [usize; LANES] =
                std::array::from_fn(|lane| lane_at(lane).unwrap_or(usize::MAX));
            let keys =
                std::array::from_fn(|lane| lane_at(lane).map_or(f64::INFINITY, |i| key(values, i)));
            Register { keys, ids }.sorted()
        })
        .collect();
    let mut width = 2;
    while width <= count {
        for group in registers.chunks_mut(width) {
            bitonic_merge_registers(group);
        }
        width *= 2;
    }
    for (slot, id) in arg.iter_mut().zip(registers.iter().flat_map(|r| r.ids)) {
        *slot = id;
    }
}

/// x86-simd-sort's `bitonic_merge_n_vec`: merges a group of registers whose two halves are
/// each sorted.
fn bitonic_merge_registers(group: &mut [Register]) {
    let m = group.len();
    for i in 0..m / 2 {
        let (low, high) = group.split_at_mut(m - 1 - i);
        let (Some(a), Some(b)) = (low.get_mut(i), high.first_mut()) else {
            continue;
        };
        *b = b.reversed();
        coex(a, b);
        *b = b.reversed();
    }
    let mut half = m / 2;
    while half >= 2 {
        for block in group.chunks_mut(half) {
            let (low, high) = block.split_at_mut(half / 2);
            for (a, b) in low.iter_mut().zip(high.iter_mut()) {
                coex(a, b);
            }
        }
        half /= 2;
    }
    for register in group.iter_mut() {
        *register = register.bitonic_merged();
    }
}
