//! Tokens of a pandas expression: Python's numbers, strings, names, backtick-quoted names,
//! `@variables` and operators.

/// One token.
#[derive(Debug, Clone, PartialEq)]
pub enum Token {
    Name(String),
    /// A backtick-quoted column name.
    Quoted(String),
    Variable(String),
    Number(String),
    Str(String),
    /// An operator or a bracket, as written (`**`, `//`, `<=`, `(`, ...).
    Symbol(&'static str),
}

const SYMBOLS: &[&str] = &[
    "**", "//", "==", "!=", "<=", ">=", "<", ">", "+", "-", "*", "/", "%", "(", ")", "[", "]", ",",
    ".", "&", "|", "~", "=",
];

/// The tokens of `text`, or what cannot be read and where.
pub fn tokens(text: &str) -> Result<Vec<Token>, String> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
        } else if c.is_ascii_digit()
            || (c == '.' && chars.get(i + 1).is_some_and(char::is_ascii_digit))
        {
            let (token, next) = number(&chars, i)?;
            out.push(token);
            i = next;
        } else if c == '_' || c.is_alphabetic() {
            let start = i;
            while i < chars.len() && (chars[i] == '_' || chars[i].is_alphanumeric()) {
                i += 1;
            }
            out.push(Token::Name(chars[start..i].iter().collect()));
        } else if c == '@' {
            let start = i + 1;
            i = start;
            while i < chars.len() && (chars[i] == '_' || chars[i].is_alphanumeric()) {
                i += 1;
            }
            if i == start {
                return Err(format!("`@` at {start} is not followed by a variable name"));
            }
            out.push(Token::Variable(chars[start..i].iter().collect()));
        } else if c == '`' {
            let end = chars[i + 1..]
                .iter()
                .position(|&d| d == '`')
                .ok_or_else(|| format!("the backtick at {i} is not closed"))?;
            out.push(Token::Quoted(chars[i + 1..i + 1 + end].iter().collect()));
            i += end + 2;
        } else if c == '\'' || c == '"' {
            let (value, next) = string(&chars, i)?;
            out.push(Token::Str(value));
            i = next;
        } else if let Some(symbol) = symbol_at(&chars[i..]) {
            out.push(Token::Symbol(symbol));
            i += symbol.len();
        } else {
            return Err(format!("unexpected character {c:?} at {i}"));
        }
    }
    Ok(out)
}

/// The longest operator `rest` starts with.
fn symbol_at(rest: &[char]) -> Option<&'static str> {
    let head: String = rest.iter().take(2).collect();
    SYMBOLS.iter().copied().find(|s| head.starts_with(s))
}

fn number(chars: &[char], start: usize) -> Result<(Token, usize), String> {
    let mut i = start;
    let digits = |i: &mut usize| {
        while *i < chars.len() && (chars[*i].is_ascii_digit() || chars[*i] == '_') {
            *i += 1;
        }
    };
    digits(&mut i);
    if chars.get(i) == Some(&'.') {
        i += 1;
        digits(&mut i);
    }
    if matches!(chars.get(i), Some('e' | 'E')) {
        let mut j = i + 1;
        if matches!(chars.get(j), Some('+' | '-')) {
            j += 1;
        }
        if chars.get(j).is_some_and(char::is_ascii_digit) {
            i = j;
            digits(&mut i);
        }
    }
    if chars
        .get(i)
        .is_some_and(|c| c.is_alphanumeric() || *c == '_')
    {
        return Err(format!("malformed number at {start}"));
    }
    let text: String = chars[start..i].iter().filter(|c| **c != '_').collect();
    Ok((Token::Number(text), i))
}

fn string(chars: &[char], start: usize) -> Result<(String, usize), String> {
    let quote = chars[start];
    let mut value = String::new();
    let mut i = start + 1;
    while i < chars.len() {
        match chars[i] {
            c if c == quote => return Ok((value, i + 1)),
            '\\' => {
                let escaped = chars
                    .get(i + 1)
                    .ok_or_else(|| format!("the string at {start} is not closed"))?;
                value.push(match escaped {
                    'n' => '\n',
                    't' => '\t',
                    other => *other,
                });
                i += 2;
            }
            c => {
                value.push(c);
                i += 1;
            }
        }
    }
    Err(format!("the string at {start} is not closed"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_every_kind_of_token() {
        let found = tokens("`pop est` >= 1e6 and name != 'it\\'s' ** @x // 2").unwrap();
        assert_eq!(
            found,
            vec![
                Token::Quoted("pop est".into()),
                Token::Symbol(">="),
                Token::Number("1e6".into()),
                Token::Name("and".into()),
                Token::Name("name".into()),
                Token::Symbol("!="),
                Token::Str("it's".into()),
                Token::Symbol("**"),
                Token::Variable("x".into()),
                Token::Symbol("//"),
                Token::Number("2".into()),
            ]
        );
    }

    #[test]
    fn refuses_what_it_cannot_read() {
        assert!(tokens("a ; b").is_err());
        assert!(tokens("'open").is_err());
        assert!(tokens("`open").is_err());
        assert!(tokens("12abc").is_err());
        assert!(tokens("@").is_err());
    }
}
