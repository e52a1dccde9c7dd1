//! Prim's minimum spanning tree of the mutual reachability graph, as scikit-learn's
//! `mst_from_data_matrix`, over a frontier kept under a hierarchy of summaries.

use rayon::prelude::*;

use super::reachability::{Current, Reachability, max2};

/// A minimum spanning tree edge: (tree point, new point, mutual reachability).
#[derive(Clone, Copy, Debug)]
pub(super) struct Edge {
    pub(super) from: usize,
    pub(super) to: usize,
    pub(super) weight: f64,
}

/// Frontier slots per leaf block of a [`Part`].
const BLOCK: usize = 16;
/// Summaries grouped by each summary one level up.
const FAN: usize = 8;
/// Smallest number of points per [`Part`] when the frontier is split for threads.
const PART_MIN: usize = 4096;
/// Slots examined in a Prim step from which the next step is spread over threads.
const PARALLEL_WORK: usize = 32768;

/// A frontier slot that may come next: smallest reachability, then lowest point index.
#[derive(Clone, Copy)]
struct Candidate {
    reach: f64,
    id: usize,
    slot: usize,
}

impl Candidate {
    const NONE: Candidate = Candidate {
        reach: f64::INFINITY,
        id: usize::MAX,
        slot: usize::MAX,
    };

    /// Whether `self` comes before `other`; a NaN reachability (a slot already in the
    /// tree) never does.
    fn beats(&self, other: &Candidate) -> bool {
        self.reach < other.reach || (self.reach == other.reach && self.id < other.id)
    }

    fn better(self, other: Candidate) -> Candidate {
        if other.beats(&self) { other } else { self }
    }
}

/// What a Prim step needs to know of a run of frontier slots: the bounds of their points,
/// their largest reachability (slots in the tree ignored) and their best slot.
#[derive(Clone, Copy)]
struct Summary<B> {
    bounds: B,
    max_reach: f64,
    best: Candidate,
}

/// The largest reachability and best slot of the slots `offset..offset + reach.len()`.
fn slots_summary(offset: usize, reach: &[f64], ids: &[usize]) -> (f64, Candidate) {
    let slots = reach.iter().zip(ids).enumerate();
    slots.fold(
        (f64::NEG_INFINITY, Candidate::NONE),
        |(max_reach, best), (k, (&reach, &id))| {
            (
                max2(max_reach, reach),
                best.better(Candidate {
                    reach,
                    id,
                    slot: offset + k,
                }),
            )
        },
    )
}

/// The largest reachability and best slot over some summaries.
fn summaries_summary<B>(children: &[Summary<B>]) -> (f64, Candidate) {
    children.iter().fold(
        (f64::NEG_INFINITY, Candidate::NONE),
        |(max_reach, best), c| (max2(max_reach, c.max_reach), best.better(c.best)),
    )
}

/// Part of the points outside the tree, as parallel arrays over slots (in the spatially
/// coherent order they were given): what the distance needs, core distance, smallest
/// mutual reachability to the tree so far (NaN once the point is in the tree), point index
/// and the tree point that gave that reachability. Above the slots, a tree of summaries:
/// level 0 summarises blocks of [`BLOCK`] slots, each higher level groups [`FAN`]
/// summaries of the level below, up to a single root. A Prim step descends only into
/// summaries whose bounds and largest reachability allow an improvement.
struct Part<A, B> {
    at: Vec<A>,
    cores: Vec<f64>,
    reach: Vec<f64>,
    ids: Vec<usize>,
    sources: Vec<usize>,
    levels: Vec<Vec<Summary<B>>>,
}

impl<A: Copy + Send + Sync, B: Copy + Send + Sync> Part<A, B> {
    fn new<R: Reachability<At = A, Bounds = B>>(
        space: &R,
        at: Vec<A>,
        cores: Vec<f64>,
        ids: Vec<usize>,
    ) -> Self {
        let n = at.len().min(cores.len()).min(ids.len());
        let reach = vec![f64::INFINITY; n];
        let leaves: Vec<Summary<B>> = at[..n]
            .chunks(BLOCK)
            .zip(ids.chunks(BLOCK))
            .enumerate()
            .map(|(b, (at, ids))| {
                let (max_reach, best) =
                    slots_summary(b * BLOCK, &reach[b * BLOCK..b * BLOCK + at.len()], ids);
                Summary {
                    bounds: space.bounds(at),
                    max_reach,
                    best,
                }
            })
            .collect();
        let mut levels = vec![leaves];
        while let Some(below) = levels.last().filter(|level| level.len() > 1) {
            let above = below
                .chunks(FAN)
                .filter_map(|children| {
                    let (first, rest) = children.split_first()?;
                    let bounds = rest
                        .iter()
                        .fold(first.bounds, |b, c| space.merge(&b, &c.bounds));
                    let (max_reach, best) = summaries_summary(children);
                    Some(Summary {
                        bounds,
                        max_reach,
                        best,
                    })
                })
                .collect();
            levels.push(above);
        }
        // scikit-learn starts every source at 1; it shows only for infinite distances.
        Part {
            at,
            cores,
            reach,
            ids,
            sources: vec![1; n],
            levels,
        }
    }

    /// The root summary (an empty part has none).
    fn root(&self) -> Option<&Summary<B>> {
        self.levels.last().and_then(|level| level.first())
    }

    /// One Prim step on this part: the best slot afterwards and how many slots were
    /// examined.
    fn relax<R: Reachability<At = A, Bounds = B>>(
        &mut self,
        space: &R,
        current: &Current<A>,
    ) -> (Candidate, usize) {
        let Some(&root) = self.root() else {
            return (Candidate::NONE, 0);
        };
        let mut examined = 0;
        if space.block_may_improve(current, &root.bounds, root.max_reach) {
            let top = self.levels.len() - 1;
            (_, examined) = self.visit(space, current, top, 0);
        }
        (self.root().map_or(Candidate::NONE, |r| r.best), examined)
    }

    /// Descends into summary `index` of level `level`: whether any reachability changed,
    /// and how many slots were examined.
    fn visit<R: Reachability<At = A, Bounds = B>>(
        &mut self,
        space: &R,
        current: &Current<A>,
        level: usize,
        index: usize,
    ) -> (bool, usize) {
        if level == 0 {
            return self.visit_block(space, current, index);
        }
        let (mut changed, mut examined) = (false, 0);
        let children =
            index * FAN..((index + 1) * FAN).min(self.levels.get(level - 1).map_or(0, Vec::len));
        for child in children.clone() {
            let Some(&summary) = self.levels.get(level - 1).and_then(|l| l.get(child)) else {
                continue;
            };
            if space.block_may_improve(current, &summary.bounds, summary.max_reach) {
                let (c, e) = self.visit(space, current, level - 1, child);
                changed |= c;
                examined += e;
            }
        }
        if changed {
            self.refresh(level, index, children);
        }
        (changed, examined)
    }

    /// Examines the slots of leaf block `block`.
    fn visit_block<R: Reachability<At = A, Bounds = B>>(
        &mut self,
        space: &R,
        current: &Current<A>,
        block: usize,
    ) -> (bool, usize) {
        let start = block * BLOCK;
        let end = (start + BLOCK).min(self.reach.len());
        let (Some(at), Some(cores), Some(reach), Some(sources)) = (
            self.at.get(start..end),
            self.cores.get(start..end),
            self.reach.get_mut(start..end),
            self.sources.get_mut(start..end),
        ) else {
            return (false, 0);
        };
        let examined = end - start;
        if !space.may_improve(current, at, cores, reach) {
            return (false, examined);
        }
        let mut changed = false;
        for (((reach, source), at), &core) in
            reach.iter_mut().zip(sources.iter_mut()).zip(at).zip(cores)
        {
            if let Some(lower) = space.improve(current, at, core, *reach) {
                *reach = lower;
                *source = current.id;
                changed = true;
            }
        }
        if changed {
            self.refresh(0, block, start..end);
        }
        (changed, examined)
    }

    /// Recomputes summary `index` of `level` from its slots (level 0) or children.
    fn refresh(&mut self, level: usize, index: usize, below: std::ops::Range<usize>) {
        let summary = if level == 0 {
            match (self.reach.get(below.clone()), self.ids.get(below.clone())) {
                (Some(reach), Some(ids)) => slots_summary(below.start, reach, ids),
                _ => (f64::NEG_INFINITY, Candidate::NONE),
            }
        } else {
            self.levels
                .get(level - 1)
                .and_then(|l| l.get(below))
                .map_or((f64::NEG_INFINITY, Candidate::NONE), summaries_summary)
        };
        if let Some(s) = self.levels.get_mut(level).and_then(|l| l.get_mut(index)) {
            (s.max_reach, s.best) = summary;
        }
    }

    /// Moves slot `slot` into the tree: its point, core, reachability, index and source.
    fn remove(&mut self, slot: usize) -> Option<(A, f64, f64, usize, usize)> {
        let reach = self.reach.get_mut(slot)?;
        if reach.is_nan() {
            return None;
        }
        let taken = (
            *self.at.get(slot)?,
            *self.cores.get(slot)?,
            *reach,
            *self.ids.get(slot)?,
            *self.sources.get(slot)?,
        );
        *reach = f64::NAN;
        let mut index = slot / BLOCK;
        let leaf = index * BLOCK..((index + 1) * BLOCK).min(self.reach.len());
        self.refresh(0, index, leaf);
        for level in 1..self.levels.len() {
            index /= FAN;
            let children = index * FAN..((index + 1) * FAN).min(self.levels[level - 1].len());
            self.refresh(level, index, children);
        }
        Some(taken)
    }
}

/// Prim's algorithm over the mutual reachability graph, as scikit-learn's
/// `mst_from_data_matrix`; `at[i]` is what the distance needs of point `i`, and `order` a
/// spatially coherent order of the points for the frontier's slots. The frontier is cut
/// into parts that relax in parallel when the previous step had much to examine.
pub(super) fn prim_mst<R: Reachability>(
    space: &R,
    core: &[f64],
    at: &[R::At],
    order: &[usize],
) -> Vec<Edge> {
    let order: Vec<usize> = order
        .iter()
        .copied()
        .filter(|&i| i < at.len() && i < core.len())
        .collect();
    let n = order.len();
    let count = (n / PART_MIN).clamp(1, 4 * rayon::current_num_threads().max(1));
    let mut parts: Vec<Part<R::At, R::Bounds>> = order
        .chunks(n.div_ceil(count).max(1))
        .map(|ids| {
            let at_slots = ids.iter().map(|&i| at[i]).collect();
            let core_slots = ids.iter().map(|&i| core[i]).collect();
            Part::new(space, at_slots, core_slots, ids.to_vec())
        })
        .collect();
    let mut edges = Vec::with_capacity(n.saturating_sub(1));
    let first = parts.iter_mut().find_map(|p| {
        p.ids
            .iter()
            .position(|&i| i == 0)
            .and_then(|slot| p.remove(slot))
    });
    let Some((at, core, _, id, _)) = first else {
        return edges;
    };
    let mut current = Current { id, core, at };
    let mut examined = n;
    for _ in 1..n {
        let steps: Vec<(Candidate, usize)> = if examined >= PARALLEL_WORK && parts.len() > 1 {
            parts
                .par_iter_mut()
                .map(|p| p.relax(space, &current))
                .collect()
        } else {
            parts.iter_mut().map(|p| p.relax(space, &current)).collect()
        };
        examined = steps.iter().map(|s| s.1).sum();
        let best = steps.iter().enumerate().fold(
            None,
            |best: Option<(usize, Candidate)>, (part, &(c, _))| match best {
                Some((_, b)) if !c.beats(&b) => best,
                _ if c.slot == usize::MAX => best,
                _ => Some((part, c)),
            },
        );
        // Only NaN distances leave no candidate; take the first slot not in the tree then.
        let taken = match best {
            Some((part, c)) => parts.get_mut(part).and_then(|p| p.remove(c.slot)),
            None => parts.iter_mut().find_map(|p| {
                p.reach
                    .iter()
                    .position(|r| !r.is_nan())
                    .and_then(|slot| p.remove(slot))
            }),
        };
        let Some((at, core, weight, id, from)) = taken else {
            break;
        };
        edges.push(Edge {
            from,
            to: id,
            weight,
        });
        current = Current { id, core, at };
    }
    edges
}
