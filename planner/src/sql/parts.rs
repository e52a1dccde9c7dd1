//! The pieces every operator's SELECT is built from: an input as the SELECT reads it, and the
//! select lists that keep, rename, set or replace its columns. `select` and the operators' own
//! SQL modules build on these; this module names no operator's SQL.

use super::dialect::Dialect;
use super::quote::ident;
use crate::plan::operator::{MapOp, ValueExpr};
use crate::plan::schema_infer::joined_columns;
use crate::schema::{GEOM, Schema};

pub use super::input::Input;

pub const NEEDS_COLUMNS: &str =
    "PostGIS SQL needs the input's columns: plan with a catalog (a dataset or a schema)";

fn value_sql(value: &ValueExpr, qualifier: &str, dialect: Dialect) -> Result<String, String> {
    let geom = format!("{qualifier}{}", ident(GEOM));
    match value {
        ValueExpr::Sql(expr) => Ok(expr.to_sql_in(dialect)),
        ValueExpr::Cast { column, to } => Ok(format!(
            "CAST({qualifier}{} AS {})",
            ident(column),
            to.sql()
        )),
        ValueExpr::Geo(geo) => geo.sql(&geom, dialect),
    }
}

/// The select list of a column-changing step: explicit when the schema is known; otherwise
/// DuckDB's `* EXCLUDE (...) REPLACE (...)` (PostGIS has no such form).
pub fn projection(
    qualifier: &str,
    schema: Option<&Schema>,
    map: &MapOp,
    dialect: Dialect,
) -> Result<String, String> {
    let sets: Vec<(String, String)> = map
        .set
        .iter()
        .map(|(name, value, _)| Ok((name.clone(), value_sql(value, qualifier, dialect)?)))
        .collect::<Result<_, String>>()?;
    let mut items = Vec::new();
    match schema {
        Some(schema) => {
            for column in &schema.columns {
                if map.drop.contains(&column.name) {
                    continue;
                }
                let name = map
                    .rename
                    .iter()
                    .find(|(from, _)| *from == column.name)
                    .map_or(&column.name, |(_, to)| to);
                match sets.iter().find(|(set, _)| set == name) {
                    Some((_, sql)) => items.push(format!("{sql} AS {}", ident(name))),
                    None if name == &column.name => {
                        items.push(format!("{qualifier}{}", ident(name)))
                    }
                    None => items.push(format!(
                        "{qualifier}{} AS {}",
                        ident(&column.name),
                        ident(name)
                    )),
                }
            }
            for (name, sql) in &sets {
                let renamed_to = |n: &String| map.rename.iter().any(|(_, to)| to == n);
                if !schema.has(name) && !renamed_to(name) {
                    items.push(format!("{sql} AS {}", ident(name)));
                }
            }
        }
        None if dialect == Dialect::Duckdb => {
            let mut excluded: Vec<String> = map.drop.iter().map(|n| ident(n)).collect();
            excluded.extend(map.rename.iter().map(|(from, _)| ident(from)));
            excluded.extend(sets.iter().map(|(name, _)| ident(name)));
            let star = if excluded.is_empty() {
                format!("{qualifier}*")
            } else {
                format!("{qualifier}* EXCLUDE ({})", excluded.join(", "))
            };
            items.push(star);
            for (from, to) in &map.rename {
                items.push(format!("{qualifier}{} AS {}", ident(from), ident(to)));
            }
            for (name, sql) in &sets {
                items.push(format!("{sql} AS {}", ident(name)));
            }
        }
        None => return Err(NEEDS_COLUMNS.into()),
    }
    if items.is_empty() {
        return Err("the step would leave no columns".into());
    }
    Ok(items.join(", "))
}

/// The right input's columns for a join, as `r."c" AS "out"`, or DuckDB's `r.* EXCLUDE`.
pub fn joined_list(
    left: Option<&Schema>,
    right: Input<'_>,
    requested: &[String],
    dialect: Dialect,
) -> Result<String, String> {
    match joined_columns(left, right.schema, requested) {
        Some(columns) if columns.is_empty() => Ok(String::new()),
        Some(columns) => Ok(columns
            .iter()
            .map(|(name, output)| format!(", r.{} AS {}", ident(name), ident(output)))
            .collect()),
        None if dialect == Dialect::Duckdb => Ok(format!(", r.* EXCLUDE ({})", ident(GEOM))),
        None => Err(NEEDS_COLUMNS.into()),
    }
}

pub fn geom(qualifier: &str) -> String {
    format!("{qualifier}.{}", ident(GEOM))
}

/// The schema's columns read from `qualifier` (`t.`), `geom` replaced by `geometry_sql`.
pub fn columns_with_geom(schema: &Schema, qualifier: &str, geometry_sql: &str) -> String {
    schema
        .columns
        .iter()
        .map(|c| {
            if c.name == GEOM {
                format!("{geometry_sql} AS {}", ident(GEOM))
            } else {
                format!("{qualifier}{}", ident(&c.name))
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// A select list that keeps every column and replaces `geom` by `geometry_sql`. Without a
/// schema (DuckDB only) it is `*` less `helpers`, the columns the FROM adds for its own use.
pub fn projection_with_geom(
    qualifier: &str,
    schema: Option<&Schema>,
    geometry_sql: &str,
    dialect: Dialect,
    helpers: &[&str],
) -> Result<String, String> {
    match schema {
        Some(schema) => Ok(columns_with_geom(schema, qualifier, geometry_sql)),
        None if dialect == Dialect::Duckdb => {
            let exclude = if helpers.is_empty() {
                String::new()
            } else {
                format!(" EXCLUDE ({})", helpers.join(", "))
            };
            Ok(format!(
                "{qualifier}*{exclude} REPLACE ({geometry_sql} AS {})",
                ident(GEOM)
            ))
        }
        None => Err(NEEDS_COLUMNS.into()),
    }
}
