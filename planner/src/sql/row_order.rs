//! SELECTs that keep or restore the input's row order: sort keys, one row per distinct value
//! (first, last or by geometry hash), ranks among another layer's values, rows numbered.

use super::dialect::Dialect;
use super::parts::{Input, geom, projection_with_geom};
use super::quote::ident;
use crate::plan::operator::{DistinctKeep, SortKey};

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
pub(crate) const ROW_KEY: &str = "__geomill_row";

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

/// `from` with its rows numbered in their order as column [`ROW_KEY`] (for `first`, the kept
/// row of a `Distinct`, and the row order `RankIn` restores).
pub(crate) fn numbered(from: &str) -> String {
    format!(
        "(SELECT *, row_number() OVER () AS {} FROM {from})",
        ident(ROW_KEY)
    )
}
