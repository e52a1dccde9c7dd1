//! Nodes made of line end points as GISPulse's graph tools make them: ends within a tolerance
//! of each other are one node (single linkage), or with tolerance 0 ends whose coordinates
//! rounded to 6 decimals are equal; nodes numbered in the order their first end appears.

use std::collections::HashMap;

use petgraph::unionfind::UnionFind;
use rstar::RTree;
use rstar::primitives::GeomWithData;

/// `x` rounded to 6 decimals as Python's `round(x, 6)` does: the exact binary value rounded
/// half to even (Rust's formatting rounds the exact value the same way).
pub fn round6(x: f64) -> f64 {
    format!("{x:.6}").parse().unwrap_or(x)
}

/// The key equal ends share at tolerance 0 (`-0.0` and `0.0` alike).
fn key(p: [f64; 2]) -> (u64, u64) {
    (
        (round6(p[0]) + 0.0).to_bits(),
        (round6(p[1]) + 0.0).to_bits(),
    )
}

/// Each end's node: node numbers 0.. in the order of the first end of each node. `links`
/// (pairs of end indices) are joined too (a row's ends, for instance).
pub fn fuse(ends: &[[f64; 2]], tolerance: f64, links: &[(usize, usize)]) -> Vec<usize> {
    let mut sets = UnionFind::<usize>::new(ends.len());
    if tolerance > 0.0 {
        let tree = RTree::bulk_load(
            ends.iter()
                .enumerate()
                .map(|(i, p)| GeomWithData::new(*p, i))
                .collect(),
        );
        let reach = tolerance * tolerance;
        for (i, p) in ends.iter().enumerate() {
            for near in tree.locate_within_distance(*p, reach) {
                if near.data > i {
                    sets.union(i, near.data);
                }
            }
        }
    } else {
        let mut first: HashMap<(u64, u64), usize> = HashMap::with_capacity(ends.len());
        for (i, p) in ends.iter().enumerate() {
            let at = *first.entry(key(*p)).or_insert(i);
            sets.union(at, i);
        }
    }
    for &(a, b) in links {
        sets.union(a, b);
    }
    let mut number: HashMap<usize, usize> = HashMap::new();
    ends.iter()
        .enumerate()
        .map(|(i, _)| {
            let root = sets.find(i);
            let next = number.len();
            *number.entry(root).or_insert(next)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounding_is_pythons_round_to_six_decimals() {
        assert_eq!(round6(1.000_000_4), 1.0);
        assert_eq!(round6(1.000_000_6), 1.000_001);
        // 0.0000005 is just below half a unit in binary: rounds down, as Python's round does.
        assert_eq!(round6(0.000_000_5), 0.0);
        assert_eq!(round6(0.000_001_5), 0.000_002);
        assert_eq!(round6(-2.5e-7), -0.0);
    }

    #[test]
    fn nodes_are_numbered_by_first_end_and_join_through_chains() {
        let ends = [
            [0.0, 0.0],
            [1.0, 0.0],
            [1.0 + 4e-7, 0.0],
            [5.0, 5.0],
            [5.4, 5.0],
            [5.8, 5.0],
        ];
        assert_eq!(fuse(&ends, 0.0, &[]), vec![0, 1, 1, 2, 3, 4]);
        // Single linkage: 5.0 and 5.8 are 0.8 apart but linked through 5.4.
        assert_eq!(fuse(&ends, 0.5, &[]), vec![0, 1, 1, 2, 2, 2]);
        assert_eq!(fuse(&ends, 0.0, &[(0, 3)]), vec![0, 1, 1, 0, 2, 3]);
    }
}
