//! CQL2 filters (OGC API Features Part 3): the JSON and text encodings read into one tree, and
//! the tree written as a condition over a layer's columns in a SQL dialect — every property
//! checked against the layer's queryables, every literal quoted by the planner's quoting.

pub mod text;

use crate::sql::dialect::Dialect;
use crate::sql::quote::{ident, string};
use serde_json::Value;

/// A filter expression.
#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    And(Vec<Expr>),
    Or(Vec<Expr>),
    Not(Box<Expr>),
    /// `=`, `<>`, `<`, `<=`, `>`, `>=`.
    Compare(String, Operand, Operand),
    Like(Operand, Operand),
    Between(Operand, Operand, Operand),
    In(Operand, Vec<Operand>),
    IsNull(Operand),
    /// `s_intersects`, `s_within`, ... with two geometry operands.
    Spatial(String, Operand, Operand),
    Literal(bool),
}

/// A value in an expression.
#[derive(Debug, Clone, PartialEq)]
pub enum Operand {
    Property(String),
    Text(String),
    Number(f64),
    Boolean(bool),
    /// A geometry as WKT (text encoding) or GeoJSON (JSON encoding), in CRS84.
    Wkt(String),
    GeoJson(String),
    Bbox([f64; 4]),
}

/// The spatial functions of CQL2 and the SQL function each becomes (the same in both dialects).
const SPATIAL: [(&str, &str); 8] = [
    ("s_intersects", "ST_Intersects"),
    ("s_disjoint", "ST_Disjoint"),
    ("s_equals", "ST_Equals"),
    ("s_touches", "ST_Touches"),
    ("s_within", "ST_Within"),
    ("s_overlaps", "ST_Overlaps"),
    ("s_crosses", "ST_Crosses"),
    ("s_contains", "ST_Contains"),
];

const COMPARISONS: [&str; 6] = ["=", "<>", "<", "<=", ">", ">="];

/// The deepest a filter may nest (parentheses, `NOT`, `and`/`or`/`not` operations): both
/// readers and the SQL writer recurse once per level, so a deeper filter is refused before it
/// can exhaust a worker's stack.
pub const MAX_NESTING: usize = 64;

/// The error of a filter nested deeper than [`MAX_NESTING`].
pub(crate) fn too_deep() -> String {
    format!("the filter is nested more than {MAX_NESTING} levels deep (the nesting depth limit)")
}

fn operand_from_json(value: &Value) -> Result<Operand, String> {
    match value {
        Value::String(text) => Ok(Operand::Text(text.clone())),
        Value::Number(n) => n
            .as_f64()
            .map(Operand::Number)
            .ok_or_else(|| format!("{n} is not a number")),
        Value::Bool(b) => Ok(Operand::Boolean(*b)),
        Value::Object(object) => {
            if let Some(Value::String(name)) = object.get("property") {
                return Ok(Operand::Property(name.clone()));
            }
            if let Some(Value::Array(numbers)) = object.get("bbox") {
                let numbers: Vec<f64> = numbers.iter().filter_map(Value::as_f64).collect();
                let [a, b, c, d] = numbers.as_slice() else {
                    return Err("a bbox is four numbers".into());
                };
                return Ok(Operand::Bbox([*a, *b, *c, *d]));
            }
            if object.contains_key("type") && object.contains_key("coordinates") {
                return Ok(Operand::GeoJson(value.to_string()));
            }
            Err(format!(
                "{value} is not a property, literal, bbox or geometry"
            ))
        }
        other => Err(format!("{other} is not an operand")),
    }
}

fn args(object: &serde_json::Map<String, Value>) -> Result<&Vec<Value>, String> {
    object
        .get("args")
        .and_then(Value::as_array)
        .ok_or_else(|| "an operation needs an `args` array".to_owned())
}

/// Reads the CQL2 JSON encoding.
pub fn from_json(value: &Value) -> Result<Expr, String> {
    json_at_depth(value, 0)
}

fn json_at_depth(value: &Value, depth: usize) -> Result<Expr, String> {
    if depth >= MAX_NESTING {
        return Err(too_deep());
    }
    if let Value::Bool(b) = value {
        return Ok(Expr::Literal(*b));
    }
    let object = value
        .as_object()
        .ok_or_else(|| format!("{value} is not a CQL2 expression"))?;
    let op = object
        .get("op")
        .and_then(Value::as_str)
        .ok_or_else(|| format!("{value} has no `op`"))?
        .to_ascii_lowercase();
    let args = args(object)?;
    let operand = |i: usize| {
        args.get(i)
            .ok_or_else(|| format!("{op} needs an argument {}", i + 1))
            .and_then(operand_from_json)
    };
    let exact = |n: usize| {
        if args.len() == n {
            Ok(())
        } else {
            Err(format!("{op} takes {n} arguments, not {}", args.len()))
        }
    };
    match op.as_str() {
        "and" | "or" => {
            let parts = args
                .iter()
                .map(|arg| json_at_depth(arg, depth + 1))
                .collect::<Result<Vec<_>, _>>()?;
            Ok(if op == "and" {
                Expr::And(parts)
            } else {
                Expr::Or(parts)
            })
        }
        "not" => {
            exact(1)?;
            Ok(Expr::Not(Box::new(json_at_depth(&args[0], depth + 1)?)))
        }
        "like" => {
            exact(2)?;
            Ok(Expr::Like(operand(0)?, operand(1)?))
        }
        "between" => {
            exact(3)?;
            Ok(Expr::Between(operand(0)?, operand(1)?, operand(2)?))
        }
        "in" => {
            exact(2)?;
            let list = args[1]
                .as_array()
                .ok_or("the second argument of in is a list")?
                .iter()
                .map(operand_from_json)
                .collect::<Result<Vec<_>, _>>()?;
            Ok(Expr::In(operand(0)?, list))
        }
        "isnull" => {
            exact(1)?;
            Ok(Expr::IsNull(operand(0)?))
        }
        op if COMPARISONS.contains(&op) => {
            exact(2)?;
            Ok(Expr::Compare(op.to_owned(), operand(0)?, operand(1)?))
        }
        op if SPATIAL.iter().any(|(name, _)| *name == op) => {
            exact(2)?;
            Ok(Expr::Spatial(op.to_owned(), operand(0)?, operand(1)?))
        }
        other => Err(format!("operator {other:?} is not supported")),
    }
}

/// What SQL is written against: the layer's columns and its geometry in CRS84, in a dialect.
pub struct Target<'a> {
    pub columns: &'a [String],
    pub geometry_sql: &'a str,
    pub dialect: Dialect,
}

/// A geometry literal in CRS84: PostGIS compares geometries of one SRID only, so its literals
/// carry 4326 (the layer's geometry is transformed to it); DuckDB's geometries carry none.
fn crs84(target: &Target<'_>, geometry: String) -> String {
    match target.dialect {
        Dialect::Duckdb => geometry,
        Dialect::Postgis => format!("ST_SetSRID({geometry}, 4326)"),
    }
}

fn is_geometry_name(name: &str) -> bool {
    matches!(name, "geom" | "geometry")
}

fn operand_sql(operand: &Operand, target: &Target<'_>) -> Result<String, String> {
    Ok(match operand {
        Operand::Property(name) if is_geometry_name(name) => target.geometry_sql.to_owned(),
        Operand::Property(name) => {
            if !target.columns.iter().any(|c| c == name) {
                return Err(format!(
                    "{name:?} is not a queryable of this collection (see its /queryables)"
                ));
            }
            ident(name)
        }
        Operand::Text(text) => string(text),
        Operand::Number(n) if n.is_finite() => format!("{n:?}"),
        Operand::Number(n) => return Err(format!("{n} is not a finite number")),
        Operand::Boolean(b) => b.to_string(),
        Operand::Wkt(wkt) => crs84(target, format!("ST_GeomFromText({})", string(wkt))),
        Operand::GeoJson(json) => crs84(target, format!("ST_GeomFromGeoJSON({})", string(json))),
        Operand::Bbox(corners) => {
            if corners.iter().any(|c| !c.is_finite()) {
                return Err("a bbox needs four finite numbers".into());
            }
            let [a, b, c, d] = corners;
            crs84(
                target,
                format!("ST_MakeEnvelope({a:?}, {b:?}, {c:?}, {d:?})"),
            )
        }
    })
}

/// The expression as a condition in the target's dialect.
pub fn to_sql(expr: &Expr, target: &Target<'_>) -> Result<String, String> {
    let op = |o: &Operand| operand_sql(o, target);
    Ok(match expr {
        Expr::And(parts) | Expr::Or(parts) if parts.is_empty() => {
            return Err("and/or need at least one argument".into());
        }
        Expr::And(parts) => parts
            .iter()
            .map(|p| to_sql(p, target).map(|s| format!("({s})")))
            .collect::<Result<Vec<_>, _>>()?
            .join(" AND "),
        Expr::Or(parts) => parts
            .iter()
            .map(|p| to_sql(p, target).map(|s| format!("({s})")))
            .collect::<Result<Vec<_>, _>>()?
            .join(" OR "),
        Expr::Not(inner) => format!("NOT ({})", to_sql(inner, target)?),
        Expr::Compare(operator, a, b) => format!("{} {operator} {}", op(a)?, op(b)?),
        Expr::Like(a, pattern) => format!("{} LIKE {}", op(a)?, op(pattern)?),
        Expr::Between(a, low, high) => {
            format!("{} BETWEEN {} AND {}", op(a)?, op(low)?, op(high)?)
        }
        Expr::In(a, list) => format!(
            "{} IN ({})",
            op(a)?,
            list.iter()
                .map(op)
                .collect::<Result<Vec<_>, _>>()?
                .join(", ")
        ),
        Expr::IsNull(a) => format!("{} IS NULL", op(a)?),
        Expr::Spatial(name, a, b) => {
            let function = SPATIAL
                .iter()
                .find(|(cql, _)| cql == name)
                .map(|(_, sql)| *sql)
                .ok_or_else(|| format!("{name} is not a spatial function"))?;
            format!("{function}({}, {})", op(a)?, op(b)?)
        }
        Expr::Literal(b) => b.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{Target, from_json, to_sql};
    use crate::sql::dialect::Dialect;

    #[test]
    fn json_filters_become_quoted_sql_over_known_columns() {
        let columns = vec!["name".to_owned(), "pop_est".to_owned()];
        let target = Target {
            columns: &columns,
            geometry_sql: "g",
            dialect: Dialect::Duckdb,
        };
        let filter = json!({"op": "and", "args": [
            {"op": ">", "args": [{"property": "pop_est"}, 1000000]},
            {"op": "like", "args": [{"property": "name"}, "B%'; DROP TABLE x; --"]},
            {"op": "s_intersects", "args": [{"property": "geometry"}, {"bbox": [0, 40, 10, 50]}]}
        ]});
        let sql = to_sql(&from_json(&filter).unwrap(), &target).unwrap();
        assert_eq!(
            sql,
            "(\"pop_est\" > 1000000.0) AND (\"name\" LIKE 'B%''; DROP TABLE x; --') AND (ST_Intersects(g, ST_MakeEnvelope(0.0, 40.0, 10.0, 50.0)))"
        );
        let unknown = json!({"op": "=", "args": [{"property": "colour"}, "red"]});
        assert!(
            to_sql(&from_json(&unknown).unwrap(), &target)
                .unwrap_err()
                .contains("queryable")
        );
        assert!(from_json(&json!({"op": "regex", "args": []})).is_err());
    }

    #[test]
    fn geometry_literals_carry_crs84_where_the_dialect_compares_srids() {
        let columns = vec!["name".to_owned()];
        let filter = json!({"op": "s_intersects", "args": [
            {"property": "geom"}, {"bbox": [0, 40, 10, 50]}
        ]});
        let written = |dialect| {
            let target = Target {
                columns: &columns,
                geometry_sql: "g",
                dialect,
            };
            to_sql(&from_json(&filter).unwrap(), &target).unwrap()
        };
        assert_eq!(
            written(Dialect::Postgis),
            "ST_Intersects(g, ST_SetSRID(ST_MakeEnvelope(0.0, 40.0, 10.0, 50.0), 4326))"
        );
        assert_eq!(
            written(Dialect::Duckdb),
            "ST_Intersects(g, ST_MakeEnvelope(0.0, 40.0, 10.0, 50.0))"
        );
    }
}
