//! Zonal statistics of a raster band under each feature: an operator only the native backend
//! computes (GDAL reads the raster file in place; no SQL engine of a run holds rasters).

use super::raster::RasterRef;
use crate::plan::owned::{OwnedOperator, with_columns};
use crate::schema::{FieldType, Schema};
use crate::sql::dialect::Dialect;

/// One statistic, as rasterstats names it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ZonalStat {
    Count,
    Min,
    Max,
    Mean,
    Sum,
    Std,
    Median,
    Majority,
    Minority,
    Unique,
    Range,
    Nodata,
    Nan,
    /// `percentile_<q>`, q in [0, 100].
    Percentile(f64),
}

impl ZonalStat {
    /// Every statistic of rasterstats' `stats="*"` (without percentiles), in its order.
    pub const ALL: [ZonalStat; 13] = [
        ZonalStat::Count,
        ZonalStat::Min,
        ZonalStat::Max,
        ZonalStat::Mean,
        ZonalStat::Sum,
        ZonalStat::Std,
        ZonalStat::Median,
        ZonalStat::Majority,
        ZonalStat::Minority,
        ZonalStat::Unique,
        ZonalStat::Range,
        ZonalStat::Nodata,
        ZonalStat::Nan,
    ];

    /// rasterstats' default statistics.
    pub const DEFAULT: [ZonalStat; 4] = [
        ZonalStat::Count,
        ZonalStat::Min,
        ZonalStat::Max,
        ZonalStat::Mean,
    ];

    /// A statistic by rasterstats' name (`percentile_90`, ...).
    pub fn parse(name: &str) -> Result<ZonalStat, String> {
        if let Some(q) = name.strip_prefix("percentile_") {
            return match q.parse::<f64>() {
                Ok(q) if (0.0..=100.0).contains(&q) => Ok(ZonalStat::Percentile(q)),
                _ => Err(format!("{name}: a percentile is between 0 and 100")),
            };
        }
        ZonalStat::ALL
            .into_iter()
            .find(|s| s.name() == name)
            .ok_or_else(|| {
                format!(
                    "unknown statistic {name} (count, min, max, mean, sum, std, median, majority, minority, unique, range, nodata, nan, percentile_<q>)"
                )
            })
    }

    /// The statistics a `stats` parameter names: `*` or `ALL` for every one, else names
    /// separated by spaces or given as a list (rasterstats' forms).
    pub fn parse_list(names: &[String]) -> Result<Vec<ZonalStat>, String> {
        let words: Vec<&str> = names.iter().flat_map(|n| n.split_whitespace()).collect();
        if words.iter().any(|w| *w == "*" || *w == "ALL") {
            return Ok(ZonalStat::ALL.to_vec());
        }
        if words.is_empty() {
            return Ok(ZonalStat::DEFAULT.to_vec());
        }
        let mut stats: Vec<ZonalStat> = Vec::new();
        for word in words {
            let stat = ZonalStat::parse(word)?;
            if !stats.contains(&stat) {
                stats.push(stat);
            }
        }
        Ok(stats)
    }

    /// The name rasterstats gives the statistic.
    pub fn name(&self) -> String {
        match self {
            ZonalStat::Count => "count".into(),
            ZonalStat::Min => "min".into(),
            ZonalStat::Max => "max".into(),
            ZonalStat::Mean => "mean".into(),
            ZonalStat::Sum => "sum".into(),
            ZonalStat::Std => "std".into(),
            ZonalStat::Median => "median".into(),
            ZonalStat::Majority => "majority".into(),
            ZonalStat::Minority => "minority".into(),
            ZonalStat::Unique => "unique".into(),
            ZonalStat::Range => "range".into(),
            ZonalStat::Nodata => "nodata".into(),
            ZonalStat::Nan => "nan".into(),
            ZonalStat::Percentile(q) if q.fract() == 0.0 => format!("percentile_{q:.0}"),
            ZonalStat::Percentile(q) => format!("percentile_{q}"),
        }
    }

    /// Whether the statistic counts cells (an integer column) rather than measures values.
    pub fn is_count(&self) -> bool {
        matches!(self, ZonalStat::Count | ZonalStat::Unique | ZonalStat::Nan)
    }
}

/// The statistics of one band of a raster under each feature, added as `prefix` + statistic.
#[derive(Debug, Clone, PartialEq)]
pub struct ZonalStatsOp {
    pub raster: RasterRef,
    /// 1-based.
    pub band: usize,
    pub stats: Vec<ZonalStat>,
    pub prefix: String,
    /// Every cell a feature touches, not only those whose centre it contains.
    pub all_touched: bool,
    /// Replaces the raster's nodata value.
    pub nodata: Option<f64>,
    /// Reproject the features to the raster's CRS when theirs differs.
    pub reproject: bool,
    /// Weight each cell by the fraction of it the feature covers (exactextract's statistics).
    pub coverage_weighted: bool,
}

impl ZonalStatsOp {
    /// Whether `stat` is an integer column: the counts of cells (a coverage-weighted count is
    /// a sum of fractions).
    pub fn is_integer(&self, stat: ZonalStat) -> bool {
        stat.is_count() && !(self.coverage_weighted && stat == ZonalStat::Count)
    }

    /// The columns the step adds, with their types.
    pub fn outputs(&self) -> Vec<(String, FieldType)> {
        self.stats
            .iter()
            .map(|s| {
                let ty = if self.is_integer(*s) {
                    FieldType::Integer
                } else {
                    FieldType::Double
                };
                (format!("{}{}", self.prefix, s.name()), ty)
            })
            .collect()
    }

    /// The step in a line (plan text, kernel line).
    pub fn describe(&self) -> String {
        let names: Vec<String> = self.stats.iter().map(ZonalStat::name).collect();
        format!(
            "zonal {} of band {} of raster {}{}",
            names.join(" "),
            self.band,
            self.raster.name,
            if self.coverage_weighted {
                ", cells weighted by the fraction covered"
            } else if self.all_touched {
                ", every touched cell"
            } else {
                ", cells whose centre is inside"
            }
        )
    }
}

impl OwnedOperator for ZonalStatsOp {
    fn name(&self) -> &'static str {
        "ZonalStats"
    }

    fn explain(&self) -> String {
        format!(
            "{} prefix={}{}",
            self.describe(),
            self.prefix,
            if self.reproject {
                ""
            } else {
                " reproject=false"
            }
        )
    }

    fn reads(&self) -> Vec<String> {
        Vec::new()
    }

    fn output_schema(&self, inputs: &[Option<&Schema>]) -> Option<Schema> {
        with_columns(inputs, self.outputs())
    }

    fn native_only(&self) -> bool {
        true
    }

    fn sql_missing(&self, _dialect: Dialect) -> Option<String> {
        Some(format!(
            "{} runs on the native backend: GDAL reads the raster file, which no SQL engine of the run holds",
            self.describe()
        ))
    }

    fn native_kernel(&self) -> Result<String, String> {
        Ok(format!(
            "{}: each feature's window read and burned by GDAL, features in parallel (rasterstats' rules)",
            self.describe()
        ))
    }
}
