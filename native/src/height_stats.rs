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
    extremes: [f64; 2],
    sum: [f64; 2],
    welford: [f64; 2],
}

/// Adds `z` to a Kahan-compensated sum (`[sum, compensation]`), as pandas sums a group.
#[inline(always)]
fn kahan_add(sum: &mut [f64; 2], z: f64) {
    let y = z - sum[1];
    let t = sum[0] + y;
    sum[1] = (t - sum[0]) - y;
    sum[0] = t;
}

/// Adds the `n`th value `z` to Welford's running mean and sum of squared deviations.
#[allow(clippy::cast_precision_loss)]
fn welford_add(welford: &mut [f64; 2], n: u64, z: f64) {
    let delta = z - welford[0];
    welford[0] += delta / n as f64;
    welford[1] += delta * (z - welford[0]);
}

/// Adds the `n`th value `z` to the lowest and highest.
fn extremes_add(extremes: &mut [f64; 2], n: u64, z: f64) {
    if n == 1 {
        *extremes = [z, z];
    } else {
        *extremes = [extremes[0].min(z), extremes[1].max(z)];
    }
}

/// A statistic of `count` values from their parts (`None` for the quantiles and no values).
#[allow(clippy::cast_precision_loss)]
fn from_parts(
    stat: HeightStat,
    count: u64,
    extremes: [f64; 2],
    sum: [f64; 2],
    welford: [f64; 2],
) -> Option<f64> {
    if stat == HeightStat::Count {
        return Some(count as f64);
    }
    if count == 0 {
        return None;
    }
    let n = count as f64;
    match stat {
        HeightStat::Min => Some(extremes[0]),
        HeightStat::Max => Some(extremes[1]),
        HeightStat::Mean => Some(sum[0] / n),
        HeightStat::Std => Some((welford[1] / n).sqrt()),
        _ => None,
    }
}

impl Running {
    pub fn add(&mut self, z: f64) {
        self.count += 1;
        extremes_add(&mut self.extremes, self.count, z);
        kahan_add(&mut self.sum, z);
        welford_add(&mut self.welford, self.count, z);
    }

    /// A statistic that needs no sorted values (`None` for the quantiles and an empty group).
    pub fn get(&self, stat: HeightStat) -> Option<f64> {
        from_parts(stat, self.count, self.extremes, self.sum, self.welford)
    }
}

/// The running statistics of many groups (numbered in the order made), each part kept only
/// when one of the statistics asked needs it: a grid of millions of cells holds a count and a
/// sum each for a mean.
pub struct RunningGroups {
    /// Each group's count and compensated sum, side by side (one cache line per point added).
    sums: Vec<(u64, [f64; 2])>,
    extremes: Option<Vec<[f64; 2]>>,
    welford: Option<Vec<[f64; 2]>>,
}

impl RunningGroups {
    pub fn new(stats: &[HeightStat]) -> Self {
        let asks = |wanted: &[HeightStat]| stats.iter().any(|s| wanted.contains(s)).then(Vec::new);
        Self {
            sums: Vec::new(),
            extremes: asks(&[HeightStat::Min, HeightStat::Max]),
            welford: asks(&[HeightStat::Std]),
        }
    }

    /// `count` new groups without values, numbered after the others.
    pub fn extend(&mut self, count: usize) {
        let groups = self.sums.len() + count;
        self.sums.resize(groups, (0, [0.0; 2]));
        for part in [&mut self.extremes, &mut self.welford]
            .into_iter()
            .flatten()
        {
            part.resize(groups, [0.0; 2]);
        }
    }

    #[inline(always)]
    pub fn add(&mut self, group: usize, z: f64) {
        let (count, sum) = &mut self.sums[group];
        *count += 1;
        let n = *count;
        kahan_add(sum, z);
        if let Some(extremes) = &mut self.extremes {
            extremes_add(&mut extremes[group], n, z);
        }
        if let Some(welford) = &mut self.welford {
            welford_add(&mut welford[group], n, z);
        }
    }

    /// A statistic of a group that needs no sorted values (`None` for the quantiles and an
    /// empty group).
    pub fn get(&self, group: usize, stat: HeightStat) -> Option<f64> {
        let part = |p: &Option<Vec<[f64; 2]>>| p.as_ref().map_or([f64::NAN; 2], |v| v[group]);
        let (count, sum) = self.sums[group];
        from_parts(stat, count, part(&self.extremes), sum, part(&self.welford))
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
