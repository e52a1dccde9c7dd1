//! Point-in-polygon aggregation on the cluster: the points staged in parts, one task per part
//! matching its points to the polygons with geomill's kernel ([`crate::udf`]) and aggregating
//! per polygon row (partial aggregates shuffled by row and merged by DataFusion on the
//! executors); the server appends the merged totals to the polygons as the native kernel does,
//! so both give the same columns, types and NULLs.

use std::collections::HashMap;

use datafusion::arrow::array::{
    Array, Decimal128Array, Float64Array, Int64Array, RecordBatch, UInt32Array,
};
use datafusion::arrow::datatypes::DataType;
use datafusion::common::Result as DfResult;
use datafusion::common::ScalarValue;
use datafusion::execution::FunctionRegistry;
use datafusion::functions::math::expr_fn::isnan;
use datafusion::functions_aggregate::count::count_all;
use datafusion::functions_aggregate::expr_fn::{count, max, min, sum};
use datafusion::logical_expr::{Expr, cast, ident, lit, when};
use datafusion::prelude::{ParquetReadOptions, SessionContext};
use geomill_native::aggregate::{Acc, ValueKind, aggregated_polygons, value_kind};
use geomill_native::{Layer, NativeError};
use geomill_planner::plan::operator::{AggItem, SpatialAggregateOp};

use crate::staging::{StageDir, write_geometry, write_parts};
use crate::udf::{POLYGON_ROWS, STAGED_GEOMETRY};

/// The unnested polygon row of each (point, polygon) match.
const ROW: &str = "__polygon_row";

/// How one aggregate reads the points: its kind and the staged column it reads.
struct Reading<'a> {
    item: &'a AggItem,
    kind: ValueKind,
}

/// The aggregation as the cluster runs it, and what the server needs to finish it.
pub struct ClusterAggregate<'a> {
    op: &'a SpatialAggregateOp,
    readings: Vec<Reading<'a>>,
}

fn cluster_error(e: impl std::fmt::Display) -> NativeError {
    NativeError::Input(format!("the cluster failed the aggregation: {e}"))
}

impl<'a> ClusterAggregate<'a> {
    /// The aggregation of `op` over points of `points`' schema; declined (to the server's
    /// kernel) where the native kernel declines it.
    pub fn new(op: &'a SpatialAggregateOp, points: &Layer) -> Result<Self, NativeError> {
        if geomill_native::aggregate::point_matches(op.predicate).is_none() {
            return Err(NativeError::Declined(format!(
                "spatial_aggregate with predicate {:?}",
                op.predicate
            )));
        }
        let readings = op
            .aggregates
            .iter()
            .map(|item| value_kind(&points.schema, item).map(|(_, kind)| Reading { item, kind }))
            .collect::<Result<_, _>>()?;
        Ok(Self { op, readings })
    }

    /// The points' columns the aggregates read, each once.
    fn columns(&self) -> Vec<String> {
        let mut columns: Vec<String> = Vec::new();
        for column in self.readings.iter().filter_map(|r| r.item.column.as_ref()) {
            if !columns.contains(column) {
                columns.push(column.clone());
            }
        }
        columns
    }

    /// Stages `polygons` and `points` (in `parts`) in `dir` and runs the aggregation on the
    /// cluster of `ctx`; answers the polygons with the aggregates appended.
    pub async fn run(
        &self,
        ctx: &SessionContext,
        dir: &StageDir,
        polygons: &Layer,
        points: &Layer,
        parts: usize,
    ) -> Result<Layer, NativeError> {
        write_geometry(polygons, dir, "polygons.parquet")?;
        let points_dir = write_parts(points, &self.columns(), parts, dir, "points")?;
        let table = format!("points_{}", std::process::id());
        ctx.register_parquet(
            &table,
            points_dir.display().to_string(),
            ParquetReadOptions::default(),
        )
        .await
        .map_err(cluster_error)?;
        let batches = self
            .query(ctx, &table, &dir.relative("polygons.parquet"))
            .await;
        let _ = ctx.deregister_table(&table);
        let totals = self.totals(&batches.map_err(cluster_error)?, polygons.num_rows())?;
        let ints: Vec<bool> = self
            .readings
            .iter()
            .map(|r| r.kind == ValueKind::Int)
            .collect();
        aggregated_polygons(polygons, &self.op.aggregates, &ints, &totals)
    }

    async fn query(
        &self,
        ctx: &SessionContext,
        table: &str,
        polygons: &str,
    ) -> DfResult<Vec<RecordBatch>> {
        let udf = ctx.udf(POLYGON_ROWS)?;
        let predicate = serde_json::to_value(self.op.predicate)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default();
        let mut selected = vec![
            udf.call(vec![ident(STAGED_GEOMETRY), lit(polygons), lit(predicate)])
                .alias(ROW),
        ];
        selected.extend(self.columns().into_iter().map(ident));
        let mut aggregates = Vec::new();
        for (a, reading) in self.readings.iter().enumerate() {
            aggregates.extend(partials(reading, a));
        }
        ctx.table(table)
            .await?
            .select(selected)?
            .unnest_columns(&[ROW])?
            .filter(ident(ROW).is_not_null())?
            .aggregate(vec![ident(ROW)], aggregates)?
            .collect()
            .await
    }

    /// Each polygon row's states from the merged groups (rows without points keep the empty
    /// state: count 0, the rest NULL).
    fn totals(&self, batches: &[RecordBatch], rows: usize) -> Result<Vec<Acc>, NativeError> {
        let n_aggs = self.readings.len();
        let mut totals = vec![Acc::default(); rows * n_aggs];
        for batch in batches {
            let columns: HashMap<&str, &dyn Array> = batch
                .schema_ref()
                .fields()
                .iter()
                .zip(batch.columns())
                .map(|(f, c)| (f.name().as_str(), c.as_ref()))
                .collect();
            let row_ids = column::<UInt32Array>(&columns, ROW)?;
            for i in 0..batch.num_rows() {
                let row = row_ids.value(i) as usize;
                if row >= rows {
                    return Err(cluster_error(format!("polygon row {row} of {rows}")));
                }
                for (a, reading) in self.readings.iter().enumerate() {
                    totals[row * n_aggs + a] = state(&columns, reading, a, i)?;
                }
            }
        }
        Ok(totals)
    }
}

/// The partial aggregates of aggregate `a`, named `a<a>_<part>`.
fn partials(reading: &Reading<'_>, a: usize) -> Vec<Expr> {
    let name = |part: &str| format!("a{a}_{part}");
    let Some(column) = &reading.item.column else {
        return vec![count_all().alias(name("n"))];
    };
    let value = ident(column.clone());
    let typed = match reading.kind {
        ValueKind::Rows | ValueKind::Present => {
            return vec![count(value).alias(name("n"))];
        }
        ValueKind::Int => cast(value, DataType::Int64),
        ValueKind::Float => cast(value, DataType::Float64),
    };
    let (sum_of, extremes_of) = match reading.kind {
        // Exact, as the native kernel sums integers (in 128 bits).
        ValueKind::Int => (
            sum(cast(typed.clone(), DataType::Decimal128(38, 0))),
            typed.clone(),
        ),
        // NaN counts and sums, but is never a minimum or maximum (as `f64::min`/`max` fold).
        _ => (
            sum(typed.clone()),
            when(isnan(typed.clone()), lit(ScalarValue::Float64(None)))
                .otherwise(typed.clone())
                .unwrap_or(typed.clone()),
        ),
    };
    vec![
        count(typed).alias(name("n")),
        sum_of.alias(name("sum")),
        min(extremes_of.clone()).alias(name("min")),
        max(extremes_of).alias(name("max")),
    ]
}

fn column<'b, T: 'static>(
    columns: &HashMap<&str, &'b dyn Array>,
    name: &str,
) -> Result<&'b T, NativeError> {
    columns
        .get(name)
        .and_then(|c| c.as_any().downcast_ref::<T>())
        .ok_or_else(|| cluster_error(format!("no column {name} of the expected type")))
}

/// Aggregate `a`'s state in row `i` of a merged batch.
fn state(
    columns: &HashMap<&str, &dyn Array>,
    reading: &Reading<'_>,
    a: usize,
    i: usize,
) -> Result<Acc, NativeError> {
    let name = |part: &str| format!("a{a}_{part}");
    let n = column::<Int64Array>(columns, &name("n"))?.value(i);
    Ok(match reading.kind {
        ValueKind::Rows | ValueKind::Present => Acc::of_floats(n, 0.0, 0.0, 0.0),
        _ if n == 0 => Acc::default(),
        ValueKind::Int => {
            let sum = column::<Decimal128Array>(columns, &name("sum"))?.value(i);
            let min = column::<Int64Array>(columns, &name("min"))?.value(i);
            let max = column::<Int64Array>(columns, &name("max"))?.value(i);
            Acc::of_ints(n, sum, min, max)
        }
        ValueKind::Float => {
            let sum = column::<Float64Array>(columns, &name("sum"))?.value(i);
            // Only NaN values: no extreme, as the native fold leaves its start.
            let extreme = |part: &str, none: f64| {
                column::<Float64Array>(columns, &name(part))
                    .map(|c| if c.is_null(i) { none } else { c.value(i) })
            };
            let min = extreme("min", f64::INFINITY)?;
            let max = extreme("max", f64::NEG_INFINITY)?;
            Acc::of_floats(n, sum, min, max)
        }
    })
}
