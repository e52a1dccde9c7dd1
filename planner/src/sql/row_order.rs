//! SELECTs that keep or restore the input's row order: sort keys, one row per distinct value
//! (first, last or by geometry hash), ranks among another layer's values, rows numbered.

use super::dialect::Dialect;
use super::parts::{Input, geom, projection_with_geom};
use super::quote::ident;
use crate::plan::operator::{DistinctKeep, RankInOp, SortKey};

pub(super) fn sort_sql(keys: &[SortKey]) -> String {
    keys.iter()
        .map(|k| {
            format!(
                "{} {} NULLS LAST",
                ident(&k.column),
                if k.descending { "DESC" } else { "ASC" }
            )
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// A name for the row number that keys the input's features while their matches are grouped
/// (an input column of the same name would clash: geomill names its own columns `__geomill_*`).
pub(super) const ROW_KEY: &str = "__geomill_row";

/// One row per distinct `columns`: the one whose geometry hashes lowest, or the first or last
/// in input order (numbered in [`ROW_KEY`], dropped again, the rows left in input order).
pub(super) fn distinct_sql(
    columns: &[String],
    keep: DistinctKeep,
    main: Input<'_>,
    dialect: Dialect,
) -> Result<String, String> {
    let list = columns
        .iter()
        .map(|c| ident(c))
        .collect::<Vec<_>>()
        .join(", ");
    let order = match keep {
        DistinctKeep::Hash => {
            return Ok(format!(
                "SELECT DISTINCT ON ({list}) * FROM {} AS t ORDER BY {list}, md5({})",
                main.from,
                dialect.wkb_hex(&geom("t"))
            ));
        }
        DistinctKeep::First => "ASC",
        DistinctKeep::Last => "DESC",
    };
    let key = ident(ROW_KEY);
    let projection = projection_with_geom("t.", main.schema, &geom("t"), dialect, &[ROW_KEY])?;
    Ok(format!(
        "SELECT {projection} FROM (SELECT DISTINCT ON ({list}) * FROM {} AS n ORDER BY {list}, {key} {order}) AS t ORDER BY t.{key}",
        numbered(main.from)
    ))
}

/// Each row's value ranked among the other input's distinct values (see [`RankInOp`]): a left
/// join to the ranked values, the rows kept in their order.
pub(super) fn rank_in_sql(
    r: &RankInOp,
    main: Input<'_>,
    other: Input<'_>,
    dialect: Dialect,
) -> Result<String, String> {
    let number = |column: &str| format!("CAST({column} AS DOUBLE PRECISION)");
    let values = ident(&r.values);
    let distinct = format!(
        "SELECT DISTINCT {} AS v FROM {} AS o WHERE o.{values} IS NOT NULL",
        number(&format!("o.{values}")),
        other.from
    );
    let projection = projection_with_geom("t.", main.schema, &geom("t"), dialect, &[ROW_KEY])?;
    Ok(format!(
        "SELECT {projection}, CAST(coalesce(r.k, (SELECT count(*) FROM ({distinct}) AS c) + 1) AS BIGINT) AS {} \
         FROM {} AS t LEFT JOIN (SELECT d.v, row_number() OVER (ORDER BY d.v) AS k FROM ({distinct}) AS d) AS r \
         ON {} = r.v ORDER BY t.{}",
        ident(&r.output),
        numbered(main.from),
        number(&format!("t.{}", ident(&r.field))),
        ident(ROW_KEY)
    ))
}

/// `from` with its rows numbered in their order as column [`ROW_KEY`] (for `first`, the kept
/// row of a `Distinct`, and the row order `RankIn` restores).
pub(super) fn numbered(from: &str) -> String {
    format!(
        "(SELECT *, row_number() OVER () AS {} FROM {from})",
        ident(ROW_KEY)
    )
}
