//! k-means by Lloyd's iterations (k-means++ seeding) whose assignments skip, by Hamerly's
//! bounds kept per block of nearby points, the points whose centre cannot have changed.
//!
//! The points are put in Morton order of a grid over their extent and cut into blocks of
//! [`BLOCK`]; a block whose points share a cluster keeps the largest distance from its points
//! to their centre and the smallest to any other centre, grown and shrunk by the centres'
//! moves, and is not read at all while the first stays below the second (or below half the gap
//! to the nearest other centre). A block that fails the test has its points measured to their
//! centre (one branch-free pass) and only those that fail it too measured against every centre.
//! Nearby points have nearly the same distances, so a block's bounds are almost its points':
//! on a million real-shaped points a third of the blocks are read per iteration, against every
//! point's bounds in per-point Hamerly. The sums are taken in the points' own order, per fixed
//! chunk, as plain Lloyd iterations take them: the same centres whatever the number of threads.

use rayon::prelude::*;

use super::random::SplitMix64;

/// Points per partial sum of a step; also the points one task of a step assigns.
const SUM_CHUNK: usize = 4096;

/// Points per block of bounds (a divisor of [`SUM_CHUNK`]).
const BLOCK: usize = 64;
const _: () = assert!(SUM_CHUNK.is_multiple_of(BLOCK));

/// Bits per axis of the grid whose Morton order puts nearby points in the same block.
const GRID_BITS: u32 = 9;

/// The relative slack of the bounds' test: a point is skipped only when its centre is nearer
/// than every other by more than the rounding of the distances and of the bounds' sums, so a
/// skipped point is one Lloyd's step would leave where it is, and the labels are Lloyd's.
const BOUND_SLACK: f64 = 1e-9;

fn squared(a: [f64; 2], b: [f64; 2]) -> f64 {
    let (dx, dy) = (a[0] - b[0], a[1] - b[1]);
    dx * dx + dy * dy
}

/// `upper` is certainly below `lower`, past the rounding of both.
fn clear(upper: f64, lower: f64) -> bool {
    upper * (1.0 + BOUND_SLACK) < lower * (1.0 - BOUND_SLACK)
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

/// The nearest centre of `p` (the first of equally near ones), its distance and the distance
/// to the second nearest.
fn nearest(centres: &[[f64; 2]], p: [f64; 2]) -> (u32, f64, f64) {
    let (mut label, mut best, mut second) = (0, f64::INFINITY, f64::INFINITY);
    for (i, c) in centres.iter().enumerate() {
        let d = squared(*c, p);
        if d < best {
            (label, second, best) = (i, best, d);
        } else if d < second {
            second = d;
        }
    }
    #[allow(clippy::cast_possible_truncation)]
    (label as u32, best.sqrt(), second.sqrt())
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

/// The cluster of each point by k-means: Lloyd's iterations from `init` (or k-means++ seeded
/// by `seed`) until no point changes cluster, or `max_iter`. A centre left without points
/// keeps its place. The labels are plain Lloyd iterations' (the unit tests compare them).
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
    let mut sorted = Sorted::new(points, &centres);
    let mut labels = vec![0_u32; points.len()];
    for (&at, &label) in sorted.order.iter().zip(&sorted.labels) {
        labels[at as usize] = label;
    }
    let chunks = points.len().div_ceil(SUM_CHUNK);
    let mut partial: Vec<(Vec<[f64; 2]>, Vec<usize>)> = vec![(Vec::new(), Vec::new()); chunks];
    let mut changed = vec![true; chunks];
    for _ in 0..max_iter {
        let previous = centres.clone();
        centres = means(points, &labels, &changed, &mut partial, &previous);
        let moves = Moves::new(&previous, &centres);
        let changes = sorted.assign(&centres, &moves);
        if changes.is_empty() {
            break;
        }
        changed.fill(false);
        for (at, label) in changes {
            labels[at as usize] = label;
            changed[at as usize / SUM_CHUNK] = true;
        }
    }
    labels.into_iter().map(|l| l as usize).collect()
}

/// The mean of each cluster's points (a centre without points stays at `centres`), summed per
/// fixed chunk of points in their order, then the chunks' sums in order; a chunk's sums are
/// taken again only when a label in it `changed`.
fn means(
    points: &[[f64; 2]],
    labels: &[u32],
    changed: &[bool],
    partial: &mut [(Vec<[f64; 2]>, Vec<usize>)],
    centres: &[[f64; 2]],
) -> Vec<[f64; 2]> {
    let k = centres.len();
    partial
        .par_iter_mut()
        .zip(
            points
                .par_chunks(SUM_CHUNK)
                .zip(labels.par_chunks(SUM_CHUNK)),
        )
        .zip(changed.par_iter())
        .filter(|(_, changed)| **changed)
        .for_each(|((part, (chunk, chunk_labels)), _)| {
            let mut sums = vec![[0.0, 0.0]; k];
            let mut counts = vec![0_usize; k];
            for (p, &label) in chunk.iter().zip(chunk_labels) {
                let label = label as usize;
                sums[label][0] += p[0];
                sums[label][1] += p[1];
                counts[label] += 1;
            }
            *part = (sums, counts);
        });
    let mut sums = vec![[0.0, 0.0]; k];
    let mut counts = vec![0_usize; k];
    for (chunk_sums, chunk_counts) in partial.iter() {
        for c in 0..k {
            sums[c][0] += chunk_sums[c][0];
            sums[c][1] += chunk_sums[c][1];
            counts[c] += chunk_counts[c];
        }
    }
    centres
        .iter()
        .zip(&sums)
        .zip(&counts)
        .map(|((centre, sum), &count)| {
            if count > 0 {
                [sum[0] / count as f64, sum[1] / count as f64]
            } else {
                *centre
            }
        })
        .collect()
}

/// How far each centre moved in one update, the farthest of those, and half the gap from
/// each new centre to its nearest other one.
struct Moves {
    moved: Vec<f64>,
    farthest: f64,
    half_gaps: Vec<f64>,
}

impl Moves {
    fn new(previous: &[[f64; 2]], centres: &[[f64; 2]]) -> Moves {
        let moved: Vec<f64> = previous
            .iter()
            .zip(centres)
            .map(|(a, b)| squared(*a, *b).sqrt())
            .collect();
        Moves {
            farthest: moved.iter().copied().fold(0.0, f64::max),
            moved,
            half_gaps: half_gaps(centres),
        }
    }
}

/// The bounds of one block: the largest distance from its points to their centre, the
/// smallest to any other centre, and how much the farthest moves since its points were last
/// read have shrunk the second (not yet taken from the points' own).
#[derive(Clone, Copy)]
struct Block {
    /// The cluster of every point of the block; `None` when they differ.
    label: Option<u32>,
    upper: f64,
    lower: f64,
    pending_lower: f64,
}

impl Block {
    fn of(labels: &[u32], upper: &[f64], lower: &[f64]) -> Block {
        let first = labels[0];
        Block {
            label: labels.iter().all(|&l| l == first).then_some(first),
            upper: upper.iter().copied().fold(0.0, f64::max),
            lower: lower.iter().copied().fold(f64::INFINITY, f64::min),
            pending_lower: 0.0,
        }
    }
}

/// The points in Morton order, with each one's cluster and bounds (a distance at least that
/// to its centre, at most that to any other), and the blocks' bounds.
struct Sorted {
    /// The position in the caller's points of each point here.
    order: Vec<u32>,
    points: Vec<[f64; 2]>,
    labels: Vec<u32>,
    upper: Vec<f64>,
    lower: Vec<f64>,
    blocks: Vec<Block>,
}

impl Sorted {
    /// The points in Morton order, each assigned to its nearest centre with exact bounds.
    fn new(points: &[[f64; 2]], centres: &[[f64; 2]]) -> Sorted {
        let order = morton_order(points);
        let n = points.len();
        let mut sorted = Sorted {
            points: vec![[0.0; 2]; n],
            labels: vec![0; n],
            upper: vec![0.0; n],
            lower: vec![0.0; n],
            blocks: Vec::new(),
            order,
        };
        sorted
            .points
            .par_chunks_mut(SUM_CHUNK)
            .zip(sorted.labels.par_chunks_mut(SUM_CHUNK))
            .zip(sorted.upper.par_chunks_mut(SUM_CHUNK))
            .zip(sorted.lower.par_chunks_mut(SUM_CHUNK))
            .zip(sorted.order.par_chunks(SUM_CHUNK))
            .for_each(|((((here, labels), upper), lower), order)| {
                for (j, &at) in order.iter().enumerate() {
                    let p = points[at as usize];
                    here[j] = p;
                    (labels[j], upper[j], lower[j]) = nearest(centres, p);
                }
            });
        sorted.blocks = sorted
            .labels
            .par_chunks(BLOCK)
            .zip(sorted.upper.par_chunks(BLOCK))
            .zip(sorted.lower.par_chunks(BLOCK))
            .map(|((labels, upper), lower)| Block::of(labels, upper, lower))
            .collect();
        sorted
    }

    /// One Lloyd assignment after the centres moved to `centres`: the (caller's position,
    /// cluster) of each point whose cluster changed.
    fn assign(&mut self, centres: &[[f64; 2]], moves: &Moves) -> Vec<(u32, u32)> {
        self.blocks
            .par_chunks_mut(SUM_CHUNK / BLOCK)
            .zip(self.points.par_chunks(SUM_CHUNK))
            .zip(self.labels.par_chunks_mut(SUM_CHUNK))
            .zip(self.upper.par_chunks_mut(SUM_CHUNK))
            .zip(self.lower.par_chunks_mut(SUM_CHUNK))
            .zip(self.order.par_chunks(SUM_CHUNK))
            .flat_map_iter(|(((((blocks, points), labels), upper), lower), order)| {
                let mut changes = Vec::new();
                for (b, block) in blocks.iter_mut().enumerate() {
                    let range = b * BLOCK..((b + 1) * BLOCK).min(points.len());
                    let mut part = Part {
                        points: &points[range.clone()],
                        labels: &mut labels[range.clone()],
                        upper: &mut upper[range.clone()],
                        lower: &mut lower[range.clone()],
                        order: &order[range],
                    };
                    part.assign(block, centres, moves, &mut changes);
                }
                changes
            })
            .collect()
    }
}

/// The points of one block and their bounds.
struct Part<'a> {
    points: &'a [[f64; 2]],
    labels: &'a mut [u32],
    upper: &'a mut [f64],
    lower: &'a mut [f64],
    order: &'a [u32],
}

impl Part<'_> {
    /// The block's share of [`Sorted::assign`]: nothing read while its bounds show every point
    /// keeps its centre; else each point's bounds brought up to date, its distance to its
    /// centre measured, and the points still unclear measured against every centre.
    fn assign(
        &mut self,
        block: &mut Block,
        centres: &[[f64; 2]],
        moves: &Moves,
        changes: &mut Vec<(u32, u32)>,
    ) {
        let mut unclear = [false; BLOCK];
        let unclear = &mut unclear[..self.points.len()];
        if let Some(label) = block.label {
            let label = label as usize;
            block.upper += moves.moved[label];
            block.lower -= moves.farthest;
            block.pending_lower += moves.farthest;
            let gap = moves.half_gaps[label];
            if clear(block.upper, block.lower.max(gap)) {
                return;
            }
            // One centre for the whole block: a loop without branches.
            let (centre, shrink) = (centres[label], block.pending_lower);
            let bounds = self.upper.iter_mut().zip(self.lower.iter_mut());
            for ((flag, p), (upper, lower)) in unclear.iter_mut().zip(self.points).zip(bounds) {
                *lower -= shrink;
                *upper = squared(centre, *p).sqrt();
                *flag = !clear(*upper, if *lower > gap { *lower } else { gap });
            }
        } else {
            let bounds = self.upper.iter_mut().zip(self.lower.iter_mut());
            let points = self.points.iter().zip(self.labels.iter());
            for ((flag, (p, &label)), (upper, lower)) in unclear.iter_mut().zip(points).zip(bounds)
            {
                let label = label as usize;
                *lower -= moves.farthest;
                *upper = squared(centres[label], *p).sqrt();
                *flag = !clear(*upper, lower.max(moves.half_gaps[label]));
            }
        }
        for (j, _) in unclear.iter().enumerate().filter(|(_, unclear)| **unclear) {
            let label;
            (label, self.upper[j], self.lower[j]) = nearest(centres, self.points[j]);
            if label != self.labels[j] {
                self.labels[j] = label;
                changes.push((self.order[j], label));
            }
        }
        *block = Block::of(self.labels, self.upper, self.lower);
    }
}

/// The positions of `points` in Morton order of a grid of 2^[`GRID_BITS`] cells a side over
/// their extent (a counting sort: points of one cell keep their order).
fn morton_order(points: &[[f64; 2]]) -> Vec<u32> {
    let (x0, y0, x1, y1) = points
        .par_iter()
        .fold(
            || {
                (
                    f64::INFINITY,
                    f64::INFINITY,
                    f64::NEG_INFINITY,
                    f64::NEG_INFINITY,
                )
            },
            |(x0, y0, x1, y1), p| (x0.min(p[0]), y0.min(p[1]), x1.max(p[0]), y1.max(p[1])),
        )
        .reduce(
            || {
                (
                    f64::INFINITY,
                    f64::INFINITY,
                    f64::NEG_INFINITY,
                    f64::NEG_INFINITY,
                )
            },
            |a, b| (a.0.min(b.0), a.1.min(b.1), a.2.max(b.2), a.3.max(b.3)),
        );
    let last = f64::from((1_u32 << GRID_BITS) - 1);
    let scale = |low: f64, high: f64| {
        if high > low && (high - low).is_finite() {
            last / (high - low)
        } else {
            0.0
        }
    };
    let (sx, sy) = (scale(x0, x1), scale(y0, y1));
    // The cell of a non-finite coordinate is cell 0 (`as` saturates, NaN gives 0).
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let cell = |v: f64, low: f64, s: f64| (((v - low) * s) as u32).min(last as u32);
    let keys: Vec<u32> = points
        .par_iter()
        .map(|p| interleave(cell(p[0], x0, sx)) | (interleave(cell(p[1], y0, sy)) << 1))
        .collect();
    let mut next = vec![0_u32; (1 << (2 * GRID_BITS)) + 1];
    for &key in &keys {
        next[key as usize + 1] += 1;
    }
    for c in 1..next.len() {
        next[c] += next[c - 1];
    }
    let mut order = vec![0_u32; points.len()];
    for (at, &key) in keys.iter().enumerate() {
        let slot = &mut next[key as usize];
        #[allow(clippy::cast_possible_truncation)]
        {
            order[*slot as usize] = at as u32;
        }
        *slot += 1;
    }
    order
}

/// The bits of `v` (below 2^16) spread to the even bits of the result.
fn interleave(v: u32) -> u32 {
    let mut x = v & 0xffff;
    x = (x | (x << 8)) & 0x00ff_00ff;
    x = (x | (x << 4)) & 0x0f0f_0f0f;
    x = (x | (x << 2)) & 0x3333_3333;
    (x | (x << 1)) & 0x5555_5555
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Lloyd's iterations measuring every point against every centre, with the kernel's sums.
    fn plain_lloyd(points: &[[f64; 2]], init: &[[f64; 2]], max_iter: usize) -> Vec<usize> {
        let nearest = |centres: &[[f64; 2]], p: [f64; 2]| nearest(centres, p).0 as usize;
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
        let mut random = SplitMix64::new(2026);
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

    /// Centres that travel far for many iterations (a uniform square seeded in one corner):
    /// the blocks' bounds shrink and grow across many steps, and the labels stay Lloyd's.
    #[test]
    fn far_travelling_centres_keep_the_labels_of_plain_lloyd_iterations() {
        let mut random = SplitMix64::new(7);
        let points: Vec<[f64; 2]> = (0..30_000)
            .map(|_| {
                [
                    random.next_f64() * 360.0 - 180.0,
                    random.next_f64() * 180.0 - 90.0,
                ]
            })
            .collect();
        let init: Vec<[f64; 2]> = (0..6).map(|i| [-180.0 + f64::from(i), -90.0]).collect();
        assert_eq!(
            kmeans(&points, 6, &init, 0, 300),
            plain_lloyd(&points, &init, 300)
        );
    }

    #[test]
    fn two_groups() {
        let points = [
            [0.0, 0.0],
            [0.1, 0.0],
            [0.0, 0.1],
            [5.0, 5.0],
            [5.1, 5.0],
            [5.0, 5.1],
        ];
        let labels = kmeans(&points, 2, &[[0.0, 0.0], [5.0, 5.0]], 0, 10);
        assert_eq!(labels, [0, 0, 0, 1, 1, 1]);
        let seeded = kmeans(&points, 2, &[], 7, 10);
        assert_eq!(seeded, kmeans(&points, 2, &[], 7, 10));
        assert_ne!(seeded[0], seeded[3]);
    }

    #[test]
    fn non_finite_and_equal_points_have_a_cell() {
        let points = [
            [f64::NAN, 1.0],
            [f64::INFINITY, 2.0],
            [3.0, 3.0],
            [3.0, 3.0],
        ];
        let mut order = morton_order(&points);
        order.sort_unstable();
        assert_eq!(order, [0, 1, 2, 3]);
        assert_eq!(morton_order(&[[1.0, 1.0]; 3]), [0, 1, 2]);
    }
}
