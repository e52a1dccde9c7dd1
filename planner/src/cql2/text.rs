//! The CQL2 text encoding, read into the same tree as the JSON one: comparisons, `LIKE`,
//! `BETWEEN`, `IN`, `IS NULL`, `AND`/`OR`/`NOT`, the `S_*` spatial functions with WKT or
//! `BBOX(...)` literals.

use super::{COMPARISONS, Expr, MAX_NESTING, Operand, SPATIAL, too_deep};

#[derive(Debug, Clone, PartialEq)]
enum Token {
    Word(String),
    Quoted(String),
    Text(String),
    Number(f64),
    Symbol(&'static str),
    Wkt(String),
}

const GEOMETRY_TYPES: [&str; 7] = [
    "POINT",
    "LINESTRING",
    "POLYGON",
    "MULTIPOINT",
    "MULTILINESTRING",
    "MULTIPOLYGON",
    "GEOMETRYCOLLECTION",
];

fn tokens(text: &str) -> Result<Vec<Token>, String> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
        } else if c == '\'' || c == '"' {
            let mut value = String::new();
            i += 1;
            loop {
                match chars.get(i) {
                    None => return Err(format!("unclosed {c} quote")),
                    Some(&q) if q == c && chars.get(i + 1) == Some(&c) => {
                        value.push(c);
                        i += 2;
                    }
                    Some(&q) if q == c => {
                        i += 1;
                        break;
                    }
                    Some(&other) => {
                        value.push(other);
                        i += 1;
                    }
                }
            }
            out.push(if c == '\'' {
                Token::Text(value)
            } else {
                Token::Quoted(value)
            });
        } else if c.is_ascii_digit()
            || (c == '-' && chars.get(i + 1).is_some_and(char::is_ascii_digit))
            || c == '.'
        {
            let start = i;
            i += 1;
            while i < chars.len()
                && (chars[i].is_ascii_digit()
                    || matches!(chars[i], '.' | 'e' | 'E')
                    || (matches!(chars[i], '+' | '-') && matches!(chars[i - 1], 'e' | 'E')))
            {
                i += 1;
            }
            let number: String = chars[start..i].iter().collect();
            out.push(Token::Number(
                number
                    .parse()
                    .map_err(|_| format!("{number} is not a number"))?,
            ));
        } else if c.is_alphabetic() || c == '_' {
            let start = i;
            while i < chars.len()
                && (chars[i].is_alphanumeric() || chars[i] == '_' || chars[i] == '.')
            {
                i += 1;
            }
            let word: String = chars[start..i].iter().collect();
            let upper = word.to_ascii_uppercase();
            let mut j = i;
            while j < chars.len() && chars[j].is_whitespace() {
                j += 1;
            }
            if GEOMETRY_TYPES.contains(&upper.as_str()) && chars.get(j) == Some(&'(') {
                let mut depth = 0;
                let mut end = j;
                while end < chars.len() {
                    match chars[end] {
                        '(' => depth += 1,
                        ')' => {
                            depth -= 1;
                            if depth == 0 {
                                break;
                            }
                        }
                        _ => {}
                    }
                    end += 1;
                }
                if depth != 0 {
                    return Err(format!("{upper}: unbalanced parentheses"));
                }
                let body: String = chars[j..=end].iter().collect();
                if !body
                    .chars()
                    .all(|c| c.is_ascii_digit() || " \t\n(),.-+eE".contains(c))
                {
                    return Err(format!("{upper}{body} is not a WKT geometry"));
                }
                out.push(Token::Wkt(format!("{upper}{body}")));
                i = end + 1;
            } else {
                out.push(Token::Word(word));
            }
        } else {
            let two: String = chars[i..(i + 2).min(chars.len())].iter().collect();
            let symbol = match (two.as_str(), c) {
                ("<>", _) => "<>",
                ("<=", _) => "<=",
                (">=", _) => ">=",
                (_, '<') => "<",
                (_, '>') => ">",
                (_, '=') => "=",
                (_, '(') => "(",
                (_, ')') => ")",
                (_, ',') => ",",
                _ => return Err(format!("unexpected character {c:?}")),
            };
            i += symbol.len();
            out.push(Token::Symbol(symbol));
        }
    }
    Ok(out)
}

struct Parser {
    tokens: Vec<Token>,
    at: usize,
    /// Open parentheses and `NOT`s around the token at `at`.
    depth: usize,
}

impl Parser {
    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.at)
    }

    fn next(&mut self) -> Option<Token> {
        let token = self.tokens.get(self.at).cloned();
        self.at += 1;
        token
    }

    fn keyword(&mut self, word: &str) -> bool {
        if matches!(self.peek(), Some(Token::Word(w)) if w.eq_ignore_ascii_case(word)) {
            self.at += 1;
            true
        } else {
            false
        }
    }

    fn symbol(&mut self, symbol: &str) -> Result<(), String> {
        match self.next() {
            Some(Token::Symbol(s)) if s == symbol => Ok(()),
            other => Err(format!("expected {symbol:?}, found {other:?}")),
        }
    }

    fn or(&mut self) -> Result<Expr, String> {
        let mut parts = vec![self.and()?];
        while self.keyword("OR") {
            parts.push(self.and()?);
        }
        Ok(if parts.len() == 1 {
            parts.remove(0)
        } else {
            Expr::Or(parts)
        })
    }

    fn and(&mut self) -> Result<Expr, String> {
        let mut parts = vec![self.not()?];
        while self.keyword("AND") {
            parts.push(self.not()?);
        }
        Ok(if parts.len() == 1 {
            parts.remove(0)
        } else {
            Expr::And(parts)
        })
    }

    /// One level deeper, refused past [`MAX_NESTING`].
    fn descend(&mut self) -> Result<(), String> {
        self.depth += 1;
        if self.depth > MAX_NESTING {
            return Err(too_deep());
        }
        Ok(())
    }

    fn not(&mut self) -> Result<Expr, String> {
        if self.keyword("NOT") {
            self.descend()?;
            let inner = self.not()?;
            self.depth -= 1;
            return Ok(Expr::Not(Box::new(inner)));
        }
        self.predicate()
    }

    fn predicate(&mut self) -> Result<Expr, String> {
        if matches!(self.peek(), Some(Token::Symbol("("))) {
            self.at += 1;
            self.descend()?;
            let inner = self.or()?;
            self.symbol(")")?;
            self.depth -= 1;
            return Ok(inner);
        }
        if let Some(Token::Word(word)) = self.peek() {
            let lower = word.to_ascii_lowercase();
            if SPATIAL.iter().any(|(name, _)| *name == lower) {
                self.at += 1;
                self.symbol("(")?;
                let a = self.operand()?;
                self.symbol(",")?;
                let b = self.operand()?;
                self.symbol(")")?;
                return Ok(Expr::Spatial(lower, a, b));
            }
        }
        let left = self.operand()?;
        if let Operand::Boolean(b) = left
            && !matches!(self.peek(), Some(Token::Symbol(_)) | Some(Token::Word(_)))
        {
            return Ok(Expr::Literal(b));
        }
        let negated = self.keyword("NOT");
        let expr = if self.keyword("LIKE") {
            Expr::Like(left, self.operand()?)
        } else if self.keyword("BETWEEN") {
            let low = self.operand()?;
            if !self.keyword("AND") {
                return Err("BETWEEN needs AND".into());
            }
            Expr::Between(left, low, self.operand()?)
        } else if self.keyword("IN") {
            self.symbol("(")?;
            let mut list = vec![self.operand()?];
            while matches!(self.peek(), Some(Token::Symbol(","))) {
                self.at += 1;
                list.push(self.operand()?);
            }
            self.symbol(")")?;
            Expr::In(left, list)
        } else if !negated && self.keyword("IS") {
            let not_null = self.keyword("NOT");
            if !self.keyword("NULL") {
                return Err("IS needs NULL".into());
            }
            let is_null = Expr::IsNull(left);
            return Ok(if not_null {
                Expr::Not(Box::new(is_null))
            } else {
                is_null
            });
        } else if !negated {
            match self.next() {
                Some(Token::Symbol(op)) if COMPARISONS.contains(&op) => {
                    Expr::Compare(op.to_owned(), left, self.operand()?)
                }
                other => return Err(format!("expected a comparison, found {other:?}")),
            }
        } else {
            return Err("NOT must be followed by LIKE, BETWEEN or IN here".into());
        };
        Ok(if negated {
            Expr::Not(Box::new(expr))
        } else {
            expr
        })
    }

    fn operand(&mut self) -> Result<Operand, String> {
        match self.next() {
            Some(Token::Number(n)) => Ok(Operand::Number(n)),
            Some(Token::Text(t)) => Ok(Operand::Text(t)),
            Some(Token::Quoted(name)) => Ok(Operand::Property(name)),
            Some(Token::Wkt(wkt)) => Ok(Operand::Wkt(wkt)),
            Some(Token::Word(word)) if word.eq_ignore_ascii_case("TRUE") => {
                Ok(Operand::Boolean(true))
            }
            Some(Token::Word(word)) if word.eq_ignore_ascii_case("FALSE") => {
                Ok(Operand::Boolean(false))
            }
            Some(Token::Word(word)) if word.eq_ignore_ascii_case("BBOX") => {
                self.symbol("(")?;
                let mut numbers = Vec::new();
                loop {
                    match self.next() {
                        Some(Token::Number(n)) => numbers.push(n),
                        other => return Err(format!("BBOX takes numbers, found {other:?}")),
                    }
                    if matches!(self.peek(), Some(Token::Symbol(","))) {
                        self.at += 1;
                    } else {
                        break;
                    }
                }
                self.symbol(")")?;
                let [a, b, c, d] = numbers.as_slice() else {
                    return Err("BBOX takes four numbers".into());
                };
                Ok(Operand::Bbox([*a, *b, *c, *d]))
            }
            Some(Token::Word(word)) => Ok(Operand::Property(word)),
            other => Err(format!("expected a value or a property, found {other:?}")),
        }
    }
}

/// Reads the CQL2 text encoding.
pub fn parse(text: &str) -> Result<Expr, String> {
    let mut parser = Parser {
        tokens: tokens(text)?,
        at: 0,
        depth: 0,
    };
    let expr = parser.or()?;
    match parser.peek() {
        None => Ok(expr),
        Some(extra) => Err(format!("unexpected {extra:?} after the expression")),
    }
}

#[cfg(test)]
mod tests {
    use super::parse;
    use crate::cql2::{Target, to_sql};
    use crate::sql::dialect::Dialect;

    #[test]
    fn text_filters_read_like_their_json_twins() {
        let columns = vec![
            "name".to_owned(),
            "pop_est".to_owned(),
            "continent".to_owned(),
        ];
        let target = Target {
            columns: &columns,
            geometry_sql: "g",
            dialect: Dialect::Duckdb,
        };
        let sql = |text: &str| to_sql(&parse(text).unwrap(), &target).unwrap();
        assert_eq!(
            sql("pop_est > 1e8 AND continent IN ('Asia', 'Africa')"),
            "(\"pop_est\" > 100000000.0) AND (\"continent\" IN ('Asia', 'Africa'))"
        );
        assert_eq!(
            sql("NOT name LIKE 'B%' OR pop_est BETWEEN 1 AND 2"),
            "(NOT (\"name\" LIKE 'B%')) OR (\"pop_est\" BETWEEN 1.0 AND 2.0)"
        );
        assert_eq!(
            sql("S_INTERSECTS(geometry, POLYGON((0 0, 1 0, 1 1, 0 0)))"),
            "ST_Intersects(g, ST_GeomFromText('POLYGON((0 0, 1 0, 1 1, 0 0))'))"
        );
        assert_eq!(sql("name IS NOT NULL"), "NOT (\"name\" IS NULL)");
        assert_eq!(
            sql("s_within(geom, BBOX(-10, 35, 30, 60))"),
            "ST_Within(g, ST_MakeEnvelope(-10.0, 35.0, 30.0, 60.0))"
        );
        for bad in [
            "pop_est >",
            "name = 'open",
            "POLYGON((0 0; DROP))",
            "a = 1 b",
            "x ~ 2",
        ] {
            assert!(parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn nesting_is_limited() {
        let nested = |depth: usize| format!("{}a = 1{}", "(".repeat(depth), ")".repeat(depth));
        assert!(parse(&nested(super::MAX_NESTING)).is_ok());
        let deep = parse(&nested(super::MAX_NESTING + 1)).unwrap_err();
        assert!(deep.contains("depth limit"), "{deep}");
        assert!(
            parse(&"NOT ".repeat(100_000))
                .unwrap_err()
                .contains("depth limit")
        );
        assert!(
            parse(&"(".repeat(100_000))
                .unwrap_err()
                .contains("depth limit")
        );
    }
}
