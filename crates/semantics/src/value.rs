//! Run-time values, their printing in the literal syntax, tolerant
//! comparison and checking against a type.
//!
//! Invariants:
//! - cloning a value is O(1): tuples, arrays and closures are shared
//!   (`Items`, `Rc`) and never mutated after construction;
//! - a value is 16 bytes: a tag and a word (`Items` is one pointer);
//! - `Display` writes the literal syntax of language.md ("Values on the
//!   command line"), and `literal::parse_value` reads every printed
//!   first-order value back to an equal one (reals bit for bit, except the
//!   payload of a NaN); closures print as `<function>`, which does not read
//!   back;
//! - the nesting depth of a value is bounded by the depth of its type.

use std::fmt;
use std::rc::Rc;

use syntax::{ExprId, Ty};

use crate::env::Env;
use crate::items::Items;
use crate::shape::{SizeEnv, ValueError, describe};

/// The default relative tolerance of [`Value::approx_eq_default`] (language.md).
pub const REL_TOL: f64 = 1e-9;
/// The default absolute tolerance of [`Value::approx_eq_default`], for values near zero.
pub const ABS_TOL: f64 = 1e-12;

/// A value of the language.
#[derive(Clone)]
pub enum Value {
    /// `R`: an IEEE f64.
    Real(f64),
    /// `Int`: a 64-bit integer (overflow is a run-time error).
    Int(i64),
    /// `Bool`.
    Bool(bool),
    /// A tuple; the empty tuple is the unit value `()`.
    Tuple(Items),
    /// An array; all elements have the same type.
    Array(Items),
    /// A function value: a lambda of the module being evaluated with the
    /// environment it captured.
    Closure(Rc<Closure>),
}

/// A lambda together with the environment it was evaluated in. Only
/// meaningful with the module whose evaluation produced it.
pub struct Closure {
    /// The `Expr::Lambda` node.
    pub(crate) lambda: ExprId,
    /// The captured environment.
    pub(crate) env: Env,
}

impl Closure {
    /// The lambda node this closure was made from.
    pub fn lambda(&self) -> ExprId {
        self.lambda
    }
}

impl Value {
    /// An array of reals.
    pub fn reals(xs: &[f64]) -> Value {
        Value::Array(Items::from_exact(xs.iter().map(|&x| Value::Real(x))))
    }

    /// The nested arrays of reals a compact literal stands for.
    pub fn from_reals(literal: &syntax::Reals) -> Value {
        fn rows(shape: &[u64], data: &[f64]) -> Value {
            syntax::stack::guard(|| match shape {
                [] | [_] => Value::reals(data),
                [n, inner @ ..] => {
                    // (Total on a malformed literal too: the evaluator does
                    // not panic on an unverified module.)
                    let row = data.len().checked_div(*n as usize).unwrap_or(0);
                    Value::Array(Items::from_exact(
                        data.chunks(row.max(1)).map(|r| rows(inner, r)),
                    ))
                }
            })
        }
        rows(&literal.shape, &literal.data)
    }

    /// An array of the given elements.
    pub fn array(items: Vec<Value>) -> Value {
        Value::Array(items.into())
    }

    /// A tuple of the given components.
    pub fn tuple(items: Vec<Value>) -> Value {
        Value::Tuple(items.into())
    }

    /// The unit value `()`.
    pub fn unit() -> Value {
        Value::Tuple(Items::from(Vec::new()))
    }

    /// The real inside, if this is a real.
    pub fn as_real(&self) -> Option<f64> {
        match self {
            Value::Real(x) => Some(*x),
            _ => None,
        }
    }

    /// The integer inside, if this is an integer.
    pub fn as_int(&self) -> Option<i64> {
        match self {
            Value::Int(i) => Some(*i),
            _ => None,
        }
    }

    /// The boolean inside, if this is a boolean.
    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Value::Bool(b) => Some(*b),
            _ => None,
        }
    }

    /// The elements, if this is an array.
    pub fn as_array(&self) -> Option<&[Value]> {
        match self {
            Value::Array(items) => Some(items),
            _ => None,
        }
    }

    /// The components, if this is a tuple.
    pub fn as_tuple(&self) -> Option<&[Value]> {
        match self {
            Value::Tuple(items) => Some(items),
            _ => None,
        }
    }

    /// What kind of value this is, for messages: `a real`, `an array of 3 elements`.
    pub fn kind(&self) -> String {
        match self {
            Value::Real(_) => "a real".to_string(),
            Value::Int(_) => "an integer".to_string(),
            Value::Bool(_) => "a boolean".to_string(),
            Value::Tuple(items) if items.is_empty() => "the unit value `()`".to_string(),
            Value::Tuple(items) => format!("a {}-tuple", items.len()),
            Value::Array(items) if items.len() == 1 => "an array of 1 element".to_string(),
            Value::Array(items) => format!("an array of {} elements", items.len()),
            Value::Closure(_) => "a function".to_string(),
        }
    }

    /// Equality up to a tolerance on reals: `|a - b| <= abs` or
    /// `|a - b| <= rel * max(|a|, |b|)`. NaN equals NaN, an infinity only
    /// itself, `-0` equals `0`. Integers and booleans compare exactly,
    /// tuples and arrays component-wise (different lengths are unequal),
    /// closures only when they are the same closure.
    pub fn approx_eq(&self, other: &Value, rel: f64, abs: f64) -> bool {
        syntax::stack::guard(|| match (self, other) {
            (Value::Real(a), Value::Real(b)) => reals_close(*a, *b, rel, abs),
            (Value::Int(a), Value::Int(b)) => a == b,
            (Value::Bool(a), Value::Bool(b)) => a == b,
            (Value::Tuple(a), Value::Tuple(b)) | (Value::Array(a), Value::Array(b)) => {
                a.len() == b.len()
                    && a.iter()
                        .zip(b.iter())
                        .all(|(x, y)| x.approx_eq(y, rel, abs))
            }
            (Value::Closure(a), Value::Closure(b)) => Rc::ptr_eq(a, b),
            _ => false,
        })
    }

    /// [`Value::approx_eq`] with the tolerances of language.md
    /// ([`REL_TOL`], [`ABS_TOL`]).
    pub fn approx_eq_default(&self, other: &Value) -> bool {
        self.approx_eq(other, REL_TOL, ABS_TOL)
    }

    /// Checks that this value has type `ty`, with array sizes consistent
    /// within the value (`[n][n]R` must be square).
    pub fn check_ty(&self, ty: &Ty) -> Result<(), ValueError> {
        self.check_input(ty, &mut SizeEnv::new(), None)
    }

    /// Checks that this value has type `ty`, binding and checking size
    /// variables in `sizes`, which is shared by all inputs of one call;
    /// `origin` names the input in messages about sizes.
    pub fn check_input(
        &self,
        ty: &Ty,
        sizes: &mut SizeEnv,
        origin: Option<&str>,
    ) -> Result<(), ValueError> {
        check(self, ty, sizes, origin).map_err(|(mut steps, message)| {
            steps.reverse();
            ValueError::Value {
                path: steps.concat(),
                message,
            }
        })
    }
}

/// Whether two reals are equal up to the tolerances (see [`Value::approx_eq`]).
pub fn reals_close(a: f64, b: f64, rel: f64, abs: f64) -> bool {
    if a.is_nan() || b.is_nan() {
        return a.is_nan() && b.is_nan();
    }
    if a == b {
        return true;
    }
    if a.is_infinite() || b.is_infinite() {
        return false;
    }
    let diff = (a - b).abs();
    diff <= abs || diff <= rel * a.abs().max(b.abs())
}

/// Checks `value` against `ty`. On failure, returns the steps from the
/// offending component up to `value` (innermost first: `[3]`, `.2`) and
/// the message; the path is only built when there is an error.
fn check(
    value: &Value,
    ty: &Ty,
    sizes: &mut SizeEnv,
    origin: Option<&str>,
) -> Result<(), (Vec<String>, String)> {
    syntax::stack::guard(|| match (ty, value) {
        (Ty::Real, Value::Real(_)) | (Ty::Int, Value::Int(_)) | (Ty::Bool, Value::Bool(_)) => {
            Ok(())
        }
        (Ty::Array(size, elem), Value::Array(items)) => {
            sizes
                .check_len(size, elem, items.len(), origin)
                .map_err(|message| (Vec::new(), message))?;
            for (i, item) in items.iter().enumerate() {
                check(item, elem, sizes, origin).map_err(|(mut steps, message)| {
                    steps.push(format!("[{i}]"));
                    (steps, message)
                })?;
            }
            Ok(())
        }
        (Ty::Tuple(tys), Value::Tuple(items)) if tys.len() == items.len() => {
            for (i, (item, ty)) in items.iter().zip(tys).enumerate() {
                check(item, ty, sizes, origin).map_err(|(mut steps, message)| {
                    steps.push(format!(".{}", i + 1));
                    (steps, message)
                })?;
            }
            Ok(())
        }
        // The arity and types of a closure show only when it is applied;
        // the evaluator checks them there.
        (Ty::Func(..), Value::Closure(_)) => Ok(()),
        _ => Err((
            Vec::new(),
            format!("expected {}, found {}", describe(ty), value.kind()),
        )),
    })
}

/// Structural equality; reals compare as IEEE numbers (so NaN is unequal
/// to itself and `-0 == 0`), closures by identity. Use
/// [`Value::approx_eq`] to compare computed results.
impl PartialEq for Value {
    fn eq(&self, other: &Value) -> bool {
        syntax::stack::guard(|| match (self, other) {
            (Value::Real(a), Value::Real(b)) => a == b,
            (Value::Int(a), Value::Int(b)) => a == b,
            (Value::Bool(a), Value::Bool(b)) => a == b,
            (Value::Tuple(a), Value::Tuple(b)) | (Value::Array(a), Value::Array(b)) => {
                a[..] == b[..]
            }
            (Value::Closure(a), Value::Closure(b)) => Rc::ptr_eq(a, b),
            _ => false,
        })
    }
}

impl fmt::Debug for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl fmt::Debug for Closure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "<function {}>", self.lambda)
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        syntax::stack::guard(|| match self {
            Value::Real(x) => f.write_str(&format_real(*x)),
            Value::Int(i) => write!(f, "{i}"),
            Value::Bool(b) => write!(f, "{b}"),
            Value::Tuple(items) => {
                f.write_str("(")?;
                write_list(f, items)?;
                f.write_str(")")
            }
            Value::Array(items) => {
                f.write_str("[")?;
                write_list(f, items)?;
                f.write_str("]")
            }
            Value::Closure(_) => f.write_str("<function>"),
        })
    }
}

fn write_list(f: &mut fmt::Formatter<'_>, items: &[Value]) -> fmt::Result {
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            f.write_str(", ")?;
        }
        fmt::Display::fmt(item, f)?;
    }
    Ok(())
}

/// A real in the shortest form that reads back to the same f64.
///
/// The digits are the shortest round-tripping ones (Rust's `{:e}`); they
/// are written positionally when the decimal exponent is in `-6..21`
/// (`18`, `0.1`, `123.25`, `0.000001`) and in exponent form otherwise
/// (`1e21`, `1.5e-7`, `1e-300`), the same rule as JavaScript's
/// `Number.prototype.toString` but without a `+` in the exponent. Negative
/// zero prints `-0`; the non-finite values print `inf`, `-inf` and `nan`.
pub fn format_real(x: f64) -> String {
    if x.is_nan() {
        return "nan".to_string();
    }
    let sign = if x.is_sign_negative() { "-" } else { "" };
    if x.is_infinite() {
        return format!("{sign}inf");
    }
    let sci = format!("{:e}", x.abs());
    let (mantissa, exp) = sci
        .split_once('e')
        .expect("invariant: `{:e}` of a finite float has an exponent");
    let exp: i32 = exp
        .parse()
        .expect("invariant: `{:e}` writes a decimal exponent");
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let body = if (-6..21).contains(&exp) {
        if exp >= 0 {
            let int_len = exp as usize + 1;
            if digits.len() <= int_len {
                format!("{digits}{}", "0".repeat(int_len - digits.len()))
            } else {
                format!("{}.{}", &digits[..int_len], &digits[int_len..])
            }
        } else {
            format!("0.{}{digits}", "0".repeat((-exp - 1) as usize))
        }
    } else if digits.len() == 1 {
        format!("{digits}e{exp}")
    } else {
        format!("{}.{}e{exp}", &digits[..1], &digits[1..])
    };
    format!("{sign}{body}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shortest_reals() {
        let cases = [
            (18.0, "18"),
            (0.1, "0.1"),
            (-0.5, "-0.5"),
            (1e-300, "1e-300"),
            (1e21, "1e21"),
            (1e20, "100000000000000000000"),
            (123.25, "123.25"),
            (1e-7, "1e-7"),
            (1.5e-7, "1.5e-7"),
            (1e-6, "0.000001"),
            (0.000123, "0.000123"),
            (0.0, "0"),
            (-0.0, "-0"),
            (f64::INFINITY, "inf"),
            (f64::NEG_INFINITY, "-inf"),
            (f64::NAN, "nan"),
            (f64::MAX, "1.7976931348623157e308"),
            (f64::MIN_POSITIVE, "2.2250738585072014e-308"),
            (5e-324, "5e-324"),
            (2.6309780572365025, "2.6309780572365025"),
            (1.0 / 3.0, "0.3333333333333333"),
        ];
        for (x, text) in cases {
            assert_eq!(format_real(x), text, "printing {x:?}");
        }
    }

    #[test]
    fn composite_values_print_in_literal_syntax() {
        let v = Value::tuple(vec![Value::Int(1), Value::reals(&[2.0, 3.5])]);
        assert_eq!(v.to_string(), "(1, [2, 3.5])");
        let m = Value::array(vec![Value::reals(&[1.0, 2.0]), Value::reals(&[3.0, 4.0])]);
        assert_eq!(m.to_string(), "[[1, 2], [3, 4]]");
        assert_eq!(Value::unit().to_string(), "()");
        assert_eq!(Value::array(vec![]).to_string(), "[]");
        assert_eq!(Value::Bool(true).to_string(), "true");
    }

    #[test]
    fn tolerant_comparison() {
        let a = Value::Real(1.0);
        assert!(a.approx_eq_default(&Value::Real(1.0 + 1e-10)));
        assert!(!a.approx_eq_default(&Value::Real(1.0 + 1e-8)));
        assert!(Value::Real(0.0).approx_eq_default(&Value::Real(1e-13)));
        assert!(!Value::Real(0.0).approx_eq_default(&Value::Real(1e-11)));
        assert!(Value::Real(f64::NAN).approx_eq_default(&Value::Real(f64::NAN)));
        assert!(!Value::Real(f64::NAN).approx_eq_default(&Value::Real(0.0)));
        assert!(Value::Real(f64::INFINITY).approx_eq_default(&Value::Real(f64::INFINITY)));
        assert!(!Value::Real(f64::INFINITY).approx_eq_default(&Value::Real(f64::MAX)));
        assert!(!Value::Real(1.0).approx_eq_default(&Value::Int(1)));
        assert!(!Value::reals(&[1.0]).approx_eq_default(&Value::reals(&[1.0, 2.0])));
        assert!(Value::reals(&[1.0, 2.0]).approx_eq(&Value::reals(&[1.1, 2.0]), 0.1, 0.0));
    }

    #[test]
    fn structural_equality_is_ieee() {
        assert_eq!(Value::reals(&[1.0, -0.0]), Value::reals(&[1.0, 0.0]));
        assert_ne!(Value::Real(f64::NAN), Value::Real(f64::NAN));
        assert_ne!(Value::Int(1), Value::Real(1.0));
    }

    #[test]
    fn check_ty_reports_the_path() {
        let ty = Ty::Tuple(vec![Ty::Real, Ty::array(syntax::Size::Lit(2), Ty::Real)]);
        let good = Value::tuple(vec![Value::Real(1.0), Value::reals(&[2.0, 3.0])]);
        assert_eq!(good.check_ty(&ty), Ok(()));
        let bad = Value::tuple(vec![
            Value::Real(1.0),
            Value::array(vec![Value::Real(2.0), Value::Bool(true)]),
        ]);
        let err = bad.check_ty(&ty).expect_err("a boolean in a real array");
        assert_eq!(
            err.to_string(),
            "at .2[1]: expected a real, found a boolean"
        );
        let short = Value::tuple(vec![Value::Real(1.0), Value::reals(&[2.0])]);
        let err = short.check_ty(&ty).expect_err("one element short");
        assert_eq!(
            err.to_string(),
            "at .2: expected an array of 2 reals, found 1 element"
        );
    }

    #[test]
    fn square_matrices_bind_one_variable() {
        let n = || syntax::Size::Var(syntax::Name::new("n"), 0);
        let ty = Ty::array(n(), Ty::array(n(), Ty::Real));
        let square = Value::array(vec![Value::reals(&[1.0, 2.0]), Value::reals(&[3.0, 4.0])]);
        assert_eq!(square.check_ty(&ty), Ok(()));
        let wide = Value::array(vec![
            Value::reals(&[1.0, 2.0, 3.0]),
            Value::reals(&[3.0, 4.0, 5.0]),
        ]);
        assert!(wide.check_ty(&ty).is_err());
    }
}
