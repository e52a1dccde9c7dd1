//! The planner's own printer of rule expressions: an allow-list of expression shapes, each printed
//! with fixed keywords, every name quoted by `quote::ident` and every literal printed by
//! `quote::string` or checked as a plain number. A shape outside the list is refused, never
//! printed: nothing of a parsed expression reaches SQL through sqlparser's `Display`, which prints
//! prefixed literals (`N'…'`, `X'…'`, `B'…'`) back without escaping them.

use sqlparser::ast::{
    BinaryOperator, CastKind, CeilFloorKind, CharacterLength, DataType, DateTimeField,
    ExactNumberInfo, Expr, FunctionArg, FunctionArgExpr, FunctionArguments, Ident, ObjectName,
    ObjectNamePart, TimezoneInfo, UnaryOperator, Value,
};

use crate::sql::quote;

/// Prints `expr` as SQL, or names the first construct the planner does not print.
pub fn print(expr: &Expr) -> Result<String, String> {
    let mut out = String::new();
    write_expr(expr, &mut out)?;
    Ok(out)
}

fn write_expr(expr: &Expr, out: &mut String) -> Result<(), String> {
    match expr {
        Expr::Identifier(ident) => out.push_str(&name(ident)?),
        Expr::Value(value) => out.push_str(&literal(&value.value)?),
        Expr::Nested(inner) => {
            out.push('(');
            write_expr(inner, out)?;
            out.push(')');
        }
        Expr::BinaryOp { left, op, right } => {
            write_expr(left, out)?;
            out.push(' ');
            out.push_str(binary_operator(op)?);
            out.push(' ');
            write_expr(right, out)?;
        }
        Expr::UnaryOp { op, expr } => write_unary(op, expr, out)?,
        Expr::IsNull(e) => postfix(e, " IS NULL", out)?,
        Expr::IsNotNull(e) => postfix(e, " IS NOT NULL", out)?,
        Expr::IsTrue(e) => postfix(e, " IS TRUE", out)?,
        Expr::IsNotTrue(e) => postfix(e, " IS NOT TRUE", out)?,
        Expr::IsFalse(e) => postfix(e, " IS FALSE", out)?,
        Expr::IsNotFalse(e) => postfix(e, " IS NOT FALSE", out)?,
        Expr::IsDistinctFrom(a, b) => infix(a, " IS DISTINCT FROM ", b, out)?,
        Expr::IsNotDistinctFrom(a, b) => infix(a, " IS NOT DISTINCT FROM ", b, out)?,
        Expr::InList {
            expr,
            list,
            negated,
        } => {
            write_expr(expr, out)?;
            out.push_str(if *negated { " NOT IN (" } else { " IN (" });
            write_list(list, out)?;
            out.push(')');
        }
        Expr::Between {
            expr,
            negated,
            low,
            high,
        } => {
            write_expr(expr, out)?;
            out.push_str(if *negated {
                " NOT BETWEEN "
            } else {
                " BETWEEN "
            });
            write_expr(low, out)?;
            out.push_str(" AND ");
            write_expr(high, out)?;
        }
        Expr::Like {
            negated,
            expr,
            pattern,
            escape_char,
            any: false,
        } => write_like(
            "LIKE",
            *negated,
            expr,
            pattern,
            escape_char.as_ref().map(|v| &v.value),
            out,
        )?,
        Expr::ILike {
            negated,
            expr,
            pattern,
            escape_char,
            any: false,
        } => write_like(
            "ILIKE",
            *negated,
            expr,
            pattern,
            escape_char.as_ref().map(|v| &v.value),
            out,
        )?,
        Expr::Case {
            operand,
            conditions,
            else_result,
            ..
        } => {
            out.push_str("CASE");
            if let Some(operand) = operand {
                out.push(' ');
                write_expr(operand, out)?;
            }
            for when in conditions {
                out.push_str(" WHEN ");
                write_expr(&when.condition, out)?;
                out.push_str(" THEN ");
                write_expr(&when.result, out)?;
            }
            if let Some(otherwise) = else_result {
                out.push_str(" ELSE ");
                write_expr(otherwise, out)?;
            }
            out.push_str(" END");
        }
        Expr::Cast {
            kind,
            expr,
            data_type,
            array: false,
            format: None,
        } => {
            let ty = data_type_name(data_type)?;
            match kind {
                CastKind::Cast | CastKind::TryCast => {
                    out.push_str(if *kind == CastKind::Cast {
                        "CAST("
                    } else {
                        "TRY_CAST("
                    });
                    write_expr(expr, out)?;
                    out.push_str(" AS ");
                    out.push_str(&ty);
                    out.push(')');
                }
                CastKind::DoubleColon => {
                    write_expr(expr, out)?;
                    out.push_str("::");
                    out.push_str(&ty);
                }
                CastKind::SafeCast => return Err(unsupported("SAFE_CAST")),
            }
        }
        Expr::Function(function) => write_function(function, out)?,
        Expr::Ceil { expr, field } => rounding("CEIL", expr, field, out)?,
        Expr::Floor { expr, field } => rounding("FLOOR", expr, field, out)?,
        Expr::Substring {
            expr,
            substring_from,
            substring_for,
            special,
            shorthand,
        } => {
            out.push_str(if *shorthand { "SUBSTR(" } else { "SUBSTRING(" });
            write_expr(expr, out)?;
            let (from, length) = if *special {
                (", ", ", ")
            } else {
                (" FROM ", " FOR ")
            };
            if let Some(start) = substring_from {
                out.push_str(from);
                write_expr(start, out)?;
            }
            if let Some(count) = substring_for {
                out.push_str(length);
                write_expr(count, out)?;
            }
            out.push(')');
        }
        Expr::Trim {
            expr,
            trim_where: None,
            trim_what: None,
            trim_characters: None,
        } => {
            out.push_str("TRIM(");
            write_expr(expr, out)?;
            out.push(')');
        }
        Expr::AtTimeZone {
            timestamp,
            time_zone,
        } => infix(timestamp, " AT TIME ZONE ", time_zone, out)?,
        Expr::Interval(interval)
            if interval.leading_field.is_none()
                && interval.leading_precision.is_none()
                && interval.last_field.is_none()
                && interval.fractional_seconds_precision.is_none() =>
        {
            let Expr::Value(value) = interval.value.as_ref() else {
                return Err(unsupported("an INTERVAL that is not a string literal"));
            };
            let Value::SingleQuotedString(text) = &value.value else {
                return Err(unsupported("an INTERVAL that is not a string literal"));
            };
            out.push_str("INTERVAL ");
            out.push_str(&quote::string(text));
        }
        Expr::TypedString(typed) => {
            let Value::SingleQuotedString(text) = &typed.value.value else {
                return Err(unsupported("a typed literal that is not a plain string"));
            };
            out.push_str(&data_type_name(&typed.data_type)?);
            out.push(' ');
            out.push_str(&quote::string(text));
        }
        other => return Err(unsupported(construct_name(other))),
    }
    Ok(())
}

fn unsupported(what: &str) -> String {
    format!("{what} is not supported in rule expressions")
}

/// A short name of an expression's kind for refusals.
fn construct_name(expr: &Expr) -> &'static str {
    match expr {
        Expr::CompoundIdentifier(_) => "a qualified name",
        Expr::Subquery(_) | Expr::Exists { .. } | Expr::InSubquery { .. } => "a subquery",
        Expr::Like { .. } | Expr::ILike { .. } => "LIKE ANY",
        Expr::Cast { .. } => "a CAST with ARRAY or FORMAT",
        Expr::Trim { .. } => "TRIM with characters or a side (use ltrim/rtrim)",
        Expr::Interval(_) => "an INTERVAL with fields",
        Expr::Collate { .. } => "COLLATE",
        Expr::Extract { .. } => "EXTRACT",
        Expr::Position { .. } => "POSITION",
        Expr::Tuple(_) => "a tuple",
        Expr::Array(_) => "an array",
        Expr::Wildcard(_) | Expr::QualifiedWildcard(..) => "a wildcard",
        Expr::Prefixed { .. } => "a prefixed value",
        _ => "this construct",
    }
}

fn postfix(expr: &Expr, suffix: &str, out: &mut String) -> Result<(), String> {
    write_expr(expr, out)?;
    out.push_str(suffix);
    Ok(())
}

fn infix(left: &Expr, middle: &str, right: &Expr, out: &mut String) -> Result<(), String> {
    write_expr(left, out)?;
    out.push_str(middle);
    write_expr(right, out)
}

fn write_list(list: &[Expr], out: &mut String) -> Result<(), String> {
    for (i, item) in list.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        write_expr(item, out)?;
    }
    Ok(())
}

/// `-x`, `+x`, `NOT x`. A minus before text that itself starts with `-` is parenthesised: two
/// minus signs in a row would start an SQL comment.
fn write_unary(op: &UnaryOperator, expr: &Expr, out: &mut String) -> Result<(), String> {
    let sign = match op {
        UnaryOperator::Not => {
            out.push_str("NOT ");
            return write_expr(expr, out);
        }
        UnaryOperator::Minus => '-',
        UnaryOperator::Plus => '+',
        other => return Err(unsupported(&format!("the operator {other}"))),
    };
    let operand = print(expr)?;
    out.push(sign);
    if operand.starts_with(['-', '+']) {
        out.push('(');
        out.push_str(&operand);
        out.push(')');
    } else {
        out.push_str(&operand);
    }
    Ok(())
}

fn write_like(
    keyword: &str,
    negated: bool,
    expr: &Expr,
    pattern: &Expr,
    escape: Option<&Value>,
    out: &mut String,
) -> Result<(), String> {
    write_expr(expr, out)?;
    out.push_str(if negated { " NOT " } else { " " });
    out.push_str(keyword);
    out.push(' ');
    write_expr(pattern, out)?;
    if let Some(escape) = escape {
        let Value::SingleQuotedString(text) = escape else {
            return Err(unsupported("an ESCAPE that is not a plain string"));
        };
        out.push_str(" ESCAPE ");
        out.push_str(&quote::string(text));
    }
    Ok(())
}

fn rounding(
    keyword: &str,
    expr: &Expr,
    field: &CeilFloorKind,
    out: &mut String,
) -> Result<(), String> {
    if !matches!(
        field,
        CeilFloorKind::DateTimeField(DateTimeField::NoDateTime)
    ) {
        return Err(unsupported(&format!("{keyword} with a unit or scale")));
    }
    out.push_str(keyword);
    out.push('(');
    write_expr(expr, out)?;
    out.push(')');
    Ok(())
}

fn write_function(function: &sqlparser::ast::Function, out: &mut String) -> Result<(), String> {
    let plain = function.filter.is_none()
        && function.null_treatment.is_none()
        && function.over.is_none()
        && function.within_group.is_empty()
        && !function.uses_odbc_syntax
        && matches!(function.parameters, FunctionArguments::None);
    if !plain {
        return Err(unsupported(
            "a function call with FILTER, OVER, WITHIN GROUP or parameters",
        ));
    }
    out.push_str(&function_name(&function.name)?);
    match &function.args {
        FunctionArguments::None => {}
        FunctionArguments::Subquery(_) => return Err(unsupported("a subquery")),
        FunctionArguments::List(list) => {
            if list.duplicate_treatment.is_some() || !list.clauses.is_empty() {
                return Err(unsupported(
                    "DISTINCT, ORDER BY or other clauses in a function call",
                ));
            }
            out.push('(');
            for (i, arg) in list.args.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                let FunctionArg::Unnamed(FunctionArgExpr::Expr(arg)) = arg else {
                    return Err(unsupported("a named or wildcard function argument"));
                };
                write_expr(arg, out)?;
            }
            out.push(')');
        }
    }
    Ok(())
}

/// A function's name: one plain identifier, printed as written (or quoted when it was).
fn function_name(name: &ObjectName) -> Result<String, String> {
    let [ObjectNamePart::Identifier(ident)] = name.0.as_slice() else {
        return Err(unsupported("a qualified function name"));
    };
    name_of(ident, "function name")
}

/// A column name, always quoted.
fn name(ident: &Ident) -> Result<String, String> {
    if ident.quote_style.is_some() {
        return Ok(quote::ident(&ident.value));
    }
    name_of(ident, "name")
}

/// A name as written when it is a plain word (keywords the planner writes, such as a function
/// name), quoted otherwise.
fn name_of(ident: &Ident, what: &str) -> Result<String, String> {
    if ident.quote_style.is_some() {
        return Ok(quote::ident(&ident.value));
    }
    let mut chars = ident.value.chars();
    let plain = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
    if plain {
        Ok(ident.value.clone())
    } else {
        Err(format!("{what} {:?} is not a plain word", ident.value))
    }
}

/// A literal: plain numbers, plain strings (printed by the planner), booleans and NULL. String
/// literals with a prefix or other quoting are refused: write them as plain `'…'` strings.
fn literal(value: &Value) -> Result<String, String> {
    match value {
        Value::Number(text, false) if is_plain_number(text) => Ok(text.clone()),
        Value::SingleQuotedString(text) => Ok(quote::string(text)),
        Value::Boolean(b) => Ok(b.to_string()),
        Value::Null => Ok("NULL".into()),
        Value::Number(text, _) => Err(format!("{text:?} is not a plain number")),
        Value::Placeholder(_) => Err(unsupported("a placeholder")),
        Value::NationalStringLiteral(_) => Err(prefixed("N'…'")),
        Value::HexStringLiteral(_) => Err(prefixed("X'…'")),
        Value::EscapedStringLiteral(_) => Err(prefixed("E'…'")),
        Value::UnicodeStringLiteral(_) => Err(prefixed("U&'…'")),
        Value::DollarQuotedString(_) => Err(prefixed("$$…$$")),
        _ => Err(unsupported("this kind of literal")),
    }
}

fn prefixed(form: &str) -> String {
    format!(
        "the string literal form {form} is not supported in rule expressions: write a plain '…' \
         string (a quote inside is written twice: 'it''s')"
    )
}

/// Digits with at most one decimal point and an optional exponent: what a number literal may
/// hold (no sign: a sign is a unary operator).
fn is_plain_number(text: &str) -> bool {
    let (mantissa, exponent) = match text.find(['e', 'E']) {
        Some(at) => (&text[..at], Some(&text[at + 1..])),
        None => (text, None),
    };
    let digits = mantissa.chars().filter(char::is_ascii_digit).count();
    let points = mantissa.chars().filter(|c| *c == '.').count();
    let mantissa_ok =
        digits > 0 && points <= 1 && mantissa.chars().all(|c| c.is_ascii_digit() || c == '.');
    let exponent_ok = exponent.is_none_or(|e| {
        let e = e.strip_prefix(['+', '-']).unwrap_or(e);
        !e.is_empty() && e.chars().all(|c| c.is_ascii_digit())
    });
    mantissa_ok && exponent_ok
}

fn binary_operator(op: &BinaryOperator) -> Result<&'static str, String> {
    use BinaryOperator as B;
    Ok(match op {
        B::Plus => "+",
        B::Minus => "-",
        B::Multiply => "*",
        B::Divide => "/",
        B::Modulo => "%",
        B::StringConcat => "||",
        B::Gt => ">",
        B::Lt => "<",
        B::GtEq => ">=",
        B::LtEq => "<=",
        B::Eq => "=",
        B::NotEq => "<>",
        B::And => "AND",
        B::Or => "OR",
        other => return Err(unsupported(&format!("the operator {other}"))),
    })
}

/// The SQL name of a type a cast may name: the scalar types DuckDB and PostgreSQL share.
fn data_type_name(ty: &DataType) -> Result<String, String> {
    let sized = |base: &str, size: &Option<u64>| match size {
        Some(n) => format!("{base}({n})"),
        None => base.to_owned(),
    };
    Ok(match ty {
        DataType::Int(size) => sized("INT", size),
        DataType::Integer(size) => sized("INTEGER", size),
        DataType::BigInt(size) => sized("BIGINT", size),
        DataType::SmallInt(size) => sized("SMALLINT", size),
        DataType::Int4(size) => sized("INT4", size),
        DataType::Int8(size) => sized("INT8", size),
        DataType::Real => "REAL".into(),
        DataType::Float4 => "FLOAT4".into(),
        DataType::Float8 => "FLOAT8".into(),
        // PostgreSQL knows no `DOUBLE`: both engines read `DOUBLE PRECISION`.
        DataType::Double(ExactNumberInfo::None) => "DOUBLE PRECISION".into(),
        DataType::DoublePrecision => "DOUBLE PRECISION".into(),
        DataType::Float(ExactNumberInfo::None) => "FLOAT".into(),
        DataType::Numeric(info) => format!("NUMERIC{}", precision(info)),
        DataType::Decimal(info) => format!("DECIMAL{}", precision(info)),
        DataType::Text => "TEXT".into(),
        DataType::Varchar(None) => "VARCHAR".into(),
        DataType::Varchar(Some(CharacterLength::IntegerLength { length, unit: None })) => {
            format!("VARCHAR({length})")
        }
        DataType::Bool => "BOOL".into(),
        DataType::Boolean => "BOOLEAN".into(),
        DataType::Date => "DATE".into(),
        DataType::Timestamp(None, TimezoneInfo::None) => "TIMESTAMP".into(),
        DataType::Timestamp(None, TimezoneInfo::WithTimeZone) => "TIMESTAMP WITH TIME ZONE".into(),
        DataType::Custom(name, modifiers) if modifiers.is_empty() => {
            let type_name = function_name(name)?;
            if type_name.eq_ignore_ascii_case("double") {
                "DOUBLE PRECISION".into()
            } else if ["geometry", "timestamptz", "float"]
                .contains(&type_name.to_ascii_lowercase().as_str())
            {
                type_name
            } else {
                return Err(unsupported(&format!("the type {type_name}")));
            }
        }
        other => return Err(unsupported(&format!("the type {other}"))),
    })
}

fn precision(info: &ExactNumberInfo) -> String {
    match info {
        ExactNumberInfo::None => String::new(),
        ExactNumberInfo::Precision(p) => format!("({p})"),
        ExactNumberInfo::PrecisionAndScale(p, s) => format!("({p}, {s})"),
    }
}
