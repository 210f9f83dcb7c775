//! The table of partial derivatives: for every real-valued scalar operation
//! `op (x1, ..., xn)`, the terms `∂_i op (x1, ..., xn)` of Definition 182.6
//! (seeds/002), built from the primal arguments (and, where it saves work,
//! the primal result `r = op (x1, ..., xn)`).
//!
//! This is the only place that knows a derivative. The operation clause of
//! the macro (`crate::dual`) multiplies each term by the tangent of its
//! argument and sums. Every term here is itself an ordinary program, so a
//! transformed program can be transformed again (forward over forward).
//!
//! Choices at non-differentiable points (docs/forward.md, "The derivative
//! table"), all decided on primal values only:
//! - `abs` at 0: 0;
//! - `max a b` behaves as `if a > b then a else b`: on a tie the derivative
//!   flows to `b`; `min a b` as `if a < b then a else b`: on a tie to `b`;
//! - `sqrt` at 0: `1 / (2 * 0) = +inf`, as IEEE says;
//! - `pow x y`: `∂1 = y * pow x (y - 1)` everywhere; `∂2 = log x * pow x y`
//!   where `x > 0`, and 0 where `x <= 0` (there `pow x y` is only defined for
//!   integral `y`, or is constantly 0 in `y` when `x = 0`, and a `log` of a
//!   non-positive number would turn a zero exponent tangent into NaN).

use syntax::{ExprId, Prim, Ty};

use crate::build::{Atom, Ctx, Res};

/// One partial derivative `∂_i op`.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Partial {
    /// The constant 1: the summand is the argument's tangent itself.
    One,
    /// The constant -1: the summand is the negated tangent.
    MinusOne,
    /// A term of type `R` over the primal arguments and result.
    Term(ExprId),
}

/// Whether the table's terms for `op` mention the primal result `r`, which
/// the operation clause then binds once.
pub(crate) fn uses_result(op: Prim) -> bool {
    matches!(
        op,
        Prim::Div | Prim::Tan | Prim::Exp | Prim::Sqrt | Prim::Tanh | Prim::Pow
    )
}

/// Whether `op` is a scalar operation with an entry in the table (it is one
/// of the operations of Definition 182.4 when its result type is `R`).
pub(crate) fn has_entry(op: Prim) -> bool {
    matches!(
        op,
        Prim::Add
            | Prim::Sub
            | Prim::Mul
            | Prim::Div
            | Prim::Neg
            | Prim::Sin
            | Prim::Cos
            | Prim::Tan
            | Prim::Exp
            | Prim::Log
            | Prim::Sqrt
            | Prim::Tanh
            | Prim::Abs
            | Prim::Pow
            | Prim::Max
            | Prim::Min
    )
}

/// The partial derivatives of `op` at the primal arguments `x`, one per
/// argument, in order. `r` is the primal result (only read when
/// [`uses_result`] says so).
pub(crate) fn partials(cx: &mut Ctx, op: Prim, x: &[Atom], r: &Atom) -> Res<Vec<Partial>> {
    use Partial::{MinusOne, One, Term};
    if x.len() != op.arity() {
        return Err(cx.internal(format!("`{op}` applied to {} arguments", x.len())));
    }
    let res = match op {
        Prim::Add => vec![One, One],
        Prim::Sub => vec![One, MinusOne],
        Prim::Neg => vec![MinusOne],
        // d(a * b) = b da + a db
        Prim::Mul => vec![Term(cx.emit(&x[1])), Term(cx.emit(&x[0]))],
        // d(a / b) = da / b - (a / b) / b db
        Prim::Div => {
            let one = cx.real(1.0);
            let b = cx.emit(&x[1]);
            let d1 = cx.prim_r(Prim::Div, vec![one, b]);
            let rr = cx.emit(r);
            let b = cx.emit(&x[1]);
            let q = cx.prim_r(Prim::Div, vec![rr, b]);
            let d2 = cx.prim_r(Prim::Neg, vec![q]);
            vec![Term(d1), Term(d2)]
        }
        Prim::Sin => {
            let a = cx.emit(&x[0]);
            vec![Term(cx.prim_r(Prim::Cos, vec![a]))]
        }
        Prim::Cos => {
            let a = cx.emit(&x[0]);
            let s = cx.prim_r(Prim::Sin, vec![a]);
            vec![Term(cx.prim_r(Prim::Neg, vec![s]))]
        }
        // d tan a = (1 + tan^2 a) da
        Prim::Tan => {
            let one = cx.real(1.0);
            let sq = square(cx, r);
            vec![Term(cx.prim_r(Prim::Add, vec![one, sq]))]
        }
        Prim::Exp => vec![Term(cx.emit(r))],
        Prim::Log => {
            let one = cx.real(1.0);
            let a = cx.emit(&x[0]);
            vec![Term(cx.prim_r(Prim::Div, vec![one, a]))]
        }
        // d sqrt a = da / (2 sqrt a); +inf at 0
        Prim::Sqrt => {
            let one = cx.real(1.0);
            let two = cx.real(2.0);
            let rr = cx.emit(r);
            let den = cx.prim_r(Prim::Mul, vec![two, rr]);
            vec![Term(cx.prim_r(Prim::Div, vec![one, den]))]
        }
        // d tanh a = (1 - tanh^2 a) da
        Prim::Tanh => {
            let one = cx.real(1.0);
            let sq = square(cx, r);
            vec![Term(cx.prim_r(Prim::Sub, vec![one, sq]))]
        }
        // sign a, with 0 at 0
        Prim::Abs => {
            let pos = compare(cx, Prim::Gt, &x[0], &Atom::Real(0.0));
            let neg = compare(cx, Prim::Lt, &x[0], &Atom::Real(0.0));
            let m1 = cx.real(-1.0);
            let z = cx.real(0.0);
            let inner = cx.if_(neg, m1, z)?;
            let p1 = cx.real(1.0);
            vec![Term(cx.if_(pos, p1, inner)?)]
        }
        Prim::Pow => {
            // ∂1 = y * pow x (y - 1)
            let y = cx.emit(&x[1]);
            let ym1 = match &x[1] {
                Atom::Real(c) => cx.real(c - 1.0),
                other => {
                    let y = cx.emit(other);
                    let one = cx.real(1.0);
                    cx.prim_r(Prim::Sub, vec![y, one])
                }
            };
            let base = cx.emit(&x[0]);
            let p = cx.prim_r(Prim::Pow, vec![base, ym1]);
            let d1 = cx.mul_r(y, p);
            // ∂2 = if x > 0 then log x * pow x y else 0
            let pos = compare(cx, Prim::Gt, &x[0], &Atom::Real(0.0));
            let base = cx.emit(&x[0]);
            let lg = cx.prim_r(Prim::Log, vec![base]);
            let rr = cx.emit(r);
            let t = cx.prim_r(Prim::Mul, vec![lg, rr]);
            let z = cx.real(0.0);
            let d2 = cx.if_(pos, t, z)?;
            vec![Term(d1), Term(d2)]
        }
        // max a b = if a > b then a else b
        Prim::Max => indicator_pair(cx, Prim::Gt, x)?,
        // min a b = if a < b then a else b
        Prim::Min => indicator_pair(cx, Prim::Lt, x)?,
        other => {
            return Err(cx.internal(format!("no derivative rule for `{other}`")));
        }
    };
    Ok(res)
}

/// `r * r`.
fn square(cx: &mut Ctx, r: &Atom) -> ExprId {
    let a = cx.emit(r);
    let b = cx.emit(r);
    cx.prim_r(Prim::Mul, vec![a, b])
}

/// `a cmp b` over reals.
fn compare(cx: &mut Ctx, cmp: Prim, a: &Atom, b: &Atom) -> ExprId {
    let a = cx.emit(a);
    let b = cx.emit(b);
    cx.prim(cmp, vec![a, b], Ty::Bool)
}

/// `[if a cmp b then 1 else 0, if a cmp b then 0 else 1]`: the partials of
/// `if a cmp b then a else b`.
fn indicator_pair(cx: &mut Ctx, cmp: Prim, x: &[Atom]) -> Res<Vec<Partial>> {
    let mut out = Vec::with_capacity(2);
    for (t, e) in [(1.0, 0.0), (0.0, 1.0)] {
        let c = compare(cx, cmp, &x[0], &x[1]);
        let t = cx.real(t);
        let e = cx.real(e);
        out.push(Partial::Term(cx.if_(c, t, e)?));
    }
    Ok(out)
}
