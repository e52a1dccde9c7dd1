//! Rule expressions (`where`, `expressions`, `case_when` conditions): parsed with sqlparser into
//! an AST, checked (one expression, allowed functions only, no subqueries, known columns), and
//! printed by the planner's own printer (`print`), which quotes every name and prints every
//! literal itself. User text is never pasted into SQL, nor printed back by sqlparser.

mod print;

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
        expr.check_printable()?;
        Ok(expr)
    }

    /// Builds from an AST the planner made itself (capability lowering); refused when it holds
    /// a construct the printer does not print.
    pub fn from_ast(ast: Expr) -> Result<Self, String> {
        let expr = Self { ast: Box::new(ast) };
        expr.check_printable()?;
        Ok(expr)
    }

    /// Every form the expression is printed in (as is, and with PostGIS's rewrites) prints.
    fn check_printable(&self) -> Result<(), String> {
        print::print(&self.ast)?;
        print::print(&postgis_form(&self.ast))?;
        Ok(())
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
        printed(&self.ast)
    }

    /// The expression as SQL for `dialect`. PostGIS refuses to compare geometries of different
    /// SRIDs, so there a box built with `ST_MakeEnvelope(xmin, ymin, xmax, ymax)` takes the SRID
    /// of the row's geometry (the box is in the layer's coordinates, as on DuckDB).
    pub fn to_sql_in(&self, dialect: crate::sql::Dialect) -> String {
        if dialect != crate::sql::Dialect::Postgis {
            return self.to_sql();
        }
        printed(&postgis_form(&self.ast))
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

    /// The column, the whole numbers and whether rows with them are kept, of a class filter:
    /// `"c" IN (1, 2)` keeps them; `"c" IS NULL OR NOT ("c" IN (1, 2))` drops them (what
    /// `pointcloud_filter_classification` makes).
    pub fn as_int_membership(&self) -> Option<(String, Vec<i64>, bool)> {
        fn listed(expr: &Expr) -> Option<(String, Vec<i64>, bool)> {
            let Expr::InList {
                expr,
                list,
                negated,
            } = unnested(expr)
            else {
                return None;
            };
            let Expr::Identifier(column) = expr.as_ref() else {
                return None;
            };
            let codes = list
                .iter()
                .map(|item| {
                    let number = number_literal(item)?;
                    #[allow(clippy::cast_possible_truncation)]
                    let whole = number as i64;
                    (number.fract() == 0.0 && number.abs() < 9.0e15).then_some(whole)
                })
                .collect::<Option<Vec<i64>>>()?;
            Some((column.value.clone(), codes, !*negated))
        }
        fn unnested(expr: &Expr) -> &Expr {
            match expr {
                Expr::Nested(inner) => unnested(inner),
                other => other,
            }
        }
        match unnested(&self.ast) {
            Expr::BinaryOp {
                left,
                op: BinaryOperator::Or,
                right,
            } => {
                let Expr::IsNull(null) = unnested(left) else {
                    return None;
                };
                let Expr::UnaryOp {
                    op: UnaryOperator::Not,
                    expr,
                } = unnested(right)
                else {
                    return None;
                };
                let (column, codes, true) = listed(expr)? else {
                    return None;
                };
                matches!(unnested(null), Expr::Identifier(id) if id.value == column)
                    .then_some((column, codes, false))
            }
            other => listed(other).filter(|(_, _, keep)| *keep),
        }
    }

    /// `Some(b)` when the expression is the boolean literal `b`.
    pub fn as_bool(&self) -> Option<bool> {
        bool_literal(&self.ast)
    }
}

impl std::fmt::Display for SqlExpr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.to_sql())
    }
}

/// `ast` as the planner prints it. Every `SqlExpr` was checked to print when it was made, and the
/// rewrites after that (folding, PostGIS's envelopes) only make literals and calls the printer
/// prints; should one still not print, the SQL fails when run, saying so.
fn printed(ast: &Expr) -> String {
    print::print(ast).unwrap_or_else(|reason| {
        crate::sql::quote::string(&format!(
            "geomill: the expression cannot be printed: {reason}"
        )) + "::INTEGER"
    })
}

/// The expression as PostGIS runs it: a box built with `ST_MakeEnvelope(xmin, ymin, xmax, ymax)`
/// takes the SRID of the row's geometry.
fn postgis_form(ast: &Expr) -> Expr {
    let mut ast = ast.clone();
    let _ = visit_expressions_mut(&mut ast, |expr| {
        if let Some(with_srid) = envelope_with_srid(expr) {
            *expr = with_srid;
        }
        ControlFlow::<()>::Continue(())
    });
    ast
}

/// `ST_MakeEnvelope(a, b, c, d, ST_SRID("geom"))` for a four-argument `ST_MakeEnvelope` call.
fn envelope_with_srid(expr: &Expr) -> Option<Expr> {
    use sqlparser::ast::{FunctionArg, FunctionArgExpr, FunctionArguments};
    let Expr::Function(function) = expr else {
        return None;
    };
    if !function
        .name
        .to_string()
        .eq_ignore_ascii_case("st_makeenvelope")
        || function_args(function)?.len() != 4
    {
        return None;
    }
    let mut srid = function.clone();
    srid.name = sqlparser::ast::ObjectName::from(vec![Ident::new("ST_SRID")]);
    if let FunctionArguments::List(list) = &mut srid.args {
        list.args = vec![FunctionArg::Unnamed(FunctionArgExpr::Expr(
            Expr::Identifier(Ident::with_quote('"', crate::schema::GEOM)),
        ))];
    }
    let mut with_srid = function.clone();
    with_srid.name = sqlparser::ast::ObjectName::from(vec![Ident::new("ST_MakeEnvelope")]);
    if let FunctionArguments::List(list) = &mut with_srid.args {
        list.args
            .push(FunctionArg::Unnamed(FunctionArgExpr::Expr(Expr::Function(
                srid,
            ))));
    }
    Some(Expr::Function(with_srid))
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
mod tests;
