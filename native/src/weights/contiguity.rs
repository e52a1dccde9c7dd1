//! Contiguity weights from polygon rings, libpysal's vertex-based Queen and Rook.

use rayon::prelude::*;

use super::Weights;

/// Contiguity weights (all 1) from each feature's polygon rings, libpysal's vertex-based
/// `Queen`/`Rook.from_dataframe`: Queen neighbours share at least one vertex (exactly equal
/// coordinates, -0 equal to 0), Rook neighbours at least one edge (two consecutive vertices of
/// a ring, in either direction). Pass every ring of every part of a multipolygon. `None` (no
/// geometry) gives an island; vertices with a NaN coordinate match nothing. Edges are taken
/// within each ring, whereas libpysal also pairs the last vertex of one ring with the first of
/// the next; those spurious edges only matter if two features repeat the same ring junction.
pub fn contiguity(features: &[Option<Vec<Vec<[f64; 2]>>>], rook: bool) -> Weights {
    let rings = features
        .iter()
        .enumerate()
        .filter_map(|(f, rings)| Some((f, rings.as_ref()?)));
    let rows = if rook {
        let edges = rings.flat_map(|(f, rings)| rings.iter().flat_map(move |r| edge_keys(r, f)));
        features_sharing(edges.collect(), features.len())
    } else {
        let vertices = rings.flat_map(|(f, rings)| {
            rings
                .iter()
                .flatten()
                .filter_map(move |&p| Some((vertex_key(p)?, f)))
        });
        features_sharing(vertices.collect(), features.len())
    };
    Weights { neighbours: rows }
}

/// A vertex's identity: its coordinates' bits with -0 folded onto 0; `None` for NaN.
fn vertex_key(p: [f64; 2]) -> Option<[u64; 2]> {
    let bits = |v: f64| if v == 0.0 { 0 } else { v.to_bits() };
    (!p[0].is_nan() && !p[1].is_nan()).then(|| [bits(p[0]), bits(p[1])])
}

/// The undirected edges of a ring, each keyed by its two vertices in ascending key order; a
/// repeated vertex makes no edge (as in libpysal).
fn edge_keys(ring: &[[f64; 2]], feature: usize) -> impl Iterator<Item = ([u64; 4], usize)> + '_ {
    ring.windows(2).filter_map(move |pair| {
        let (a, b) = (vertex_key(pair[0])?, vertex_key(pair[1])?);
        if a == b {
            return None;
        }
        let (lo, hi) = if a <= b { (a, b) } else { (b, a) };
        Some(([lo[0], lo[1], hi[0], hi[1]], feature))
    })
}

/// Neighbour rows (weight 1) linking every two features that carry an equal key.
fn features_sharing<K: Ord + Copy + Send>(
    mut keyed: Vec<(K, usize)>,
    n: usize,
) -> Vec<Vec<(usize, f64)>> {
    keyed.par_sort_unstable();
    keyed.dedup();
    let mut pairs = Vec::new();
    for group in keyed.chunk_by(|a, b| a.0 == b.0).filter(|g| g.len() > 1) {
        for &(_, a) in group {
            pairs.extend(group.iter().filter(|&&(_, b)| b != a).map(|&(_, b)| (a, b)));
        }
    }
    pairs.par_sort_unstable();
    pairs.dedup();
    let mut rows = vec![Vec::new(); n];
    for (a, b) in pairs {
        rows[a].push((b, 1.0));
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    fn square(x: f64, y: f64) -> Option<Vec<Vec<[f64; 2]>>> {
        Some(vec![vec![
            [x, y],
            [x + 1.0, y],
            [x + 1.0, y + 1.0],
            [x, y + 1.0],
            [x, y],
        ]])
    }

    fn ids(w: &Weights) -> Vec<Vec<usize>> {
        w.neighbours
            .iter()
            .map(|row| row.iter().map(|&(j, _)| j).collect())
            .collect()
    }

    #[test]
    fn queen_and_rook_on_a_two_by_two_grid() {
        // 0 1 / 2 3 from the bottom left; 0 and 3 touch at a corner only; 4 has no geometry.
        let cells = vec![
            square(0.0, 0.0),
            square(1.0, 0.0),
            square(0.0, 1.0),
            square(1.0, 1.0),
            None,
        ];
        let queen = contiguity(&cells, false);
        assert_eq!(
            ids(&queen),
            vec![
                vec![1, 2, 3],
                vec![0, 2, 3],
                vec![0, 1, 3],
                vec![0, 1, 2],
                vec![]
            ]
        );
        let rook = contiguity(&cells, true);
        assert_eq!(
            ids(&rook),
            vec![vec![1, 2], vec![0, 3], vec![0, 3], vec![1, 2], vec![]]
        );
        assert_eq!(rook.islands(), vec![4]);
    }

    #[test]
    fn negative_zero_is_the_same_vertex() {
        let a = Some(vec![vec![[-1.0, 0.0], [0.0, 0.0], [-1.0, 1.0]]]);
        let b = Some(vec![vec![[-0.0, 0.0], [1.0, 0.0], [1.0, -1.0]]]);
        assert_eq!(ids(&contiguity(&[a, b], false)), vec![vec![1], vec![0]]);
    }

    #[test]
    fn a_repeated_vertex_is_no_edge() {
        // Two unit squares meeting at (1, 1), each repeating that corner: a shared vertex, no
        // shared edge.
        let a = Some(vec![vec![
            [0.0, 0.0],
            [1.0, 0.0],
            [1.0, 1.0],
            [1.0, 1.0],
            [0.0, 1.0],
            [0.0, 0.0],
        ]]);
        let b = Some(vec![vec![
            [1.0, 1.0],
            [1.0, 1.0],
            [2.0, 1.0],
            [2.0, 2.0],
            [1.0, 2.0],
            [1.0, 1.0],
        ]]);
        let cells = [a, b];
        assert_eq!(ids(&contiguity(&cells, false)), vec![vec![1], vec![0]]);
        assert_eq!(
            ids(&contiguity(&cells, true)),
            vec![Vec::<usize>::new(), Vec::new()]
        );
    }
}
