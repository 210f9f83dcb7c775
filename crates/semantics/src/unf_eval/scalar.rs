//! The scalar rules of UNF evaluation: the real operators, their partial
//! derivatives (docs/derivatives.md: the same choices at the
//! non-differentiable points as forward mode and `unf::raise`), the
//! discrete builtins, and the monoid `(G, +^, 0_G)` of cotangents.

use syntax::{Prim as P, Span};

use super::internal;
use crate::error::Error;
use crate::value::Value;

/// The result of a scalar rule, or an error for an operator without one
/// (the verifier admits none).
pub(super) fn scalar<T>(op: P, r: Option<T>) -> Result<T, Error> {
    r.ok_or_else(|| internal(&format!("no rule for `{}`", op.symbol())))
}

/// `0_G` of the shape of a value.
pub(super) fn zeros_like(v: &Value) -> Value {
    match v {
        Value::Real(_) => Value::Real(0.0),
        Value::Int(_) => Value::Int(0),
        Value::Bool(_) => Value::Bool(false),
        Value::Tuple(items) => Value::tuple(items.iter().map(zeros_like).collect()),
        Value::Array(items) => Value::array(items.iter().map(zeros_like).collect()),
        Value::Closure(_) => v.clone(),
    }
}

/// `a +^ b` on values of one ground type.
pub(super) fn add(a: &Value, b: &Value) -> Result<Value, Error> {
    Ok(match (a, b) {
        (Value::Real(x), Value::Real(y)) => Value::Real(x + y),
        (Value::Int(x), Value::Int(y)) => Value::Int(x.wrapping_add(*y)),
        (Value::Bool(x), Value::Bool(_)) => Value::Bool(*x),
        (Value::Tuple(xs), Value::Tuple(ys)) if xs.len() == ys.len() => Value::tuple(
            xs.iter()
                .zip(ys.iter())
                .map(|(x, y)| add(x, y))
                .collect::<Result<_, _>>()?,
        ),
        (Value::Array(xs), Value::Array(ys)) if xs.len() == ys.len() => Value::array(
            xs.iter()
                .zip(ys.iter())
                .map(|(x, y)| add(x, y))
                .collect::<Result<_, _>>()?,
        ),
        _ => {
            return Err(internal(&format!(
                "adding cotangents {} and {}",
                a.kind(),
                b.kind()
            )));
        }
    })
}

pub(super) fn unary(op: P, x: f64) -> Option<f64> {
    Some(match op {
        P::Neg => -x,
        P::Sin => x.sin(),
        P::Cos => x.cos(),
        P::Tan => x.tan(),
        P::Exp => x.exp(),
        P::Log => x.ln(),
        P::Sqrt => x.sqrt(),
        P::Tanh => x.tanh(),
        P::Abs => x.abs(),
        _ => return None,
    })
}

pub(super) fn binary(op: P, x: f64, y: f64) -> Option<f64> {
    Some(match op {
        P::Add => x + y,
        P::Sub => x - y,
        P::Mul => x * y,
        P::Div => x / y,
        P::Pow => x.powf(y),
        P::Max => x.max(y),
        P::Min => x.min(y),
        _ => return None,
    })
}

/// The derivative of a unary operator (docs/unf.md, "Derivatives of the
/// scalar operators"; the same choices at non-differentiable points).
pub(super) fn d_unary(op: P, x: f64) -> Option<f64> {
    Some(match op {
        P::Neg => -1.0,
        P::Sin => x.cos(),
        P::Cos => -x.sin(),
        P::Exp => x.exp(),
        P::Log => 1.0 / x,
        P::Sqrt => 0.5 / x.sqrt(),
        // The derivative primitives of Target (`dabs 0 = -1`).
        P::Tan => syntax::partials::eval(P::DTan, &[x])?,
        P::Tanh => syntax::partials::eval(P::DTanh, &[x])?,
        P::Abs => syntax::partials::eval(P::DAbs, &[x])?,
        _ => return None,
    })
}

/// The partial derivatives of a binary operator.
pub(super) fn d_binary(op: P, x: f64, y: f64) -> Option<(f64, f64)> {
    Some(match op {
        P::Add => (1.0, 1.0),
        P::Sub => (1.0, -1.0),
        P::Mul => (y, x),
        P::Div => (1.0 / y, syntax::partials::eval(P::D2Div, &[x, y])?),
        P::Pow => (
            syntax::partials::eval(P::D1Pow, &[x, y])?,
            syntax::partials::eval(P::D2Pow, &[x, y])?,
        ),
        // `max x y` is `if x > y then x else y`: a tie goes to y.
        P::Max => {
            if x > y {
                (1.0, 0.0)
            } else {
                (0.0, 1.0)
            }
        }
        // `min x y` is `if x < y then x else y`: a tie goes to y.
        P::Min => {
            if x < y {
                (1.0, 0.0)
            } else {
                (0.0, 1.0)
            }
        }
        _ => return None,
    })
}

/// A discrete builtin of `Op::Builtin` (comparisons, logic, integer
/// arithmetic, `length`) or a shift, on evaluated operands.
pub(super) fn builtin(op: P, args: &[Value], span: Span) -> Result<Value, Error> {
    let wrong = || Error::Type {
        span,
        message: format!(
            "`{}` does not apply to {}",
            op.symbol(),
            args.iter()
                .map(Value::kind)
                .collect::<Vec<_>>()
                .join(" and ")
        ),
    };
    let overflow = || Error::Overflow { span, op };
    Ok(match (op, args) {
        (P::Lt | P::Le | P::Gt | P::Ge | P::Eq | P::Ne, [a, b]) => {
            let ord = match (a, b) {
                (Value::Real(x), Value::Real(y)) => x.partial_cmp(y),
                (Value::Int(x), Value::Int(y)) => Some(x.cmp(y)),
                (Value::Bool(x), Value::Bool(y)) => Some(x.cmp(y)),
                _ => return Err(wrong()),
            };
            use std::cmp::Ordering::{Equal, Greater, Less};
            Value::Bool(match op {
                P::Lt => ord == Some(Less),
                P::Le => matches!(ord, Some(Less | Equal)),
                P::Gt => ord == Some(Greater),
                P::Ge => matches!(ord, Some(Greater | Equal)),
                P::Eq => ord == Some(Equal),
                _ => ord != Some(Equal),
            })
        }
        (P::And | P::Or, [Value::Bool(x), Value::Bool(y)]) => {
            Value::Bool(if op == P::And { *x && *y } else { *x || *y })
        }
        (P::Not, [Value::Bool(x)]) => Value::Bool(!x),
        (P::Add | P::Sub | P::Mul | P::Max | P::Min, [Value::Int(x), Value::Int(y)]) => {
            Value::Int(match op {
                P::Add => x.checked_add(*y).ok_or_else(overflow)?,
                P::Sub => x.checked_sub(*y).ok_or_else(overflow)?,
                P::Mul => x.checked_mul(*y).ok_or_else(overflow)?,
                P::Max => *x.max(y),
                _ => *x.min(y),
            })
        }
        (P::Neg, [Value::Int(x)]) => Value::Int(x.checked_neg().ok_or_else(overflow)?),
        (P::Abs, [Value::Int(x)]) => Value::Int(x.checked_abs().ok_or_else(overflow)?),
        (P::Length, [Value::Array(items)]) => {
            Value::Int(i64::try_from(items.len()).map_err(|_| overflow())?)
        }
        (P::Shift1L, [Value::Array(items)]) => Value::array(items.get(1..).unwrap_or(&[]).to_vec()),
        (P::Shift1R, [Value::Array(items)]) => {
            let keep = items.len().saturating_sub(1);
            Value::array(items[..keep].to_vec())
        }
        _ => return Err(wrong()),
    })
}

/// `v * r` for a value of a ground type: every real in it times r.
pub(super) fn scale(v: &Value, r: f64) -> Value {
    match v {
        Value::Real(x) => Value::Real(x * r),
        Value::Tuple(items) => Value::tuple(items.iter().map(|x| scale(x, r)).collect()),
        Value::Array(items) => Value::array(items.iter().map(|x| scale(x, r)).collect()),
        other => other.clone(),
    }
}
