//! Great-circle distances as scikit-learn's compiled `haversine` metric computes them, for
//! Prim's algorithm and for the core distances alike.

use super::core_distances::brute_core_distances;

/// Points on the unit sphere as scikit-learn's haversine metric reads them: latitude and
/// longitude in radians (`degrees · π/180`, as `np.radians`), with the cosine of the latitude.
pub(super) struct Sphere {
    points: Vec<[f64; 3]>,
}

impl Sphere {
    /// From longitude/latitude points in degrees.
    pub(super) fn new(points: &[[f64; 2]]) -> Self {
        let points = points
            .iter()
            .map(|&[lon, lat]| {
                let lat = lat.to_radians();
                [lat, lon.to_radians(), lat.cos()]
            })
            .collect();
        Sphere { points }
    }

    /// The haversine of the angle between points `i` and `j` (the metric's `rdist`:
    /// `sin²(Δlat/2) + cos(lat₁)·cos(lat₂)·sin²(Δlon/2)`, in that order of operations).
    fn haversine(&self, i: usize, j: usize) -> f64 {
        let (Some(a), Some(b)) = (self.points.get(i), self.points.get(j)) else {
            return f64::NAN;
        };
        let sin_lat = (0.5 * (a[0] - b[0])).sin();
        let sin_lon = (0.5 * (a[1] - b[1])).sin();
        sin_lat * sin_lat + a[2] * b[2] * sin_lon * sin_lon
    }

    /// The angle between points `i` and `j` as the compiled metric's `dist` gives it to
    /// Prim's algorithm: `2·asin(√h)` with the C library's `asin`.
    pub(super) fn distance(&self, i: usize, j: usize) -> f64 {
        2.0 * self.haversine(i, j).sqrt().asin()
    }

    /// Core distances: the `k`-th smallest haversine from each point (itself included, at 0),
    /// converted as [`Sphere::distance`] converts it, so a core distance equals the pair
    /// distance it comes from.
    pub(super) fn core_distances(&self, k: usize) -> Vec<f64> {
        let n = self.points.len();
        let haversines = brute_core_distances(n, &|i, j| self.haversine(i, j), k);
        haversines
            .into_iter()
            .map(|h| 2.0 * h.sqrt().asin())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn angles_on_the_unit_sphere() {
        let sphere = Sphere::new(&[[0.0, 0.0], [90.0, 0.0], [0.0, 90.0], [0.0, -90.0]]);
        let quarter = std::f64::consts::FRAC_PI_2;
        assert!((sphere.distance(0, 1) - quarter).abs() < 1e-15);
        assert!((sphere.distance(0, 2) - quarter).abs() < 1e-15);
        assert!((sphere.distance(2, 3) - 2.0 * quarter).abs() < 1e-15);
        assert_eq!(sphere.distance(1, 1), 0.0);
    }

    #[test]
    fn core_distances_rank_by_haversine() {
        let sphere = Sphere::new(&[[0.0, 0.0], [1.0, 0.0], [3.0, 0.0]]);
        assert_eq!(sphere.core_distances(1), vec![0.0; 3]);
        let core = sphere.core_distances(3);
        assert_eq!(core[0], sphere.distance(0, 2));
        assert!((core[0] - 3f64.to_radians()).abs() < 1e-15);
    }
}
