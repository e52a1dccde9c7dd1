//! k-means as scikit-learn's `KMeans(n_clusters=k, random_state=seed, n_init="auto")` computes
//! it on two columns, step by step: the points centred on their mean, greedy k-means++ seeding
//! drawn from NumPy's legacy MT19937 (`choice`, then `2 + ln k` `uniform` trials per centre,
//! `searchsorted` in the running sum of squared distances), Lloyd's iterations over chunks
//! of 256 points (distances as `‖c‖² − 2 x·c`, the dot product fused as OpenBLAS's kernels
//! fuse it, sums in point order, centres times the reciprocal weight), stopping when no
//! label changes or the squared centre shift is within 1e-4 of the mean variance, empty
//! clusters given the farthest points, a last assignment unless labels were stable.

use super::owned::numpy_sample::Mt19937;

/// scikit-learn's `CHUNK_SIZE` of Lloyd's iterations.
const CHUNK: usize = 256;

/// The labels and each point's distance to its centre (in the points' units).
pub struct Fitted {
    pub labels: Vec<i64>,
    pub distances: Vec<f64>,
}

fn dot(a: [f64; 2], b: [f64; 2]) -> f64 {
    a[1].mul_add(b[1], a[0] * b[0])
}

fn norm_squared(a: [f64; 2]) -> f64 {
    a[0] * a[0] + a[1] * a[1]
}

/// `_euclidean_distances(c, X, squared=True)`: `−2 c·x + ‖c‖² + ‖x‖²`, at least 0.
fn squared_distances(c: [f64; 2], points: &[[f64; 2]], norms: &[f64]) -> Vec<f64> {
    let cc = norm_squared(c);
    points
        .iter()
        .zip(norms)
        .map(|(p, xx)| (-2.0 * dot(c, *p) + cc + xx).max(0.0))
        .collect()
}

/// The first index whose value is ≥ `v` (`searchsorted`, side left).
fn search_left(sorted: &[f64], v: f64) -> usize {
    sorted.partition_point(|x| *x < v)
}

/// Greedy k-means++ (`_kmeans_plusplus` with unit weights).
fn plus_plus(points: &[[f64; 2]], norms: &[f64], k: usize, random: &mut Mt19937) -> Vec<[f64; 2]> {
    let n = points.len();
    let trials = 2 + (k as f64).ln() as usize;
    // `choice(n, p=1/n)`: the running sum of the probabilities over its last, side right.
    let mut cdf = Vec::with_capacity(n);
    let mut total = 0.0;
    for _ in 0..n {
        total += 1.0 / n as f64;
        cdf.push(total);
    }
    let last = total;
    let cdf: Vec<f64> = cdf.into_iter().map(|c| c / last).collect();
    let u = random.random_sample();
    let first = cdf.partition_point(|c| *c <= u).min(n - 1);
    let mut centres = vec![points[first]];
    let mut closest = squared_distances(points[first], points, norms);
    let mut pot: f64 = closest.iter().sum();
    while centres.len() < k {
        let draws: Vec<f64> = (0..trials).map(|_| random.random_sample() * pot).collect();
        let mut running = Vec::with_capacity(n);
        let mut sum = 0.0;
        for d in &closest {
            sum += d;
            running.push(sum);
        }
        let mut best: Option<(f64, usize, Vec<f64>)> = None;
        for draw in draws {
            let candidate = search_left(&running, draw).min(n - 1);
            let mut reach = squared_distances(points[candidate], points, norms);
            for (r, c) in reach.iter_mut().zip(&closest) {
                *r = r.min(*c);
            }
            let candidate_pot: f64 = reach.iter().sum();
            if best.as_ref().is_none_or(|(p, _, _)| candidate_pot < *p) {
                best = Some((candidate_pot, candidate, reach));
            }
        }
        let Some((best_pot, candidate, reach)) = best else {
            break;
        };
        pot = best_pot;
        closest = reach;
        centres.push(points[candidate]);
    }
    centres
}

/// One Lloyd step: each point's nearest centre (first on ties) and, with `update`, the new
/// centres (empty ones given the farthest points) and their squared shift.
fn lloyd_step(
    points: &[[f64; 2]],
    centres: &[[f64; 2]],
    labels: &mut [usize],
    update: bool,
) -> (Vec<[f64; 2]>, f64) {
    let k = centres.len();
    let norms: Vec<f64> = centres.iter().map(|c| norm_squared(*c)).collect();
    let mut sums = vec![[0.0, 0.0]; k];
    let mut weights = vec![0.0; k];
    for (chunk, chunk_labels) in points.chunks(CHUNK).zip(labels.chunks_mut(CHUNK)) {
        let mut chunk_sums = vec![[0.0, 0.0]; k];
        let mut chunk_weights = vec![0.0; k];
        for (p, label) in chunk.iter().zip(chunk_labels.iter_mut()) {
            let mut nearest = 0;
            let mut least = f64::INFINITY;
            for (j, c) in centres.iter().enumerate() {
                let d = norms[j] + -2.0 * dot(*p, *c);
                if d < least {
                    least = d;
                    nearest = j;
                }
            }
            *label = nearest;
            chunk_sums[nearest][0] += p[0];
            chunk_sums[nearest][1] += p[1];
            chunk_weights[nearest] += 1.0;
        }
        for j in 0..k {
            weights[j] += chunk_weights[j];
            sums[j][0] += chunk_sums[j][0];
            sums[j][1] += chunk_sums[j][1];
        }
    }
    if !update {
        return (centres.to_vec(), 0.0);
    }
    relocate_empty(points, centres, labels, &mut sums, &mut weights);
    let mut next = centres.to_vec();
    let mut shift = 0.0;
    for j in 0..k {
        if weights[j] > 0.0 {
            let alpha = 1.0 / weights[j];
            next[j] = [sums[j][0] * alpha, sums[j][1] * alpha];
        } else {
            next[j] = sums[j];
        }
        let (dx, dy) = (next[j][0] - centres[j][0], next[j][1] - centres[j][1]);
        let moved = (dx * dx + dy * dy).sqrt();
        shift += moved * moved;
    }
    (next, shift)
}

/// `_relocate_empty_clusters_dense`: each empty cluster takes one of the points farthest from
/// their centres (farthest first), which leaves its own cluster.
fn relocate_empty(
    points: &[[f64; 2]],
    centres: &[[f64; 2]],
    labels: &[usize],
    sums: &mut [[f64; 2]],
    weights: &mut [f64],
) {
    let empty: Vec<usize> = (0..weights.len()).filter(|&j| weights[j] == 0.0).collect();
    if empty.is_empty() {
        return;
    }
    let far: Vec<f64> = points
        .iter()
        .zip(labels)
        .map(|(p, &l)| {
            let (dx, dy) = (p[0] - centres[l][0], p[1] - centres[l][1]);
            dx * dx + dy * dy
        })
        .collect();
    let mut order: Vec<usize> = (0..points.len()).collect();
    order.sort_by(|&a, &b| far[b].total_cmp(&far[a]).then(b.cmp(&a)));
    for (&new, &point) in empty.iter().zip(&order) {
        let old = labels[point];
        let p = points[point];
        sums[old][0] -= p[0];
        sums[old][1] -= p[1];
        sums[new] = p;
        weights[new] = 1.0;
        weights[old] -= 1.0;
    }
}

/// The column's mean as NumPy's `mean(axis=0)` sums a C-ordered array (row by row).
fn mean(points: &[[f64; 2]]) -> [f64; 2] {
    let mut sum = [0.0, 0.0];
    for p in points {
        sum[0] += p[0];
        sum[1] += p[1];
    }
    let n = points.len() as f64;
    [sum[0] / n, sum[1] / n]
}

/// scikit-learn's k-means of `points` into `k` clusters (at most one per point).
pub fn kmeans(points: &[[f64; 2]], k: usize, seed: u32, max_iter: usize) -> Fitted {
    let n = points.len();
    if n == 0 || k == 0 {
        return Fitted {
            labels: Vec::new(),
            distances: Vec::new(),
        };
    }
    let k = k.min(n);
    let centre = mean(points);
    let variance = {
        let mut sum = [0.0, 0.0];
        for p in points {
            let (dx, dy) = (p[0] - centre[0], p[1] - centre[1]);
            sum[0] += dx * dx;
            sum[1] += dy * dy;
        }
        (sum[0] / n as f64 + sum[1] / n as f64) / 2.0
    };
    let tolerance = variance * 1e-4;
    let centred: Vec<[f64; 2]> = points
        .iter()
        .map(|p| [p[0] - centre[0], p[1] - centre[1]])
        .collect();
    let norms: Vec<f64> = centred.iter().map(|p| norm_squared(*p)).collect();
    let mut random = Mt19937::new(seed);
    let mut centres = plus_plus(&centred, &norms, k, &mut random);
    let mut labels = vec![usize::MAX; n];
    let mut previous = labels.clone();
    let mut stable = false;
    for _ in 0..max_iter.max(1) {
        let (next, shift) = lloyd_step(&centred, &centres, &mut labels, true);
        centres = next;
        if labels == previous {
            stable = true;
            break;
        }
        if shift <= tolerance {
            break;
        }
        previous.clone_from(&labels);
    }
    if !stable {
        lloyd_step(&centred, &centres, &mut labels, false);
    }
    let centres: Vec<[f64; 2]> = centres
        .iter()
        .map(|c| [c[0] + centre[0], c[1] + centre[1]])
        .collect();
    let distances = points
        .iter()
        .zip(&labels)
        .map(|(p, &l)| {
            let (dx, dy) = (p[0] - centres[l][0], p[1] - centres[l][1]);
            (dx * dx + dy * dy).sqrt()
        })
        .collect();
    Fitted {
        labels: labels.into_iter().map(|l| l as i64).collect(),
        distances,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// scikit-learn 1.9's `KMeans(3, random_state=42, n_init="auto").fit(X)` on these points
    /// labels them `[2, 2, 2, 0, 0, 0, 1, 1, 1, 1]`.
    #[test]
    fn labels_equal_scikit_learn() {
        let points = [
            [0.0, 0.0],
            [1.0, 0.5],
            [0.5, 1.0],
            [10.0, 10.0],
            [11.0, 10.5],
            [10.5, 11.0],
            [-10.0, 5.0],
            [-11.0, 5.5],
            [-10.5, 4.0],
            [-9.0, 6.0],
        ];
        let fitted = kmeans(&points, 3, 42, 300);
        assert_eq!(fitted.labels, vec![2, 2, 2, 0, 0, 0, 1, 1, 1, 1]);
        assert!((fitted.distances[0] - (0.5_f64.powi(2) * 2.0).sqrt()).abs() < 1e-12);
    }
}
