//! Spatial weights after libpysal's `W`: vertex contiguity (Queen, Rook), k nearest neighbours
//! and distance bands (the last two searched in a k-d tree), with the transformations the
//! autocorrelation statistics apply.
//!
//! The builders: [`contiguity()`] from polygon rings, [`knn`] and [`distance_band`] from
//! points under a [`Metric`]; the [`Weights`] they return carry the transformations and checks.

mod contiguity;
mod distance;
mod kdtree;

use std::fmt;

use rayon::prelude::*;

pub use contiguity::contiguity;
pub use distance::{distance_band, knn};
pub use kdtree::Metric;

/// Sparse spatial weights: row `i` lists its neighbours `(j, w_ij)` strictly ascending by `j`.
/// A row with no neighbours is an island; islands are kept (never dropped), and each statistic
/// documents what it reports for them. A row lists itself only when a self weight is part of
/// the definition (Getis–Ord Gi*, added by the statistic, not by the builders here).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Weights {
    pub neighbours: Vec<Vec<(usize, f64)>>,
}

/// Weights that do not fit the values they are applied to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WeightsError {
    /// The number of values differs from the number of weight rows.
    LengthMismatch { values: usize, rows: usize },
    /// A row names a neighbour past the last row.
    OutOfRange { row: usize, neighbour: usize },
    /// A row's neighbours are not strictly ascending (unsorted or repeated).
    Unsorted { row: usize },
}

impl fmt::Display for WeightsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::LengthMismatch { values, rows } => {
                write!(f, "{values} values for {rows} rows of spatial weights")
            }
            Self::OutOfRange { row, neighbour } => {
                write!(
                    f,
                    "row {row} of the spatial weights names missing row {neighbour}"
                )
            }
            Self::Unsorted { row } => {
                write!(
                    f,
                    "row {row} of the spatial weights is not strictly ascending"
                )
            }
        }
    }
}

impl std::error::Error for WeightsError {}

impl Weights {
    /// Weights from arbitrary rows: each row sorted by neighbour, a repeated neighbour kept once
    /// (its first weight).
    pub fn from_rows(mut rows: Vec<Vec<(usize, f64)>>) -> Self {
        for row in &mut rows {
            row.sort_by_key(|&(j, _)| j);
            row.dedup_by_key(|&mut (j, _)| j);
        }
        Self { neighbours: rows }
    }

    /// Number of rows (features).
    pub fn len(&self) -> usize {
        self.neighbours.len()
    }

    /// True when there are no rows.
    pub fn is_empty(&self) -> bool {
        self.neighbours.is_empty()
    }

    /// Rows with no neighbours, ascending.
    pub fn islands(&self) -> Vec<usize> {
        let rows = self.neighbours.iter().enumerate();
        rows.filter(|(_, row)| row.is_empty())
            .map(|(i, _)| i)
            .collect()
    }

    /// libpysal's `'B'` transformation: every listed neighbour weighs 1.
    pub fn binary(&self) -> Self {
        self.map_rows(|row| row.iter().map(|&(j, _)| (j, 1.0)).collect())
    }

    /// libpysal's `'R'` transformation: each weight divided by its row's sum (islands stay
    /// empty; a listed row summing to zero gives NaN weights, as in libpysal).
    pub fn row_standardised(&self) -> Self {
        self.map_rows(|row| {
            let sum: f64 = row.iter().map(|&(_, w)| w).sum();
            row.iter().map(|&(j, w)| (j, w / sum)).collect()
        })
    }

    /// The spatial lag `sum_j w_ij y_j` of every row (0 for an island). `y` must have one value
    /// per row (see [`Weights::validate`]).
    pub fn lag(&self, y: &[f64]) -> Vec<f64> {
        let lag_of = |row: &Vec<(usize, f64)>| row.iter().map(|&(j, w)| w * y[j]).sum();
        self.neighbours.par_iter().map(lag_of).collect()
    }

    /// Checks that the weights can be applied to `n` values: one row per value, neighbours in
    /// range and strictly ascending.
    pub fn validate(&self, n: usize) -> Result<(), WeightsError> {
        if self.len() != n {
            return Err(WeightsError::LengthMismatch {
                values: n,
                rows: self.len(),
            });
        }
        for (row, list) in self.neighbours.iter().enumerate() {
            if let Some(&(neighbour, _)) = list.iter().find(|&&(j, _)| j >= n) {
                return Err(WeightsError::OutOfRange { row, neighbour });
            }
            if list.windows(2).any(|pair| pair[0].0 >= pair[1].0) {
                return Err(WeightsError::Unsorted { row });
            }
        }
        Ok(())
    }

    /// The weight `w_ij`, 0 when `j` is not a neighbour of `i`.
    pub fn weight(&self, i: usize, j: usize) -> f64 {
        self.find(i, j).unwrap_or(0.0)
    }

    /// The sums libpysal's `W` calls `s0` (all weights), `s1` (half the squared sums
    /// `w_ij + w_ji` over all ordered pairs) and `s2` (squared row plus column sums).
    pub fn sums(&self) -> (f64, f64, f64) {
        let mut column = vec![0.0; self.len()];
        let (mut s0, mut s1) = (0.0, 0.0);
        for (i, row) in self.neighbours.iter().enumerate() {
            for &(j, w) in row {
                s0 += w;
                column[j] += w;
                // Pairs listed both ways are met once from each side; a pair listed one way
                // only stands for both ordered pairs, each contributing w_ij^2.
                s1 += match self.find(j, i) {
                    Some(back) => (w + back) * (w + back),
                    None => 2.0 * w * w,
                };
            }
        }
        let rows = self
            .neighbours
            .iter()
            .map(|row| row.iter().map(|&(_, w)| w).sum::<f64>());
        let s2 = rows
            .zip(column)
            .map(|(r, c): (f64, f64)| (r + c) * (r + c))
            .sum();
        (s0, s1 / 2.0, s2)
    }

    fn find(&self, i: usize, j: usize) -> Option<f64> {
        let row = self.neighbours.get(i)?;
        row.binary_search_by_key(&j, |&(k, _)| k)
            .ok()
            .map(|at| row[at].1)
    }

    fn map_rows(&self, f: impl Fn(&[(usize, f64)]) -> Vec<(usize, f64)> + Sync) -> Self {
        let rows = self.neighbours.par_iter().map(|row| f(row)).collect();
        Self { neighbours: rows }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transformations_and_sums() {
        // 0 -> 1 (2.0), 1 -> 0 (1.0), 1 -> 2 (1.0); 3 is an island.
        let w = Weights {
            neighbours: vec![vec![(1, 2.0)], vec![(0, 1.0), (2, 1.0)], vec![], vec![]],
        };
        assert_eq!(w.islands(), vec![2, 3]);
        assert_eq!(w.row_standardised().neighbours[1], vec![(0, 0.5), (2, 0.5)]);
        assert_eq!(w.binary().neighbours[0], vec![(1, 1.0)]);
        // s1 = ((2+1)^2 * 2 + (1+0)^2 * 2) / 2 = 10; rows 2,2,0,0 plus columns 1,2,1,0.
        assert_eq!(w.sums(), (4.0, 10.0, 9.0 + 16.0 + 1.0));
        assert_eq!(w.lag(&[1.0, 2.0, 3.0, 4.0]), vec![4.0, 4.0, 0.0, 0.0]);
        assert!(w.validate(4).is_ok());
        assert_eq!(
            w.validate(3),
            Err(WeightsError::LengthMismatch { values: 3, rows: 4 })
        );
        let unsorted = Weights {
            neighbours: vec![vec![(1, 1.0), (0, 1.0)], vec![]],
        };
        assert_eq!(unsorted.validate(2), Err(WeightsError::Unsorted { row: 0 }));
        assert_eq!(
            Weights::from_rows(unsorted.neighbours).neighbours[0],
            vec![(0, 1.0), (1, 1.0)]
        );
    }
}
