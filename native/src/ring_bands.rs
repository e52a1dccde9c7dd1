//! Horizontal bands over a long ring's edges, so that locating a point looks at the few edges
//! whose y-range holds the point's y instead of all of them: the winding number counts only
//! edges a horizontal line through the point crosses, and an edge the point lies on spans its
//! y too, so the answer is the same as scanning the whole ring.

use geo::Coord;

/// Rings with fewer edges are scanned whole.
pub const MIN_EDGES: usize = 32;

/// Edges per band on average (an edge spanning several bands is listed in each).
const EDGES_PER_BAND: usize = 4;

pub struct RingBands {
    y_min: f64,
    y_max: f64,
    /// Bands per unit of y.
    scale: f64,
    last_band: usize,
    /// `edges[offsets[b]..offsets[b + 1]]`: the start positions of the edges of band `b`.
    offsets: Vec<u32>,
    edges: Vec<u32>,
}

impl RingBands {
    /// The bands of a closed ring, or `None` for a short or flat ring (scanned whole).
    pub fn new(ring: &[Coord<f64>]) -> Option<Self> {
        let n_edges = ring.len().checked_sub(1)?;
        if n_edges < MIN_EDGES {
            return None;
        }
        let (y_min, y_max) = ring
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), c| {
                (lo.min(c.y), hi.max(c.y))
            });
        if !(y_min.is_finite() && y_max.is_finite() && y_max > y_min) {
            return None;
        }
        let bands = (n_edges / EDGES_PER_BAND).clamp(1, 1 << 16);
        let mut index = Self {
            y_min,
            y_max,
            scale: bands as f64 / (y_max - y_min),
            last_band: bands - 1,
            offsets: vec![0; bands + 1],
            edges: Vec::new(),
        };
        let span = |e: usize| {
            let (a, b) = (ring[e].y, ring[e + 1].y);
            index.band_of(a.min(b))..=index.band_of(a.max(b))
        };
        let mut counts = vec![0u32; bands + 1];
        for e in 0..n_edges {
            for band in span(e) {
                counts[band + 1] += 1;
            }
        }
        for band in 0..bands {
            counts[band + 1] += counts[band];
        }
        let mut cursor = counts.clone();
        let mut edges = vec![0u32; counts[bands] as usize];
        for e in 0..n_edges {
            for band in span(e) {
                edges[cursor[band] as usize] = e as u32;
                cursor[band] += 1;
            }
        }
        index.offsets = counts;
        index.edges = edges;
        Some(index)
    }

    /// The band of `y` (monotonic in `y`: an edge's bands run from its lowest y's to its
    /// highest y's, so a `y` between them falls in one of them).
    fn band_of(&self, y: f64) -> usize {
        (((y - self.y_min) * self.scale) as usize).min(self.last_band)
    }

    /// The start positions of the edges whose y-range may hold `y` (none when `y` is outside
    /// the ring's).
    pub fn edges_at(&self, y: f64) -> &[u32] {
        if !(y >= self.y_min && y <= self.y_max) {
            return &[];
        }
        let band = self.band_of(y);
        &self.edges[self.offsets[band] as usize..self.offsets[band + 1] as usize]
    }
}
