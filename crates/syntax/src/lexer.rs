//! The lexer: program text → tokens with byte spans.
//!
//! Lexical rules (language.md, "Lexical"; docs/language.md, "Syntax
//! decisions"): `--` starts a comment to the end of the line; identifiers
//! are `[A-Za-z_][A-Za-z0-9_']*`; the keywords are `def let in if then else
//! fun true false with`; numbers are `digits ('.' digits)? ([eE] [+-]? digits)?`,
//! and a number without point or exponent is an integer.
//!
//! Invariants of the output:
//! - tokens are in text order, their spans do not overlap, and the last
//!   token is [`Tok::Eof`] with an empty span at the end of the text;
//! - every token records whether whitespace or a comment precedes it (the
//!   parser tells indexing `a[i]` from application to an array `f [1, 2]`);
//! - directly after a `.` a number is read as digits only, so that `p.1.2`
//!   is two projections and never the real `1.2`.

use crate::error::Error;
use crate::fxhash::FxHashSet;
use crate::ir::{Reals, Span};
use crate::reals;

/// A token's kind and payload.
#[derive(Debug, Clone, PartialEq)]
pub enum Tok {
    /// An identifier that is not a keyword.
    Ident(String),
    /// An integer literal, as its digits (its range is checked by the user:
    /// an expression needs an `i64`, a size a `u64`).
    Int(String),
    /// A real literal (it has a point or an exponent).
    Real(f64),
    /// An array literal of real constants, nested to any depth, with at
    /// least one number written with a point or an exponent (`[1.5, 2]`,
    /// `[[1, -2.5], [3, 4]]`): read as one token, so that its numbers cost
    /// an f64 each (`crate::reals`).
    Reals(Box<Reals>),
    /// `def`
    Def,
    /// `let`
    Let,
    /// `in`
    In,
    /// `if`
    If,
    /// `then`
    Then,
    /// `else`
    Else,
    /// `fun`
    Fun,
    /// `true`
    True,
    /// `false`
    False,
    /// `with`, which attaches a derivative rule to a definition
    With,
    /// `(`
    LParen,
    /// `)`
    RParen,
    /// `[`
    LBracket,
    /// `]`
    RBracket,
    /// `,`
    Comma,
    /// `:`
    Colon,
    /// `.`
    Dot,
    /// `=`
    Eq,
    /// `->`
    Arrow,
    /// `+`
    Plus,
    /// `-`
    Minus,
    /// `*`
    Star,
    /// `/`
    Slash,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
    /// `==`
    EqEq,
    /// `!=`
    Ne,
    /// `&&`
    AndAnd,
    /// `||`
    OrOr,
    /// The end of the text.
    Eof,
}

impl Tok {
    /// The fixed text of a keyword or punctuation token ("" for the others).
    pub fn symbol(&self) -> &'static str {
        match self {
            Tok::Def => "def",
            Tok::Let => "let",
            Tok::In => "in",
            Tok::If => "if",
            Tok::Then => "then",
            Tok::Else => "else",
            Tok::Fun => "fun",
            Tok::True => "true",
            Tok::False => "false",
            Tok::With => "with",
            Tok::LParen => "(",
            Tok::RParen => ")",
            Tok::LBracket => "[",
            Tok::RBracket => "]",
            Tok::Comma => ",",
            Tok::Colon => ":",
            Tok::Dot => ".",
            Tok::Eq => "=",
            Tok::Arrow => "->",
            Tok::Plus => "+",
            Tok::Minus => "-",
            Tok::Star => "*",
            Tok::Slash => "/",
            Tok::Lt => "<",
            Tok::Le => "<=",
            Tok::Gt => ">",
            Tok::Ge => ">=",
            Tok::EqEq => "==",
            Tok::Ne => "!=",
            Tok::AndAnd => "&&",
            Tok::OrOr => "||",
            Tok::Ident(_) | Tok::Int(_) | Tok::Real(_) | Tok::Reals(_) | Tok::Eof => "",
        }
    }
}

/// A token with its place in the text.
#[derive(Debug, Clone, PartialEq)]
pub struct Token {
    /// What it is.
    pub tok: Tok,
    /// Where it is.
    pub span: Span,
    /// Whether whitespace, a comment or the start of the text precedes it.
    pub space_before: bool,
}

/// The keyword spelled `word`, if it is one.
fn keyword(word: &str) -> Option<Tok> {
    Some(match word {
        "def" => Tok::Def,
        "let" => Tok::Let,
        "in" => Tok::In,
        "if" => Tok::If,
        "then" => Tok::Then,
        "else" => Tok::Else,
        "fun" => Tok::Fun,
        "true" => Tok::True,
        "false" => Tok::False,
        "with" => Tok::With,
        _ => return None,
    })
}

/// Whether `word` is a keyword, which no identifier may be.
pub fn is_keyword(word: &str) -> bool {
    keyword(word).is_some()
}

fn is_ident_start(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_'
}

fn is_ident_continue(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'\''
}

/// Splits `text` into tokens, ending with [`Tok::Eof`].
pub fn lex(text: &str) -> Result<Vec<Token>, Error> {
    let bytes = text.as_bytes();
    let mut out: Vec<Token> = Vec::new();
    // A byte-order mark some editors write is not part of the program.
    let mut pos = if text.starts_with('\u{feff}') { 3 } else { 0 };
    let mut space_before = true;
    // The `[`s known not to start a literal of real constants (below).
    let mut not_reals = FxHashSet::default();
    loop {
        let (next, skipped) = skip_trivia(bytes, pos);
        pos = next;
        space_before |= skipped;
        if pos >= bytes.len() {
            break;
        }
        let b = bytes[pos];
        let start = pos;
        let after_dot = matches!(out.last(), Some(t) if t.tok == Tok::Dot);
        // `[1.5, 2]` (but not the index of `a[2.5]`) is one token.
        if b == b'['
            && (space_before || !out.last().is_some_and(|t| ends_operand(&t.tok)))
            && !not_reals.remove(&pos)
        {
            {
                match reals::scan(text, pos) {
                    Ok((literal, end)) => {
                        out.push(Token {
                            tok: Tok::Reals(Box::new(literal)),
                            span: Span::new(start, end),
                            space_before,
                        });
                        space_before = false;
                        pos = end;
                        continue;
                    }
                    Err(brackets) => not_reals.extend(brackets),
                }
                not_reals.remove(&pos);
            }
        }
        let tok = if is_ident_start(b) {
            while pos < bytes.len() && is_ident_continue(bytes[pos]) {
                pos += 1;
            }
            let word = &text[start..pos];
            keyword(word).unwrap_or_else(|| Tok::Ident(word.to_string()))
        } else if b.is_ascii_digit() {
            pos = number_end(bytes, pos, after_dot);
            if pos < bytes.len() && is_ident_continue(bytes[pos]) {
                let mut end = pos;
                while end < bytes.len() && is_ident_continue(bytes[end]) {
                    end += 1;
                }
                return Err(Error::Syntax {
                    span: Span::new(start, end),
                    message: format!("invalid number `{}`", &text[start..end]),
                });
            }
            let digits = &text[start..pos];
            if digits.bytes().all(|b| b.is_ascii_digit()) {
                Tok::Int(digits.to_string())
            } else {
                real_literal(digits, Span::new(start, pos))?
            }
        } else {
            let next = bytes.get(pos + 1).copied();
            let (tok, len) = match (b, next) {
                (b'-', Some(b'>')) => (Tok::Arrow, 2),
                (b'<', Some(b'=')) => (Tok::Le, 2),
                (b'>', Some(b'=')) => (Tok::Ge, 2),
                (b'=', Some(b'=')) => (Tok::EqEq, 2),
                (b'!', Some(b'=')) => (Tok::Ne, 2),
                (b'&', Some(b'&')) => (Tok::AndAnd, 2),
                (b'|', Some(b'|')) => (Tok::OrOr, 2),
                (b'(', _) => (Tok::LParen, 1),
                (b')', _) => (Tok::RParen, 1),
                (b'[', _) => (Tok::LBracket, 1),
                (b']', _) => (Tok::RBracket, 1),
                (b',', _) => (Tok::Comma, 1),
                (b':', _) => (Tok::Colon, 1),
                (b'.', _) => (Tok::Dot, 1),
                (b'=', _) => (Tok::Eq, 1),
                (b'+', _) => (Tok::Plus, 1),
                (b'-', _) => (Tok::Minus, 1),
                (b'*', _) => (Tok::Star, 1),
                (b'/', _) => (Tok::Slash, 1),
                (b'<', _) => (Tok::Lt, 1),
                (b'>', _) => (Tok::Gt, 1),
                _ => {
                    let ch = text[start..].chars().next().unwrap_or('\u{fffd}');
                    return Err(Error::Syntax {
                        span: Span::new(start, start + ch.len_utf8()),
                        message: format!("unexpected character `{}`", ch.escape_debug()),
                    });
                }
            };
            pos += len;
            tok
        };
        out.push(Token {
            tok,
            span: Span::new(start, pos),
            space_before,
        });
        space_before = false;
    }
    out.push(Token {
        tok: Tok::Eof,
        span: Span::new(text.len(), text.len()),
        space_before,
    });
    Ok(out)
}

/// Skips whitespace and `--` comments from `pos`: where the next token
/// starts, and whether anything was skipped.
pub(crate) fn skip_trivia(bytes: &[u8], mut pos: usize) -> (usize, bool) {
    let start = pos;
    while pos < bytes.len() {
        if bytes[pos].is_ascii_whitespace() {
            pos += 1;
        } else if bytes[pos] == b'-' && bytes.get(pos + 1) == Some(&b'-') {
            while pos < bytes.len() && bytes[pos] != b'\n' {
                pos += 1;
            }
        } else {
            break;
        }
    }
    (pos, pos > start)
}

/// Whether a token can end an operand, so that a `[` right after it (no
/// space between) is an index, `a[2]`, and never the start of a literal.
fn ends_operand(tok: &Tok) -> bool {
    matches!(
        tok,
        Tok::Ident(_)
            | Tok::Int(_)
            | Tok::Real(_)
            | Tok::Reals(_)
            | Tok::True
            | Tok::False
            | Tok::RParen
            | Tok::RBracket
    )
}

/// The end of the number starting at `pos`. After a `.` only digits are
/// read (a tuple index).
pub(crate) fn number_end(bytes: &[u8], mut pos: usize, digits_only: bool) -> usize {
    let digit_at = |i: usize| bytes.get(i).is_some_and(u8::is_ascii_digit);
    while digit_at(pos) {
        pos += 1;
    }
    if digits_only {
        return pos;
    }
    if bytes.get(pos) == Some(&b'.') && digit_at(pos + 1) {
        pos += 1;
        while digit_at(pos) {
            pos += 1;
        }
    }
    if matches!(bytes.get(pos), Some(b'e' | b'E')) {
        let mut exp = pos + 1;
        if matches!(bytes.get(exp), Some(b'+' | b'-')) {
            exp += 1;
        }
        if digit_at(exp) {
            pos = exp;
            while digit_at(pos) {
                pos += 1;
            }
        }
    }
    pos
}

/// The value of a real literal; one too large for an f64 is an error.
pub(crate) fn real_literal(text: &str, span: Span) -> Result<Tok, Error> {
    match text.parse::<f64>() {
        Ok(x) if x.is_finite() => Ok(Tok::Real(x)),
        _ => Err(Error::Syntax {
            span,
            message: format!("real literal `{text}` is too large for an f64"),
        }),
    }
}
