//! A recursive-descent parser of pandas expressions, with Python's precedence except that `&`
//! and `|` bind like `and` and `or` (as pandas' `query` reads them). Bounded in nodes and depth.

use super::lexer::{Token, tokens};
use super::{Binary, Comparison, Logical, MAX_NODES, PyExpr, Unary};

/// A call's positional and keyword arguments.
type Arguments = (Vec<PyExpr>, Vec<(String, PyExpr)>);

/// The deepest nesting accepted (brackets, unary operators, chained calls).
const MAX_DEPTH: usize = 64;

/// Parses one expression; the error names what was unexpected.
pub fn parse(text: &str) -> Result<PyExpr, String> {
    if text.trim().is_empty() {
        return Err("the expression is empty".into());
    }
    let mut parser = Parser {
        tokens: tokens(text)?,
        at: 0,
        nodes: 0,
        depth: 0,
    };
    let expr = parser.expression()?;
    match parser.peek() {
        None => Ok(expr),
        Some(token) => Err(format!(
            "unexpected {} after the expression",
            describe(token)
        )),
    }
}

struct Parser {
    tokens: Vec<Token>,
    at: usize,
    nodes: usize,
    depth: usize,
}

fn describe(token: &Token) -> String {
    match token {
        Token::Name(n) | Token::Quoted(n) => format!("name `{n}`"),
        Token::Variable(n) => format!("variable `@{n}`"),
        Token::Number(n) => format!("number {n}"),
        Token::Str(s) => format!("string {s:?}"),
        Token::Symbol(s) => format!("`{s}`"),
    }
}

impl Parser {
    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.at)
    }

    fn peek_symbol(&self, symbol: &str) -> bool {
        matches!(self.peek(), Some(Token::Symbol(s)) if *s == symbol)
    }

    fn peek_keyword(&self, keyword: &str) -> bool {
        matches!(self.peek(), Some(Token::Name(n)) if n == keyword)
    }

    fn eat_symbol(&mut self, symbol: &str) -> bool {
        let found = self.peek_symbol(symbol);
        self.at += usize::from(found);
        found
    }

    fn eat_keyword(&mut self, keyword: &str) -> bool {
        let found = self.peek_keyword(keyword);
        self.at += usize::from(found);
        found
    }

    fn expect_symbol(&mut self, symbol: &str) -> Result<(), String> {
        if self.eat_symbol(symbol) {
            return Ok(());
        }
        Err(match self.peek() {
            Some(token) => format!("expected `{symbol}`, found {}", describe(token)),
            None => format!("expected `{symbol}` at the end"),
        })
    }

    /// Counts a node, refusing past [`MAX_NODES`].
    fn node(&mut self, expr: PyExpr) -> Result<PyExpr, String> {
        self.nodes += 1;
        if self.nodes > MAX_NODES {
            return Err(format!("the expression has more than {MAX_NODES} parts"));
        }
        Ok(expr)
    }

    fn nested<T>(
        &mut self,
        parse: impl FnOnce(&mut Self) -> Result<T, String>,
    ) -> Result<T, String> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(format!(
                "the expression nests deeper than {MAX_DEPTH} levels"
            ));
        }
        let result = parse(self);
        self.depth -= 1;
        result
    }

    fn expression(&mut self) -> Result<PyExpr, String> {
        self.nested(|p| {
            let then = p.or()?;
            if !p.eat_keyword("if") {
                return Ok(then);
            }
            let condition = p.or()?;
            if !p.eat_keyword("else") {
                return Err("`if` without `else`".into());
            }
            let otherwise = p.expression()?;
            p.node(PyExpr::IfElse {
                then: Box::new(then),
                condition: Box::new(condition),
                otherwise: Box::new(otherwise),
            })
        })
    }

    fn or(&mut self) -> Result<PyExpr, String> {
        let mut left = self.and()?;
        while self.eat_keyword("or") || self.eat_symbol("|") {
            let right = self.and()?;
            left = self.node(PyExpr::Logical(
                Logical::Or,
                Box::new(left),
                Box::new(right),
            ))?;
        }
        Ok(left)
    }

    fn and(&mut self) -> Result<PyExpr, String> {
        let mut left = self.not()?;
        while self.eat_keyword("and") || self.eat_symbol("&") {
            let right = self.not()?;
            left = self.node(PyExpr::Logical(
                Logical::And,
                Box::new(left),
                Box::new(right),
            ))?;
        }
        Ok(left)
    }

    fn not(&mut self) -> Result<PyExpr, String> {
        if self.eat_keyword("not") {
            let inner = self.nested(Self::not)?;
            return self.node(PyExpr::Unary(Unary::Not, Box::new(inner)));
        }
        self.comparison()
    }

    fn comparison_operator(&mut self) -> Option<Comparison> {
        let found = match self.peek() {
            Some(Token::Symbol("==")) => Comparison::Equal,
            Some(Token::Symbol("!=")) => Comparison::NotEqual,
            Some(Token::Symbol("<")) => Comparison::Less,
            Some(Token::Symbol("<=")) => Comparison::LessOrEqual,
            Some(Token::Symbol(">")) => Comparison::Greater,
            Some(Token::Symbol(">=")) => Comparison::GreaterOrEqual,
            Some(Token::Name(n)) if n == "in" => Comparison::In,
            Some(Token::Name(n))
                if n == "not"
                    && matches!(self.tokens.get(self.at + 1), Some(Token::Name(m)) if m == "in") =>
            {
                self.at += 1;
                Comparison::NotIn
            }
            _ => return None,
        };
        self.at += 1;
        Some(found)
    }

    fn comparison(&mut self) -> Result<PyExpr, String> {
        let first = self.sum()?;
        let mut chain = Vec::new();
        while let Some(op) = self.comparison_operator() {
            chain.push((op, self.sum()?));
        }
        if self.peek_keyword("is") {
            return Err("`is` comparisons are not supported: use `.isnull()` or `==`".into());
        }
        if chain.is_empty() {
            Ok(first)
        } else {
            self.node(PyExpr::Compare(Box::new(first), chain))
        }
    }

    fn sum(&mut self) -> Result<PyExpr, String> {
        let mut left = self.term()?;
        loop {
            let op = if self.eat_symbol("+") {
                Binary::Add
            } else if self.eat_symbol("-") {
                Binary::Subtract
            } else {
                return Ok(left);
            };
            let right = self.term()?;
            left = self.node(PyExpr::Binary(op, Box::new(left), Box::new(right)))?;
        }
    }

    fn term(&mut self) -> Result<PyExpr, String> {
        let mut left = self.factor()?;
        loop {
            let op = if self.eat_symbol("*") {
                Binary::Multiply
            } else if self.eat_symbol("//") {
                Binary::FloorDivide
            } else if self.eat_symbol("/") {
                Binary::Divide
            } else if self.eat_symbol("%") {
                Binary::Modulo
            } else {
                return Ok(left);
            };
            let right = self.factor()?;
            left = self.node(PyExpr::Binary(op, Box::new(left), Box::new(right)))?;
        }
    }

    fn factor(&mut self) -> Result<PyExpr, String> {
        let op = if self.eat_symbol("-") {
            Unary::Minus
        } else if self.eat_symbol("+") {
            Unary::Plus
        } else if self.eat_symbol("~") {
            Unary::Not
        } else {
            return self.power();
        };
        let inner = self.nested(Self::factor)?;
        self.node(PyExpr::Unary(op, Box::new(inner)))
    }

    fn power(&mut self) -> Result<PyExpr, String> {
        let base = self.postfix()?;
        if self.eat_symbol("**") {
            let exponent = self.nested(Self::factor)?;
            return self.node(PyExpr::Binary(
                Binary::Power,
                Box::new(base),
                Box::new(exponent),
            ));
        }
        Ok(base)
    }

    fn postfix(&mut self) -> Result<PyExpr, String> {
        let mut expr = self.atom()?;
        loop {
            if self.eat_symbol(".") {
                let Some(Token::Name(name)) = self.peek().cloned() else {
                    return Err("expected a name after `.`".into());
                };
                self.at += 1;
                expr = self.node(PyExpr::Attribute(Box::new(expr), name))?;
            } else if self.eat_symbol("(") {
                let (args, keywords) = self.nested(Self::arguments)?;
                expr = self.node(PyExpr::Call {
                    callee: Box::new(expr),
                    args,
                    keywords,
                })?;
            } else if self.peek_symbol("[") {
                return Err("indexing (`[...]`) is not supported".into());
            } else {
                return Ok(expr);
            }
        }
    }

    /// The arguments of a call, after its `(`, through its `)`.
    fn arguments(&mut self) -> Result<Arguments, String> {
        let mut args = Vec::new();
        let mut keywords = Vec::new();
        while !self.eat_symbol(")") {
            if let (Some(Token::Name(name)), Some(Token::Symbol("="))) =
                (self.peek().cloned(), self.tokens.get(self.at + 1))
            {
                self.at += 2;
                keywords.push((name, self.expression()?));
            } else if keywords.is_empty() {
                args.push(self.expression()?);
            } else {
                return Err("a positional argument after a keyword argument".into());
            }
            if !self.eat_symbol(",") {
                self.expect_symbol(")")?;
                break;
            }
        }
        Ok((args, keywords))
    }

    fn atom(&mut self) -> Result<PyExpr, String> {
        let Some(token) = self.peek().cloned() else {
            return Err("the expression ends too early".into());
        };
        self.at += 1;
        let expr = match token {
            Token::Number(n) => PyExpr::Number(n),
            Token::Str(mut s) => {
                // Adjacent string literals concatenate, as in Python.
                while let Some(Token::Str(next)) = self.peek() {
                    s.push_str(next);
                    self.at += 1;
                }
                PyExpr::Str(s)
            }
            Token::Quoted(name) => PyExpr::Name(name),
            Token::Variable(name) => PyExpr::Variable(name),
            Token::Name(name) => match name.as_str() {
                "True" | "true" => PyExpr::Bool(true),
                "False" | "false" => PyExpr::Bool(false),
                "None" | "nan" | "NaN" => PyExpr::Missing,
                "and" | "or" | "not" | "in" | "is" | "if" | "else" | "lambda" => {
                    return Err(format!("unexpected keyword `{name}`"));
                }
                _ => PyExpr::Name(name),
            },
            Token::Symbol("(") => return self.nested(|p| p.bracketed(")")),
            Token::Symbol("[") => {
                let items = self.nested(|p| p.items("]"))?;
                PyExpr::List(items)
            }
            Token::Symbol(symbol) => return Err(format!("unexpected `{symbol}`")),
        };
        self.node(expr)
    }

    /// After `(`: a parenthesised expression, or a tuple when it holds a comma.
    fn bracketed(&mut self, close: &str) -> Result<PyExpr, String> {
        if self.eat_symbol(close) {
            return self.node(PyExpr::List(Vec::new()));
        }
        let first = self.expression()?;
        if self.eat_symbol(close) {
            return Ok(first);
        }
        self.expect_symbol(",")?;
        let mut items = vec![first];
        items.extend(self.items(close)?);
        self.node(PyExpr::List(items))
    }

    /// Comma-separated expressions up to and including `close` (a trailing comma allowed).
    fn items(&mut self, close: &str) -> Result<Vec<PyExpr>, String> {
        let mut items = Vec::new();
        while !self.eat_symbol(close) {
            items.push(self.expression()?);
            if !self.eat_symbol(",") {
                self.expect_symbol(close)?;
                break;
            }
        }
        Ok(items)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name(n: &str) -> Box<PyExpr> {
        Box::new(PyExpr::Name(n.into()))
    }

    #[test]
    fn ampersand_binds_like_and_below_comparisons() {
        let parsed = parse("a > 1 & b == 'x' | c").unwrap();
        let PyExpr::Logical(Logical::Or, left, right) = parsed else {
            panic!("{parsed:?}")
        };
        assert_eq!(right, name("c"));
        assert!(matches!(*left, PyExpr::Logical(Logical::And, _, _)));
    }

    #[test]
    fn arithmetic_follows_python_precedence() {
        let parsed = parse("-a ** 2 + b * 3").unwrap();
        let PyExpr::Binary(Binary::Add, left, _) = parsed else {
            panic!()
        };
        let PyExpr::Unary(Unary::Minus, power) = *left else {
            panic!()
        };
        assert!(matches!(*power, PyExpr::Binary(Binary::Power, _, _)));
    }

    #[test]
    fn chains_calls_lists_and_membership() {
        let parsed = parse("name.str.contains('a', case=False) and x not in [1, 2]").unwrap();
        let PyExpr::Logical(Logical::And, left, right) = parsed else {
            panic!()
        };
        assert!(matches!(*left, PyExpr::Call { ref keywords, .. } if keywords.len() == 1));
        let PyExpr::Compare(_, chain) = *right else {
            panic!()
        };
        assert_eq!(chain[0].0, Comparison::NotIn);
        assert!(matches!(chain[0].1, PyExpr::List(ref items) if items.len() == 2));
    }

    #[test]
    fn refuses_what_is_not_an_expression() {
        for text in [
            "",
            "a >",
            "(a",
            "a b",
            "x[0]",
            "a is None",
            "lambda: 1",
            "f(a=1, 2)",
        ] {
            assert!(parse(text).is_err(), "{text}");
        }
        let deep = format!("{}1{}", "(".repeat(200), ")".repeat(200));
        assert!(parse(&deep).unwrap_err().contains("deeper"));
        let long = vec!["a"; 3000].join(" + ");
        assert!(parse(&long).unwrap_err().contains("parts"));
    }
}
