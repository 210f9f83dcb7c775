//! The notations of seeds/000 Figure 4 as code generators: the monoid
//! `(G, +^, 0_G)` on ground types, `[i]e`, and the partial derivatives
//! `∂op1`, `∂1 op2`, `∂2 op2` of the scalar operators (Section 3.2).
//!
//! A cotangent is kept symbolic as long as possible ([`Cot`]): `0_G` is
//! [`Cot::Zero`] and a tuple of cotangents is [`Cot::Tuple`], so `[i]z`
//! (Fig. 4: `(0, ..., z, ..., 0)`) and the projection rules write no code,
//! adding a zero writes nothing, and a zero is written out (`ZerosLike`)
//! only where a value is needed, shaped like a witness value of the same
//! type. Ground types here are those built from `R` by arrays and tuples
//! (the direct macro refuses Int and Bool values before getting here).

use super::emit::{Atom, Emit};
use syntax::{Expr, ExprId, Prim, Ty};

/// A cotangent of a value of a ground type G.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Cot {
    /// `0_G`, not written out.
    Zero,
    /// A value of the program.
    Val(Atom),
    /// A tuple of cotangents, for G a tuple type.
    Tuple(Vec<Cot>),
}

impl Cot {
    /// Whether this is `0_G` (possibly as a tuple of zeros).
    pub fn is_zero(&self) -> bool {
        match self {
            Cot::Zero => true,
            Cot::Val(_) => false,
            Cot::Tuple(cs) => cs.iter().all(Cot::is_zero),
        }
    }

    /// `[i]z` of Fig. 4 for a tuple of `k` components (1-based `i`).
    pub fn one_hot(k: usize, i: usize, z: Cot) -> Cot {
        let mut cs = vec![Cot::Zero; k];
        cs[i - 1] = z;
        Cot::Tuple(cs)
    }
}

/// The component types of a tuple type.
pub(super) fn tuple_items(ty: &Ty) -> &[Ty] {
    match ty {
        Ty::Tuple(ts) => ts,
        _ => &[],
    }
}

/// The element type of an array type.
pub(super) fn elem(ty: &Ty) -> &Ty {
    match ty {
        Ty::Array(_, e) => e,
        other => other,
    }
}

/// Whether writing out `0_G` needs a value of type G to copy the shape of.
fn needs_witness(ty: &Ty) -> bool {
    match ty {
        Ty::Array(..) => true,
        Ty::Tuple(ts) => ts.iter().any(needs_witness),
        _ => false,
    }
}

/// The components of a cotangent of tuple type `ty`.
pub(super) fn components(b: &mut Emit, ty: &Ty, c: Cot) -> Vec<Cot> {
    let k = tuple_items(ty).len();
    match c {
        Cot::Zero => vec![Cot::Zero; k],
        Cot::Tuple(cs) => cs,
        Cot::Val(a) => (1..=k as u32)
            .map(|i| Cot::Val(b.component(&a, i)))
            .collect(),
    }
}

/// `x +^_G y`.
pub(super) fn plus(b: &mut Emit, ty: &Ty, x: Cot, y: Cot) -> Cot {
    if x.is_zero() {
        return y;
    }
    if y.is_zero() {
        return x;
    }
    match ty {
        Ty::Tuple(ts) => {
            let xs = components(b, ty, x);
            let ys = components(b, ty, y);
            Cot::Tuple(
                ts.iter()
                    .zip(xs.into_iter().zip(ys))
                    .map(|(t, (x, y))| plus(b, t, x, y))
                    .collect(),
            )
        }
        Ty::Array(_, item) => {
            let f = plus_fn(b, item);
            let (xe, ye) = (value(b, ty, x), value(b, ty, y));
            let e = b.prim(Prim::Map2, vec![f, xe, ye]);
            Cot::Val(b.bind("d", e))
        }
        _ => {
            let (xe, ye) = (value(b, ty, x), value(b, ty, y));
            let e = b.bin(Prim::Add, xe, ye);
            Cot::Val(b.bind("d", e))
        }
    }
}

/// A non-zero cotangent of a real or array type as an expression (such a
/// cotangent is always a value: only tuple types have symbolic tuples).
fn value(b: &mut Emit, ty: &Ty, c: Cot) -> ExprId {
    match c {
        Cot::Val(a) => b.atom(&a),
        Cot::Zero | Cot::Tuple(_) => zero(b, ty, None),
    }
}

/// `fun (p, q) -> p +^_G q`.
pub(super) fn plus_fn(b: &mut Emit, ty: &Ty) -> ExprId {
    let (p, q) = (b.fresh("p"), b.fresh("q"));
    b.open();
    let r = plus(
        b,
        ty,
        Cot::Val(Atom::Var(p.clone())),
        Cot::Val(Atom::Var(q.clone())),
    );
    let body = materialize(b, ty, r, &Atom::Var(p.clone()));
    let body = b.close(body);
    b.lambda(&[p, q], body)
}

/// `0_G`, shaped like the witness `w` (`ZerosLike(w)` for arrays). The
/// witness may be omitted when G has no arrays.
pub(super) fn zero(b: &mut Emit, ty: &Ty, w: Option<&Atom>) -> ExprId {
    match ty {
        Ty::Array(_, item) => {
            let u = b.fresh("u");
            b.open();
            let inner = zero(b, item, Some(&Atom::Var(u.clone())));
            let body = b.close(inner);
            let f = b.lambda(&[u], body);
            let w = b.atom(w.expect("invariant: a zero array is given a witness of its shape"));
            b.prim(Prim::Map, vec![f, w])
        }
        Ty::Tuple(ts) => {
            let items = ts
                .iter()
                .enumerate()
                .map(|(i, t)| {
                    if needs_witness(t) {
                        let w = w.expect("invariant: a zero array is given a witness of its shape");
                        let wi = b.component(w, i as u32 + 1);
                        zero(b, t, Some(&wi))
                    } else {
                        zero(b, t, None)
                    }
                })
                .collect();
            b.node(Expr::Tuple(items))
        }
        _ => b.real(0.0),
    }
}

/// A cotangent written out as an expression, zeros shaped like `w`.
pub(super) fn materialize(b: &mut Emit, ty: &Ty, c: Cot, w: &Atom) -> ExprId {
    match c {
        Cot::Zero => zero(b, ty, Some(w)),
        Cot::Val(a) => b.atom(&a),
        Cot::Tuple(cs) => {
            let items = tuple_items(ty)
                .iter()
                .zip(cs)
                .enumerate()
                .map(|(i, (t, c))| {
                    if c.is_zero() && !needs_witness(t) {
                        zero(b, t, None)
                    } else if c.is_zero() || matches!(c, Cot::Tuple(_)) {
                        let wi = b.component(w, i as u32 + 1);
                        materialize(b, t, c, &wi)
                    } else {
                        materialize(b, t, c, w)
                    }
                })
                .collect();
            b.node(Expr::Tuple(items))
        }
    }
}

/// `c * s` for a cotangent `c` of type G and a real `s`, bound.
pub(super) fn scale(b: &mut Emit, ty: &Ty, c: &Atom, s: &Atom) -> Atom {
    match ty {
        Ty::Array(_, item) => {
            let u = b.fresh("u");
            b.open();
            let r = scale(b, item, &Atom::Var(u.clone()), s);
            let body = b.atom(&r);
            let body = b.close(body);
            let f = b.lambda(&[u], body);
            let ce = b.atom(c);
            let e = b.prim(Prim::Map, vec![f, ce]);
            b.bind("d", e)
        }
        Ty::Tuple(ts) => {
            let parts: Vec<Atom> = ts
                .iter()
                .enumerate()
                .map(|(i, t)| {
                    let ci = b.component(c, i as u32 + 1);
                    scale(b, t, &ci, s)
                })
                .collect();
            let items = parts.iter().map(|a| b.atom(a)).collect();
            let e = b.node(Expr::Tuple(items));
            b.bind("d", e)
        }
        _ => {
            let ce = b.atom(c);
            times(b, Partial::Expr(ce), s)
        }
    }
}

/// A partial derivative of a scalar operator at the primal point.
pub(super) enum Partial {
    /// The constant 1.
    One,
    /// The constant -1.
    MinusOne,
    /// An expression.
    Expr(ExprId),
}

/// `d * z`, bound (`d` alone when z is the constant 1).
pub(super) fn times(b: &mut Emit, d: Partial, z: &Atom) -> Atom {
    match d {
        Partial::One => z.clone(),
        Partial::MinusOne => {
            let ze = b.atom(z);
            let e = b.un(Prim::Neg, ze);
            b.bind("d", e)
        }
        Partial::Expr(d) => {
            if *z == Atom::Real(1.0) {
                return b.bind("d", d);
            }
            let ze = b.atom(z);
            let e = b.bin(Prim::Mul, d, ze);
            b.bind("d", e)
        }
    }
}

/// `∂op1(x)`, where `r = op1(x)` is the primal result.
pub(super) fn partial1(b: &mut Emit, op: Prim, x: &Atom, r: &Atom) -> Partial {
    let e = match op {
        Prim::Neg => return Partial::MinusOne,
        Prim::Sin => {
            let x = b.atom(x);
            b.un(Prim::Cos, x)
        }
        Prim::Cos => {
            let x = b.atom(x);
            let s = b.un(Prim::Sin, x);
            b.un(Prim::Neg, s)
        }
        // The derivative primitives of Target (syntax::partials).
        Prim::Tan | Prim::Tanh => {
            let d = if op == Prim::Tan {
                Prim::DTan
            } else {
                Prim::DTanh
            };
            let x = b.atom(x);
            b.un(d, x)
        }
        Prim::Exp => b.atom(r),
        Prim::Log => {
            let one = b.real(1.0);
            let x = b.atom(x);
            b.bin(Prim::Div, one, x)
        }
        Prim::Sqrt => {
            let half = b.real(0.5);
            let r = b.atom(r);
            b.bin(Prim::Div, half, r)
        }
        _ => {
            // abs (`is_op1`): `dabs x`, -1 at 0 (docs/derivatives.md).
            let x = b.atom(x);
            b.un(Prim::DAbs, x)
        }
    };
    Partial::Expr(e)
}

/// `(∂1 op2(x, y), ∂2 op2(x, y))`.
pub(super) fn partial2(b: &mut Emit, op: Prim, x: &Atom, y: &Atom) -> (Partial, Partial) {
    match op {
        Prim::Add => (Partial::One, Partial::One),
        Prim::Sub => (Partial::One, Partial::MinusOne),
        Prim::Mul => (Partial::Expr(b.atom(y)), Partial::Expr(b.atom(x))),
        Prim::Div => {
            // 1 / y and ∂₂(/), a primitive of Target (syntax::partials).
            let one = b.real(1.0);
            let ye = b.atom(y);
            let dx = b.bin(Prim::Div, one, ye);
            let (xe, ye) = (b.atom(x), b.atom(y));
            (Partial::Expr(dx), Partial::Expr(b.bin(Prim::D2Div, xe, ye)))
        }
        Prim::Pow => {
            // ∂₁pow and ∂₂pow, primitives of Target (syntax::partials).
            let (x1, y1, x2, y2) = (b.atom(x), b.atom(y), b.atom(x), b.atom(y));
            let dx = b.bin(Prim::D1Pow, x1, y1);
            let dy = b.bin(Prim::D2Pow, x2, y2);
            (Partial::Expr(dx), Partial::Expr(dy))
        }
        _ => {
            // max x y is `if x > y then x else y`, min x y is
            // `if x < y then x else y`: ties go to y (docs/derivatives.md).
            let cmp = if op == Prim::Max { Prim::Gt } else { Prim::Lt };
            let (x1, y1, x2, y2) = (b.atom(x), b.atom(y), b.atom(x), b.atom(y));
            let c1 = b.bin(cmp, x1, y1);
            let c2 = b.bin(cmp, x2, y2);
            let (one, zero) = (b.real(1.0), b.real(0.0));
            let dx = b.ite(c1, one, zero);
            let (one, zero) = (b.real(1.0), b.real(0.0));
            let dy = b.ite(c2, zero, one);
            (Partial::Expr(dx), Partial::Expr(dy))
        }
    }
}

/// Whether `op` is a unary operator on reals with a derivative rule.
pub(super) fn is_op1(op: Prim) -> bool {
    matches!(
        op,
        Prim::Neg
            | Prim::Sin
            | Prim::Cos
            | Prim::Tan
            | Prim::Exp
            | Prim::Log
            | Prim::Sqrt
            | Prim::Tanh
            | Prim::Abs
    )
}

/// Whether `op` is a binary operator on reals with a derivative rule.
pub(super) fn is_op2(op: Prim) -> bool {
    matches!(
        op,
        Prim::Add | Prim::Sub | Prim::Mul | Prim::Div | Prim::Pow | Prim::Max | Prim::Min
    )
}
