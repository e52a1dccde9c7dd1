//! GISPulse's expression language: pandas `query`/`eval` syntax (Python expressions over
//! columns), parsed into [`PyExpr`] and compiled into the planner's checked SQL expression
//! ([`crate::expr::SqlExpr`]) with pandas' semantics. The text is never evaluated: what the
//! compiler does not know is refused with a message naming the construct.

mod compile;
mod lexer;
mod parser;

pub use compile::{compile, half_to_even};
pub use parser::parse;

/// The most nodes one expression may hold: parsing and compiling grow with it.
pub const MAX_NODES: usize = 2_000;

/// A parsed pandas expression.
#[derive(Debug, Clone, PartialEq)]
pub enum PyExpr {
    /// A column (a bare name, or a backtick-quoted one).
    Name(String),
    /// `@name`: a variable of the run.
    Variable(String),
    /// An integer or decimal literal, as written.
    Number(String),
    Str(String),
    Bool(bool),
    /// `None`, `nan`, `NaN`.
    Missing,
    /// `[a, b]` or `(a, b)`.
    List(Vec<PyExpr>),
    Unary(Unary, Box<PyExpr>),
    Binary(Binary, Box<PyExpr>, Box<PyExpr>),
    /// `and` / `&`, `or` / `|` (pandas gives `&` and `|` the precedence of `and` and `or`).
    Logical(Logical, Box<PyExpr>, Box<PyExpr>),
    /// `a < b <= c`: a chain of comparisons.
    Compare(Box<PyExpr>, Vec<(Comparison, PyExpr)>),
    /// `a if condition else b`.
    IfElse {
        then: Box<PyExpr>,
        condition: Box<PyExpr>,
        otherwise: Box<PyExpr>,
    },
    /// `receiver.name`.
    Attribute(Box<PyExpr>, String),
    /// `callee(args, name=value)`.
    Call {
        callee: Box<PyExpr>,
        args: Vec<PyExpr>,
        keywords: Vec<(String, PyExpr)>,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unary {
    Minus,
    Plus,
    /// `not` or `~`.
    Not,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Binary {
    Add,
    Subtract,
    Multiply,
    Divide,
    FloorDivide,
    Modulo,
    Power,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Logical {
    And,
    Or,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Comparison {
    Equal,
    NotEqual,
    Less,
    LessOrEqual,
    Greater,
    GreaterOrEqual,
    In,
    NotIn,
}
