//! Array literals of real constants, read in one pass by the lexer.
//!
//! Written out element by element, a literal of n numbers would be 2n
//! tokens, n nodes with a span and a type each, and, nested d deep, d
//! nodes whose types are d, d - 1, ... brackets deep: quadratic in d
//! (issue 19). A literal whose elements are all numbers (`1.5`, `-2`,
//! `3e-4`), nested to any depth with every row of a level the same
//! length, is instead read straight from the text into one
//! [`Tok::Reals`](crate::lexer::Tok::Reals) token holding its numbers flat
//! (an f64 each), which the parser makes one `Expr::Reals` node.
//!
//! Anything else is left to the ordinary tokens, which then give exactly
//! the parse, and the errors, that the literal always had: an element that
//! is not a number (`[x]`, `[1 + 2.5]`), rows of different lengths, an
//! empty array, a number the lexer refuses (`1e999`), an integer beyond
//! 2^53 (which an f64 does not hold exactly), or a literal whose
//! numbers are all written as integers (`[1, 2]`: its type may be `[2]Int`,
//! which inference decides). A `-` directly before a number is the number
//! negated, as the parser reads `-2.5` (`Neg` of `2.5`).

use crate::ir::{Reals, Span};
use crate::lexer::{Tok, number_end, real_literal, skip_trivia};
use crate::stack::MAX_DEPTH;

/// The literal starting at the `[` at byte `start`, and the byte after its
/// closing `]`; or, when it is not one, the positions of `[`s the lexer
/// need not try again: those that were open where the scan stopped (the
/// obstacle is inside each of them), and, for a literal of integers only,
/// every `[` in it.
pub(crate) fn scan(text: &str, start: usize) -> Result<(Reals, usize), Vec<usize>> {
    let bytes = text.as_bytes();
    // The open `[`s, outermost first, with the elements each has so far.
    let mut open: Vec<(usize, u64)> = Vec::new();
    // Every `[` seen, for a literal of integers only.
    let mut brackets: Vec<usize> = Vec::new();
    // The length of each level, fixed when its first row closes; the depth
    // of the numbers, fixed by the first one.
    let mut shape: Vec<Option<u64>> = Vec::new();
    let mut leaf_depth: Option<usize> = None;
    let mut data: Vec<f64> = Vec::new();
    let mut any_real = false;
    let fail = |open: &[(usize, u64)]| Err(open.iter().map(|&(p, _)| p).collect());
    let mut pos = start;
    // At an element: `[`, or a number (`-` before it allowed).
    'element: loop {
        pos = skip_trivia(bytes, pos).0;
        if bytes.get(pos) == Some(&b'[') {
            if open.len() >= MAX_DEPTH || leaf_depth.is_some_and(|d| open.len() >= d) {
                return fail(&open);
            }
            open.push((pos, 0));
            brackets.push(pos);
            if shape.len() < open.len() {
                shape.push(None);
            }
            pos += 1;
            continue 'element;
        }
        match number(text, pos) {
            Some((x, real, end)) if leaf_depth.is_none_or(|d| d == open.len()) => {
                leaf_depth = Some(open.len());
                data.push(x);
                any_real |= real;
                pos = end;
            }
            _ => return fail(&open),
        }
        // After an element: `,` and the next, or `]` closing its array.
        loop {
            let Some(top) = open.last_mut() else {
                return fail(&open);
            };
            top.1 += 1;
            pos = skip_trivia(bytes, pos).0;
            match bytes.get(pos) {
                Some(b',') => {
                    pos += 1;
                    continue 'element;
                }
                Some(b']') => {
                    pos += 1;
                    let (_, len) = open.pop().unwrap_or_default();
                    let level = &mut shape[open.len()];
                    if level.is_some_and(|n| n != len) {
                        return fail(&open);
                    }
                    *level = Some(len);
                    if open.is_empty() {
                        break 'element;
                    }
                }
                _ => return fail(&open),
            }
        }
    }
    if !any_real {
        return Err(brackets);
    }
    let shape = shape.into_iter().flatten().collect();
    Ok((
        Reals {
            shape,
            data: data.into(),
        },
        pos,
    ))
}

/// The number at `pos` (optionally negated): its value, whether it is
/// written as a real, and the byte after it; `None` where the ordinary
/// tokens must decide (not a number, or one the lexer refuses).
fn number(text: &str, pos: usize) -> Option<(f64, bool, usize)> {
    let bytes = text.as_bytes();
    let (negated, pos) = if bytes.get(pos) == Some(&b'-') {
        (true, skip_trivia(bytes, pos + 1).0)
    } else {
        (false, pos)
    };
    if !bytes.get(pos).is_some_and(u8::is_ascii_digit) {
        return None;
    }
    let end = number_end(bytes, pos, false);
    if bytes
        .get(end)
        .is_some_and(|&b| b.is_ascii_alphanumeric() || b == b'_' || b == b'\'')
    {
        return None;
    }
    let digits = &text[pos..end];
    let (x, real) = if digits.bytes().all(|b| b.is_ascii_digit()) {
        // Only an integer an f64 holds exactly: a larger one stays an
        // `Int` node, which prints back as written.
        let k = digits.parse::<i64>().ok()?;
        if k.unsigned_abs() > 1 << f64::MANTISSA_DIGITS {
            return None;
        }
        (k as f64, false)
    } else {
        match real_literal(digits, Span::new(pos, end)) {
            Ok(Tok::Real(x)) => (x, true),
            _ => return None,
        }
    };
    Some((if negated { -x } else { x }, real, end))
}
