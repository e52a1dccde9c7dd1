//! The SELECTs of the line network cleaning steps SQL computes alike on both engines:
//! `node_lines` (the union of every line, each piece given to the lines it lies on) and
//! `remove_duplicates` (lines grouped by their normalized WKB, the first of each group kept).

use super::{DuplicateRule, LineCleanOp};
use crate::plan::geo_kinds::{Kind, kind_in};
use crate::schema::{FieldType, GEOM, Schema};
use crate::sql::dialect::Dialect;
use crate::sql::input::Input;
use crate::sql::parts::{NEEDS_COLUMNS, columns_with_geom};
use crate::sql::quote::{ident, number};

/// How far (relative to the larger side of the lines' extent) a piece's middle may lie from a
/// line for the piece to be that line's: noding computes crossing points, which lie on their
/// lines only up to rounding.
pub const ON_LINE_RELATIVE: f64 = 1e-9;

/// The SELECT of a network step SQL computes (`node_lines`, `remove_duplicates`).
pub fn line_clean_sql(
    op: &LineCleanOp,
    main: Input<'_>,
    dialect: Dialect,
) -> Result<String, String> {
    let schema = main.schema.ok_or(NEEDS_COLUMNS)?;
    match op {
        LineCleanOp::NodeLines => Ok(node_lines(schema, main.from, dialect)),
        LineCleanOp::RemoveDuplicates {
            tolerance,
            order_by,
            rule: DuplicateRule::Normalized,
        } => remove_duplicates(schema, main.from, *tolerance, order_by, dialect),
        other => Err(format!(
            "{} runs on the native backend (no SQL)",
            other.describe()
        )),
    }
}

/// Whether `g` is a non-empty LineString or MultiLineString.
fn is_line(g: &str, dialect: Dialect) -> String {
    format!(
        "({g} IS NOT NULL AND NOT ST_IsEmpty({g}) AND {} AND ST_Length({g}) > 0)",
        kind_in(g, &[Kind::LineString, Kind::MultiLineString], dialect)
    )
}

/// Every line cut at the nodes of the union of all lines: each piece of the union given to
/// each line its middle lies on (within `ON_LINE_RELATIVE` of the lines' extent); other rows
/// as they are.
fn node_lines(schema: &Schema, from: &str, dialect: Dialect) -> String {
    let g = format!("t.{}", ident(GEOM));
    let sg = format!("s.{}", ident(GEOM));
    let line = is_line(&g, dialect);
    let pieces = match dialect {
        Dialect::Duckdb => format!(
            "SELECT p.__piece, ST_LineInterpolatePoint(p.__piece, 0.5) AS __middle FROM (SELECT UNNEST(ST_Dump(ST_Union_Agg(s.{}))).geom AS __piece FROM s WHERE s.__line) AS p",
            ident(GEOM)
        ),
        Dialect::Postgis => format!(
            "SELECT p.__piece, ST_LineInterpolatePoint(p.__piece, 0.5) AS __middle FROM (SELECT (ST_Dump(ST_Union(s.{}))).geom AS __piece FROM s WHERE s.__line) AS p",
            ident(GEOM)
        ),
    };
    let reach = format!(
        "SELECT {ON_LINE_RELATIVE:e} * GREATEST(MAX(ST_XMax({sg})) - MIN(ST_XMin({sg})), MAX(ST_YMax({sg})) - MIN(ST_YMin({sg})), 1) AS eps FROM s WHERE s.__line"
    );
    let kept = columns_with_geom(schema, "s.", &sg);
    let cut = columns_with_geom(schema, "s.", "n.__piece");
    // Nested, so that a fused stage can put its own WITH in front.
    format!(
        "SELECT * FROM (WITH s AS (SELECT t.*, {line} AS __line FROM {from} AS t), n AS ({pieces}), e AS ({reach}) \
         SELECT {cut} FROM s, e, n WHERE s.__line AND ST_DWithin({sg}, n.__middle, e.eps) \
         UNION ALL SELECT {kept} FROM s WHERE NOT s.__line) AS noded"
    )
}

/// One line per group of equal lines (normalized WKB, after the grid of `tolerance`), the
/// first by `order_by`, the WKB as stored, then the other attributes; other rows as they are.
fn remove_duplicates(
    schema: &Schema,
    from: &str,
    tolerance: f64,
    order_by: &[String],
    dialect: Dialect,
) -> Result<String, String> {
    let g = format!("t.{}", ident(GEOM));
    let gridded = if tolerance > 0.0 {
        format!("ST_ReducePrecision({g}, {})", number(tolerance)?)
    } else {
        g.clone()
    };
    let wkb = |x: &str| match dialect {
        Dialect::Duckdb => format!("ST_AsWKB({x})::BLOB"),
        Dialect::Postgis => format!("ST_AsBinary({x})"),
    };
    let key = format!(
        "CASE WHEN {} AND NOT ST_IsEmpty({gridded}) THEN {} END",
        is_line(&g, dialect),
        wkb(&format!("ST_Normalize({gridded})"))
    );
    let by_value = |name: &str| {
        let column = format!("t.{}", ident(name));
        let text = schema
            .columns
            .iter()
            .any(|c| c.name == name && c.ty == FieldType::Text);
        let collated = if text && dialect == Dialect::Postgis {
            format!("{column} COLLATE \"C\"")
        } else {
            column
        };
        format!("{collated} ASC NULLS LAST")
    };
    let mut order: Vec<String> = order_by.iter().map(|f| by_value(f)).collect();
    order.push(format!("{} ASC NULLS LAST", wkb(&g)));
    order.extend(
        schema
            .attributes()
            .filter(|c| !order_by.contains(&c.name))
            .map(|c| by_value(&c.name)),
    );
    let kept = columns_with_geom(schema, "r.", &format!("r.{}", ident(GEOM)));
    Ok(format!(
        "SELECT {kept} FROM (SELECT t.*, {key} AS __key, row_number() OVER (PARTITION BY {key} ORDER BY {}) AS __rank FROM {from} AS t) AS r WHERE r.__key IS NULL OR r.__rank = 1",
        order.join(", ")
    ))
}
