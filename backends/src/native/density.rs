//! The kernel density of a layer's points at the centres of a square grid's cells
//! ([`super::tessellation`]'s grids): points binned by the kernel's reach, cells in parallel.

use std::collections::HashMap;
use std::f64::consts::PI;

use arrow::array::{Array, Float64Array};
use geomill_planner::plan::operator::{DensityKernel, GridShape, GridSpec};
use rayon::prelude::*;

use super::layer::Layer;
use super::tessellation::{Lattice, Plane, cells_layer};
use super::{NativeError, classify, clusters};

/// What a density kernel needs: its shape, bandwidth and how far it reaches.
#[derive(Clone, Copy)]
struct Kernel {
    kind: DensityKernel,
    bandwidth: f64,
}

impl Kernel {
    /// The distance past which the kernel is 0 (the gaussian: taken as 0 past 8 bandwidths,
    /// where it is below 10⁻¹⁴ of its peak).
    fn reach(self) -> f64 {
        match self.kind {
            DensityKernel::Gaussian => 8.0 * self.bandwidth,
            DensityKernel::Quartic | DensityKernel::Epanechnikov => self.bandwidth,
        }
    }

    /// How far the grid extends past the points: the gaussian 3 bandwidths.
    fn margin(self) -> f64 {
        match self.kind {
            DensityKernel::Gaussian => 3.0 * self.bandwidth,
            DensityKernel::Quartic | DensityKernel::Epanechnikov => self.bandwidth,
        }
    }

    /// K(d / h) / h² at squared distance `d2`.
    fn at(self, d2: f64) -> f64 {
        let h2 = self.bandwidth * self.bandwidth;
        let u2 = d2 / h2;
        let k = match self.kind {
            DensityKernel::Quartic if u2 < 1.0 => 3.0 / PI * (1.0 - u2) * (1.0 - u2),
            DensityKernel::Epanechnikov if u2 < 1.0 => 2.0 / PI * (1.0 - u2),
            DensityKernel::Gaussian => (-u2 / 2.0).exp() / (2.0 * PI),
            _ => 0.0,
        };
        k / h2
    }
}

/// The kernel density of the layer's points (centroids of other geometries) at each cell
/// centre of a square grid over the points' extent grown by the kernel's margin (or over
/// the grid's bbox); cells of density 0 dropped unless `keep_empty`.
pub fn density(
    layer: &Layer,
    grid: &GridSpec,
    kind: DensityKernel,
    bandwidth: f64,
    weight: Option<&str>,
    keep_empty: bool,
) -> Result<Layer, NativeError> {
    let kernel = Kernel { kind, bandwidth };
    let points = clusters::points(layer)?;
    let weights: Option<Vec<Float64Array>> =
        weight.map(|w| classify::numbers(layer, w)).transpose()?;
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
        ] {
            let kernel = Kernel {
                kind,
                bandwidth: 2.0,
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
