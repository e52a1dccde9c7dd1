//! Rule expressions (`where`, `expressions`, `case_when` conditions): parsed with sqlparser into
//! an AST, checked (one expression, allowed functions only, no subqueries, known columns), and
//! printed back with every column quoted. User text is never pasted into SQL.

use std::collections::BTreeSet;
use std::ops::ControlFlow;

use sqlparser::ast::{
    BinaryOperator, Expr, Ident, UnaryOperator, Value, visit_expressions, visit_expressions_mut,
};
use sqlparser::dialect::GenericDialect;
use sqlparser::parser::Parser;
use sqlparser::tokenizer::Token;

use crate::schema::Schema;

/// Scalar functions an expression may call: portable between DuckDB and PostGIS, and unable to
/// read files, reach the network or change state.
pub const ALLOWED_FUNCTIONS: &[&str] = &[
    "abs",
    "round",
    "floor",
    "ceil",
    "ceiling",
    "sqrt",
    "power",
    "pow",
    "ln",
    "log",
    "exp",
    "sign",
    "mod",
    "greatest",
    "least",
    "coalesce",
    "nullif",
    "lower",
    "upper",
    "length",
    "trim",
    "ltrim",
    "rtrim",
    "substr",
    "substring",
    "concat",
    "replace",
    "left",
    "right",
    "starts_with",
    "st_area",
    "st_length",
    "st_perimeter",
    "st_x",
    "st_y",
    "st_xmin",
    "st_xmax",
    "st_ymin",
    "st_ymax",
    "st_npoints",
    "st_isvalid",
    "st_isempty",
    "st_geometrytype",
    "st_astext",
    "st_intersects",
    "st_within",
    "st_contains",
    "st_touches",
    "st_disjoint",
    "st_dwithin",
    "st_distance",
    "st_centroid",
    "st_envelope",
    "st_makeenvelope",
    "st_point",
    "st_makepoint",
    "st_buffer",
    "st_simplify",
    "st_makevalid",
    "st_geomfromtext",
];

/// A checked rule expression.
#[derive(Debug, Clone, PartialEq)]
pub struct SqlExpr {
    /// Boxed: sqlparser's `Expr` is large, and plan nodes hold many expressions.
    ast: Box<Expr>,
}

impl SqlExpr {
    /// Parses one SQL expression. The whole text must be one expression: a trailing `;`, a
    /// second statement or a subquery is refused.
    pub fn parse(text: &str) -> Result<Self, String> {
        if text.trim().is_empty() {
            return Err("the expression is empty".into());
        }
        let dialect = GenericDialect {};
        let mut parser = Parser::new(&dialect)
            .try_with_sql(text)
            .map_err(|e| format!("cannot parse {text:?}: {e}"))?;
        let ast = parser
            .parse_expr()
            .map_err(|e| format!("cannot parse {text:?}: {e}"))?;
        let next = parser.peek_token();
        if next.token != Token::EOF {
            return Err(format!(
                "cannot parse {text:?}: unexpected {} after the expression",
                next.token
            ));
        }
        let mut expr = Self { ast: Box::new(ast) };
        expr.check_shape()?;
        expr.quote_columns();
        Ok(expr)
    }

    /// Builds from an AST the planner made itself (capability lowering).
    pub fn from_ast(ast: Expr) -> Self {
        Self { ast: Box::new(ast) }
    }

    /// A quoted column reference.
    pub fn column(name: &str) -> Self {
        Self {
            ast: Box::new(Expr::Identifier(Ident::with_quote('"', name))),
        }
    }

    pub fn ast(&self) -> &Expr {
        &self.ast
    }

    fn check_shape(&self) -> Result<(), String> {
        let mut problem = None;
        let _ = visit_expressions(self.ast.as_ref(), |expr| {
            let found = match expr {
                Expr::Subquery(_) | Expr::Exists { .. } | Expr::InSubquery { .. } => {
                    Some("subqueries are not allowed in rule expressions".to_owned())
                }
                Expr::CompoundIdentifier(parts) => Some(format!(
                    "qualified name {} is not allowed: name the column alone",
                    parts
                        .iter()
                        .map(|p| p.value.as_str())
                        .collect::<Vec<_>>()
                        .join(".")
                )),
                Expr::Function(function) => {
                    let name = function.name.to_string().to_lowercase();
                    if function.over.is_some() {
                        Some(format!(
                            "window function {name} is not allowed in rule expressions"
                        ))
                    } else if ALLOWED_FUNCTIONS.contains(&name.trim_matches('"')) {
                        None
                    } else {
                        Some(format!(
                            "function {name} is not allowed in rule expressions (allowed: {})",
                            ALLOWED_FUNCTIONS.join(", ")
                        ))
                    }
                }
                _ => None,
            };
            match found {
                Some(message) => {
                    problem = Some(message);
                    ControlFlow::Break(())
                }
                None => ControlFlow::Continue(()),
            }
        });
        problem.map_or(Ok(()), Err)
    }

    fn quote_columns(&mut self) {
        let _ = visit_expressions_mut(self.ast.as_mut(), |expr| {
            if let Expr::Identifier(ident) = expr {
                ident.quote_style = Some('"');
            }
            ControlFlow::<()>::Continue(())
        });
    }

    /// The column names the expression reads.
    pub fn columns(&self) -> BTreeSet<String> {
        let mut names = BTreeSet::new();
        let _ = visit_expressions(self.ast.as_ref(), |expr| {
            if let Expr::Identifier(ident) = expr {
                names.insert(ident.value.clone());
            }
            ControlFlow::<()>::Continue(())
        });
        names
    }

    /// Columns the expression reads that `schema` does not have.
    pub fn unknown_columns(&self, schema: &Schema) -> Vec<String> {
        self.columns()
            .into_iter()
            .filter(|name| !schema.has(name))
            .collect()
    }

    /// The expression as SQL (the same text for DuckDB and PostGIS: the allowed functions and
    /// operators are common to both).
    pub fn to_sql(&self) -> String {
        self.ast.to_string()
    }

    /// The expression as SQL for `dialect`. PostGIS refuses to compare geometries of different
    /// SRIDs, so there a box built with `ST_MakeEnvelope(xmin, ymin, xmax, ymax)` takes the SRID
    /// of the row's geometry (the box is in the layer's coordinates, as on DuckDB).
    pub fn to_sql_in(&self, dialect: crate::sql::Dialect) -> String {
        if dialect != crate::sql::Dialect::Postgis {
            return self.to_sql();
        }
        let mut ast = self.ast.clone();
        let _ = visit_expressions_mut(ast.as_mut(), |expr| {
            if let Some(with_srid) = envelope_with_srid(expr) {
                *expr = with_srid;
            }
            ControlFlow::<()>::Continue(())
        });
        ast.to_string()
    }

    /// Folds constant sub-expressions: arithmetic and comparisons on literals, and boolean
    /// identities (`x AND true` → `x`, `x OR true` → `true`, `NOT false` → `true`).
    #[must_use]
    pub fn folded(&self) -> Self {
        let mut ast = self.ast.clone();
        let _ = visit_expressions_mut(ast.as_mut(), |expr| {
            if let Some(folded) = fold(expr) {
                *expr = folded;
            }
            ControlFlow::<()>::Continue(())
        });
        Self { ast }
    }

    /// The box of a `ST_Intersects(geom, ST_MakeEnvelope(xmin, ymin, xmax, ymax))` predicate
    /// (either argument order), the form bbox queries take.
    pub fn as_bbox_filter(&self) -> Option<[f64; 4]> {
        let Expr::Function(function) = self.ast.as_ref() else {
            return None;
        };
        if !function
            .name
            .to_string()
            .eq_ignore_ascii_case("st_intersects")
        {
            return None;
        }
        let args = function_args(function)?;
        let [a, b] = args.as_slice() else { return None };
        let envelope = match (a, b) {
            (Expr::Identifier(id), other) | (other, Expr::Identifier(id))
                if id.value == crate::schema::GEOM =>
            {
                other
            }
            _ => return None,
        };
        let Expr::Function(envelope) = envelope else {
            return None;
        };
        if !envelope
            .name
            .to_string()
            .eq_ignore_ascii_case("st_makeenvelope")
        {
            return None;
        }
        let numbers: Vec<f64> = function_args(envelope)?
            .into_iter()
            .map(number_literal)
            .collect::<Option<_>>()?;
        match numbers.as_slice() {
            [x1, y1, x2, y2] => Some([*x1, *y1, *x2, *y2]),
            _ => None,
        }
    }

    /// `ST_Intersects("geom", ST_MakeEnvelope(...))` for a box.
    pub fn bbox_filter(bbox: [f64; 4]) -> Result<Self, String> {
        let [x1, y1, x2, y2] = bbox.map(crate::sql::quote::number);
        Self::parse(&format!(
            "ST_Intersects(geom, ST_MakeEnvelope({}, {}, {}, {}))",
            x1?, y1?, x2?, y2?
        ))
    }

    /// `Some(b)` when the expression is the boolean literal `b`.
    pub fn as_bool(&self) -> Option<bool> {
        bool_literal(&self.ast)
    }
}

impl std::fmt::Display for SqlExpr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.ast)
    }
}

/// `ST_MakeEnvelope(a, b, c, d, ST_SRID("geom"))` for a four-argument `ST_MakeEnvelope` call.
fn envelope_with_srid(expr: &Expr) -> Option<Expr> {
    let Expr::Function(function) = expr else {
        return None;
    };
    if !function
        .name
        .to_string()
        .eq_ignore_ascii_case("st_makeenvelope")
    {
        return None;
    }
    let args = function_args(function)?;
    if args.len() != 4 {
        return None;
    }
    let text = format!(
        "ST_MakeEnvelope({}, ST_SRID(\"{}\"))",
        args.iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(", "),
        crate::schema::GEOM
    );
    Parser::new(&GenericDialect {})
        .try_with_sql(&text)
        .ok()?
        .parse_expr()
        .ok()
}

/// The plain positional arguments of a call.
fn function_args(function: &sqlparser::ast::Function) -> Option<Vec<&Expr>> {
    use sqlparser::ast::{FunctionArg, FunctionArgExpr, FunctionArguments};
    let FunctionArguments::List(list) = &function.args else {
        return None;
    };
    list.args
        .iter()
        .map(|arg| match arg {
            FunctionArg::Unnamed(FunctionArgExpr::Expr(expr)) => Some(expr),
            _ => None,
        })
        .collect()
}

fn bool_literal(expr: &Expr) -> Option<bool> {
    match expr {
        Expr::Value(v) => match v.value {
            Value::Boolean(b) => Some(b),
            _ => None,
        },
        Expr::Nested(inner) => bool_literal(inner),
        _ => None,
    }
}

fn number_literal(expr: &Expr) -> Option<f64> {
    match expr {
        Expr::Value(v) => match &v.value {
            Value::Number(text, _) => text.parse().ok(),
            _ => None,
        },
        Expr::Nested(inner) => number_literal(inner),
        Expr::UnaryOp {
            op: UnaryOperator::Minus,
            expr,
        } => number_literal(expr).map(|n| -n),
        _ => None,
    }
}

fn string_literal(expr: &Expr) -> Option<&str> {
    match expr {
        Expr::Value(v) => match &v.value {
            Value::SingleQuotedString(s) => Some(s),
            _ => None,
        },
        Expr::Nested(inner) => string_literal(inner),
        _ => None,
    }
}

fn boolean(b: bool) -> Expr {
    Expr::value(Value::Boolean(b))
}

fn number(n: f64) -> Option<Expr> {
    if !n.is_finite() {
        return None;
    }
    let text = if n.fract() == 0.0 && n.abs() < 1e15 {
        format!("{n:.0}")
    } else {
        n.to_string()
    };
    if n < 0.0 {
        Some(Expr::UnaryOp {
            op: UnaryOperator::Minus,
            expr: Box::new(Expr::value(Value::Number(
                text.trim_start_matches('-').to_owned(),
                false,
            ))),
        })
    } else {
        Some(Expr::value(Value::Number(text, false)))
    }
}

fn fold(expr: &Expr) -> Option<Expr> {
    match expr {
        Expr::Nested(inner) if bool_literal(inner).is_some() || number_literal(inner).is_some() => {
            Some((**inner).clone())
        }
        Expr::UnaryOp {
            op: UnaryOperator::Not,
            expr,
        } => bool_literal(expr).map(|b| boolean(!b)),
        Expr::BinaryOp { left, op, right } => fold_binary(left, op, right),
        _ => None,
    }
}

fn fold_binary(left: &Expr, op: &BinaryOperator, right: &Expr) -> Option<Expr> {
    use BinaryOperator as B;
    match op {
        B::And => match (bool_literal(left), bool_literal(right)) {
            (Some(false), _) | (_, Some(false)) => Some(boolean(false)),
            (Some(true), _) => Some(right.clone()),
            (_, Some(true)) => Some(left.clone()),
            _ => None,
        },
        B::Or => match (bool_literal(left), bool_literal(right)) {
            (Some(true), _) | (_, Some(true)) => Some(boolean(true)),
            (Some(false), _) => Some(right.clone()),
            (_, Some(false)) => Some(left.clone()),
            _ => None,
        },
        _ => {
            if let (Some(a), Some(b)) = (number_literal(left), number_literal(right)) {
                return match op {
                    B::Plus => number(a + b),
                    B::Minus => number(a - b),
                    B::Multiply => number(a * b),
                    B::Divide if b != 0.0 => number(a / b),
                    B::Eq => Some(boolean(a == b)),
                    B::NotEq => Some(boolean(a != b)),
                    B::Lt => Some(boolean(a < b)),
                    B::LtEq => Some(boolean(a <= b)),
                    B::Gt => Some(boolean(a > b)),
                    B::GtEq => Some(boolean(a >= b)),
                    _ => None,
                };
            }
            if let (Some(a), Some(b)) = (string_literal(left), string_literal(right)) {
                return match op {
                    B::Eq => Some(boolean(a == b)),
                    B::NotEq => Some(boolean(a != b)),
                    _ => None,
                };
            }
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_are_quoted_and_collected() {
        let expr = SqlExpr::parse("pop_est > 1000000 AND continent = 'Africa'").unwrap();
        assert_eq!(
            expr.to_sql(),
            "\"pop_est\" > 1000000 AND \"continent\" = 'Africa'"
        );
        assert_eq!(
            expr.columns().into_iter().collect::<Vec<_>>(),
            ["continent", "pop_est"]
        );
    }

    #[test]
    fn injection_attempts_are_refused() {
        for text in [
            "1 = 1; DROP TABLE countries",
            "1 = 1) UNION SELECT * FROM read_csv('/etc/passwd') --",
            "name IN (SELECT name FROM secrets)",
            "read_text('/etc/passwd') IS NOT NULL",
            "t.name = 'x'",
            "row_number() OVER () > 1",
            "",
        ] {
            assert!(SqlExpr::parse(text).is_err(), "{text} was accepted");
        }
    }

    #[test]
    fn bbox_filters_are_recognised_and_built() {
        let expr =
            SqlExpr::parse("ST_Intersects(geom, ST_MakeEnvelope(-10, 35.5, 30, 70))").unwrap();
        assert_eq!(expr.as_bbox_filter(), Some([-10.0, 35.5, 30.0, 70.0]));
        let swapped = SqlExpr::parse("st_intersects(ST_MakeEnvelope(0, 0, 1, 1), geom)").unwrap();
        assert_eq!(swapped.as_bbox_filter(), Some([0.0, 0.0, 1.0, 1.0]));
        assert_eq!(
            SqlExpr::parse("ST_Intersects(geom, geom)")
                .unwrap()
                .as_bbox_filter(),
            None
        );
        let built = SqlExpr::bbox_filter([-1.5, 2.0, 3.0, 4.0]).unwrap();
        assert_eq!(
            built.to_sql(),
            "ST_Intersects(\"geom\", ST_MakeEnvelope(-1.5, 2, 3, 4))"
        );
    }

    #[test]
    fn constants_fold() {
        let folded = SqlExpr::parse("pop_est > 2 * 500 AND 1 = 1")
            .unwrap()
            .folded();
        assert_eq!(folded.to_sql(), "\"pop_est\" > 1000");
        assert_eq!(
            SqlExpr::parse("'full' = 'full' OR x > 1")
                .unwrap()
                .folded()
                .as_bool(),
            Some(true)
        );
        assert_eq!(
            SqlExpr::parse("NOT (1 > 2)").unwrap().folded().as_bool(),
            Some(true)
        );
        assert_eq!(
            SqlExpr::parse("x - 3 > -1 - 1").unwrap().folded().to_sql(),
            "\"x\" - 3 > -2"
        );
    }
}
