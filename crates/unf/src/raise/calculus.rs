//! The transposed Jacobians of Fig. 10, the partial derivatives of the
//! scalar operators, and the monoid `(G, +^, 0_G)` of every ground type
//! (Section 3.3), written as Target terms.
//!
//! A `J^T p` maps the cotangent of `T_out(p)` to the cotangent of
//! `T_in(p)`, reading the primal point `T_in(p)` from the context of the
//! enclosing `∘`. Cotangents that are known to be zero stay symbolic
//! (`Abs::Zero`) until something needs their value; adding a zero writes
//! nothing. Unlike the text of Fig. 10, every `J^T` *adds* to the cotangents
//! of its arguments (as `J^T op` does there), so a Source UNF term that does
//! not hide its arguments right away is still differentiated correctly.
//!
//! Derivatives at the points where an operator is not differentiable are
//! the intentional ones of Appendix A.4, the same as forward mode's
//! (docs/derivatives.md lists them): `abs` has derivative `dabs x` (-1 at
//! 0), `max x y` is `if x > y then x else y` and `min x y` is
//! `if x < y then x else y` (a tie goes to `y`), and `pow x y` has
//! derivative 0 in `y` where `x <= 0`. The partials of `pow`, `tan`, `tanh`
//! and `abs` and the second one of `/` are Target primitives (`d1pow`, ...,
//! `syntax::derivatives`), as seeds/000 Section 2 assumes: one operation each.

use super::emit::{ValId, plus_one};
use super::{Abs, Point, Raise, State, at, internal, truncate};
use crate::error::Error;
use crate::ir::{Op, Prim, TermId};
use syntax::derivatives::{self, Instantiate};
use syntax::{Expr, ExprId, Prim as P, Ty};

/// A partial derivative, with the cases that need no multiplication.
type Partial = derivatives::Partial<ExprId>;

impl Raise<'_> {
    /// `J^T p` on the cotangent context `s`, at the primal point `primal`.
    pub(super) fn jt(&mut self, p: &Prim, s: State, primal: Point<'_>) -> Result<State, Error> {
        match p {
            Prim::Var(_, index) => {
                let n = s.len() - 1;
                let z = at(&s, n);
                let mut s = truncate(s, n);
                let i = *index as usize - 1;
                let sum = self.add(at(&s, i), z)?;
                s.set_mut(i, sum);
                Ok(s)
            }
            Prim::Op(ctx, op) => {
                let n = self.ctx_len(*ctx);
                let arity = match op {
                    Op::Const(_) | Op::Reals { .. } | Op::Int(_) | Op::Bool(_) => 0,
                    Op::Unary(_) | Op::Proj { .. } => 1,
                    Op::Binary(_) | Op::Index { .. } => 2,
                    Op::Builtin { args, .. } => self.ctx_len(*args),
                };
                let mut s = s;
                let z = at(&s, n + arity);
                s = truncate(s, n + arity);
                let Some(z) = self.cot_value(z)? else {
                    return Ok(s);
                };
                match op {
                    Op::Const(_) | Op::Reals { .. } | Op::Int(_) | Op::Bool(_) => {}
                    Op::Builtin { op, .. } => {
                        if matches!(op, P::Shift1L | P::Shift1R) {
                            let a = self.materialize(primal.at(n))?;
                            let d = self.jt_shift(*op, a, z)?;
                            let acc = self.add(at(&s, n), Abs::Val(d))?;
                            s.set_mut(n, acc);
                        }
                        if syntax::hist::differentiable(*op)
                            && matches!(self.b.ty(z), Ty::Array(_, e) if **e == Ty::Real)
                        {
                            let d = self.materialize(primal.at(n))?;
                            let is = self.materialize(primal.at(n + 1))?;
                            let v = self.materialize(primal.at(n + 2))?;
                            let (dd, dv) = self.jt_hist(*op, d, is, v, z)?;
                            let acc = self.add(at(&s, n), Abs::Val(dd))?;
                            s.set_mut(n, acc);
                            let acc = self.add(at(&s, n + 2), Abs::Val(dv))?;
                            s.set_mut(n + 2, acc);
                        }
                        if syntax::hist::is_partial(*op)
                            || (*op == P::HistAddRows
                                && matches!(self.b.ty(z), Ty::Array(_, r)
                                    if matches!(&**r, Ty::Array(_, e) if **e == Ty::Real)))
                        {
                            let mut xs = Vec::with_capacity(arity);
                            for i in 0..arity {
                                xs.push(self.materialize(primal.at(n + i))?);
                            }
                            for (i, d) in self.jt_partial(*op, &xs, z)? {
                                let acc = self.add(at(&s, n + i), Abs::Val(d))?;
                                s.set_mut(n + i, acc);
                            }
                        }
                    }
                    Op::Index { .. } => {
                        let a = self.materialize(primal.at(n))?;
                        let i = self.materialize(primal.at(n + 1))?;
                        let acc = self.add_read(at(&s, n), a, i, z)?;
                        s.set_mut(n, acc);
                    }
                    Op::Unary(o) => {
                        let x = self.materialize(primal.at(n))?;
                        let [d] = self.partials(*o, &[x])?[..] else {
                            return Err(internal(self.b.span, "a unary operator's partials"));
                        };
                        let acc = self.accumulate(at(&s, n), d, z)?;
                        s.set_mut(n, acc);
                    }
                    Op::Binary(o) => {
                        let x = self.materialize(primal.at(n))?;
                        let y = self.materialize(primal.at(n + 1))?;
                        let [dx, dy] = self.partials(*o, &[x, y])?[..] else {
                            return Err(internal(self.b.span, "a binary operator's partials"));
                        };
                        let acc = self.accumulate(at(&s, n), dx, z)?;
                        s.set_mut(n, acc);
                        let acc = self.accumulate(at(&s, n + 1), dy, z)?;
                        s.set_mut(n + 1, acc);
                    }
                    Op::Proj { index, .. } => {
                        let tuple = self.materialize(primal.at(n))?;
                        let parts = self.b.unpack(tuple, "c");
                        let mut items = Vec::with_capacity(parts.len());
                        for (j, &part) in parts.iter().enumerate() {
                            let v = if j + 1 == *index as usize {
                                z
                            } else {
                                self.zero_of(part)
                            };
                            items.push(self.b.use_val(v));
                        }
                        let ty = self.b.ty(tuple).clone();
                        let e = self.b.add(Expr::Tuple(items), ty);
                        let t = self.b.bind(e, "d");
                        let acc = self.add(at(&s, n), Abs::Val(t))?;
                        s.set_mut(n, acc);
                    }
                }
                Ok(s)
            }
            Prim::Pair(ctx, ty) => {
                let n = self.ctx_len(*ctx);
                let z = at(&s, n);
                let mut s = truncate(s, n);
                let z = self.dense(z)?;
                let k = match self.t.ground_ty(*ty) {
                    Some(Ty::Tuple(items)) => items.len(),
                    _ => return Err(internal(self.b.span, "pair of a type that is not a tuple")),
                };
                match z {
                    Abs::Zero(_) => {
                        for j in 0..k {
                            let w = self.witness(primal.at(n + j))?;
                            s.push_back_mut(Abs::Zero(w));
                        }
                    }
                    Abs::Val(z) => {
                        for v in self.b.unpack(z, "d") {
                            s.push_back_mut(Abs::Val(v));
                        }
                    }
                    Abs::Cont(_) | Abs::Sparse(_) => {
                        return Err(internal(self.b.span, "a continuation as a cotangent"));
                    }
                }
                Ok(s)
            }
            Prim::Proj(keep, drop, rest) => {
                let (lk, ld, lr) = (
                    self.ctx_len(*keep),
                    self.ctx_len(*drop),
                    self.ctx_len(*rest),
                );
                let rest_vals: Vec<Abs> = (lk..lk + lr).map(|i| at(&s, i)).collect();
                let mut s = truncate(s, lk);
                for j in 0..ld {
                    let w = self.witness(primal.at(lk + j))?;
                    s.push_back_mut(Abs::Zero(w));
                }
                for x in rest_vals {
                    s.push_back_mut(x);
                }
                Ok(s)
            }
            Prim::Map { ctx, args, fun, .. } => self.jt_map(*ctx, args, fun, s, self.full(primal)?),
            Prim::Reduce { ctx, fun, init, .. } => {
                let n = self.ctx_len(*ctx);
                let z = at(&s, n + 1);
                let mut s = truncate(s, n + 1);
                let Some(z) = self.cot_value(z)? else {
                    return Ok(s);
                };
                let da = match self.selection(fun) {
                    Some(sel) => {
                        // One comparison pass instead of Fig. 10's scans (select.rs).
                        let x = self.materialize(primal.at(n))?;
                        let z0 = self.value(*init, &[])?;
                        self.jt_select(sel, z0, x, z)?.1
                    }
                    None => Abs::Val(self.jt_reduce(fun.body, *init, primal.at(n), z)?),
                };
                let acc = self.add(at(&s, n), da)?;
                s.set_mut(n, acc);
                Ok(s)
            }
            Prim::Array { ctx, len, .. } => {
                self.b.retype = true;
                let n = self.ctx_len(*ctx);
                let z = at(&s, n);
                let z = self.dense(z)?;
                let mut s = truncate(s, n);
                for i in 0..*len as usize {
                    let d = match z {
                        Abs::Val(z) => {
                            let ie = self.b.add(Expr::Int(i as i64), Ty::Int);
                            Abs::Val(self.index_at(z, ie))
                        }
                        Abs::Zero(_) => Abs::Zero(self.witness(primal.at(n + i))?),
                        Abs::Cont(_) | Abs::Sparse(_) => {
                            return Err(internal(self.b.span, "a continuation as a cotangent"));
                        }
                    };
                    s.push_back_mut(d);
                }
                Ok(s)
            }
            Prim::Custom { ctx, node, .. } => self.jt_custom(*ctx, *node, s, primal),
            Prim::If {
                ctx,
                then_fun,
                else_fun,
                ..
            } => self.jt_if(*ctx, then_fun, else_fun, s, self.full(primal)?),
            Prim::Loop { kind, ctx, fun, .. } => {
                self.jt_loop(*kind, *ctx, fun, s, self.full(primal)?)
            }
            // An `Int` result: its cotangent is dropped, the state's is
            // unchanged (the trip count is locally constant).
            Prim::Trips { ctx, .. } => {
                let n = self.ctx_len(*ctx);
                Ok(truncate(s, n + 1))
            }
        }
    }

    /// The value an entry of a primal point stands for (a zero's witness).
    pub(super) fn witness(&mut self, a: Abs) -> Result<ValId, Error> {
        match a {
            Abs::Val(v) | Abs::Zero(v) => Ok(v),
            Abs::Sparse(_) | Abs::Cont(_) => Err(internal(
                self.b.span,
                "a cotangent or a continuation in a primal point",
            )),
        }
    }

    /// A cotangent's value, None when it is zero (pairs written out).
    pub(super) fn cot_value(&mut self, a: Abs) -> Result<Option<ValId>, Error> {
        match a {
            Abs::Val(v) => Ok(Some(v)),
            Abs::Zero(_) => Ok(None),
            Abs::Sparse(id) => Ok(Some(self.materialize_sparse(id)?)),
            Abs::Cont(_) => Err(internal(self.b.span, "a continuation as a cotangent")),
        }
    }

    /// A cotangent with its pairs written out (`Abs::Val`), others as they are.
    pub(super) fn dense(&mut self, a: Abs) -> Result<Abs, Error> {
        Ok(match a {
            Abs::Sparse(id) => Abs::Val(self.materialize_sparse(id)?),
            other => other,
        })
    }

    /// `J^T reduce` (Fig. 10), with the scan-based formula that needs no
    /// division:
    /// `A0 = shift1R (scanl f z A)`, `B = map2 ∂x f A0 A`,
    /// `A2 = map2 ∂y f A0 A`, `A3 = shift1L (scanr (*) 1 B)`, and the
    /// cotangent of A is `map2 (u,v. u * v * zbar) A2 A3`. Fig. 10 takes
    /// `shift1L` before the `scanr`; taking it after gives the same array
    /// for n >= 1 and the right (empty) one for n = 0.
    fn jt_reduce(&mut self, body: TermId, init: TermId, a: Abs, z: ValId) -> Result<ValId, Error> {
        let a = self.materialize(a)?;
        let aty = self.b.ty(a).clone();
        let y1 = self.value(init, &[])?;
        let f = self.lambda2(body, true)?;
        let operands = vec![f, self.b.use_val(y1), self.b.use_val(a)];
        let e = self.b.prim(P::Scanl, operands, plus_one(&aty));
        let scan = self.b.bind(e, "s");
        let e = self.b.use_val(scan);
        let e = self.b.prim(P::Shift1R, vec![e], aty.clone());
        let a0 = self.b.bind(e, "a");
        let mut partials = Vec::new();
        for c in 0..2 {
            let lam = self.partial_lambda(body, c)?;
            let operands = vec![lam, self.b.use_val(a0), self.b.use_val(a)];
            let e = self.b.prim(P::Map2, operands, aty.clone());
            partials.push(self.b.bind(e, "a"));
        }
        let mul = self.mul_lambda(None);
        let one = self.b.real_node(1.0);
        let bx = self.b.use_val(partials[0]);
        let e = self.b.prim(P::Scanr, vec![mul, one, bx], plus_one(&aty));
        let sc = self.b.bind(e, "s");
        let e = self.b.use_val(sc);
        let e = self.b.prim(P::Shift1L, vec![e], aty.clone());
        let a3 = self.b.bind(e, "a");
        let mul_z = self.mul_lambda(Some(z));
        let operands = vec![mul_z, self.b.use_val(partials[1]), self.b.use_val(a3)];
        let e = self.b.prim(P::Map2, operands, aty);
        Ok(self.b.bind(e, "d"))
    }

    /// `fun (x, y) -> ∂_c body(x, y)`, for the derivative `body` of a
    /// closed function of two reals.
    fn partial_lambda(&mut self, body: TermId, c: usize) -> Result<ExprId, Error> {
        let params = self.b.params(&[(Ty::Real, "x"), (Ty::Real, "y")]);
        self.b.open();
        let inputs = params.iter().map(|&p| Abs::Val(p)).collect();
        let seed = Abs::Val(self.b.real(1.0));
        let (_, cot) = self.grad(body, inputs, seed)?;
        let d = self.materialize(cot[c])?;
        let e = self.b.use_val(d);
        let body = self.b.close_pruned(e);
        Ok(self.b.lambda(&params, body))
    }

    /// `fun (u, v) -> u * v` (times `z` when given).
    pub(super) fn mul_lambda(&mut self, z: Option<ValId>) -> ExprId {
        let params = self.b.params(&[(Ty::Real, "u"), (Ty::Real, "v")]);
        self.b.open();
        let mut e = self.b.bin_vals(P::Mul, params[0], params[1]);
        if let Some(z) = z.filter(|&z| !self.b.is_const(z, 1.0)) {
            let zz = self.b.use_val(z);
            e = self.b.bin(P::Mul, e, zz);
        }
        let body = self.b.close_pruned(e);
        self.b.lambda(&params, body)
    }

    /// `fun (u, v) -> u +^ v` on a ground type.
    pub(super) fn add_lambda(&mut self, ty: &Ty) -> ExprId {
        let params = self.b.params(&[(ty.clone(), "u"), (ty.clone(), "v")]);
        self.b.open();
        let r = self.add_vals(params[0], params[1]);
        let e = self.b.use_val(r);
        let body = self.b.close_pruned(e);
        self.b.lambda(&params, body)
    }

    /// `old +^ d * z`, in one binding.
    fn accumulate(&mut self, old: Abs, d: Partial, z: ValId) -> Result<Abs, Error> {
        let old = self.dense(old)?;
        // With the seed 1, `d * z` is `d`.
        if let (Partial::Term(d), true) = (&d, self.b.is_const(z, 1.0)) {
            return Ok(Abs::Val(match old {
                Abs::Zero(_) => self.b.bind(*d, "d"),
                Abs::Val(o) => {
                    let oe = self.b.use_val(o);
                    let e = self.b.bin(P::Add, oe, *d);
                    self.b.bind(e, "d")
                }
                Abs::Cont(_) | Abs::Sparse(_) => {
                    return Err(internal(self.b.span, "a continuation as a cotangent"));
                }
            }));
        }
        let contrib = match d {
            Partial::One => None,
            Partial::MinusOne => Some(None),
            Partial::Term(e) => Some(Some(e)),
        };
        match old {
            Abs::Zero(_) => Ok(Abs::Val(match contrib {
                None => z,
                Some(None) => {
                    let zz = self.b.use_val(z);
                    let e = self.b.un(P::Neg, zz);
                    self.b.bind(e, "d")
                }
                Some(Some(d)) => {
                    let zz = self.b.use_val(z);
                    let e = self.b.bin(P::Mul, d, zz);
                    self.b.bind(e, "d")
                }
            })),
            Abs::Val(o) => {
                let oe = self.b.use_val(o);
                let zz = self.b.use_val(z);
                let e = match contrib {
                    None => self.b.bin(P::Add, oe, zz),
                    Some(None) => self.b.bin(P::Sub, oe, zz),
                    Some(Some(d)) => {
                        let dz = self.b.bin(P::Mul, d, zz);
                        self.b.bin(P::Add, oe, dz)
                    }
                };
                Ok(Abs::Val(self.b.bind(e, "d")))
            }
            Abs::Cont(_) | Abs::Sparse(_) => {
                Err(internal(self.b.span, "a continuation as a cotangent"))
            }
        }
    }

    /// `a +^ b`.
    pub(super) fn add(&mut self, a: Abs, b: Abs) -> Result<Abs, Error> {
        match (a, b) {
            (Abs::Zero(_), x) | (x, Abs::Zero(_)) => Ok(x),
            (Abs::Val(x), Abs::Val(y)) => Ok(Abs::Val(self.add_vals(x, y))),
            (Abs::Sparse(_), _) | (_, Abs::Sparse(_)) => self.add_sparse(a, b),
            _ => Err(internal(self.b.span, "a continuation as a cotangent")),
        }
    }

    /// `a +^_G b` for values of a ground type G.
    fn add_vals(&mut self, a: ValId, b: ValId) -> ValId {
        match self.b.ty(a).clone() {
            Ty::Real | Ty::Int => {
                let e = self.b.bin_vals(P::Add, a, b);
                let ty = self.b.ty(a).clone();
                self.b.out.types[e.index()] = ty;
                self.b.bind(e, "d")
            }
            Ty::Array(_, elem) => {
                let params = self
                    .b
                    .params(&[((*elem).clone(), "u"), ((*elem).clone(), "v")]);
                self.b.open();
                let r = self.add_vals(params[0], params[1]);
                let e = self.b.use_val(r);
                let body = self.b.close_pruned(e);
                let lam = self.b.lambda(&params, body);
                let ty = self.b.ty(a).clone();
                let operands = vec![lam, self.b.use_val(a), self.b.use_val(b)];
                let e = self.b.prim(P::Map2, operands, ty);
                self.b.bind(e, "d")
            }
            Ty::Tuple(_) => {
                let xs = self.b.unpack(a, "d");
                let ys = self.b.unpack(b, "d");
                let sums: Vec<ValId> = xs
                    .iter()
                    .zip(&ys)
                    .map(|(&x, &y)| self.add_vals(x, y))
                    .collect();
                let items = sums.iter().map(|&v| self.b.use_val(v)).collect();
                let ty = self.b.ty(a).clone();
                let e = self.b.add(Expr::Tuple(items), ty);
                self.b.bind(e, "d")
            }
            Ty::Bool | Ty::Func(..) => a,
        }
    }

    /// `0_G` with the shape of the witness `w` (`ZerosLike`).
    pub(super) fn zero_of(&mut self, w: ValId) -> ValId {
        match self.b.ty(w).clone() {
            Ty::Real | Ty::Func(..) => self.b.real(0.0),
            Ty::Int => {
                let e = self.b.add(Expr::Int(0), Ty::Int);
                self.b.bind(e, "z")
            }
            Ty::Bool => {
                let e = self.b.add(Expr::Bool(false), Ty::Bool);
                self.b.bind(e, "z")
            }
            Ty::Array(_, elem) => {
                let params = self.b.params(&[((*elem).clone(), "x")]);
                self.b.open();
                let r = self.zero_of(params[0]);
                let e = self.b.use_val(r);
                let body = self.b.close_pruned(e);
                let lam = self.b.lambda(&params, body);
                let ty = self.b.ty(w).clone();
                let operands = vec![lam, self.b.use_val(w)];
                let e = self.b.prim(P::Map, operands, ty);
                self.b.bind(e, "z")
            }
            Ty::Tuple(_) => {
                let parts = self.b.unpack(w, "w");
                let zs: Vec<ValId> = parts.iter().map(|&p| self.zero_of(p)).collect();
                let items = zs.iter().map(|&v| self.b.use_val(v)).collect();
                let ty = self.b.ty(w).clone();
                let e = self.b.add(Expr::Tuple(items), ty);
                self.b.bind(e, "z")
            }
        }
    }

    /// The partials of a real operator at the primal arguments `xs`: the
    /// table of `syntax::derivatives` written with this stage's builder.
    /// The primal result, which J^T does not see, is recomputed.
    fn partials(&mut self, op: P, xs: &[ValId]) -> Result<Vec<Partial>, Error> {
        let span = self.b.span;
        let mut to = Terms {
            b: &mut self.b,
            op,
            xs,
        };
        derivatives::instantiate_partials(op, &mut to)?.ok_or_else(|| no_rule(span, op))
    }
}

/// The table's terms over the primal arguments, in Target.
struct Terms<'a> {
    b: &'a mut super::emit::Builder,
    op: P,
    xs: &'a [ValId],
}

impl Instantiate for Terms<'_> {
    type Out = ExprId;
    type Error = Error;

    fn arg(&mut self, i: usize) -> ExprId {
        self.b.use_val(self.xs[i])
    }

    fn result(&mut self) -> ExprId {
        let args = (0..self.xs.len()).map(|i| self.arg(i)).collect();
        self.apply(self.op, args)
    }

    fn real(&mut self, c: f64) -> ExprId {
        self.b.real_node(c)
    }

    fn apply(&mut self, op: P, args: Vec<ExprId>) -> ExprId {
        self.b.prim(op, args, Ty::Real)
    }

    fn compare(&mut self, cmp: P, a: ExprId, c: ExprId) -> ExprId {
        self.b.cmp(cmp, a, c)
    }

    fn ite(&mut self, c: ExprId, a: ExprId, e: ExprId) -> Result<ExprId, Error> {
        Ok(self.b.ite(c, a, e))
    }
}

fn no_rule(span: syntax::Span, op: P) -> Error {
    Error::Shape {
        span,
        message: format!("no derivative rule for `{}`", op.symbol()),
    }
}
