//! Weights between points by distance, libpysal's `KNN` and `DistanceBand`, searched in a k-d
//! tree.

use rayon::prelude::*;

use super::Weights;
use super::kdtree::{KdTree, Metric, usable};

/// The `k` nearest other points of each point, weight 1 (libpysal `KNN`). Ties in distance go
/// to the lower row index (libpysal breaks them arbitrarily). Coincident points are neighbours
/// at distance 0. `None` or non-finite points are islands and nobody's neighbour; with fewer
/// than `k` other points a row lists them all.
pub fn knn(points: &[Option<[f64; 2]>], k: usize, metric: Metric) -> Weights {
    let tree = KdTree::new(points, metric);
    let rows = points.par_iter().enumerate().map(|(i, p)| {
        let Some(q) = usable(*p) else {
            return Vec::new();
        };
        let best = tree.nearest(metric.embed(q), k, i);
        let mut row: Vec<(usize, f64)> = best.into_iter().map(|(_, j)| (j, 1.0)).collect();
        row.sort_unstable_by_key(|&(j, _)| j);
        row
    });
    Weights {
        neighbours: rows.collect(),
    }
}

/// Neighbours within `threshold` (inclusive), libpysal `DistanceBand`: weight 1 when `alpha`
/// is `None` (`binary=True`), else `d^alpha` (`binary=False`; libpysal's default alpha is -1,
/// inverse distance). As in libpysal, points at distance 0 (coincident) are never neighbours,
/// and a weight that is infinite or 0 is dropped. `None` or non-finite points are islands.
pub fn distance_band(
    points: &[Option<[f64; 2]>],
    threshold: f64,
    alpha: Option<f64>,
    metric: Metric,
) -> Weights {
    let tree = KdTree::new(points, metric);
    let reach = metric.reach(threshold);
    let rows = points.par_iter().enumerate().map(|(i, p)| {
        let Some(q) = usable(*p) else {
            return Vec::new();
        };
        let found = tree.within(metric.embed(q), reach * reach);
        let mut row: Vec<(usize, f64)> = found
            .into_iter()
            .filter(|&(_, j)| j != i)
            .map(|(d2, j)| (j, metric.distance_at(d2.sqrt())))
            .filter(|&(_, d)| d > 0.0 && d <= threshold)
            .map(|(j, d)| (j, alpha.map_or(1.0, |a| d.powf(a))))
            .filter(|&(_, w)| w.is_finite() && w != 0.0)
            .collect();
        row.sort_unstable_by_key(|&(j, _)| j);
        row
    });
    Weights {
        neighbours: rows.collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::random::SplitMix64;

    fn ids(w: &Weights) -> Vec<Vec<usize>> {
        w.neighbours
            .iter()
            .map(|row| row.iter().map(|&(j, _)| j).collect())
            .collect()
    }

    #[test]
    fn knn_on_a_line_breaks_ties_by_row() {
        let points: Vec<Option<[f64; 2]>> = (0..5).map(|i| Some([f64::from(i), 0.0])).collect();
        let w = knn(&points, 2, Metric::Euclidean);
        assert_eq!(
            ids(&w),
            vec![vec![1, 2], vec![0, 2], vec![1, 3], vec![2, 4], vec![2, 3]]
        );
    }

    #[test]
    fn knn_matches_brute_force() {
        let mut rng = SplitMix64::new(7);
        let points: Vec<Option<[f64; 2]>> = (0..500)
            .map(|_| Some([rng.next_f64() * 10.0, rng.next_f64()]))
            .collect();
        let w = knn(&points, 5, Metric::Euclidean);
        for (i, p) in points.iter().enumerate() {
            let mut all: Vec<(f64, usize)> = points
                .iter()
                .enumerate()
                .filter(|&(j, _)| j != i)
                .map(|(j, o)| (Metric::Euclidean.distance(p.unwrap(), o.unwrap()), j))
                .collect();
            all.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
            let mut expected: Vec<usize> = all[..5].iter().map(|&(_, j)| j).collect();
            expected.sort_unstable();
            assert_eq!(ids(&w)[i], expected);
        }
    }

    #[test]
    fn distance_band_is_inclusive_and_skips_coincident_points() {
        let points = vec![
            Some([0.0, 0.0]),
            Some([3.0, 4.0]),
            Some([0.0, 0.0]),
            None,
            Some([10.0, 0.0]),
        ];
        let w = distance_band(&points, 5.0, None, Metric::Euclidean);
        assert_eq!(ids(&w), vec![vec![1], vec![0, 2], vec![1], vec![], vec![]]);
        let inverse = distance_band(&points, 5.0, Some(-1.0), Metric::Euclidean);
        assert_eq!(inverse.neighbours[1], vec![(0, 0.2), (2, 0.2)]);
    }

    #[test]
    fn great_circle_band_crosses_the_antimeridian() {
        let points = vec![Some([179.9, 0.0]), Some([-179.9, 0.0]), Some([0.0, 0.0])];
        let w = distance_band(&points, 30.0, None, Metric::GreatCircle { radius: 6371.0 });
        assert_eq!(ids(&w), vec![vec![1], vec![0], vec![]]);
    }
}
