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
use syntax::derivatives::{self, Instantiate};
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
            times(b, Partial::Term(ce), s)
        }
    }
}

/// A partial derivative of a scalar operator at the primal point.
pub(super) type Partial = derivatives::Partial<ExprId>;

/// `d * z`, bound (`d` alone when z is the constant 1).
pub(super) fn times(b: &mut Emit, d: Partial, z: &Atom) -> Atom {
    match d {
        Partial::One => z.clone(),
        Partial::MinusOne => {
            let ze = b.atom(z);
            let e = b.un(Prim::Neg, ze);
            b.bind("d", e)
        }
        Partial::Term(d) => {
            if *z == Atom::Real(1.0) {
                return b.bind("d", d);
            }
            let ze = b.atom(z);
            let e = b.bin(Prim::Mul, d, ze);
            b.bind("d", e)
        }
    }
}

/// The partials `∂_i op (x1, ..., xn)` of a real operator, where `r` is
/// the primal result: the table of `syntax::derivatives` written with this
/// stage's emitter. Empty for an operator without an entry, which
/// [`is_op1`] and [`is_op2`] keep from getting here.
pub(super) fn partials(b: &mut Emit, op: Prim, x: &[Atom], r: &Atom) -> Vec<Partial> {
    let mut to = Terms { b, x, r };
    match derivatives::instantiate_partials(op, &mut to) {
        Ok(ps) => ps.unwrap_or_default(),
        Err(never) => match never {},
    }
}

/// The table's terms over atoms of the program.
struct Terms<'a> {
    b: &'a mut Emit,
    x: &'a [Atom],
    r: &'a Atom,
}

impl Instantiate for Terms<'_> {
    type Out = ExprId;
    type Error = std::convert::Infallible;

    fn arg(&mut self, i: usize) -> ExprId {
        self.b.atom(&self.x[i])
    }

    fn result(&mut self) -> ExprId {
        self.b.atom(self.r)
    }

    fn real(&mut self, c: f64) -> ExprId {
        self.b.real(c)
    }

    fn apply(&mut self, op: Prim, args: Vec<ExprId>) -> ExprId {
        self.b.prim(op, args)
    }

    fn compare(&mut self, cmp: Prim, a: ExprId, c: ExprId) -> ExprId {
        self.b.bin(cmp, a, c)
    }

    fn ite(&mut self, c: ExprId, a: ExprId, e: ExprId) -> Result<ExprId, Self::Error> {
        Ok(self.b.ite(c, a, e))
    }
}

/// Whether `op` is a unary operator on reals with a derivative rule.
pub(super) fn is_op1(op: Prim) -> bool {
    op.arity() == 1 && !op.is_target_only() && derivatives::partials(op).is_some()
}

/// Whether `op` is a binary operator on reals with a derivative rule.
pub(super) fn is_op2(op: Prim) -> bool {
    op.arity() == 2 && !op.is_target_only() && derivatives::partials(op).is_some()
}
