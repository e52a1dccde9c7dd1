//! One SELECT per operator, reading its inputs by name (`t` is the main input, `r` the other).

use super::dialect::Dialect;
use super::geo::predicate_sql;
use super::nearest::nearest_sql;
use super::network::network_sql;
use super::overlay::overlay_sql;
pub use super::parts::Input;
use super::parts::{NEEDS_COLUMNS, geom, joined_list, projection};
use super::quote::{ident, string};
use super::relational::{join_sql, project_sql, reshape_sql};
use super::row_order::{ROW_KEY, distinct_sql, numbered, sort_sql};
use super::validate::validate_sql;
use crate::plan::native::missing_sql;
use crate::plan::operator::{
    AggFunc, AggItem, GeometryAgg, JoinHow, Operator, ReshapeOp, SpatialAggregateOp,
};
use crate::plan::schema_infer::aggregate_type;
use crate::schema::{FieldType, GEOM, Schema};

/// `func(column)` of the rows of `input`. A sum of integers stays an integer (`BIGINT`, the
/// type the plan gives it): DuckDB sums them as a 128-bit integer and PostgreSQL as a numeric,
/// which no output format takes.
///
/// `first` is the first non-NULL value in the order of the row number `ROW_KEY`, which the
/// caller's FROM numbers (see [`numbered`]).
fn aggregate_sql(item: &AggItem, qualifier: &str, input: Option<&Schema>) -> String {
    match &item.column {
        Some(column) if item.func == AggFunc::First => {
            let value = format!("{qualifier}{}", ident(column));
            format!(
                "(array_agg({value} ORDER BY {qualifier}{}) FILTER (WHERE {value} IS NOT NULL))[1]",
                ident(ROW_KEY)
            )
        }
        Some(column) => {
            let sql = format!("{}({qualifier}{})", item.func.sql(), ident(column));
            if item.func == AggFunc::Sum && aggregate_type(item, input) == FieldType::Integer {
                format!("CAST({sql} AS {})", FieldType::Integer.sql())
            } else {
                sql
            }
        }
        None => "count(*)".to_owned(),
    }
}

/// All aggregates in one pass over the matching pairs, every input feature kept (counts 0, the
/// other aggregates NULL when nothing matches).
/// - DuckDB: the input's features numbered, an inner join on the predicate (which DuckDB's
///   spatial join operator runs), grouped by feature number, joined back to the features in
///   their order.
/// - PostGIS: a lateral aggregate per feature, which the GiST index of `other` answers (one
///   index scan per input feature, as the hand-written `LEFT JOIN ... GROUP BY` plans).
///
/// A correlated subquery per aggregate would join the whole `other` layer once per aggregate,
/// and neither engine's join operator recognises it.
fn spatial_aggregate_sql(
    a: &SpatialAggregateOp,
    main: Input<'_>,
    other: Input<'_>,
    dialect: Dialect,
) -> Result<String, String> {
    let predicate = predicate_sql(a.predicate, &geom("r"), &geom("t"), a.distance)?;
    let aggregates: Vec<String> = a
        .aggregates
        .iter()
        .map(|item| {
            format!(
                "{} AS {}",
                aggregate_sql(item, "r.", other.schema),
                ident(&item.output)
            )
        })
        .collect();
    match dialect {
        Dialect::Duckdb => {
            let key = ident(ROW_KEY);
            let outputs: Vec<String> = a
                .aggregates
                .iter()
                .map(|item| {
                    let column = format!("a.{}", ident(&item.output));
                    match item.func {
                        AggFunc::Count => {
                            format!("COALESCE({column}, 0) AS {}", ident(&item.output))
                        }
                        _ => column,
                    }
                })
                .collect();
            Ok(format!(
                "WITH n AS (SELECT *, row_number() OVER () AS {key} FROM {}), a AS (SELECT t.{key}, {} FROM n AS t JOIN {} AS r ON {predicate} GROUP BY t.{key}) SELECT n.* EXCLUDE ({key}), {} FROM n LEFT JOIN a ON n.{key} = a.{key} ORDER BY n.{key}",
                main.from,
                aggregates.join(", "),
                other.from,
                outputs.join(", ")
            ))
        }
        Dialect::Postgis => Ok(format!(
            "SELECT t.*, a.* FROM {} AS t LEFT JOIN LATERAL (SELECT {} FROM {} AS r WHERE {predicate}) AS a ON true",
            main.from,
            aggregates.join(", "),
            other.from
        )),
    }
}

fn concat_sql(
    inputs: &[Input<'_>],
    output: Option<&Schema>,
    dialect: Dialect,
) -> Result<String, String> {
    if dialect == Dialect::Duckdb {
        return Ok(inputs
            .iter()
            .map(|i| format!("SELECT * FROM {}", i.from))
            .collect::<Vec<_>>()
            .join(" UNION ALL BY NAME "));
    }
    let output = output.ok_or(NEEDS_COLUMNS)?;
    let parts: Vec<String> = inputs
        .iter()
        .map(|input| {
            let schema = input.schema.ok_or(NEEDS_COLUMNS)?;
            let list: Vec<String> = output
                .columns
                .iter()
                .map(|c| {
                    if schema.has(&c.name) {
                        ident(&c.name)
                    } else {
                        format!("CAST(NULL AS {}) AS {}", c.ty.sql(), ident(&c.name))
                    }
                })
                .collect();
            Ok(format!("SELECT {} FROM {}", list.join(", "), input.from))
        })
        .collect::<Result<_, String>>()?;
    Ok(parts.join(" UNION ALL "))
}

/// The SELECT computing `op` from `inputs`; `output` is the node's own schema when known.
pub fn select(
    op: &Operator,
    inputs: &[Input<'_>],
    output: Option<&Schema>,
    dialect: Dialect,
) -> Result<String, String> {
    let main = *inputs.first().ok_or("the operator has no input")?;
    let other = inputs.get(1).copied();
    let need_other = || other.ok_or_else(|| format!("{} needs a second input", op.name()));
    Ok(match op {
        Operator::Scan { source, columns } => match columns {
            Some(columns) => format!(
                "SELECT {} FROM {}",
                columns
                    .iter()
                    .map(|c| ident(c))
                    .collect::<Vec<_>>()
                    .join(", "),
                ident(source)
            ),
            None => format!("SELECT * FROM {}", ident(source)),
        },
        Operator::Filter { predicate } => {
            format!(
                "SELECT * FROM {} AS t WHERE {}",
                main.from,
                predicate.to_sql_in(dialect)
            )
        }
        Operator::Map(_) if let Some(missing) = missing_sql(op, dialect) => {
            native_only(main.from, dialect, &missing)
        }
        Operator::Map(map) => format!(
            "SELECT {} FROM {} AS t",
            projection("", main.schema, map, dialect)?,
            main.from
        ),
        Operator::Project { columns } => project_sql(columns, main)?,
        Operator::Join(j) => join_sql(j, main, need_other()?, dialect)?,
        Operator::Reshape(ReshapeOp::Pivot(p)) if p.outputs.is_none() => native_only(
            main.from,
            dialect,
            "pivot with the columns found in the data runs on the native backend: a query's columns are fixed before it reads the data",
        ),
        Operator::Reshape(r) => reshape_sql(r, main, dialect)?,
        Operator::Network(n) if let Some(missing) = n.missing_on(dialect) => {
            native_only(main.from, dialect, &missing)
        }
        Operator::Network(n) => network_sql(n, inputs)?,
        Operator::Validate(v) if v.native_only() => native_only(
            main.from,
            dialect,
            &format!(
                "{} runs on the native backend: it follows the input's row order and GEOS's predicates",
                v.describe()
            ),
        ),
        Operator::Validate(v) => validate_sql(v, main, other, dialect)?,
        Operator::Aggregate(a) => {
            let mut items: Vec<String> = a.group_by.iter().map(|c| ident(c)).collect();
            items.extend(a.aggregates.iter().map(|i| {
                format!(
                    "{} AS {}",
                    aggregate_sql(i, "", main.schema),
                    ident(&i.output)
                )
            }));
            let g = ident(GEOM);
            match a.geometry {
                Some(GeometryAgg::Union) => {
                    items.push(format!("{}({g}) AS {g}", dialect.union_agg()));
                }
                Some(GeometryAgg::Collect) => {
                    items.push(format!("{} AS {g}", dialect.collect_parts_agg(&g)));
                }
                None => {}
            }
            let group = if a.group_by.is_empty() {
                String::new()
            } else {
                format!(
                    " GROUP BY {}",
                    a.group_by
                        .iter()
                        .map(|c| ident(c))
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            };
            let from = if a.aggregates.iter().any(|i| i.func == AggFunc::First) {
                numbered(main.from)
            } else {
                main.from.to_owned()
            };
            format!("SELECT {} FROM {from} AS t{group}", items.join(", "))
        }
        Operator::SpatialJoin(j) => {
            let other = need_other()?;
            let join = match j.how {
                JoinHow::Inner => "JOIN",
                JoinHow::Left => "LEFT JOIN",
            };
            format!(
                "SELECT t.*{} FROM {} AS t {join} {} AS r ON {}",
                joined_list(main.schema, other, &j.columns, dialect)?,
                main.from,
                other.from,
                predicate_sql(j.predicate, &geom("t"), &geom("r"), j.distance)?
            )
        }
        Operator::SpatialAggregate(a) => spatial_aggregate_sql(a, main, need_other()?, dialect)?,
        Operator::SpatialFilter(f) => format!(
            "SELECT * FROM {} AS t WHERE {}EXISTS (SELECT 1 FROM {} AS r WHERE {})",
            main.from,
            if f.negate { "NOT " } else { "" },
            need_other()?.from,
            predicate_sql(f.predicate, &geom("t"), &geom("r"), f.distance)?
        ),
        Operator::Nearest(n) => nearest_sql(n, main, need_other()?, dialect)?,
        Operator::Overlay(o) => overlay_sql(
            o.mode,
            &o.columns,
            o.keep_geom_type,
            main,
            need_other()?,
            dialect,
        )?,
        Operator::Concat => concat_sql(inputs, output, dialect)?,
        Operator::Sort { keys, limit } => format!(
            "SELECT * FROM {} AS t ORDER BY {}{}",
            main.from,
            sort_sql(keys),
            limit.map(|n| format!(" LIMIT {n}")).unwrap_or_default()
        ),
        Operator::Distinct { columns, keep } => distinct_sql(columns, *keep, main, dialect)?,
        // A seeded hash of each geometry's WKB: reproducible, and the same choice on both
        // engines (a row's text form differs between them).
        Operator::Sample { rows, seed } => format!(
            "SELECT * FROM {} AS t ORDER BY md5({} || {}) LIMIT {rows}",
            main.from,
            dialect.wkb_hex(&geom("t")),
            string(&seed.to_string())
        ),
        Operator::Owned(o) => match o.sql_missing(dialect) {
            Some(missing) => native_only(main.from, dialect, &missing),
            None => o.sql(inputs, output, dialect)?,
        },
        Operator::Export(_) => format!("SELECT * FROM {}", main.from),
    })
}

/// The statement of a step only the native backend computes: it fails saying so when run
/// (the fallback of a kernel that declines the data). The failing value is read by the
/// query, so no optimizer drops it.
fn native_only(from: &str, dialect: Dialect, message: &str) -> String {
    format!(
        "SELECT t.* FROM {from} AS t, ({}) AS native_only(e) WHERE native_only.e IS NULL",
        dialect.fail(message)
    )
}
