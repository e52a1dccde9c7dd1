//! A uniform grid over the envelopes of polygon parts, for point queries: the cell of a point
//! is computed, not searched, and its parts are one contiguous slice, so a lookup costs a few
//! comparisons and no allocation (an R-tree walk visits several nodes per point).

/// Parts by grid cell (compressed rows: `items[starts[c]..starts[c + 1]]` are cell `c`'s).
pub struct EnvelopeGrid {
    origin: [f64; 2],
    /// Cells per unit of x and y.
    scale: [f64; 2],
    size: [usize; 2],
    starts: Vec<u32>,
    items: Vec<u32>,
    /// The envelope of each part: `[xmin, ymin, xmax, ymax]`.
    envelopes: Vec<[f64; 4]>,
}

/// Cells per part (about): more cells, fewer parts per cell to test.
const CELLS_PER_PART: f64 = 2.0;
/// At most this many cells a side (a grid of 4096² u32 starts is 64 MiB).
const MAX_SIDE: usize = 2048;

impl EnvelopeGrid {
    /// A grid over `envelopes` (part `i` has `envelopes[i]`; non-finite ones are left out).
    pub fn new(envelopes: Vec<[f64; 4]>) -> Self {
        let finite = |e: &&[f64; 4]| e.iter().all(|v| v.is_finite());
        let (mut lo, mut hi) = ([f64::INFINITY; 2], [f64::NEG_INFINITY; 2]);
        for e in envelopes.iter().filter(finite) {
            lo = [lo[0].min(e[0]), lo[1].min(e[1])];
            hi = [hi[0].max(e[2]), hi[1].max(e[3])];
        }
        let count = envelopes.iter().filter(finite).count();
        if count == 0 {
            return Self {
                origin: [0.0; 2],
                scale: [0.0; 2],
                size: [0, 0],
                starts: vec![0],
                items: Vec::new(),
                envelopes,
            };
        }
        let side = ((count as f64 * CELLS_PER_PART).sqrt().ceil() as usize).clamp(1, MAX_SIDE);
        let span = [
            (hi[0] - lo[0]).max(f64::MIN_POSITIVE),
            (hi[1] - lo[1]).max(f64::MIN_POSITIVE),
        ];
        let scale = [side as f64 / span[0], side as f64 / span[1]];
        let mut grid = Self {
            origin: lo,
            scale,
            size: [side, side],
            starts: Vec::new(),
            items: Vec::new(),
            envelopes,
        };
        // Two passes: count the parts of each cell, then place them.
        let mut counts = vec![0u32; side * side + 1];
        grid.each_cell_of_parts(|cell, _| counts[cell + 1] += 1);
        for c in 1..counts.len() {
            counts[c] += counts[c - 1];
        }
        let mut next = counts.clone();
        let mut items = vec![0u32; counts[side * side] as usize];
        grid.each_cell_of_parts(|cell, part| {
            items[next[cell] as usize] = part;
            next[cell] += 1;
        });
        grid.starts = counts;
        grid.items = items;
        grid
    }

    fn cell_range(&self, lo: f64, hi: f64, axis: usize) -> (usize, usize) {
        let last = self.size[axis].saturating_sub(1);
        let at =
            |v: f64| (((v - self.origin[axis]) * self.scale[axis]).max(0.0) as usize).min(last);
        (at(lo), at(hi))
    }

    fn each_cell_of_parts(&self, mut visit: impl FnMut(usize, u32)) {
        for (part, e) in self.envelopes.iter().enumerate() {
            if !e.iter().all(|v| v.is_finite()) {
                continue;
            }
            let (x0, x1) = self.cell_range(e[0], e[2], 0);
            let (y0, y1) = self.cell_range(e[1], e[3], 1);
            for y in y0..=y1 {
                for x in x0..=x1 {
                    visit(y * self.size[0] + x, part as u32);
                }
            }
        }
    }

    /// The parts listed in cell `cell` (none for a cell outside the grid).
    fn cell(&self, cell: usize) -> &[u32] {
        let (Some(&start), Some(&end)) = (self.starts.get(cell), self.starts.get(cell + 1)) else {
            return &[];
        };
        self.items.get(start as usize..end as usize).unwrap_or(&[])
    }

    /// The parts whose envelope holds `(x, y)`.
    pub fn at(&self, x: f64, y: f64) -> impl Iterator<Item = u32> + '_ {
        let fx = (x - self.origin[0]) * self.scale[0];
        let fy = (y - self.origin[1]) * self.scale[1];
        // Outside the grid (or NaN): no cell. The last row and column hold the far edge.
        let inside =
            fx >= 0.0 && fy >= 0.0 && fx <= self.size[0] as f64 && fy <= self.size[1] as f64;
        let slice = if inside && self.size[0] > 0 {
            let cx = (fx as usize).min(self.size[0] - 1);
            let cy = (fy as usize).min(self.size[1].saturating_sub(1));
            self.cell(cy * self.size[0] + cx)
        } else {
            &[]
        };
        slice.iter().copied().filter(move |&part| {
            self.envelopes
                .get(part as usize)
                .is_some_and(|e| e[0] <= x && x <= e[2] && e[1] <= y && y <= e[3])
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_parts_whose_envelope_holds_a_point_edges_included() {
        let grid = EnvelopeGrid::new(vec![
            [0.0, 0.0, 1.0, 1.0],
            [0.5, 0.5, 3.0, 2.0],
            [f64::NAN, 0.0, 1.0, 1.0],
            [2.0, 2.0, 3.0, 3.0],
        ]);
        let at = |x, y| grid.at(x, y).collect::<Vec<_>>();
        assert_eq!(at(0.25, 0.25), vec![0]);
        assert_eq!(at(0.75, 0.75), vec![0, 1]);
        assert_eq!(at(3.0, 3.0), vec![3]);
        assert_eq!(at(2.0, 2.0), vec![1, 3]);
        assert_eq!(at(0.0, 0.0), vec![0]);
        assert!(at(-1.0, 0.5).is_empty());
        assert!(at(f64::NAN, 0.5).is_empty());
        assert!(EnvelopeGrid::new(Vec::new()).at(0.0, 0.0).next().is_none());
    }
}
