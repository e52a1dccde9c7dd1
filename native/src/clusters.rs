//! Clusters of a layer's points: the points themselves, their distances to their clusters'
//! means (k-means itself is `kmeans_lloyd`), and DBSCAN (a grid of `eps` cells for the
//! neighbourhoods, scikit-learn's walk for the labels).

use std::collections::HashMap;

use geos::Geom;
use rayon::prelude::*;

use super::NativeError;
use super::geos_base::to_geos;
use super::layer::{Layer, Wkb};
use super::wkb;

/// Each row's point (the centroid of a line or polygon), per batch; `None` for a NULL or
/// empty geometry.
pub fn points(layer: &Layer) -> Result<Vec<Vec<Option<[f64; 2]>>>, NativeError> {
    let geom = layer.geometry_index()?;
    let mut row = 0;
    layer
        .batches
        .iter()
        .map(|batch| {
            let wkbs = Wkb::of(batch, geom)?;
            (0..wkbs.len())
                .map(|i| {
                    row += 1;
                    let Some(bytes) = wkbs.get(i) else {
                        return Ok(None);
                    };
                    let bad = |reason: String| NativeError::Geometry {
                        row: row - 1,
                        reason,
                    };
                    if wkb::geometry_type(bytes).map_err(|e| bad(e.to_string()))? == 1 {
                        return Ok(wkb::read_point(bytes)
                            .map_err(|e| bad(e.to_string()))?
                            .map(|(x, y)| [x, y]));
                    }
                    let centroid = to_geos(bytes, row - 1)?
                        .get_centroid()
                        .map_err(NativeError::geos)?;
                    if centroid.is_empty().map_err(NativeError::geos)? {
                        return Ok(None);
                    }
                    Ok(Some([
                        centroid.get_x().map_err(NativeError::geos)?,
                        centroid.get_y().map_err(NativeError::geos)?,
                    ]))
                })
                .collect()
        })
        .collect()
}

/// Each point's distance to the mean of its cluster's points.
pub fn distances_to_centres(points: &[[f64; 2]], labels: &[usize]) -> Vec<f64> {
    let k = labels.iter().max().map_or(0, |m| m + 1);
    let mut sums = vec![[0.0, 0.0]; k];
    let mut counts = vec![0_usize; k];
    for (p, &l) in points.iter().zip(labels) {
        sums[l][0] += p[0];
        sums[l][1] += p[1];
        counts[l] += 1;
    }
    points
        .iter()
        .zip(labels)
        .map(|(p, &l)| {
            let n = counts[l] as f64;
            let (dx, dy) = (p[0] - sums[l][0] / n, p[1] - sums[l][1] / n);
            dx.hypot(dy)
        })
        .collect()
}

/// The Earth's mean radius (m): great-circle distances are measured on this sphere, as
/// scikit-learn's `haversine` metric times it.
pub const EARTH_RADIUS: f64 = 6_371_008.8;

/// The DBSCAN label of each point (−1 noise), clusters numbered in the order of their first
/// core point, border points labelled by the first cluster whose depth-first walk reaches
/// them, neighbourhoods in point order (scikit-learn's `dbscan_inner`).
pub fn dbscan(points: &[[f64; 2]], eps: f64, min_samples: usize) -> Vec<i64> {
    label(&neighbourhoods(points, eps), min_samples)
}

/// DBSCAN of longitude/latitude points with `eps` in metres of great-circle distance: the
/// points on a sphere of [`EARTH_RADIUS`], neighbours within the chord of `eps` (the same
/// pairs as the great-circle distance, which grows with the chord).
pub fn dbscan_on_sphere(points: &[[f64; 2]], eps: f64, min_samples: usize) -> Vec<i64> {
    label(&sphere_neighbourhoods(points, eps), min_samples)
}

/// ST-DBSCAN: DBSCAN where two points are neighbours only when their `times` (seconds) are at
/// most `max_gap` apart too; a point without a time has no neighbour but itself. `geodesic`:
/// longitude/latitude points, `eps` in metres of great-circle distance.
pub fn dbscan_in_time(
    points: &[[f64; 2]],
    times: &[Option<f64>],
    (eps, max_gap): (f64, f64),
    min_samples: usize,
    geodesic: bool,
) -> Vec<i64> {
    let mut hoods = if geodesic {
        sphere_neighbourhoods(points, eps)
    } else {
        neighbourhoods(points, eps)
    };
    for (i, hood) in hoods.iter_mut().enumerate() {
        hood.retain(|&j| {
            j == i || matches!((times[i], times[j]), (Some(a), Some(b)) if (a - b).abs() <= max_gap)
        });
    }
    label(&hoods, min_samples)
}

/// Each longitude/latitude point's neighbours within `eps` metres of great-circle distance.
fn sphere_neighbourhoods(points: &[[f64; 2]], eps: f64) -> Vec<Vec<usize>> {
    let on_sphere: Vec<[f64; 3]> = points
        .iter()
        .map(|p| {
            let (lon, lat) = (p[0].to_radians(), p[1].to_radians());
            [
                EARTH_RADIUS * lat.cos() * lon.cos(),
                EARTH_RADIUS * lat.cos() * lon.sin(),
                EARTH_RADIUS * lat.sin(),
            ]
        })
        .collect();
    let chord = 2.0 * EARTH_RADIUS * (eps.min(PI_RADIUS) / (2.0 * EARTH_RADIUS)).sin();
    neighbourhoods(&on_sphere, chord)
}

/// Half the Earth's circumference: no two points are further apart.
const PI_RADIUS: f64 = std::f64::consts::PI * EARTH_RADIUS;

/// Each point's neighbours within `eps` (itself included), in point order, found through a
/// grid of `eps` cells.
fn neighbourhoods<const N: usize>(points: &[[f64; N]], eps: f64) -> Vec<Vec<usize>> {
    #[allow(clippy::cast_possible_truncation)]
    let cell = |p: &[f64; N]| p.map(|v| (v / eps).floor() as i64);
    let mut grid: HashMap<[i64; N], Vec<usize>> = HashMap::new();
    for (i, p) in points.iter().enumerate() {
        grid.entry(cell(p)).or_default().push(i);
    }
    let within = |a: &[f64; N], b: &[f64; N]| {
        a.iter()
            .zip(b)
            .map(|(x, y)| (x - y) * (x - y))
            .sum::<f64>()
            .sqrt()
            <= eps
    };
    let offsets: Vec<[i64; N]> = (0..3_usize.pow(N as u32))
        .map(|mut n| {
            std::array::from_fn(|_| {
                let d = (n % 3) as i64 - 1;
                n /= 3;
                d
            })
        })
        .collect();
    points
        .par_iter()
        .map(|p| {
            let home = cell(p);
            let mut found: Vec<usize> = Vec::new();
            for offset in &offsets {
                let key: [i64; N] = std::array::from_fn(|d| home[d] + offset[d]);
                if let Some(members) = grid.get(&key) {
                    found.extend(members.iter().filter(|&&j| within(p, &points[j])));
                }
            }
            found.sort_unstable();
            found
        })
        .collect()
}

/// DBSCAN's labels from the neighbourhoods: a depth-first walk from each unlabelled core
/// point in order.
pub(crate) fn label(neighbourhoods: &[Vec<usize>], min_samples: usize) -> Vec<i64> {
    let core: Vec<bool> = neighbourhoods
        .iter()
        .map(|n| n.len() >= min_samples)
        .collect();
    let mut labels = vec![-1_i64; neighbourhoods.len()];
    let mut next_label = 0;
    let mut stack = Vec::new();
    for start in 0..neighbourhoods.len() {
        if labels[start] != -1 || !core[start] {
            continue;
        }
        let mut i = start;
        loop {
            if labels[i] == -1 {
                labels[i] = next_label;
                if core[i] {
                    stack.extend(neighbourhoods[i].iter().filter(|&&v| labels[v] == -1));
                }
            }
            let Some(top) = stack.pop() else { break };
            i = top;
        }
        next_label += 1;
    }
    labels
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dbscan_two_groups_and_an_outlier() {
        let points = [
            [0.0, 0.0],
            [0.1, 0.0],
            [0.0, 0.1],
            [5.0, 5.0],
            [5.1, 5.0],
            [5.0, 5.1],
            [20.0, 0.0],
        ];
        assert_eq!(dbscan(&points, 0.5, 3), [0, 0, 0, 1, 1, 1, -1]);
    }

    #[test]
    fn dbscan_in_time_needs_near_times_too() {
        let points = [[0.0, 0.0], [0.1, 0.0], [0.0, 0.1], [0.1, 0.1], [9.0, 9.0]];
        let day = 86_400.0;
        let times = [Some(0.0), Some(3600.0), Some(2.0 * day), None, Some(0.0)];
        // Near in space, but only the first two near in time; no time: noise.
        assert_eq!(
            dbscan_in_time(&points, &times, (0.5, day), 2, false),
            [0, 0, -1, -1, -1]
        );
        // min_samples 1: every point its own cluster at least, as scikit-learn gives.
        assert_eq!(
            dbscan_in_time(&points, &times, (0.5, day), 1, false),
            [0, 0, 1, 2, 3]
        );
    }

    #[test]
    fn dbscan_on_the_sphere_measures_metres() {
        // 0.01° of latitude is about 1,112 m anywhere; 0.01° of longitude at 60° N about 556 m.
        let points = [[10.0, 60.0], [10.01, 60.0], [10.0, 60.01], [50.0, 0.0]];
        assert_eq!(dbscan_on_sphere(&points, 600.0, 2), [0, 0, -1, -1]);
        assert_eq!(dbscan_on_sphere(&points, 1200.0, 2), [0, 0, 0, -1]);
    }
}
