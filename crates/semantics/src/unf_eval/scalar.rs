//! The scalar rules of UNF evaluation: the real operators, their partial
//! derivatives (docs/derivatives.md: the same choices at the
//! non-differentiable points as forward mode and `unf::raise`), the
//! discrete builtins, and the monoid `(G, +^, 0_G)` of cotangents.

use syntax::derivatives;
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

/// A unary real operator (`syntax::derivatives::eval`).
pub(super) fn unary(op: P, x: f64) -> Option<f64> {
    derivatives::eval(op, &[x])
}

/// A binary real operator (`syntax::derivatives::eval`).
pub(super) fn binary(op: P, x: f64, y: f64) -> Option<f64> {
    derivatives::eval(op, &[x, y])
}

/// The derivative of a unary operator: the table's (`syntax::derivatives`,
/// the same choices at non-differentiable points as every route).
pub(super) fn d_unary(op: P, x: f64) -> Option<f64> {
    match derivatives::partials(op)? {
        [p] => Some(derivatives::eval_partial(p, &[x], unary(op, x)?)),
        _ => None,
    }
}

/// The partial derivatives of a binary operator (the table's).
pub(super) fn d_binary(op: P, x: f64, y: f64) -> Option<(f64, f64)> {
    match derivatives::partials(op)? {
        [p, q] => {
            let r = binary(op, x, y)?;
            let at = [x, y];
            Some((
                derivatives::eval_partial(p, &at, r),
                derivatives::eval_partial(q, &at, r),
            ))
        }
        _ => None,
    }
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
    if let Some(r) = crate::prims::discrete(op, args, span) {
        return r;
    }
    if let Some(r) = crate::hist::apply(op, args, span) {
        return r;
    }
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
