//! Compiles a [`PyExpr`] into the planner's checked SQL expression with pandas' semantics:
//! a comparison with a missing value is false (`!=` true), `/` divides as floats, `//` floors,
//! `%` takes the divisor's sign, `+` joins strings. Names are quoted and literals printed here,
//! then the text goes through [`SqlExpr::parse`], the same guard as every rule expression.

use super::{Binary, Comparison, Logical, PyExpr, Unary};
use crate::expr::SqlExpr;
use crate::sql::quote;

/// Compiles `expr` into the planner's expression.
pub fn compile(expr: &PyExpr) -> Result<SqlExpr, String> {
    let text = sql(expr)?;
    SqlExpr::parse(&text).map_err(|e| format!("cannot compile the expression: {e}"))
}

/// numpy / math / builtin functions of one argument and their SQL function (the same on
/// DuckDB and PostGIS; `log10` is SQL's `log`).
const UNARY_FUNCTIONS: &[(&str, &str)] = &[
    ("abs", "abs"),
    ("fabs", "abs"),
    ("absolute", "abs"),
    ("sqrt", "sqrt"),
    ("log", "ln"),
    ("log10", "log"),
    ("exp", "exp"),
    ("floor", "floor"),
    ("ceil", "ceil"),
    ("sign", "sign"),
];

/// Module prefixes a function may be written with.
const MODULES: &[&str] = &["np", "numpy", "math"];

fn sql(expr: &PyExpr) -> Result<String, String> {
    Ok(match expr {
        PyExpr::Name(name) => quote::ident(name),
        PyExpr::Variable(name) => {
            return Err(format!(
                "`@{name}`: local variables are not supported; write the value itself"
            ));
        }
        PyExpr::Number(text) => number(text)?,
        PyExpr::Str(text) => quote::string(text),
        PyExpr::Bool(value) => if *value { "TRUE" } else { "FALSE" }.into(),
        PyExpr::Missing => "NULL".into(),
        PyExpr::List(_) => return Err("a list is only allowed after `in` or `==`".into()),
        PyExpr::Unary(Unary::Minus, inner) => format!("(- {})", sql(inner)?),
        PyExpr::Unary(Unary::Plus, inner) => sql(inner)?,
        PyExpr::Unary(Unary::Not, inner) => format!("(NOT {})", sql(inner)?),
        PyExpr::Binary(op, left, right) => binary(*op, left, right)?,
        PyExpr::Logical(op, left, right) => {
            let word = match op {
                Logical::And => "AND",
                Logical::Or => "OR",
            };
            format!("({} {word} {})", sql(left)?, sql(right)?)
        }
        PyExpr::Compare(first, chain) => {
            let mut left = first.as_ref();
            let mut parts = Vec::new();
            for (op, right) in chain {
                parts.push(comparison(*op, left, right)?);
                left = right;
            }
            format!("({})", parts.join(" AND "))
        }
        PyExpr::IfElse {
            then,
            condition,
            otherwise,
        } => format!(
            "(CASE WHEN {} THEN {} ELSE {} END)",
            sql(condition)?,
            sql(then)?,
            sql(otherwise)?
        ),
        PyExpr::Attribute(receiver, name) => {
            return Err(format!(
                "`{}.{name}`: attributes are not supported here",
                describe(receiver)
            ));
        }
        PyExpr::Call {
            callee,
            args,
            keywords,
        } => call(callee, args, keywords)?,
    })
}

/// A short text naming `expr` in messages.
fn describe(expr: &PyExpr) -> String {
    match expr {
        PyExpr::Name(name) => name.clone(),
        PyExpr::Attribute(receiver, name) => format!("{}.{name}", describe(receiver)),
        PyExpr::Call { callee, .. } => format!("{}(...)", describe(callee)),
        _ => "(...)".into(),
    }
}

fn number(text: &str) -> Result<String, String> {
    if text.chars().all(|c| c.is_ascii_digit()) {
        let value: i64 = text
            .parse()
            .map_err(|_| format!("the integer {text} is too large"))?;
        return Ok(value.to_string());
    }
    let value: f64 = text
        .parse()
        .map_err(|_| format!("malformed number {text}"))?;
    quote::number(value)
}

fn is_string(expr: &PyExpr) -> bool {
    match expr {
        PyExpr::Str(_) => true,
        PyExpr::Binary(Binary::Add, left, right) => is_string(left) || is_string(right),
        _ => false,
    }
}

fn binary(op: Binary, left: &PyExpr, right: &PyExpr) -> Result<String, String> {
    let (a, b) = (sql(left)?, sql(right)?);
    Ok(match op {
        Binary::Add if is_string(left) || is_string(right) => format!("({a} || {b})"),
        Binary::Add => format!("({a} + {b})"),
        Binary::Subtract => format!("({a} - {b})"),
        Binary::Multiply => format!("({a} * {b})"),
        // Division by zero is NULL (pandas: an infinity or NaN) on every engine, never an error.
        Binary::Divide => format!("(CAST({a} AS FLOAT8) / NULLIF({b}, 0))"),
        Binary::FloorDivide => format!("floor(CAST({a} AS FLOAT8) / NULLIF({b}, 0))"),
        Binary::Modulo => {
            format!("({a} - {b} * floor(CAST({a} AS FLOAT8) / NULLIF({b}, 0)))")
        }
        Binary::Power => format!("power({a}, {b})"),
    })
}

/// One comparison with pandas' missing-value rule: false when either side is missing, except
/// `!=` and `not in`, which are then true.
fn comparison(op: Comparison, left: &PyExpr, right: &PyExpr) -> Result<String, String> {
    let a = sql(left)?;
    if let PyExpr::List(items) = right {
        let negated = match op {
            Comparison::In | Comparison::Equal => false,
            Comparison::NotIn | Comparison::NotEqual => true,
            _ => {
                return Err("a list can only be compared with `in`, `not in`, `==` or `!=`".into());
            }
        };
        return membership(&a, items, negated);
    }
    let b = sql(right)?;
    let (symbol, when_missing) = match op {
        Comparison::Equal => ("=", "FALSE"),
        Comparison::NotEqual => ("<>", "TRUE"),
        Comparison::Less => ("<", "FALSE"),
        Comparison::LessOrEqual => ("<=", "FALSE"),
        Comparison::Greater => (">", "FALSE"),
        Comparison::GreaterOrEqual => (">=", "FALSE"),
        Comparison::In | Comparison::NotIn => {
            return Err("`in` needs a list: `x in [1, 2]`".into());
        }
    };
    Ok(format!("coalesce({a} {symbol} {b}, {when_missing})"))
}

fn membership(value: &str, items: &[PyExpr], negated: bool) -> Result<String, String> {
    if items.is_empty() {
        return Ok(if negated { "TRUE" } else { "FALSE" }.into());
    }
    let listed = items.iter().map(sql).collect::<Result<Vec<_>, _>>()?;
    let (word, when_missing) = if negated {
        ("NOT IN", "TRUE")
    } else {
        ("IN", "FALSE")
    };
    Ok(format!(
        "coalesce({value} {word} ({}), {when_missing})",
        listed.join(", ")
    ))
}

/// The function a callee names: `abs`, `np.log`, `math.sqrt`.
fn function_name(callee: &PyExpr) -> Option<&str> {
    match callee {
        PyExpr::Name(name) => Some(name),
        PyExpr::Attribute(module, name) => match module.as_ref() {
            PyExpr::Name(m) if MODULES.contains(&m.as_str()) => Some(name),
            _ => None,
        },
        _ => None,
    }
}

fn call(callee: &PyExpr, args: &[PyExpr], keywords: &[(String, PyExpr)]) -> Result<String, String> {
    if let Some(name) = function_name(callee) {
        return function(name, args, keywords);
    }
    match callee {
        PyExpr::Attribute(receiver, method) => match receiver.as_ref() {
            PyExpr::Attribute(inner, accessor) if accessor == "str" => {
                string_method(inner, method, args, keywords)
            }
            _ => series_method(receiver, method, args, keywords),
        },
        other => Err(format!("`{}` cannot be called", describe(other))),
    }
}

fn arity(
    name: &str,
    args: &[PyExpr],
    keywords: &[(String, PyExpr)],
    n: usize,
) -> Result<(), String> {
    if args.len() != n || !keywords.is_empty() {
        return Err(format!("`{name}` takes {n} argument(s)"));
    }
    Ok(())
}

fn function(name: &str, args: &[PyExpr], keywords: &[(String, PyExpr)]) -> Result<String, String> {
    if let Some((_, sql_name)) = UNARY_FUNCTIONS.iter().find(|(n, _)| *n == name) {
        arity(name, args, keywords, 1)?;
        return Ok(format!("{sql_name}({})", sql(&args[0])?));
    }
    match name {
        "round" | "around" => round(
            &args[0..args.len().min(1)],
            &args[args.len().min(1)..],
            keywords,
            name,
        ),
        "power" | "pow" => {
            arity(name, args, keywords, 2)?;
            Ok(format!("power({}, {})", sql(&args[0])?, sql(&args[1])?))
        }
        "where" => {
            arity(name, args, keywords, 3)?;
            Ok(format!(
                "(CASE WHEN {} THEN {} ELSE {} END)",
                sql(&args[0])?,
                sql(&args[1])?,
                sql(&args[2])?
            ))
        }
        "isnull" | "isna" => {
            arity(name, args, keywords, 1)?;
            Ok(format!("({} IS NULL)", sql(&args[0])?))
        }
        "notnull" | "notna" => {
            arity(name, args, keywords, 1)?;
            Ok(format!("({} IS NOT NULL)", sql(&args[0])?))
        }
        _ => Err(format!("the function `{name}` is not supported")),
    }
}

/// `round(x)`, `round(x, n)`, `x.round(n)`, `np.round(x, decimals=n)`, halves to even.
fn round(
    value: &[PyExpr],
    rest: &[PyExpr],
    keywords: &[(String, PyExpr)],
    name: &str,
) -> Result<String, String> {
    let [value] = value else {
        return Err(format!("`{name}` needs a value"));
    };
    let digits = match (rest, keywords) {
        ([], []) => None,
        ([digits], []) => Some(digits),
        ([], [(key, digits)]) if key == "decimals" || key == "ndigits" => Some(digits),
        _ => return Err(format!("`{name}` takes a value and a number of decimals")),
    };
    let digits = match digits {
        None => 0,
        Some(PyExpr::Number(n)) if n.len() <= 2 && n.chars().all(|c| c.is_ascii_digit()) => {
            n.parse::<i32>().map_err(|e| e.to_string())?
        }
        Some(_) => {
            return Err(format!(
                "`{name}`'s decimals must be a whole number below 100"
            ));
        }
    };
    Ok(half_to_even(&sql(value)?, digits))
}

/// NumPy's rounding to `digits` decimals: the value scaled by 10^digits, rounded half to even,
/// scaled back (SQL's `round` takes halves away from zero on DuckDB and has no decimals on
/// PostgreSQL's doubles).
pub fn half_to_even(value: &str, digits: i32) -> String {
    let scale = quote::number(10f64.powi(digits)).unwrap_or_else(|_| "1".into());
    let scaled = format!("(CAST({value} AS FLOAT8) * {scale})");
    format!(
        "((CASE WHEN {scaled} - floor({scaled}) = 0.5 THEN 2 * round({scaled} / 2) ELSE round({scaled}) END) / {scale})"
    )
}

fn series_method(
    receiver: &PyExpr,
    method: &str,
    args: &[PyExpr],
    keywords: &[(String, PyExpr)],
) -> Result<String, String> {
    let value = sql(receiver)?;
    match method {
        "isnull" | "isna" => {
            arity(method, args, keywords, 0)?;
            Ok(format!("({value} IS NULL)"))
        }
        "notnull" | "notna" => {
            arity(method, args, keywords, 0)?;
            Ok(format!("({value} IS NOT NULL)"))
        }
        "abs" => {
            arity(method, args, keywords, 0)?;
            Ok(format!("abs({value})"))
        }
        "round" => round(std::slice::from_ref(receiver), args, keywords, method),
        "fillna" => {
            arity(method, args, keywords, 1)?;
            Ok(format!("coalesce({value}, {})", sql(&args[0])?))
        }
        "isin" => {
            arity(method, args, keywords, 1)?;
            let PyExpr::List(items) = &args[0] else {
                return Err("`isin` needs a list".into());
            };
            membership(&value, items, false)
        }
        "between" => {
            arity(method, args, keywords, 2)?;
            Ok(format!(
                "coalesce({value} BETWEEN {} AND {}, FALSE)",
                sql(&args[0])?,
                sql(&args[1])?
            ))
        }
        _ => Err(format!(
            "the method `.{method}()` of `{}` is not supported",
            describe(receiver)
        )),
    }
}

/// A keyword argument that must be a boolean literal, or its default.
fn flag(keywords: &[(String, PyExpr)], name: &str, default: bool) -> Result<bool, String> {
    match keywords.iter().find(|(k, _)| k == name) {
        None => Ok(default),
        Some((_, PyExpr::Bool(value))) => Ok(*value),
        Some(_) => Err(format!("`{name}=` must be True or False")),
    }
}

/// `x.str.…`: the string methods a rule may call. Missing values give false or NULL.
fn string_method(
    receiver: &PyExpr,
    method: &str,
    args: &[PyExpr],
    keywords: &[(String, PyExpr)],
) -> Result<String, String> {
    let value = sql(receiver)?;
    let unary = |function: &str| -> Result<String, String> {
        arity(method, args, keywords, 0)?;
        Ok(format!("{function}({value})"))
    };
    match method {
        "lower" => unary("lower"),
        "upper" => unary("upper"),
        "strip" => unary("trim"),
        "lstrip" => unary("ltrim"),
        "rstrip" => unary("rtrim"),
        "len" => unary("length"),
        "contains" | "startswith" | "endswith" => {
            let allowed = ["case", "regex", "na"];
            if let Some((key, _)) = keywords
                .iter()
                .find(|(k, _)| !allowed.contains(&k.as_str()))
            {
                return Err(format!("`.str.{method}()` does not take `{key}=`"));
            }
            let [PyExpr::Str(pattern)] = args else {
                return Err(format!("`.str.{method}()` needs one string"));
            };
            let case = flag(keywords, "case", true)?;
            let regex = flag(keywords, "regex", method == "contains")?;
            if regex
                && pattern.contains([
                    '.', '^', '$', '*', '+', '?', '{', '}', '[', ']', '\\', '|', '(', ')',
                ])
            {
                return Err(format!(
                    "`.str.{method}({pattern:?})`: regular expressions are not supported (pass regex=False to match the text itself)"
                ));
            }
            let escaped = pattern
                .replace('\\', "\\\\")
                .replace('%', "\\%")
                .replace('_', "\\_");
            let like = match method {
                "contains" => format!("%{escaped}%"),
                "startswith" => format!("{escaped}%"),
                _ => format!("%{escaped}"),
            };
            let operator = if case { "LIKE" } else { "ILIKE" };
            Ok(format!(
                "coalesce({value} {operator} {} ESCAPE '\\', FALSE)",
                quote::string(&like)
            ))
        }
        _ => Err(format!(
            "the string method `.str.{method}()` is not supported"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::super::parse;
    use super::*;

    fn compiled(text: &str) -> String {
        compile(&parse(text).unwrap()).unwrap().to_sql()
    }

    #[test]
    fn comparisons_follow_pandas_with_missing_values() {
        assert_eq!(
            compiled("pop_est > 1e6"),
            r#"(coalesce("pop_est" > 1000000, false))"#
        );
        assert_eq!(
            compiled("name != 'France'"),
            r#"(coalesce("name" <> 'France', true))"#
        );
        assert_eq!(
            compiled("continent in ['Africa', 'Asia']"),
            r#"(coalesce("continent" IN ('Africa', 'Asia'), false))"#
        );
        assert_eq!(
            compiled("1 < x <= 3"),
            r#"(coalesce(1 < "x", false) AND coalesce("x" <= 3, false))"#
        );
    }

    #[test]
    fn arithmetic_divides_as_floats_and_joins_strings() {
        assert_eq!(
            compiled("gdp_md_est / pop_est * 1000"),
            r#"((CAST("gdp_md_est" AS FLOAT8) / NULLIF("pop_est", 0)) * 1000)"#
        );
        assert_eq!(
            compiled("name + ' (' + iso_a3 + ')'"),
            r#"((("name" || ' (') || "iso_a3") || ')')"#
        );
        assert_eq!(compiled("np.log10(x) ** 2"), r#"power(log("x"), 2)"#);
    }

    #[test]
    fn methods_and_functions_compile() {
        assert_eq!(compiled("name.isnull()"), r#"("name" IS NULL)"#);
        assert_eq!(
            compiled("name.str.contains('land', case=False)"),
            r#"coalesce("name" ILIKE '%land%' ESCAPE '\', false)"#
        );
        let rounded = compiled("round(x, 1)");
        assert!(
            rounded.contains(r#"2 * round((CAST("x" AS FLOAT8) * 10) / 2)"#),
            "{rounded}"
        );
        assert_eq!(
            compiled("np.where(x > 0, 'pos', 'neg')"),
            r#"(CASE WHEN (coalesce("x" > 0, false)) THEN 'pos' ELSE 'neg' END)"#
        );
    }

    #[test]
    fn literals_never_escape_their_quotes() {
        let sql = compiled("name == \"x'); DROP TABLE t; --\"");
        assert_eq!(
            sql,
            r#"(coalesce("name" = 'x''); DROP TABLE t; --', false))"#
        );
        let sql = compiled("`a\"b` == 1");
        assert_eq!(sql, r#"(coalesce("a""b" = 1, false))"#);
    }

    #[test]
    fn what_cannot_be_compiled_is_named() {
        for (text, needle) in [
            ("os.system('x')", "`.system()` of `os` is not supported"),
            ("eval('1')", "`eval` is not supported"),
            ("name.str.contains('a.*b')", "regular expressions"),
            ("x.apply(f)", "`.apply()`"),
            ("@limit < x", "local variables"),
            ("x in 3", "needs a list"),
            ("__import__('os')", "not supported"),
        ] {
            let error = parse(text)
                .and_then(|e| compile(&e).map(|_| ()))
                .unwrap_err();
            assert!(error.contains(needle), "{text}: {error}");
        }
    }
}
