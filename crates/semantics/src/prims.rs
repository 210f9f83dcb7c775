//! The builtins: scalar arithmetic, comparisons and logic, and the array
//! builtins of language.md, applied to already evaluated operands.
//!
//! Chosen meanings (docs/semantics.md has the rationale):
//! - reals are IEEE f64 with no error ever (`log 0 = -inf`, `sqrt (-1) =
//!   nan`, `1 / 0 = inf`); `max`/`min` return the other operand when one is
//!   NaN (C's `fmax`/`fmin`); `pow` is `f64::powf` (C's `pow`); the
//!   real primitives, the Target-only derivative ones (`d1pow`, ...)
//!   included, are `syntax::derivatives::eval`;
//! - `Int` arithmetic (`+ - *`, negation, `abs`, `max`, `min`) is checked:
//!   overflow is an error, never a wrap; `/` on `Int` floors and `mod`
//!   takes the divisor's sign (`syntax::derivatives::eval_int`), division
//!   by zero is an error; `pow` is real-only; `floor`, `ceil`, `round` and
//!   `trunc` of a real with no `Int` value (NaN, infinite, out of range)
//!   are errors;
//! - `reduce f z A` and `foldl f z A` are the left fold
//!   `f(...f(f(z, a1), a2)..., an)`;
//! - `scanl f z A = [z, f(z, a1), f(f(z, a1), a2), ...]` (n+1 elements),
//!   `scanr f z A = [f(a1, f(a2, ... f(an, z))), ..., f(an, z), z]`;
//! - `shift1L` drops the first element, `shift1R` the last, both map `[]`
//!   to `[]`;
//! - `build n f = [f 0, ..., f (n-1)]` and `ifold f z n =
//!   f(...f(f(z, 0), 1)..., n-1)`; a negative `n` is an error for both.
//!
//! Invariants: never panics; an operand of the wrong type gives
//! `Error::Type` with the builtin's span; the number of operands has been
//! checked against `Prim::arity` by the caller, and is checked again here.

use crate::items::Items;

use syntax::derivatives::{self, Sig, Undefined};
use syntax::{Prim, Span};

use crate::error::Error;
use crate::eval::Evaluator;
use crate::value::Value;

/// Applies builtin `op` to its evaluated operands.
pub(crate) fn apply_prim(
    ctx: &Evaluator<'_>,
    op: Prim,
    args: &[Value],
    span: Span,
) -> Result<Value, Error> {
    // The function operand must be a function even when it is never
    // applied (an empty array, a zero count).
    if let Some(f) = op
        .function_args()
        .iter()
        .filter_map(|&i| args.get(i))
        .find(|f| !matches!(f, Value::Closure(_)))
        && !op.is_derivative_construct()
    {
        return Err(wrong(op, "a function", f, span));
    }
    if let Some(r) = discrete(op, args, span) {
        return r;
    }
    if let Some(r) = crate::hist::apply(op, args, span) {
        return r;
    }
    match (op, args) {
        (Prim::Neg | Prim::Abs, [a]) => int_or_real_unary(op, a, span),
        (_, [a]) if derivatives::sig(op) == Some(Sig::Real) => {
            let x = real(op, a, span)?;
            Ok(Value::Real(real_op(op, &[x])))
        }
        (Prim::Not, [a]) => Ok(Value::Bool(!boolean(op, a, span)?)),
        (_, [a, b]) if derivatives::sig(op).is_some() => arith(op, a, b, span),
        (Prim::Lt | Prim::Le | Prim::Gt | Prim::Ge | Prim::Eq | Prim::Ne, [a, b]) => {
            compare(op, a, b, span).map(Value::Bool)
        }
        (Prim::And, [a, b]) => Ok(Value::Bool(boolean(op, a, span)? && boolean(op, b, span)?)),
        (Prim::Or, [a, b]) => Ok(Value::Bool(boolean(op, a, span)? || boolean(op, b, span)?)),
        // The value of a function with derivative rules is its body's
        // (the rules are for the routes that differentiate).
        (Prim::WithRules, [f, _, _, point]) => {
            let n = match f {
                Value::Closure(c) => match ctx.m.expr(c.lambda()) {
                    syntax::Expr::Lambda { params, .. } => params.len(),
                    _ => 0,
                },
                _ => 0,
            };
            match point {
                _ if n == 1 => ctx.apply(f, std::slice::from_ref(point), span),
                Value::Tuple(items) if items.len() == n => ctx.apply(f, items, span),
                _ => Err(wrong(op, "a function and its point", point, span)),
            }
        }
        (Prim::Map, [f, a]) => {
            let a = array(op, a, span)?;
            generate(op, a.len(), span, |i| {
                ctx.apply(f, std::slice::from_ref(&a[i]), span)
            })
        }
        (Prim::Map2, [f, a, b]) => {
            let a = array(op, a, span)?;
            let b = array(op, b, span)?;
            if a.len() != b.len() {
                return Err(Error::SizeMismatch {
                    span,
                    op,
                    left: a.len(),
                    right: b.len(),
                });
            }
            generate(op, a.len(), span, |i| {
                ctx.apply(f, &[a[i].clone(), b[i].clone()], span)
            })
        }
        (Prim::Reduce | Prim::Foldl, [f, z, a]) => {
            let a = array(op, a, span)?;
            let mut acc = z.clone();
            for x in a {
                acc = ctx.apply(f, &[acc, x.clone()], span)?;
            }
            Ok(acc)
        }
        (Prim::Scanl, [f, z, a]) => {
            let a = array(op, a, span)?;
            let mut acc = z.clone();
            generate(op, a.len() + 1, span, |i| {
                if i > 0 {
                    acc = ctx.apply(f, &[acc.clone(), a[i - 1].clone()], span)?;
                }
                Ok(acc.clone())
            })
        }
        (Prim::Scanr, [f, z, a]) => {
            let a = array(op, a, span)?;
            let mut out = alloc(op, a.len() + 1, span)?;
            let mut acc = z.clone();
            for x in a.iter().rev() {
                let next = ctx.apply(f, &[x.clone(), acc.clone()], span)?;
                out.push(std::mem::replace(&mut acc, next));
            }
            out.push(acc);
            out.reverse();
            finish(op, out, span)
        }
        (Prim::Shift1L, [a]) => {
            let a = array(op, a, span)?;
            copy(op, a.get(1..).unwrap_or(&[]), span)
        }
        (Prim::Shift1R, [a]) => {
            let a = array(op, a, span)?;
            copy(op, &a[..a.len().saturating_sub(1)], span)
        }
        (Prim::Length, [a]) => {
            let a = array(op, a, span)?;
            i64::try_from(a.len())
                .map(Value::Int)
                .map_err(|_| Error::Overflow { span, op })
        }
        (Prim::Build, [n, f]) => {
            let n = count(op, n, span)?;
            generate(op, n, span, |i| ctx.apply(f, &[Value::Int(i as i64)], span))
        }
        (Prim::Ifold, [f, z, n]) => {
            let n = count(op, n, span)?;
            let mut acc = z.clone();
            for i in 0..n {
                acc = ctx.apply(f, &[acc, Value::Int(i as i64)], span)?;
            }
            Ok(acc)
        }
        (Prim::While, [c, b, z]) => while_loop(ctx, op, c, b, z, span).map(|(s, _)| s),
        (Prim::Trips, [c, b, z]) => {
            let (_, n) = while_loop(ctx, op, c, b, z, span)?;
            i64::try_from(n)
                .map(Value::Int)
                .map_err(|_| Error::Overflow { span, op })
        }
        (op, _) if op.is_derivative_construct() => Err(Error::NotExpanded { span, op }),
        _ => Err(Error::Internal {
            span,
            message: format!("`{op}` takes {} operands, given {}", op.arity(), args.len()),
        }),
    }
}

/// The table's operations that involve `Int` and are not ring arithmetic:
/// `real`, `floor`, `ceil`, `round`, `trunc`, and `/` and `mod` on `Int`
/// (`syntax::derivatives::{to_real, to_int, eval_int}`, the one definition
/// of each), or `None` for another primitive or operands of other types.
/// Shared with the UNF evaluator.
pub(crate) fn discrete(op: Prim, args: &[Value], span: Span) -> Option<Result<Value, Error>> {
    let undefined = |u: Undefined| match u {
        Undefined::DivisionByZero => Error::DivisionByZero { span, op },
        Undefined::Overflow => Error::Overflow { span, op },
        Undefined::NotAnInt => Error::NotAnInt { span, op },
    };
    Some(match (derivatives::sig(op)?, args) {
        (Sig::IntToReal, [a]) => match a {
            Value::Int(n) => Ok(Value::Real(derivatives::to_real(*n))),
            _ => Err(wrong(op, "an integer", a, span)),
        },
        (Sig::RealToInt, [a]) => real(op, a, span).and_then(|x| {
            derivatives::to_int(op, x)
                .unwrap_or(Err(Undefined::NotAnInt))
                .map(Value::Int)
                .map_err(undefined)
        }),
        (Sig::Int | Sig::Numeric, [Value::Int(a), Value::Int(b)]) => {
            let r = derivatives::eval_int(op, *a, *b)?;
            r.map(Value::Int).map_err(undefined)
        }
        (Sig::Int, [a, b]) => Err(two_wrong(op, "two integers", a, b, span)),
        _ => return None,
    })
}

/// A real scalar primitive (`syntax::derivatives::eval`, the one
/// definition).
fn real_op(op: Prim, args: &[f64]) -> f64 {
    derivatives::eval(op, args).unwrap_or(f64::NAN)
}

fn int_or_real_unary(op: Prim, a: &Value, span: Span) -> Result<Value, Error> {
    match (op, a) {
        (Prim::Neg, Value::Real(x)) => Ok(Value::Real(-x)),
        (Prim::Abs, Value::Real(x)) => Ok(Value::Real(x.abs())),
        (Prim::Neg, Value::Int(i)) => i
            .checked_neg()
            .map(Value::Int)
            .ok_or(Error::Overflow { span, op }),
        (Prim::Abs, Value::Int(i)) => i
            .checked_abs()
            .map(Value::Int)
            .ok_or(Error::Overflow { span, op }),
        _ => Err(wrong(op, "a real or an integer", a, span)),
    }
}

pub(crate) fn arith(op: Prim, a: &Value, b: &Value, span: Span) -> Result<Value, Error> {
    match (a, b) {
        (Value::Real(x), Value::Real(y)) => Ok(Value::Real(real_op(op, &[*x, *y]))),
        (Value::Int(x), Value::Int(y)) => {
            let r = match op {
                Prim::Add => x.checked_add(*y),
                Prim::Sub => x.checked_sub(*y),
                Prim::Mul => x.checked_mul(*y),
                Prim::Max => Some(*x.max(y)),
                Prim::Min => Some(*x.min(y)),
                _ => {
                    return Err(Error::Type {
                        span,
                        message: format!("`{op}` is defined on reals only, found two integers"),
                    });
                }
            };
            r.map(Value::Int).ok_or(Error::Overflow { span, op })
        }
        _ => Err(two_wrong(op, "two reals or two integers", a, b, span)),
    }
}

fn compare(op: Prim, a: &Value, b: &Value, span: Span) -> Result<bool, Error> {
    fn by<T: PartialOrd>(op: Prim, x: T, y: T) -> bool {
        match op {
            Prim::Lt => x < y,
            Prim::Le => x <= y,
            Prim::Gt => x > y,
            Prim::Ge => x >= y,
            Prim::Eq => x == y,
            _ => x != y,
        }
    }
    match (a, b) {
        (Value::Real(x), Value::Real(y)) => Ok(by(op, *x, *y)),
        (Value::Int(x), Value::Int(y)) => Ok(by(op, *x, *y)),
        (Value::Bool(x), Value::Bool(y)) if matches!(op, Prim::Eq | Prim::Ne) => Ok(by(op, *x, *y)),
        _ => Err(two_wrong(op, "two reals or two integers", a, b, span)),
    }
}

fn real(op: Prim, a: &Value, span: Span) -> Result<f64, Error> {
    a.as_real().ok_or_else(|| wrong(op, "a real", a, span))
}

fn boolean(op: Prim, a: &Value, span: Span) -> Result<bool, Error> {
    a.as_bool().ok_or_else(|| wrong(op, "a boolean", a, span))
}

fn array(op: Prim, a: &Value, span: Span) -> Result<&[Value], Error> {
    a.as_array().ok_or_else(|| wrong(op, "an array", a, span))
}

/// `while c b z` (and `trips`): the final state and the number of times
/// the body was applied. A loop, not a recursion, so a long loop does not
/// grow the stack; each application of `c` and `b` counts its steps
/// against the step limit and the memory checks (`Evaluator::apply`). A loop
/// that never ends runs until `Config::max_steps` (when set) or the
/// memory check stops it.
fn while_loop(
    ctx: &Evaluator<'_>,
    op: Prim,
    c: &Value,
    b: &Value,
    z: &Value,
    span: Span,
) -> Result<(Value, u64), Error> {
    let mut state = z.clone();
    let mut trips: u64 = 0;
    loop {
        let go = ctx.apply(c, std::slice::from_ref(&state), span)?;
        if !boolean(op, &go, span)? {
            return Ok((state, trips));
        }
        state = ctx.apply(b, std::slice::from_ref(&state), span)?;
        ctx.observe_trip(op);
        trips += 1;
    }
}

/// A non-negative count (`build n f`, `ifold f z n`).
fn count(op: Prim, n: &Value, span: Span) -> Result<usize, Error> {
    let n = n
        .as_int()
        .ok_or_else(|| wrong(op, "an integer count", n, span))?;
    usize::try_from(n).map_err(|_| Error::NegativeCount { span, op, count: n })
}

/// Whether the memory budget (`crate::memory`) holds `n` more values.
fn room(op: Prim, n: usize, span: Span) -> Result<(), Error> {
    crate::memory::check_items(n, std::mem::size_of::<Value>(), 1).map_err(|shortfall| {
        Error::OutOfMemory {
            span,
            what: format!("`{op}`"),
            shortfall,
        }
    })
}

/// The array `[f(0), ..., f(n-1)]`, stopping at the first error. It is
/// built in place, in its one allocation (the iterator has an exact
/// length, so `Items` collects it without an intermediate `Vec`),
/// after the budget said it fits.
fn generate(
    op: Prim,
    n: usize,
    span: Span,
    mut f: impl FnMut(usize) -> Result<Value, Error>,
) -> Result<Value, Error> {
    room(op, n, span)?;
    let mut failure = None;
    let items = Items::from_exact((0..n).map(|i| {
        if failure.is_some() {
            return Value::Bool(false);
        }
        f(i).unwrap_or_else(|e| {
            failure = Some(e);
            Value::Bool(false)
        })
    }));
    match failure {
        Some(e) => Err(e),
        None => Ok(Value::Array(items)),
    }
}

/// A copy of `items` as an array, in one allocation the budget holds.
fn copy(op: Prim, items: &[Value], span: Span) -> Result<Value, Error> {
    room(op, items.len(), span)?;
    Ok(Value::Array(Items::from(items)))
}

/// An empty vector with room for `n` results, or an error if that much
/// memory cannot be had (rather than aborting the process); [`finish`]
/// makes the array.
fn alloc(op: Prim, n: usize, span: Span) -> Result<Vec<Value>, Error> {
    room(op, n, span)?;
    let mut out = Vec::new();
    out.try_reserve_exact(n).map_err(|_| Error::TooLarge {
        span,
        op,
        count: i64::try_from(n).unwrap_or(i64::MAX),
    })?;
    Ok(out)
}

/// The array of `out`: `Items` copies it, so the budget must hold
/// a second copy now.
fn finish(op: Prim, out: Vec<Value>, span: Span) -> Result<Value, Error> {
    room(op, out.len(), span)?;
    Ok(Value::array(out))
}

pub(crate) fn wrong(op: Prim, expected: &str, found: &Value, span: Span) -> Error {
    Error::Type {
        span,
        message: format!("`{op}` expects {expected}, found {}", found.kind()),
    }
}

fn two_wrong(op: Prim, expected: &str, a: &Value, b: &Value, span: Span) -> Error {
    Error::Type {
        span,
        message: format!(
            "`{op}` expects {expected}, found {} and {}",
            a.kind(),
            b.kind()
        ),
    }
}
