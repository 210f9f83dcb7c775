//! Reading values in the literal syntax (language.md, "Values on the
//! command line"), typed by the type they are expected to have.
//!
//! Grammar (whitespace is allowed between tokens):
//! ```text
//! value ::= real | int | `true` | `false`
//!         | `[` (value (`,` value)*)? `]`          array
//!         | `(` `)` | `(` value (`,` value)+ `)`   unit, tuple
//!         | `(` value `)`                          grouping (non-tuple types)
//! int   ::= `-`? digits
//! real  ::= `-`? digits (`.` digits)? ([eE] [+-]? digits)? | `-`? `inf` | `nan`
//! ```
//! The expected type decides how a literal reads: `3` is a real where `R`
//! is expected and an integer where `Int` is; `2.5` is never an integer.
//! Reals are converted with correct rounding (Rust's `f64::from_str`), so
//! whatever `value::format_real` prints reads back to the same f64. As in
//! programs, a literal too large for an f64 (`1e400`) is an error and one
//! too small reads as zero; infinities are written `inf`, `-inf`.
//!
//! Invariants: never panics; the recursion follows the expected type, so
//! its depth is bounded by the type's; every error carries the 1-based
//! column where the offending literal starts.

use syntax::Ty;

use crate::shape::{SizeEnv, ValueError, describe};
use crate::value::Value;

/// Reads `text` as a value of type `ty`. Size variables are bound within
/// this one value only.
pub fn parse_value(text: &str, ty: &Ty) -> Result<Value, ValueError> {
    parse_input(text, ty, &mut SizeEnv::new(), None)
}

/// Reads `text` as a value of type `ty`, binding and checking size
/// variables in `sizes` (shared by all inputs of one call); `origin` names
/// the input in messages about sizes.
pub fn parse_input(
    text: &str,
    ty: &Ty,
    sizes: &mut SizeEnv,
    origin: Option<&str>,
) -> Result<Value, ValueError> {
    let mut p = Reader {
        chars: text.chars().collect(),
        pos: 0,
        sizes,
        origin,
    };
    let value = p.value(ty)?;
    p.skip_ws();
    if p.pos < p.chars.len() {
        return Err(p.error_here(format!("unexpected {} after the value", p.found())));
    }
    Ok(value)
}

struct Reader<'a> {
    chars: Vec<char>,
    pos: usize,
    sizes: &'a mut SizeEnv,
    origin: Option<&'a str>,
}

impl Reader<'_> {
    fn error_at(&self, pos: usize, message: String) -> ValueError {
        ValueError::Text {
            column: pos + 1,
            message,
        }
    }

    fn error_here(&self, message: String) -> ValueError {
        self.error_at(self.pos, message)
    }

    fn skip_ws(&mut self) {
        while self.chars.get(self.pos).is_some_and(|c| c.is_whitespace()) {
            self.pos += 1;
        }
    }

    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    /// The token at the current position, for messages: `` `abc` ``, `` `[` ``,
    /// or `the end of the text`.
    fn found(&self) -> String {
        let Some(c) = self.peek() else {
            return "the end of the text".to_string();
        };
        if is_word_char(c) || c == '-' || c == '.' {
            let end = self.word_end(self.pos + 1);
            let word: String = self.chars[self.pos..end].iter().collect();
            format!("`{word}`")
        } else {
            format!("`{c}`")
        }
    }

    /// One past the last character of the number or word starting before `from`.
    fn word_end(&self, mut from: usize) -> usize {
        while let Some(&c) = self.chars.get(from) {
            let sign_in_exponent = (c == '+' || c == '-')
                && from > 0
                && matches!(self.chars[from - 1], 'e' | 'E')
                && self.chars[..from - 1]
                    .last()
                    .is_some_and(|d| d.is_ascii_digit() || *d == '.');
            if is_word_char(c) || c == '.' || sign_in_exponent {
                from += 1;
            } else {
                break;
            }
        }
        from
    }

    fn expect_char(&mut self, want: char, what: &str) -> Result<(), ValueError> {
        self.skip_ws();
        if self.peek() == Some(want) {
            self.pos += 1;
            Ok(())
        } else {
            Err(self.error_here(format!("expected {what}, found {}", self.found())))
        }
    }

    fn value(&mut self, ty: &Ty) -> Result<Value, ValueError> {
        syntax::stack::guard(|| {
            self.skip_ws();
            let start = self.pos;
            if self.peek() == Some('(') && !matches!(ty, Ty::Tuple(_)) {
                // A parenthesised value of a non-tuple type: `(-0.5)`.
                self.pos += 1;
                let v = self.value(ty)?;
                self.expect_char(')', "`)`")?;
                return Ok(v);
            }
            match ty {
                Ty::Real => self.real(),
                Ty::Int => self.int(),
                Ty::Bool => self.boolean(),
                Ty::Array(size, elem) => {
                    if self.peek() != Some('[') {
                        return Err(self.mismatch(ty));
                    }
                    self.pos += 1;
                    let mut items = Vec::new();
                    self.skip_ws();
                    if self.peek() == Some(']') {
                        self.pos += 1;
                    } else {
                        loop {
                            items.push(self.value(elem)?);
                            self.skip_ws();
                            match self.peek() {
                                Some(',') => self.pos += 1,
                                Some(']') => {
                                    self.pos += 1;
                                    break;
                                }
                                _ => {
                                    return Err(self.error_here(format!(
                                        "expected `,` or `]`, found {}",
                                        self.found()
                                    )));
                                }
                            }
                        }
                    }
                    self.sizes
                        .check_len(size, elem, items.len(), self.origin)
                        .map_err(|message| self.error_at(start, message))?;
                    Ok(Value::array(items))
                }
                Ty::Tuple(tys) => {
                    if self.peek() != Some('(') {
                        return Err(self.mismatch(ty));
                    }
                    self.pos += 1;
                    let mut items = Vec::with_capacity(tys.len());
                    for (i, item_ty) in tys.iter().enumerate() {
                        if i > 0 {
                            self.skip_ws();
                            if self.peek() == Some(')') {
                                return Err(self.error_at(
                                    start,
                                    format!(
                                        "expected {}, found a tuple of {i} component{}",
                                        describe(ty),
                                        if i == 1 { "" } else { "s" }
                                    ),
                                ));
                            }
                            self.expect_char(',', "`,`")?;
                        }
                        items.push(self.value(item_ty)?);
                    }
                    self.skip_ws();
                    if self.peek() == Some(',') {
                        return Err(self.error_at(
                            start,
                            format!("expected {}, found more components", describe(ty)),
                        ));
                    }
                    self.expect_char(')', "`)`")?;
                    Ok(Value::tuple(items))
                }
                Ty::Func(..) => Err(self.error_here(format!(
                    "expected {}, which cannot be written as a value",
                    describe(ty)
                ))),
            }
        })
    }

    fn mismatch(&self, ty: &Ty) -> ValueError {
        self.error_here(format!("expected {}, found {}", describe(ty), self.found()))
    }

    fn real(&mut self) -> Result<Value, ValueError> {
        let start = self.pos;
        let negative = self.peek() == Some('-');
        let body = if negative { start + 1 } else { start };
        let end = self.word_end(body);
        let word: String = self.chars[body..end].iter().collect();
        let x = match word.as_str() {
            "inf" => f64::INFINITY,
            "nan" => f64::NAN,
            _ if is_decimal(&word) => {
                let x = word
                    .parse::<f64>()
                    .map_err(|e| self.error_at(start, format!("malformed real `{word}`: {e}")))?;
                if x.is_infinite() {
                    return Err(self.error_at(
                        start,
                        format!("real `{word}` is too large for an f64 (write `inf` for infinity)"),
                    ));
                }
                x
            }
            _ => return Err(self.mismatch(&Ty::Real)),
        };
        self.pos = end;
        Ok(Value::Real(if negative { -x } else { x }))
    }

    fn int(&mut self) -> Result<Value, ValueError> {
        let start = self.pos;
        let body = if self.peek() == Some('-') {
            start + 1
        } else {
            start
        };
        let end = self.word_end(body);
        let word: String = self.chars[start..end].iter().collect();
        if end == body || !self.chars[body..end].iter().all(char::is_ascii_digit) {
            return Err(self.mismatch(&Ty::Int));
        }
        let i = word.parse::<i64>().map_err(|_| {
            self.error_at(
                start,
                format!("integer `{word}` is out of range (64-bit integers)"),
            )
        })?;
        self.pos = end;
        Ok(Value::Int(i))
    }

    fn boolean(&mut self) -> Result<Value, ValueError> {
        let end = self.word_end(self.pos);
        let word: String = self.chars[self.pos..end].iter().collect();
        let b = match word.as_str() {
            "true" => true,
            "false" => false,
            _ => return Err(self.mismatch(&Ty::Bool)),
        };
        self.pos = end;
        Ok(Value::Bool(b))
    }
}

fn is_word_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// `digits ('.' digits)? ([eE] [+-]? digits)?`
fn is_decimal(word: &str) -> bool {
    let b = word.as_bytes();
    let mut i = 0;
    let digits = |i: &mut usize| {
        let from = *i;
        while b.get(*i).is_some_and(u8::is_ascii_digit) {
            *i += 1;
        }
        *i > from
    };
    if !digits(&mut i) {
        return false;
    }
    if b.get(i) == Some(&b'.') {
        i += 1;
        if !digits(&mut i) {
            return false;
        }
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        if !digits(&mut i) {
            return false;
        }
    }
    i == b.len()
}

#[cfg(test)]
mod tests {
    use super::*;
    use syntax::{Name, Size};

    fn arr(size: Size, elem: Ty) -> Ty {
        Ty::array(size, elem)
    }

    fn err_text(text: &str, ty: &Ty) -> String {
        parse_value(text, ty)
            .expect_err("the text should be refused")
            .to_string()
    }

    #[test]
    fn scalars() {
        assert_eq!(parse_value("3", &Ty::Real), Ok(Value::Real(3.0)));
        assert_eq!(parse_value(" -0.5 ", &Ty::Real), Ok(Value::Real(-0.5)));
        assert_eq!(parse_value("-2.5e-3", &Ty::Real), Ok(Value::Real(-2.5e-3)));
        assert_eq!(parse_value("1E+3", &Ty::Real), Ok(Value::Real(1000.0)));
        assert_eq!(parse_value("3", &Ty::Int), Ok(Value::Int(3)));
        assert_eq!(parse_value("-7", &Ty::Int), Ok(Value::Int(-7)));
        assert_eq!(parse_value("true", &Ty::Bool), Ok(Value::Bool(true)));
        assert_eq!(parse_value("(-2)", &Ty::Real), Ok(Value::Real(-2.0)));
        assert_eq!(
            parse_value("-inf", &Ty::Real),
            Ok(Value::Real(f64::NEG_INFINITY))
        );
        let nan = parse_value("nan", &Ty::Real).expect("nan reads");
        assert!(nan.as_real().is_some_and(f64::is_nan));
        let negzero = parse_value("-0", &Ty::Real).expect("-0 reads");
        assert!(
            negzero
                .as_real()
                .is_some_and(|x| x == 0.0 && x.is_sign_negative())
        );
    }

    #[test]
    fn composites() {
        let m = arr(Size::Lit(2), arr(Size::Lit(2), Ty::Real));
        assert_eq!(
            parse_value("[[1, 2], [3, 4]]", &m).map(|v| v.to_string()),
            Ok("[[1, 2], [3, 4]]".to_string())
        );
        let t = Ty::Tuple(vec![Ty::Int, arr(Size::Dyn, Ty::Real)]);
        assert_eq!(
            parse_value("(1, [2, 3])", &t),
            Ok(Value::tuple(vec![Value::Int(1), Value::reals(&[2.0, 3.0])]))
        );
        assert_eq!(parse_value("( )", &Ty::Tuple(vec![])), Ok(Value::unit()));
        assert_eq!(
            parse_value("[]", &arr(Size::Dyn, Ty::Real)),
            Ok(Value::array(vec![]))
        );
    }

    #[test]
    fn errors_give_the_column() {
        assert_eq!(
            err_text("2.5", &Ty::Int),
            "column 1: expected an integer, found `2.5`"
        );
        assert_eq!(
            err_text("[1, 2, 3]", &arr(Size::Lit(4), Ty::Real)),
            "column 1: expected an array of 4 reals, found 3 elements"
        );
        assert_eq!(
            err_text("[1, true]", &arr(Size::Dyn, Ty::Real)),
            "column 5: expected a real, found `true`"
        );
        assert_eq!(
            err_text("[1 2]", &arr(Size::Dyn, Ty::Real)),
            "column 4: expected `,` or `]`, found `2`"
        );
        assert_eq!(
            err_text("(1)", &Ty::Tuple(vec![Ty::Real, Ty::Real])),
            "column 1: expected a pair, found a tuple of 1 component"
        );
        assert_eq!(
            err_text("(1, 2, 3)", &Ty::Tuple(vec![Ty::Real, Ty::Real])),
            "column 1: expected a pair, found more components"
        );
        assert_eq!(
            err_text("1 2", &Ty::Real),
            "column 3: unexpected `2` after the value"
        );
        assert_eq!(
            err_text("", &Ty::Real),
            "column 1: expected a real, found the end of the text"
        );
        assert_eq!(
            err_text("1.", &Ty::Real),
            "column 1: expected a real, found `1.`"
        );
        assert_eq!(
            err_text("infinity", &Ty::Real),
            "column 1: expected a real, found `infinity`"
        );
        assert_eq!(
            err_text("99999999999999999999", &Ty::Int),
            "column 1: integer `99999999999999999999` is out of range (64-bit integers)"
        );
        assert_eq!(
            err_text("[1, 2]", &Ty::Real),
            "column 1: expected a real, found `[`"
        );
    }

    #[test]
    fn sizes_are_shared_between_inputs() {
        let n = || Size::Var(Name::new("n"), 0);
        let mut sizes = SizeEnv::new();
        let a = parse_input("[1, 2, 3, 4]", &arr(n(), Ty::Real), &mut sizes, Some("A"));
        assert!(a.is_ok());
        let b = parse_input("[1, 2, 3]", &arr(n(), Ty::Real), &mut sizes, Some("B"));
        assert_eq!(
            b.expect_err("3 is not 4").to_string(),
            "column 1: expected an array of 4 reals (n = 4, as in `A`), found 3 elements"
        );
    }
}
