//! `zonal_stats`: statistics of a raster band under each feature.

use schemars::JsonSchema;
use serde::Deserialize;

use super::{CapabilityParams, CommonParams, Group, LowerContext, Tier};
use crate::error::Problem;
use crate::plan::operator::Operator;
use super::raster_common::{finite, resolve};
use crate::plan::ops::zonal_stats::{ZonalStat, ZonalStatsOp};

/// Add statistics of a raster band's cells under each feature, as rasterstats 0.21 computes
/// them: the cells whose centre lies inside a polygon (every cell it touches with
/// `all_touched`), those a line crosses, a point's cell; cells equal to the nodata value (the
/// raster's, `nodata`, or -999 when neither gives one) and NaN left out. `stats` names them:
/// `count`, `min`, `max`, `mean`, `sum`, `std` (population), `median`, `majority` and
/// `minority` (the smallest value on ties), `unique` (how many distinct values), `range`,
/// `nodata` and `nan` (cells of those kinds under the feature), `percentile_<q>` (numpy's
/// linear percentile); `*` for all but percentiles; default `count min max mean`. Each becomes
/// the field `prefix` + name: NULL for a NULL or empty geometry, and every statistic but the
/// counts NULL for a feature over no valid cell. `raster` names a raster dataset (a GeoTIFF
/// uploaded like any file) by id or name; features in another CRS than the raster's are
/// reprojected to it (`reproject: false` reads their coordinates as the raster's, as
/// rasterstats does). With `coverage_weighted`, polygons weigh every cell they cover by the
/// fraction covered, as exactextract 0.3 computes its statistics: `count` the sum of the
/// fractions (a double), `sum` and `mean` weighted, `std` weighted (population), `median` and
/// `percentile_<q>` exactextract's weighted quantiles (in the band's type), `majority` and
/// `minority` the value of largest and smallest covered area (the largest and the smallest
/// value on ties), `unique` the distinct values; cells past the raster's edge, nodata (the
/// raster's or `nodata`: no default) and NaN left out; lines and points refused. Runs on the
/// native backend whatever the engine, features in parallel.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct ZonalStats {
    /// The raster dataset: its id or its name (a path, as GISPulse's `raster_path`, is matched
    /// by its file name).
    #[schemars(length(min = 1))]
    pub raster: String,
    /// The statistics: names separated by spaces (`"count mean percentile_90"`), a list of
    /// names, or `*` (default: `count min max mean`).
    #[serde(default)]
    pub stats: Option<StatsParam>,
    /// Put before each statistic's name (default: none).
    #[serde(default)]
    pub prefix: String,
    /// The band, from 1 (default 1).
    #[serde(default = "first_band")]
    #[schemars(range(min = 1, max = 65535))]
    pub band: u32,
    /// Every cell a polygon touches rather than those whose centre it contains.
    #[serde(default)]
    pub all_touched: bool,
    /// The value of cells with no data (default: the raster's own).
    #[serde(default)]
    pub nodata: Option<f64>,
    /// Reproject the features to the raster's CRS when theirs differs (default true; false
    /// reads their coordinates as the raster's, as rasterstats and GISPulse do).
    #[serde(default = "yes")]
    pub reproject: bool,
    /// Weight each cell by the fraction of it a polygon covers, as exactextract does (default
    /// false).
    #[serde(default)]
    pub coverage_weighted: bool,
    #[serde(flatten)]
    pub common: CommonParams,
}

/// rasterstats' two forms of `stats`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum StatsParam {
    Words(String),
    List(Vec<String>),
}

fn yes() -> bool {
    true
}

fn first_band() -> u32 {
    1
}

impl CapabilityParams for ZonalStats {
    const NAME: &'static str = "zonal_stats";
    const GROUP: Group = Group::RasterNetwork;
    const TIER: Tier = Tier::Pro;

    fn common(&self) -> &CommonParams {
        &self.common
    }

    fn lower(&self, ctx: &LowerContext<'_>) -> Result<Vec<Operator>, Vec<Problem>> {
        let names = match &self.stats {
            None => Vec::new(),
            Some(StatsParam::Words(words)) => vec![words.clone()],
            Some(StatsParam::List(list)) => list.clone(),
        };
        let stats = ZonalStat::parse_list(&names)
            .map_err(|reason| vec![Problem::new(ctx.at("stats"), reason)])?;
        let band = self.band as usize;
        let raster = resolve(ctx, "raster", &self.raster, &[("band", band)])?;
        finite(ctx, "nodata", self.nodata)?;
        if self.coverage_weighted {
            if self.all_touched {
                return Err(vec![Problem::new(
                    ctx.at("all_touched"),
                    "coverage-weighted statistics weigh every cell a polygon touches by the fraction covered: all_touched does not apply",
                )]);
            }
            if let Some(stat) = stats
                .iter()
                .find(|s| matches!(s, ZonalStat::Nodata | ZonalStat::Nan))
            {
                return Err(vec![Problem::new(
                    ctx.at("stats"),
                    format!(
                        "{} is not a coverage-weighted statistic (count, min, max, mean, sum, std, median, majority, minority, unique, range, percentile_<q>)",
                        stat.name()
                    ),
                )]);
            }
        }
        Ok(vec![Operator::owned(ZonalStatsOp {
            raster,
            band,
            stats,
            prefix: self.prefix.clone(),
            all_touched: self.all_touched,
            nodata: self.nodata,
            reproject: self.reproject,
            coverage_weighted: self.coverage_weighted,
        })])
    }
}
