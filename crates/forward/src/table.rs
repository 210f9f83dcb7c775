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
//! table"; docs/derivatives.md), all decided on primal values only:
//! - `abs` at 0: -1 (`dabs`, `syntax::partials`: `abs x` is `max x (-x)`,
//!   a tie goes to the second argument);
//! - `max a b` behaves as `if a > b then a else b`: on a tie the derivative
//!   flows to `b`; `min a b` as `if a < b then a else b`: on a tie to `b`;
//! - `sqrt` at 0: `1 / (2 * 0) = +inf`, as IEEE says;
//! - `pow x y`: `∂1 = y * pow x (y - 1)` everywhere; `∂2 = log x * pow x y`
//!   where `x > 0`, and 0 where `x <= 0` (there `pow x y` is only defined for
//!   integral `y`, or is constantly 0 in `y` when `x = 0`, and a `log` of a
//!   non-positive number would turn a zero exponent tangent into NaN). Both
//!   are the Target primitives `d1pow`, `d2pow` (`syntax::partials`).
//!
//! Construct expansion (`diff`, `grad`, ... inside a Source program) must
//! leave a Source program, which reverse mode may differentiate next; there
//! (`Ctx::source_only`) the partials of `abs` and `pow` are written as the
//! Source expansions the primitives stand for (`syntax::partials`), with
//! the same values.
//!
//! The Target-only derivative primitives have entries too, so that a
//! gradient program of reverse mode can be differentiated again (their own
//! derivatives, with the same conventions):
//! - `d1pow x y = y x^(y-1)`: `∂x = y * d1pow x (y - 1)`,
//!   `∂y = pow x (y - 1) + y * d2pow x (y - 1)`;
//! - `d2pow x y`: `∂x = if x > 0 then pow x (y - 1) + y * d2pow x (y - 1)
//!   else 0`, `∂y = if x > 0 then log x * d2pow x y else 0`;
//! - `d2div x y = -x / y²`: `∂x = -((1 / y) / y)`, `∂y = -2 * d2div x y / y`;
//! - `dtan x = 1 + tan² x`: `2 tan x * dtan x`; `dtanh x`: `-2 tanh x *
//!   dtanh x`; `dabs x`: 0.

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
        Prim::Div
            | Prim::Tan
            | Prim::Exp
            | Prim::Sqrt
            | Prim::Tanh
            | Prim::D2Pow
            | Prim::D2Div
            | Prim::DTan
            | Prim::DTanh
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
            | Prim::D1Pow
            | Prim::D2Pow
            | Prim::D2Div
            | Prim::DTan
            | Prim::DTanh
            | Prim::DAbs
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
        // 1 where a > 0, -1 elsewhere (0 and NaN included)
        Prim::Abs if cx.source_only => {
            let pos = compare(cx, Prim::Gt, &x[0], &Atom::Real(0.0));
            let one = cx.real(1.0);
            let minus_one = cx.real(-1.0);
            vec![Term(cx.if_(pos, one, minus_one)?)]
        }
        Prim::Abs => vec![Term(prim_of(cx, Prim::DAbs, x))],
        // d1pow x y = y * pow x (y - 1);
        // d2pow x y = if x > 0 then log x * pow x y else 0
        Prim::Pow if cx.source_only => {
            let ym1 = minus_one(cx, &x[1]);
            let base = cx.emit(&x[0]);
            let p = cx.prim_r(Prim::Pow, vec![base, ym1]);
            let y = cx.emit(&x[1]);
            let dx = cx.mul_r(y, p);
            let pos = compare(cx, Prim::Gt, &x[0], &Atom::Real(0.0));
            let base = cx.emit(&x[0]);
            let lg = cx.prim_r(Prim::Log, vec![base]);
            let pw = prim_of(cx, Prim::Pow, x);
            let t = cx.prim_r(Prim::Mul, vec![lg, pw]);
            let z = cx.real(0.0);
            let dy = cx.if_(pos, t, z)?;
            vec![Term(dx), Term(dy)]
        }
        Prim::Pow => vec![
            Term(prim_of(cx, Prim::D1Pow, x)),
            Term(prim_of(cx, Prim::D2Pow, x)),
        ],
        // d1pow x y = y * pow x (y - 1)
        Prim::D1Pow => {
            let ym1 = minus_one(cx, &x[1]);
            let base = cx.emit(&x[0]);
            let inner = cx.prim_r(Prim::D1Pow, vec![base, ym1]);
            let y = cx.emit(&x[1]);
            let dx = cx.mul_r(y, inner);
            vec![Term(dx), Term(exponent_partial(cx, x))]
        }
        // d2pow x y = if x > 0 then log x * pow x y else 0
        Prim::D2Pow => {
            let t = exponent_partial(cx, x);
            let pos = compare(cx, Prim::Gt, &x[0], &Atom::Real(0.0));
            let z = cx.real(0.0);
            let dx = cx.if_(pos, t, z)?;
            let pos = compare(cx, Prim::Gt, &x[0], &Atom::Real(0.0));
            let base = cx.emit(&x[0]);
            let lg = cx.prim_r(Prim::Log, vec![base]);
            let rr = cx.emit(r);
            let t = cx.prim_r(Prim::Mul, vec![lg, rr]);
            let z = cx.real(0.0);
            let dy = cx.if_(pos, t, z)?;
            vec![Term(dx), Term(dy)]
        }
        // d2div a b = -a / b²: -(1 / b) / b, and -2 r / b
        Prim::D2Div => {
            let one = cx.real(1.0);
            let b = cx.emit(&x[1]);
            let inv = cx.prim_r(Prim::Div, vec![one, b]);
            let b = cx.emit(&x[1]);
            let q = cx.prim_r(Prim::Div, vec![inv, b]);
            let dx = cx.prim_r(Prim::Neg, vec![q]);
            let m2 = cx.real(-2.0);
            let rr = cx.emit(r);
            let t = cx.prim_r(Prim::Mul, vec![m2, rr]);
            let b = cx.emit(&x[1]);
            let dy = cx.prim_r(Prim::Div, vec![t, b]);
            vec![Term(dx), Term(dy)]
        }
        // dtan a = 1 + tan² a: 2 tan a (1 + tan² a)
        Prim::DTan => vec![Term(twice_times(cx, Prim::Tan, 2.0, &x[0], r))],
        // dtanh a = 1 - tanh² a: -2 tanh a (1 - tanh² a)
        Prim::DTanh => vec![Term(twice_times(cx, Prim::Tanh, -2.0, &x[0], r))],
        // dabs is constant where it is differentiable
        Prim::DAbs => vec![Term(cx.real(0.0))],
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

/// `op x1 ... xn` over reals.
fn prim_of(cx: &mut Ctx, op: Prim, x: &[Atom]) -> ExprId {
    let args = x.iter().map(|a| cx.emit(a)).collect();
    cx.prim_r(op, args)
}

/// `y - 1`, folded for a literal `y`.
fn minus_one(cx: &mut Ctx, y: &Atom) -> ExprId {
    match y {
        Atom::Real(c) => cx.real(c - 1.0),
        other => {
            let y = cx.emit(other);
            let one = cx.real(1.0);
            cx.prim_r(Prim::Sub, vec![y, one])
        }
    }
}

/// `pow x (y - 1) + y * d2pow x (y - 1)`: the derivative of `d1pow x y` in
/// `y`, and of `d2pow x y` in `x` where `x > 0`.
fn exponent_partial(cx: &mut Ctx, x: &[Atom]) -> ExprId {
    let ym1 = minus_one(cx, &x[1]);
    let base = cx.emit(&x[0]);
    let p = cx.prim_r(Prim::Pow, vec![base, ym1]);
    let ym1 = minus_one(cx, &x[1]);
    let base = cx.emit(&x[0]);
    let d2 = cx.prim_r(Prim::D2Pow, vec![base, ym1]);
    let y = cx.emit(&x[1]);
    let yd2 = cx.mul_r(y, d2);
    cx.prim_r(Prim::Add, vec![p, yd2])
}

/// `c * (f a * r)`, for `f` = tan or tanh and `r` its derivative primitive's
/// value.
fn twice_times(cx: &mut Ctx, f: Prim, c: f64, a: &Atom, r: &Atom) -> ExprId {
    let a = cx.emit(a);
    let fa = cx.prim_r(f, vec![a]);
    let rr = cx.emit(r);
    let prod = cx.prim_r(Prim::Mul, vec![fa, rr]);
    let c = cx.real(c);
    cx.prim_r(Prim::Mul, vec![c, prod])
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
