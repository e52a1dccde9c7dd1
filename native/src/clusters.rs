//! Clusters of a layer's points: k-means (Lloyd's iterations, k-means++ seeding) and DBSCAN
//! (a grid of `eps` cells for the neighbourhoods, scikit-learn's walk for the labels).

use std::collections::HashMap;

use geos::Geom;
use rayon::prelude::*;

use super::NativeError;
use super::geos_base::to_geos;
use super::layer::{Layer, Wkb};
use super::random::SplitMix64;
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

fn squared(a: [f64; 2], b: [f64; 2]) -> f64 {
    let (dx, dy) = (a[0] - b[0], a[1] - b[1]);
    dx * dx + dy * dy
}

/// k-means++: the first centre drawn uniformly, each next one with probability proportional
/// to the squared distance to the nearest centre already chosen.
fn kmeans_plus_plus(points: &[[f64; 2]], k: usize, seed: u64) -> Vec<[f64; 2]> {
    let mut random = SplitMix64::new(seed);
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let first = ((random.next_f64() * points.len() as f64) as usize).min(points.len() - 1);
    let mut centres = vec![points[first]];
    let mut distances: Vec<f64> = points.iter().map(|p| squared(*p, points[first])).collect();
    while centres.len() < k {
        let total: f64 = distances.iter().sum();
        if total <= 0.0 {
            break;
        }
        let mut target = random.next_f64() * total;
        let mut chosen = points.len() - 1;
        for (i, d) in distances.iter().enumerate() {
            if target < *d {
                chosen = i;
                break;
            }
            target -= d;
        }
        centres.push(points[chosen]);
        for (d, p) in distances.iter_mut().zip(points) {
            *d = d.min(squared(*p, points[chosen]));
        }
    }
    centres
}

/// Points per partial sum of a k-means step.
const SUM_CHUNK: usize = 4096;

/// The cluster of each point by k-means: Lloyd's iterations from `init` (or k-means++ seeded
/// by `seed`) until no point changes cluster, or `max_iter`. A centre left without points
/// keeps its place. Each assignment is Lloyd's, with Hamerly's bounds (the distance to the
/// point's centre, to the second nearest, and half the gap between centres) skipping the
/// points whose centre cannot have changed: the same labels, most points not measured again.
pub fn kmeans(
    points: &[[f64; 2]],
    k: usize,
    init: &[[f64; 2]],
    seed: u64,
    max_iter: usize,
) -> Vec<usize> {
    if points.is_empty() {
        return Vec::new();
    }
    let mut centres = if init.is_empty() {
        kmeans_plus_plus(points, k.min(points.len()), seed)
    } else {
        init.to_vec()
    };
    let mut bounds: Vec<Bounds> = points
        .par_iter()
        .map(|p| Bounds::of(&centres, *p))
        .collect();
    // Sums per fixed chunk of points, then the chunks' sums in order: the same centres whatever
    // the number of threads. A chunk's sums are computed again only when a label in it changed.
    let chunks = points.len().div_ceil(SUM_CHUNK);
    let mut partial: Vec<(Vec<[f64; 2]>, Vec<usize>)> = vec![(Vec::new(), Vec::new()); chunks];
    let mut changed = vec![true; chunks];
    for _ in 0..max_iter {
        partial
            .par_iter_mut()
            .zip(
                points
                    .par_chunks(SUM_CHUNK)
                    .zip(bounds.par_chunks(SUM_CHUNK)),
            )
            .zip(changed.par_iter())
            .filter(|(_, changed)| **changed)
            .for_each(|((part, (chunk, chunk_bounds)), _)| {
                *part = chunk_sums(chunk, chunk_bounds, centres.len());
            });
        let mut sums = vec![[0.0, 0.0]; centres.len()];
        let mut counts = vec![0_usize; centres.len()];
        for (chunk_sums, chunk_counts) in &partial {
            for c in 0..centres.len() {
                sums[c][0] += chunk_sums[c][0];
                sums[c][1] += chunk_sums[c][1];
                counts[c] += chunk_counts[c];
            }
        }
        let previous = centres.clone();
        for ((centre, sum), count) in centres.iter_mut().zip(&sums).zip(&counts) {
            if *count > 0 {
                *centre = [sum[0] / *count as f64, sum[1] / *count as f64];
            }
        }
        let moved: Vec<f64> = previous
            .iter()
            .zip(&centres)
            .map(|(a, b)| squared(*a, *b).sqrt())
            .collect();
        let farthest_move = moved.iter().copied().fold(0.0, f64::max);
        let half_gaps = half_gaps(&centres);
        changed = bounds
            .par_chunks_mut(SUM_CHUNK)
            .zip(points.par_chunks(SUM_CHUNK))
            .map(|(chunk_bounds, chunk)| {
                // Every point steps (no short cut): `|`, not `||`.
                chunk_bounds
                    .iter_mut()
                    .zip(chunk)
                    .fold(false, |any, (b, p)| {
                        b.step(&centres, *p, &moved, farthest_move, &half_gaps) | any
                    })
            })
            .collect();
        if !changed.contains(&true) {
            break;
        }
    }
    bounds.into_iter().map(|b| b.label).collect()
}

/// The sums and counts of one chunk's points per cluster.
fn chunk_sums(chunk: &[[f64; 2]], bounds: &[Bounds], k: usize) -> (Vec<[f64; 2]>, Vec<usize>) {
    let mut sums = vec![[0.0, 0.0]; k];
    let mut counts = vec![0_usize; k];
    for (p, b) in chunk.iter().zip(bounds) {
        sums[b.label][0] += p[0];
        sums[b.label][1] += p[1];
        counts[b.label] += 1;
    }
    (sums, counts)
}

/// The relative slack of the bounds' test: a point is skipped only when its centre is nearer
/// than every other by more than the rounding of the distances and of the bounds' sums, so a
/// skipped point is one Lloyd's step would leave where it is, and the labels are Lloyd's.
const BOUND_SLACK: f64 = 1e-9;

/// Hamerly's bounds of one point: its cluster, a distance at least that to its centre, and a
/// distance at most that to any other centre.
#[derive(Clone, Copy)]
struct Bounds {
    label: usize,
    upper: f64,
    lower: f64,
}

impl Bounds {
    /// The nearest centre (the first of equally near ones), with exact bounds.
    fn of(centres: &[[f64; 2]], p: [f64; 2]) -> Bounds {
        let (mut label, mut best, mut second) = (0, f64::INFINITY, f64::INFINITY);
        for (i, c) in centres.iter().enumerate() {
            let d = squared(*c, p);
            if d < best {
                (label, second, best) = (i, best, d);
            } else if d < second {
                second = d;
            }
        }
        Bounds {
            label,
            upper: best.sqrt(),
            lower: second.sqrt(),
        }
    }

    /// One Lloyd assignment of the point after the centres moved by `moved`: kept when the
    /// bounds show its centre is still the nearest, else found again. `true` when it changed.
    fn step(
        &mut self,
        centres: &[[f64; 2]],
        p: [f64; 2],
        moved: &[f64],
        farthest_move: f64,
        half_gaps: &[f64],
    ) -> bool {
        self.upper += moved[self.label];
        self.lower -= farthest_move;
        let clear =
            |upper: f64, bound: f64| upper * (1.0 + BOUND_SLACK) < bound * (1.0 - BOUND_SLACK);
        let bound = self.lower.max(half_gaps[self.label]);
        if clear(self.upper, bound) {
            return false;
        }
        self.upper = squared(centres[self.label], p).sqrt();
        if clear(self.upper, bound) {
            return false;
        }
        let label = self.label;
        *self = Bounds::of(centres, p);
        self.label != label
    }
}

/// Half the distance from each centre to the nearest other one (no other: infinite).
fn half_gaps(centres: &[[f64; 2]]) -> Vec<f64> {
    centres
        .iter()
        .enumerate()
        .map(|(i, a)| {
            centres
                .iter()
                .enumerate()
                .filter(|&(j, _)| j != i)
                .map(|(_, b)| squared(*a, *b).sqrt() / 2.0)
                .fold(f64::INFINITY, f64::min)
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

    /// Lloyd's iterations measuring every point against every centre, with the kernel's sums.
    fn plain_lloyd(points: &[[f64; 2]], init: &[[f64; 2]], max_iter: usize) -> Vec<usize> {
        let nearest = |centres: &[[f64; 2]], p: [f64; 2]| Bounds::of(centres, p).label;
        let mut centres = init.to_vec();
        let mut labels: Vec<usize> = points.iter().map(|p| nearest(&centres, *p)).collect();
        for _ in 0..max_iter {
            let mut sums = vec![[0.0, 0.0]; centres.len()];
            let mut counts = vec![0_usize; centres.len()];
            for (chunk, chunk_labels) in points.chunks(SUM_CHUNK).zip(labels.chunks(SUM_CHUNK)) {
                let mut chunk_sums = vec![[0.0, 0.0]; centres.len()];
                for (p, &l) in chunk.iter().zip(chunk_labels) {
                    chunk_sums[l][0] += p[0];
                    chunk_sums[l][1] += p[1];
                    counts[l] += 1;
                }
                for (total, part) in sums.iter_mut().zip(&chunk_sums) {
                    total[0] += part[0];
                    total[1] += part[1];
                }
            }
            for ((centre, sum), count) in centres.iter_mut().zip(&sums).zip(&counts) {
                if *count > 0 {
                    *centre = [sum[0] / *count as f64, sum[1] / *count as f64];
                }
            }
            let next: Vec<usize> = points.iter().map(|p| nearest(&centres, *p)).collect();
            if next == labels {
                break;
            }
            labels = next;
        }
        labels
    }

    #[test]
    fn the_bounds_give_the_labels_of_plain_lloyd_iterations() {
        let mut random = crate::random::SplitMix64::new(2026);
        for (n, k, spread) in [(20_000, 8, 1.0), (9_000, 3, 0.1), (5_000, 12, 10.0)] {
            // Clustered points, some exactly on top of each other, some between clusters.
            let centres: Vec<[f64; 2]> = (0..k)
                .map(|_| [random.next_f64() * 100.0, random.next_f64() * 50.0])
                .collect();
            let points: Vec<[f64; 2]> = (0..n)
                .map(|i| {
                    let c = centres[i % k];
                    if i % 97 == 0 {
                        return c;
                    }
                    let (u, v) = (random.next_f64() - 0.5, random.next_f64() - 0.5);
                    [c[0] + u * spread * 20.0, c[1] + v * spread * 20.0]
                })
                .collect();
            let init: Vec<[f64; 2]> = points.iter().step_by(n / k).take(k).copied().collect();
            for max_iter in [1, 3, 300] {
                assert_eq!(
                    kmeans(&points, k, &init, 0, max_iter),
                    plain_lloyd(&points, &init, max_iter),
                    "n {n}, k {k}, {max_iter} iterations"
                );
            }
        }
    }

    #[test]
    fn two_groups_and_an_outlier() {
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
        let labels = kmeans(&points[..6], 2, &[[0.0, 0.0], [5.0, 5.0]], 0, 10);
        assert_eq!(labels, [0, 0, 0, 1, 1, 1]);
        let seeded = kmeans(&points[..6], 2, &[], 7, 10);
        assert_eq!(seeded, kmeans(&points[..6], 2, &[], 7, 10));
        assert_ne!(seeded[0], seeded[3]);
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
