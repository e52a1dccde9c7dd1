//! The kernel density of a layer's points at the centres of a square grid's cells
//! ([`super::tessellation`]'s grids), or at the nodes of GISPulse's grid: points binned by the
//! kernel's reach, cells in parallel.

use std::collections::HashMap;
use std::f64::consts::PI;

use arrow::array::{Array, Float64Array};
use geomill_planner::plan::operator::{DensityKernel, GridAnchor, GridShape, GridSpec};
use rayon::prelude::*;

use super::layer::Layer;
use super::tessellation::{Lattice, Plane, arange, cells_layer, layer_extent};
use super::{NativeError, classify, clusters};

/// What a density kernel needs: its shape, bandwidth and how far it reaches.
#[derive(Clone, Copy)]
struct Kernel {
    kind: DensityKernel,
    bandwidth: f64,
    /// The gaussian summed as far as it is not 0 in floating point, not cut at 8 bandwidths.
    uncut: bool,
}

/// Bandwidths past which the gaussian `e^(−u²/2)` is 0 in double precision (`e^(−760.5)`).
const GAUSSIAN_ZERO: f64 = 39.0;

impl Kernel {
    /// The distance past which the kernel is 0 (the gaussian: taken as 0 past 8 bandwidths,
    /// where it is below 10⁻¹⁴ of its peak, unless `uncut`).
    fn reach(self) -> f64 {
        match self.kind {
            DensityKernel::Gaussian if self.uncut => GAUSSIAN_ZERO * self.bandwidth,
            DensityKernel::Gaussian => 8.0 * self.bandwidth,
            DensityKernel::Quartic | DensityKernel::Epanechnikov | DensityKernel::Tophat => {
                self.bandwidth
            }
        }
    }

    /// How far the grid extends past the points: the gaussian 3 bandwidths.
    fn margin(self) -> f64 {
        match self.kind {
            DensityKernel::Gaussian => 3.0 * self.bandwidth,
            DensityKernel::Quartic | DensityKernel::Epanechnikov | DensityKernel::Tophat => {
                self.bandwidth
            }
        }
    }

    /// K(d / h) / h² at squared distance `d2`.
    fn at(self, d2: f64) -> f64 {
        let h2 = self.bandwidth * self.bandwidth;
        let u2 = d2 / h2;
        let k = match self.kind {
            DensityKernel::Quartic if u2 < 1.0 => 3.0 / PI * (1.0 - u2) * (1.0 - u2),
            DensityKernel::Epanechnikov if u2 < 1.0 => 2.0 / PI * (1.0 - u2),
            DensityKernel::Tophat if u2 < 1.0 => 1.0 / PI,
            DensityKernel::Gaussian => (-u2 / 2.0).exp() / (2.0 * PI),
            _ => 0.0,
        };
        k / h2
    }
}

/// How a density is estimated: the kernel, its bandwidth, the weight field, whether cells
/// of density 0 are kept and whether it is divided by the total weight.
pub struct Estimate<'a> {
    pub kind: DensityKernel,
    pub bandwidth: f64,
    pub weight: Option<&'a str>,
    pub keep_empty: bool,
    pub normalize: bool,
}

/// The kernel density of the layer's points (centroids of other geometries) at each cell
/// centre of a square grid over the points' extent grown by the kernel's margin (or over
/// the grid's bbox); cells of density 0 dropped unless `keep_empty`. With the grid anchored
/// as GISPulse's nodes, at those nodes as points instead (see [`at_nodes`]).
pub fn density(
    layer: &Layer,
    grid: &GridSpec,
    estimate: &Estimate<'_>,
) -> Result<Layer, NativeError> {
    let nodes = grid.anchor == GridAnchor::PaddedNodes;
    let kernel = Kernel {
        kind: estimate.kind,
        bandwidth: estimate.bandwidth,
        uncut: nodes,
    };
    let points = clusters::points(layer)?;
    let weights: Option<Vec<Float64Array>> = estimate
        .weight
        .map(|w| classify::numbers(layer, w))
        .transpose()?;
    let mut located: Vec<([f64; 2], f64)> = Vec::new();
    for (batch, rows) in points.iter().enumerate() {
        for (row, point) in rows.iter().enumerate() {
            let w = match &weights {
                Some(columns) => columns
                    .get(batch)
                    .and_then(|c| (!c.is_null(row)).then(|| c.value(row)))
                    .unwrap_or(0.0),
                None => 1.0,
            };
            if let Some(p) = point {
                located.push((*p, w));
            }
        }
    }
    if estimate.normalize {
        let total: f64 = located.iter().map(|(_, w)| w).sum();
        for (_, w) in &mut located {
            *w /= total;
        }
    }
    if nodes {
        return at_nodes(layer, grid, kernel, &located);
    }
    let Some(extent) = grid.bbox.or_else(|| {
        located
            .iter()
            .map(|(p, _)| [p[0], p[1], p[0], p[1]])
            .reduce(|a, b| {
                [
                    a[0].min(b[0]),
                    a[1].min(b[1]),
                    a[2].max(b[2]),
                    a[3].max(b[3]),
                ]
            })
    }) else {
        return cells_layer(layer, Vec::new(), Some(Vec::new()));
    };
    let plane = Plane::of(grid, extent);
    let in_plane: Vec<([f64; 2], f64)> = located
        .iter()
        .map(|(p, w)| (plane.forward(*p), *w))
        .collect();
    let mut cover = plane.envelope(extent);
    if grid.bbox.is_none() {
        let m = kernel.margin();
        cover = [cover[0] - m, cover[1] - m, cover[2] + m, cover[3] + m];
    }
    let lattice = Lattice {
        shape: GridShape::Square,
        size: grid.size,
        corners: None,
    };
    let bins = Bins::new(&in_plane, kernel.reach());
    let keep_empty = estimate.keep_empty;
    let cells: Vec<((i64, i64), f64)> = lattice
        .cells_over(cover)?
        .into_par_iter()
        .map(|(i, j)| {
            (
                (i, j),
                bins.density(lattice.centre(i, j), kernel, &in_plane),
            )
        })
        .filter(|(_, d)| keep_empty || *d > 0.0)
        .collect();
    let (rows, densities): (Vec<_>, Vec<_>) = cells
        .into_par_iter()
        .map(|((i, j), d)| ((i, j, plane.polygon(&lattice.ring(i, j))), d))
        .unzip();
    cells_layer(layer, rows, Some(densities))
}

/// The density at GISPulse's nodes, as points: along each axis numpy's `arange(min − h, max +
/// h + size, size)` over the extent of the layer's geometries (h the bandwidth), rows from
/// the south, every node kept.
fn at_nodes(
    layer: &Layer,
    grid: &GridSpec,
    kernel: Kernel,
    located: &[([f64; 2], f64)],
) -> Result<Layer, NativeError> {
    let Some(extent) = layer_extent(layer)? else {
        return cells_layer(layer, Vec::new(), Some(Vec::new()));
    };
    let plane = Plane::of(grid, extent);
    let [x0, y0, x1, y1] = plane.envelope(extent);
    let h = kernel.bandwidth;
    let (x0, y0, x1, y1) = (x0 - h, y0 - h, x1 + h, y1 + h);
    let columns = ((x1 + grid.size - x0) / grid.size).ceil();
    let rows = ((y1 + grid.size - y0) / grid.size).ceil();
    let count = columns * rows;
    if count.is_nan() || count > super::tessellation::MAX_CELLS as f64 {
        return Err(NativeError::Input(format!(
            "the grid would have about {count:.0} nodes (at most {}): give a larger cell size",
            super::tessellation::MAX_CELLS
        )));
    }
    let xs = arange(x0, x1 + grid.size, grid.size);
    let ys = arange(y0, y1 + grid.size, grid.size);
    let in_plane: Vec<([f64; 2], f64)> = located
        .iter()
        .map(|(p, w)| (plane.forward(*p), *w))
        .collect();
    let bins = Bins::new(&in_plane, kernel.reach());
    let nodes: Vec<(i64, i64, [f64; 2])> = ys
        .iter()
        .enumerate()
        .flat_map(|(j, &y)| {
            xs.iter()
                .enumerate()
                .map(move |(i, &x)| (i as i64, j as i64, [x, y]))
        })
        .collect();
    let (rows, densities): (Vec<_>, Vec<_>) = nodes
        .into_par_iter()
        .map(|(i, j, at)| {
            let d = bins.density(at, kernel, &in_plane);
            let [x, y] = plane.inverse(at);
            let mut wkb = Vec::with_capacity(21);
            geomill_geometry::wkb::write_point(x, y, &mut wkb);
            ((i, j, wkb), d)
        })
        .unzip();
    cells_layer(layer, rows, Some(densities))
}

/// Points binned in square bins of the kernel's reach: a cell centre's points in reach lie in
/// its bin and the eight around it.
struct Bins {
    size: f64,
    members: HashMap<(i64, i64), Vec<usize>>,
}

impl Bins {
    fn new(points: &[([f64; 2], f64)], size: f64) -> Self {
        let mut members: HashMap<(i64, i64), Vec<usize>> = HashMap::new();
        for (n, (p, _)) in points.iter().enumerate() {
            members.entry(Self::key(*p, size)).or_default().push(n);
        }
        Self { size, members }
    }

    #[allow(clippy::cast_possible_truncation)]
    fn key(p: [f64; 2], size: f64) -> (i64, i64) {
        ((p[0] / size).floor() as i64, (p[1] / size).floor() as i64)
    }

    fn density(&self, centre: [f64; 2], kernel: Kernel, points: &[([f64; 2], f64)]) -> f64 {
        let (bx, by) = Self::key(centre, self.size);
        let mut sum = 0.0;
        for dx in -1..=1 {
            for dy in -1..=1 {
                let Some(members) = self.members.get(&(bx + dx, by + dy)) else {
                    continue;
                };
                for &n in members {
                    let ([x, y], w) = points[n];
                    let d2 = (x - centre[0]).powi(2) + (y - centre[1]).powi(2);
                    sum += w * kernel.at(d2);
                }
            }
        }
        sum
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernels_integrate_to_one() {
        for kind in [
            DensityKernel::Quartic,
            DensityKernel::Gaussian,
            DensityKernel::Epanechnikov,
            DensityKernel::Tophat,
        ] {
            let kernel = Kernel {
                kind,
                bandwidth: 2.0,
                uncut: false,
            };
            let step = 0.01;
            let mut total = 0.0;
            let reach = kernel.reach();
            let mut x = -reach;
            while x < reach {
                let mut y = -reach;
                while y < reach {
                    total += kernel.at(x * x + y * y) * step * step;
                    y += step;
                }
                x += step;
            }
            assert!((total - 1.0).abs() < 1e-2, "{kind:?}: {total}");
        }
    }
}
