//! Statistics of a group of point heights as pandas 3's groupby computes them, bit for bit: the
//! mean a Kahan-compensated sum in point order, the population standard deviation Welford's
//! running update in point order, the median and percentiles linear interpolation between the
//! sorted values (NumPy's default).

use arrow::array::RecordBatch;
use geomill_geometry::wkb;
use geomill_planner::plan::ops::pointcloud::HeightStat;

use crate::NativeError;
use crate::layer::Wkb;

/// A point's x, y and height (`None` for a 2D point or a NaN Z).
pub type PointZ = (f64, f64, Option<f64>);

/// The points of one batch's geometry column `geom`, in order (`None`: NULL or empty); any
/// other geometry is an error naming it (`what` says which step reads them).
pub fn batch_points(
    batch: &RecordBatch,
    geom: usize,
    what: &str,
) -> Result<Vec<Option<PointZ>>, NativeError> {
    let wkbs = Wkb::of(batch, geom)?;
    (0..wkbs.len())
        .map(|i| match wkbs.get(i) {
            None => Ok(None),
            Some(bytes) => wkb::read_point_z(bytes).map_err(|e| match e {
                wkb::WkbError::Unexpected { found, .. } => {
                    NativeError::Input(format!("{what} reads points, not {found}"))
                }
                other => NativeError::Geometry {
                    row: i,
                    reason: other.to_string(),
                },
            }),
        })
        .collect()
}

/// The running statistics of heights added in order (those without the sorted values).
#[derive(Debug, Clone, Copy, Default)]
pub struct Running {
    pub count: u64,
    pub min: f64,
    pub max: f64,
    sum: f64,
    compensation: f64,
    welford_mean: f64,
    squares: f64,
}

impl Running {
    pub fn add(&mut self, z: f64) {
        if self.count == 0 {
            self.min = z;
            self.max = z;
        } else {
            self.min = self.min.min(z);
            self.max = self.max.max(z);
        }
        self.count += 1;
        let y = z - self.compensation;
        let t = self.sum + y;
        self.compensation = (t - self.sum) - y;
        self.sum = t;
        #[allow(clippy::cast_precision_loss)]
        let n = self.count as f64;
        let delta = z - self.welford_mean;
        self.welford_mean += delta / n;
        self.squares += delta * (z - self.welford_mean);
    }

    /// A statistic that needs no sorted values (`None` for the quantiles and an empty group).
    #[allow(clippy::cast_precision_loss)]
    pub fn get(&self, stat: HeightStat) -> Option<f64> {
        if stat == HeightStat::Count {
            return Some(self.count as f64);
        }
        if self.count == 0 {
            return None;
        }
        let n = self.count as f64;
        match stat {
            HeightStat::Min => Some(self.min),
            HeightStat::Max => Some(self.max),
            HeightStat::Mean => Some(self.sum / n),
            HeightStat::Std => Some((self.squares / n).sqrt()),
            _ => None,
        }
    }
}

/// Whether a statistic needs every value (a quantile), not only running sums.
pub fn needs_values(stats: &[HeightStat]) -> bool {
    stats.iter().any(|s| s.quantile().is_some())
}

/// The statistics of `heights` (in point order; sorted in place when a quantile is asked), in
/// the order of `stats`: the count as a number, the others `None` when there are no heights.
pub fn statistics(heights: &mut [f64], stats: &[HeightStat]) -> Vec<Option<f64>> {
    let mut running = Running::default();
    heights.iter().for_each(|z| running.add(*z));
    if needs_values(stats) {
        heights.sort_unstable_by(f64::total_cmp);
    }
    stats
        .iter()
        .map(|stat| match stat.quantile() {
            Some(_) if heights.is_empty() => None,
            Some(_) if *stat == HeightStat::Median => Some(median(heights)),
            Some(q) => Some(quantile(heights, q)),
            None => running.get(*stat),
        })
        .collect()
}

/// The middle value, or the mean of the two middle ones, of sorted values.
fn median(sorted: &[f64]) -> f64 {
    let n = sorted.len();
    if n % 2 == 1 {
        sorted[n / 2]
    } else {
        (sorted[n / 2] + sorted[n / 2 - 1]) / 2.0
    }
}

/// pandas' linear quantile of sorted values: position `q (n - 1)`, interpolated.
#[allow(
    clippy::cast_precision_loss,
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss
)]
fn quantile(sorted: &[f64], q: f64) -> f64 {
    let position = q * (sorted.len() - 1) as f64;
    let i = position.trunc() as usize;
    let fraction = position % 1.0;
    if fraction == 0.0 || i + 1 >= sorted.len() {
        sorted[i]
    } else {
        sorted[i] + (sorted[i + 1] - sorted[i]) * fraction
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statistics_of_a_small_group() {
        let mut heights = vec![4.0, 1.0, 3.0, 2.0];
        let stats = [
            HeightStat::Count,
            HeightStat::Min,
            HeightStat::Max,
            HeightStat::Mean,
            HeightStat::Median,
            HeightStat::Std,
        ];
        let got = statistics(&mut heights, &stats);
        let std = 1.25f64.sqrt();
        assert_eq!(got, [4.0, 1.0, 4.0, 2.5, 2.5, std].map(Some).to_vec());
        let p90 = statistics(&mut heights, &[HeightStat::P90])[0].unwrap();
        assert!((p90 - 3.7).abs() < 1e-12, "{p90}");
        let empty = statistics(&mut [], &stats);
        assert_eq!(empty[0], Some(0.0));
        assert!(empty[1..].iter().all(Option::is_none));
        assert_eq!(
            statistics(&mut [7.0], &[HeightStat::Std, HeightStat::P99]),
            [Some(0.0), Some(7.0)]
        );
    }
}
