//! Class breaks of sorted values: equal interval, quantile, and Jenks natural breaks (Fisher's
//! exact optimisation of within-class variance).

/// The upper bounds of `classes` classes over `sorted` (ascending, non-empty): `classes` values,
/// the last being the maximum. Fewer when there are fewer distinct values.
pub fn equal_interval(sorted: &[f64], classes: usize) -> Vec<f64> {
    let (Some(min), Some(max)) = (sorted.first(), sorted.last()) else {
        return Vec::new();
    };
    let step = (max - min) / classes as f64;
    (1..=classes)
        .map(|i| {
            if i == classes {
                *max
            } else {
                min + step * i as f64
            }
        })
        .collect()
}

/// Upper bounds so that each class holds about the same number of values.
pub fn quantile(sorted: &[f64], classes: usize) -> Vec<f64> {
    let n = sorted.len();
    let mut breaks: Vec<f64> = (1..=classes)
        .map(|i| sorted[((i * n).div_ceil(classes)).saturating_sub(1).min(n - 1)])
        .collect();
    breaks.dedup();
    breaks
}

/// Jenks natural breaks: the partition of `sorted` into `classes` runs minimising the sum of
/// squared deviations from each run's mean (dynamic programming, O(classes · n²)).
pub fn jenks(sorted: &[f64], classes: usize) -> Vec<f64> {
    let n = sorted.len();
    let classes = classes.min(n);
    if classes == 0 {
        return Vec::new();
    }
    // Prefix sums give the squared deviation of any run in O(1).
    let mut sum = vec![0.0; n + 1];
    let mut squares = vec![0.0; n + 1];
    for (i, v) in sorted.iter().enumerate() {
        sum[i + 1] = sum[i] + v;
        squares[i + 1] = squares[i] + v * v;
    }
    let cost = |from: usize, to: usize| {
        let count = (to - from) as f64;
        let s = sum[to] - sum[from];
        (squares[to] - squares[from]) - s * s / count
    };
    // best[k][j]: least cost of the first j values in k+1 classes; cut[k][j]: where the last
    // class starts.
    let mut best = vec![vec![f64::INFINITY; n + 1]; classes];
    let mut cut = vec![vec![0_usize; n + 1]; classes];
    for (j, slot) in best[0].iter_mut().enumerate().skip(1) {
        *slot = cost(0, j);
    }
    for k in 1..classes {
        for j in (k + 1)..=n {
            for start in k..j {
                let candidate = best[k - 1][start] + cost(start, j);
                if candidate < best[k][j] {
                    best[k][j] = candidate;
                    cut[k][j] = start;
                }
            }
        }
    }
    let mut bounds = Vec::with_capacity(classes);
    let mut end = n;
    for k in (0..classes).rev() {
        bounds.push(sorted[end - 1]);
        end = cut[k][end];
    }
    bounds.reverse();
    bounds.dedup();
    bounds
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jenks_finds_the_obvious_groups() {
        let values = [1.0, 2.0, 3.0, 10.0, 11.0, 12.0, 30.0, 31.0];
        assert_eq!(jenks(&values, 3), [3.0, 12.0, 31.0]);
        assert_eq!(jenks(&values, 1), [31.0]);
        assert_eq!(jenks(&[5.0], 3), [5.0]);
    }

    #[test]
    fn quantile_and_equal_interval() {
        let values: Vec<f64> = (1..=8).map(f64::from).collect();
        assert_eq!(quantile(&values, 4), [2.0, 4.0, 6.0, 8.0]);
        assert_eq!(
            equal_interval(&values, 7),
            [2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]
        );
        assert_eq!(quantile(&[1.0, 1.0, 1.0], 3), [1.0]);
    }
}
