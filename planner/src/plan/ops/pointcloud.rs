//! Point-cloud summaries of the points' heights (their geometry's Z): per polygon
//! (`ZonalHeight`, the points within each polygon of the first input) and per cell of a square
//! grid anchored at the points' minimum corner (`GridSummary`). SQL on DuckDB and PostGIS, and
//! a kernel in the native crate that computes the statistics as pandas does.

use crate::expr::SqlExpr;
use crate::plan::owned::{OwnedOperator, first_schema, with_columns};
use crate::plan::predicate::SpatialPredicate;
use crate::schema::{Column, FieldType, GEOM, Schema};
use crate::sql::dialect::Dialect;
use crate::sql::geo::predicate_sql;
use crate::sql::input::Input;
use crate::sql::parts::geom;
use crate::sql::quote::{ident, number};
use crate::sql::row_order::ROW_KEY;

/// One statistic of the heights (GISPulse's names).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HeightStat {
    Min,
    Max,
    Mean,
    Median,
    /// Population standard deviation (ddof 0).
    Std,
    /// How many points have a height.
    Count,
    P90,
    P95,
    P99,
}

impl HeightStat {
    /// Every statistic, in the order their names sort.
    pub const ALL: [HeightStat; 9] = [
        HeightStat::Count,
        HeightStat::Max,
        HeightStat::Mean,
        HeightStat::Median,
        HeightStat::Min,
        HeightStat::P90,
        HeightStat::P95,
        HeightStat::P99,
        HeightStat::Std,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Self::Min => "min",
            Self::Max => "max",
            Self::Mean => "mean",
            Self::Median => "median",
            Self::Std => "std",
            Self::Count => "count",
            Self::P90 => "p90",
            Self::P95 => "p95",
            Self::P99 => "p99",
        }
    }

    /// The statistics a list names, each once in the order first named (`[]`: `default`).
    pub fn parse_list(names: &[String], default: &[HeightStat]) -> Result<Vec<HeightStat>, String> {
        let mut stats = Vec::new();
        for name in names {
            let stat = Self::ALL
                .into_iter()
                .find(|s| s.name() == name)
                .ok_or_else(|| {
                    format!(
                        "unknown statistic {name} (count, max, mean, median, min, p90, p95, p99, std)"
                    )
                })?;
            if !stats.contains(&stat) {
                stats.push(stat);
            }
        }
        Ok(if stats.is_empty() {
            default.to_vec()
        } else {
            stats
        })
    }

    /// The quantile a statistic is (linear interpolation between the sorted values).
    pub fn quantile(self) -> Option<f64> {
        match self {
            Self::Median => Some(0.5),
            Self::P90 => Some(0.9),
            Self::P95 => Some(0.95),
            Self::P99 => Some(0.99),
            _ => None,
        }
    }

    pub fn field_type(self) -> FieldType {
        if self == Self::Count {
            FieldType::Integer
        } else {
            FieldType::Double
        }
    }

    /// The aggregate over `value` in `dialect`. The mean is DuckDB's compensated `favg`
    /// (pandas sums with Kahan's compensation too).
    fn sql(self, value: &str, dialect: Dialect) -> String {
        if let Some(q) = self.quantile() {
            return match dialect {
                Dialect::Duckdb => format!("quantile_cont({value}, {q})"),
                Dialect::Postgis => {
                    format!("percentile_cont({q}) WITHIN GROUP (ORDER BY {value})")
                }
            };
        }
        match (self, dialect) {
            (Self::Min, _) => format!("min({value})"),
            (Self::Max, _) => format!("max({value})"),
            (Self::Mean, Dialect::Duckdb) => format!("favg({value})"),
            (Self::Mean, Dialect::Postgis) => format!("avg({value})"),
            (Self::Std, _) => format!("stddev_pop({value})"),
            _ => format!("count({value})"),
        }
    }
}

fn names(stats: &[HeightStat]) -> String {
    stats.iter().map(|s| s.name()).collect::<Vec<_>>().join(" ")
}

/// How `{prefix}height` is made, if at all.
#[derive(Debug, Clone, PartialEq)]
pub enum Height {
    None,
    /// The highest point less the lowest.
    MaxMinusMin,
    /// The highest point less the polygon's value of this column (its ground elevation).
    MaxMinusColumn(String),
}

/// For each polygon of the first input, statistics of the heights of the second input's points
/// within it (boundary points left out; a point in two polygons counts in both), added as
/// `prefix` + name, then `{prefix}height`. Polygons without points get a count of 0 and NULL
/// for the others. Rows keep their order.
#[derive(Debug, Clone, PartialEq)]
pub struct ZonalHeightOp {
    pub stats: Vec<HeightStat>,
    pub prefix: String,
    pub height: Height,
}

impl ZonalHeightOp {
    /// The columns added, with their types.
    pub fn outputs(&self) -> Vec<(String, FieldType)> {
        let mut columns: Vec<(String, FieldType)> = self
            .stats
            .iter()
            .map(|s| (format!("{}{}", self.prefix, s.name()), s.field_type()))
            .collect();
        if self.height != Height::None {
            columns.push((self.height_column(), FieldType::Double));
        }
        columns
    }

    pub fn height_column(&self) -> String {
        format!("{}height", self.prefix)
    }

    fn column(&self, stat: HeightStat) -> String {
        ident(&format!("{}{}", self.prefix, stat.name()))
    }

    fn describe(&self) -> String {
        format!(
            "heights {} of the points within each polygon{}",
            names(&self.stats),
            match &self.height {
                Height::None => String::new(),
                Height::MaxMinusMin => ", height max - min".to_owned(),
                Height::MaxMinusColumn(c) => format!(", height max - {c}"),
            }
        )
    }

    /// `{prefix}height` from the polygon (`t`) and its statistics (`a`).
    fn height_sql(&self) -> Option<String> {
        let max = format!("a.{}", self.column(HeightStat::Max));
        match &self.height {
            Height::None => None,
            Height::MaxMinusMin => Some(format!("{max} - a.{}", self.column(HeightStat::Min))),
            Height::MaxMinusColumn(c) => {
                Some(format!("{max} - CAST(t.{} AS DOUBLE PRECISION)", ident(c)))
            }
        }
        .map(|sql| format!("{sql} AS {}", ident(&self.height_column())))
    }
}

impl OwnedOperator for ZonalHeightOp {
    fn name(&self) -> &'static str {
        "ZonalHeight"
    }

    fn explain(&self) -> String {
        format!("{} prefix={}", self.describe(), self.prefix)
    }

    fn reads(&self) -> Vec<String> {
        match &self.height {
            Height::MaxMinusColumn(c) => vec![c.clone()],
            _ => Vec::new(),
        }
    }

    fn arity(&self) -> Option<usize> {
        Some(2)
    }

    fn output_schema(&self, inputs: &[Option<&Schema>]) -> Option<Schema> {
        with_columns(inputs, self.outputs())
    }

    /// DuckDB: the polygons numbered, an inner join on `ST_Within` (DuckDB's spatial join)
    /// grouped by polygon, joined back to the polygons in their order. PostGIS: a lateral
    /// aggregate per polygon, answered by the points' GiST index.
    fn sql(
        &self,
        inputs: &[Input<'_>],
        _output: Option<&Schema>,
        dialect: Dialect,
    ) -> Result<String, String> {
        let [polygons, points] = inputs else {
            return Err("ZonalHeight needs the polygons and the points".to_owned());
        };
        // DuckDB compares geometries of one CRS label only, and labels a CRS by where it was
        // read (a LAS header's WKT, a GeoPackage's): the points are read in the polygons' CRS.
        let unlabelled = |g: String| match dialect {
            Dialect::Duckdb => format!("CAST({g} AS GEOMETRY)"),
            Dialect::Postgis => g,
        };
        let within = predicate_sql(
            SpatialPredicate::Within,
            &unlabelled(geom("r")),
            &unlabelled(geom("t")),
            None,
        )?;
        let z = format!("ST_Z({})", geom("r"));
        let aggregates: Vec<String> = self
            .stats
            .iter()
            .map(|s| format!("{} AS {}", s.sql(&z, dialect), self.column(*s)))
            .collect();
        let height = self
            .height_sql()
            .map(|h| format!(", {h}"))
            .unwrap_or_default();
        Ok(match dialect {
            Dialect::Duckdb => {
                let key = ident(ROW_KEY);
                let outputs: Vec<String> = self
                    .stats
                    .iter()
                    .map(|s| {
                        let column = self.column(*s);
                        if *s == HeightStat::Count {
                            format!("COALESCE(a.{column}, 0) AS {column}")
                        } else {
                            format!("a.{column}")
                        }
                    })
                    .collect();
                format!(
                    "WITH __zones AS (SELECT *, row_number() OVER () AS {key} FROM {}), \
                     __heights AS (SELECT t.{key}, {} FROM __zones AS t JOIN {} AS r ON {within} GROUP BY t.{key}) \
                     SELECT t.* EXCLUDE ({key}), {}{height} FROM __zones AS t LEFT JOIN __heights AS a ON t.{key} = a.{key} ORDER BY t.{key}",
                    polygons.from,
                    aggregates.join(", "),
                    points.from,
                    outputs.join(", "),
                )
            }
            Dialect::Postgis => format!(
                "SELECT t.*, a.*{height} FROM {} AS t LEFT JOIN LATERAL (SELECT {} FROM {} AS r WHERE {within}) AS a ON true",
                polygons.from,
                aggregates.join(", "),
                points.from
            ),
        })
    }

    fn native_kernel(&self) -> Result<String, String> {
        Ok(format!(
            "{}: points located in the polygons' prepared index in parallel batches, each polygon's heights gathered in point order, statistics as pandas computes them",
            self.describe()
        ))
    }
}

/// The occupied cells of a square grid of side `cell_size` anchored at the points' minimum x
/// and y (rows counted up from the lowest point, columns right from the leftmost), with
/// statistics of each cell's heights as `z_` + name: columns `row`, `col`, the statistics and the
/// cell's square, sorted by row then column. A point's cell is NumPy's floor division of its
/// offset from the anchor by the cell size.
#[derive(Debug, Clone, PartialEq)]
pub struct GridSummaryOp {
    pub cell_size: f64,
    pub stats: Vec<HeightStat>,
    /// The class filter of the step before, folded in by the optimizer
    /// (`absorb_class_filter`): a point-cloud file's reader then skips the other points.
    pub classes: Option<ClassFilter>,
}

/// A class filter (`pointcloud_filter_classification`) folded into the step that reads its
/// points: the points whose `column` is one of `codes` when `keep`, else those whose is not
/// (or is NULL); `predicate` is the filter as SQL runs it.
#[derive(Debug, Clone, PartialEq)]
pub struct ClassFilter {
    pub column: String,
    pub codes: Vec<i64>,
    pub keep: bool,
    pub predicate: SqlExpr,
}

impl ClassFilter {
    /// The class filter `predicate` is, if it is one.
    pub fn of(predicate: &SqlExpr) -> Option<Self> {
        let (column, codes, keep) = predicate.as_int_membership()?;
        Some(Self {
            column,
            codes,
            keep,
            predicate: predicate.clone(),
        })
    }

    /// Whether a point of class `class` (`None`: NULL) passes.
    pub fn passes(&self, class: Option<i64>) -> bool {
        class.map_or(!self.keep, |c| self.codes.contains(&c) == self.keep)
    }
}

/// The row and column fields of a grid summary.
pub const ROW: &str = "row";
pub const COL: &str = "col";

impl GridSummaryOp {
    pub fn stat_column(stat: HeightStat) -> String {
        format!("z_{}", stat.name())
    }

    fn describe(&self) -> String {
        let of = self.classes.as_ref().map_or_else(String::new, |c| {
            format!(" of the points where {}", c.predicate)
        });
        format!(
            "heights {} per {} cell of the points' grid{of}",
            names(&self.stats),
            self.cell_size
        )
    }

    /// The cell index of offset `a` (≥ 0): NumPy's `a // size` on DuckDB (C's `fmod`, then
    /// the quotient rounded as NumPy rounds it), `floor(a / size)` on PostgreSQL, which has no
    /// `fmod` for doubles (the two differ only where `a / size` rounds up to a whole number,
    /// never for a power-of-two size).
    fn cell_sql(&self, a: &str, size: &str, dialect: Dialect) -> String {
        match dialect {
            Dialect::Duckdb => {
                let div = format!("(({a}) - fmod({a}, {size})) / {size}");
                format!(
                    "CAST(CASE WHEN {div} - floor({div}) > 0.5 THEN floor({div}) + 1 ELSE floor({div}) END AS BIGINT)"
                )
            }
            Dialect::Postgis => format!("CAST(floor(({a}) / {size}) AS BIGINT)"),
        }
    }
}

impl OwnedOperator for GridSummaryOp {
    fn name(&self) -> &'static str {
        "GridSummary"
    }

    fn explain(&self) -> String {
        self.describe()
    }

    fn reads(&self) -> Vec<String> {
        Vec::new()
    }

    fn output_schema(&self, inputs: &[Option<&Schema>]) -> Option<Schema> {
        let mut columns = vec![
            Column {
                name: ROW.into(),
                ty: FieldType::Integer,
            },
            Column {
                name: COL.into(),
                ty: FieldType::Integer,
            },
        ];
        columns.extend(self.stats.iter().map(|s| Column {
            name: Self::stat_column(*s),
            ty: s.field_type(),
        }));
        columns.push(Column {
            name: GEOM.into(),
            ty: FieldType::Geometry,
        });
        Some(Schema {
            columns,
            crs: first_schema(inputs).and_then(|s| s.crs.clone()),
        })
    }

    /// The points' coordinates, their minimum, each point's cell, then one row per cell.
    fn sql(
        &self,
        inputs: &[Input<'_>],
        _output: Option<&Schema>,
        dialect: Dialect,
    ) -> Result<String, String> {
        let [points] = inputs else {
            return Err("GridSummary needs the points".to_owned());
        };
        let size = format!("CAST({} AS DOUBLE PRECISION)", number(self.cell_size)?);
        let g = geom("t");
        let (row, col) = (ident(ROW), ident(COL));
        let aggregates: Vec<String> = self
            .stats
            .iter()
            .map(|s| {
                format!(
                    "{} AS {}",
                    s.sql("c.z", dialect),
                    ident(&Self::stat_column(*s))
                )
            })
            .collect();
        let corner = |index: &str, origin: &str| format!("c.{origin} + c.{index} * {size}");
        let (x0, y0) = (corner(&col, "x0"), corner(&row, "y0"));
        // PostGIS gives the cells the points' SRID; DuckDB's geometries carry none.
        let (srid, envelope) = match dialect {
            Dialect::Duckdb => (
                "",
                format!("ST_MakeEnvelope({x0}, {y0}, {x0} + {size}, {y0} + {size})"),
            ),
            Dialect::Postgis => (
                "srid",
                format!("ST_MakeEnvelope({x0}, {y0}, {x0} + {size}, {y0} + {size}, c.srid)"),
            ),
        };
        let carry = |prefix: &str| {
            if srid.is_empty() {
                String::new()
            } else {
                format!(", {prefix}srid")
            }
        };
        Ok(format!(
            "WITH __cloud AS (SELECT ST_X({g}) AS x, ST_Y({g}) AS y, ST_Z({g}) AS z{} FROM {} AS t WHERE {}{g} IS NOT NULL AND NOT ST_IsEmpty({g})), \
             __corner AS (SELECT min(x) AS x0, min(y) AS y0{} FROM __cloud), \
             __cell AS (SELECT {} AS {col}, {} AS {row}, p.z, o.x0, o.y0{} FROM __cloud AS p, __corner AS o) \
             SELECT c.{row}, c.{col}, {}, {envelope} AS {} FROM __cell AS c GROUP BY c.{row}, c.{col}, c.x0, c.y0{} ORDER BY c.{row}, c.{col}",
            if srid.is_empty() {
                String::new()
            } else {
                format!(", ST_SRID({g}) AS srid")
            },
            points.from,
            self.classes.as_ref().map_or_else(String::new, |c| format!(
                "({}) AND ",
                c.predicate.to_sql_in(dialect)
            )),
            if srid.is_empty() {
                String::new()
            } else {
                ", min(srid) AS srid".to_owned()
            },
            self.cell_sql("p.x - o.x0", &size, dialect),
            self.cell_sql("p.y - o.y0", &size, dialect),
            carry("o."),
            aggregates.join(", "),
            ident(GEOM),
            carry("c."),
        ))
    }

    fn native_kernel(&self) -> Result<String, String> {
        Ok(format!(
            "{}: cells of every point found in parallel batches, statistics per cell in point order as pandas computes them",
            self.describe()
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statistics_are_parsed_once_each_with_a_default() {
        let parsed = HeightStat::parse_list(
            &["max".into(), "p90".into(), "max".into()],
            &[HeightStat::Mean],
        )
        .unwrap();
        assert_eq!(parsed, [HeightStat::Max, HeightStat::P90]);
        assert_eq!(
            HeightStat::parse_list(&[], &[HeightStat::Mean]).unwrap(),
            [HeightStat::Mean]
        );
        let error = HeightStat::parse_list(&["p50".into()], &[]).unwrap_err();
        assert!(error.contains("p50") && error.contains("p99"), "{error}");
    }

    #[test]
    fn the_grid_sql_floors_as_numpy_on_duckdb() {
        let op = GridSummaryOp {
            cell_size: 0.1,
            stats: vec![HeightStat::Count],
            classes: None,
        };
        let input = [Input {
            from: "pts",
            schema: None,
        }];
        let duckdb = op.sql(&input, None, Dialect::Duckdb).unwrap();
        assert!(duckdb.contains("fmod(p.x - o.x0"), "{duckdb}");
        let postgis = op.sql(&input, None, Dialect::Postgis).unwrap();
        assert!(postgis.contains("floor((p.x - o.x0) /"), "{postgis}");
        assert!(postgis.contains("c.srid)"), "{postgis}");
    }
}
