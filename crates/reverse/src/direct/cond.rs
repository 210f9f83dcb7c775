//! Conditionals in the direct macro: seeds/000 Section 7.2, "Solution".
//!
//! ```text
//! D_{Γ;Y}(if e1 then e2 else e3) = let b = e1 in
//!   <if b then e2 else e3, fun (X, z) -> Y(X +^ (∇_Γ e2 * b +^ ∇_Γ e3 * (1 - b)) * z)>
//! ```
//!
//! The condition is evaluated on primal values only: its real operands are
//! computed by the macro and their continuations called with a zero
//! cotangent (Section 7.3: non-smooth values are external to the
//! differentiation), so Y is still used exactly once. Where the paper
//! multiplies by `b` and `1 - b`, the output branches on `b` instead, so the
//! branch not taken is never evaluated, neither its value nor its gradient
//! (`log x` at `x = -2` in an untaken branch gives no NaN: docs/derivatives.md,
//! the same choice as the UNF path).
//!
//! `∇_Γ e` is the macro applied to the branch with the identity as Y, in a
//! block of its own, with respect to the branch's free variables F (the
//! union over both branches, a variable one branch does not read getting
//! `0` there):
//! - when the result is a real, the value and `∇_F e` (seeded with 1) are
//!   computed together in the forward pass, `let t = if b then (v2, ∇_F e2)
//!   else (v3, ∇_F e3)`, and the continuation adds `t.(j+1) * z` into each
//!   `F_j`: a chain of `if`/`else if` of depth h gives an output of size
//!   O(h) (the branch's gradient is never written twice);
//! - for another ground type the seed is the cotangent z, known only in the
//!   backward pass: the forward pass computes `if b then e2 else e3`, and
//!   the continuation `let z' = z in if b then ∇_F e2 (z') else ∇_F e3 (z')`,
//!   which evaluates the taken branch again (as the paper's `∇_Γ e2` does).

use super::emit::{Atom, Emit};
use super::ground::{Cot, materialize, scale};
use super::{Cots, Direct, Env, K, Y, add_into, call_k, call_y};
use syntax::{Expr, ExprId, Name, Prim, Ty};

impl Direct<'_> {
    /// `D_{Γ;Y}(if cond then a else c)` (module documentation).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn d_if(
        &self,
        b: &mut Emit,
        e: ExprId,
        cond: ExprId,
        a: ExprId,
        c: ExprId,
        env: &Env,
        y: Y,
        hint: Option<Name>,
    ) -> (Atom, K) {
        let (test, y1) = self.d_cond(b, cond, env, y);
        let span = self.m.span(e);
        b.span = span;
        let test = b.bind("b", test);
        let ty = self.ty(e);
        let frees = self.branch_frees(b, &[a, c], env);
        if ty == Ty::Real {
            self.d_if_real(b, e, &test, [a, c], env, frees, y1, hint)
        } else {
            self.d_if_other(b, e, &test, [a, c], env, frees, y1, hint)
        }
    }

    /// A conditional with a real result: value and gradient together in
    /// the forward pass.
    #[allow(clippy::too_many_arguments)]
    fn d_if_real(
        &self,
        b: &mut Emit,
        e: ExprId,
        test: &Atom,
        branches: [ExprId; 2],
        env: &Env,
        frees: Vec<(Name, Ty)>,
        y1: Y,
        hint: Option<Name>,
    ) -> (Atom, K) {
        let mut arms = Vec::with_capacity(2);
        for branch in branches {
            b.open();
            let identity: Y = Box::new(|_, x| x);
            let (v, k) = self.d(b, branch, env, identity, None);
            let mut x = call_k(k, b, Cots::new(), Cot::Val(Atom::Real(1.0)));
            let mut items = vec![b.atom(&v)];
            for (name, ty) in &frees {
                let g = x.remove(name).unwrap_or(Cot::Zero);
                items.push(materialize(b, ty, g, &Atom::Var(name.clone())));
            }
            let result = match items.as_slice() {
                [only] => *only,
                _ => b.node(Expr::Tuple(items)),
            };
            arms.push(b.close(result));
        }
        b.span = self.m.span(e);
        let te = b.atom(test);
        let ite = b.ite(te, arms[0], arms[1]);
        if frees.is_empty() {
            let r = b.bind_hint(hint, "v", ite);
            let k: K = Box::new(move |b, x, _z| call_y(y1, b, x));
            return (r, k);
        }
        let t = b.bind("t", ite);
        let r = {
            let te = b.atom(&t);
            let p = b.proj(te, 1);
            b.bind_hint(hint, "v", p)
        };
        let span = self.m.span(e);
        let k: K = Box::new(move |b, mut x, z| {
            let Cot::Val(z) = z else {
                return call_y(y1, b, x);
            };
            b.span = span;
            for (j, (name, ty)) in frees.iter().enumerate() {
                let g = b.component(&t, j as u32 + 2);
                let gz = scale(b, ty, &g, &z);
                add_into(b, &mut x, name, Cot::Val(gz));
            }
            call_y(y1, b, x)
        });
        (r, k)
    }

    /// A conditional of another ground type: the branch's gradient, seeded
    /// with the cotangent, in the backward pass.
    #[allow(clippy::too_many_arguments)]
    fn d_if_other(
        &self,
        b: &mut Emit,
        e: ExprId,
        test: &Atom,
        branches: [ExprId; 2],
        env: &Env,
        frees: Vec<(Name, Ty)>,
        y1: Y,
        hint: Option<Name>,
    ) -> (Atom, K) {
        let ty = self.ty(e);
        let values = branches.map(|br| self.copy(b, br, env));
        let te = b.atom(test);
        let ite = b.ite(te, values[0], values[1]);
        let r = b.bind_hint(hint, "v", ite);
        if frees.is_empty() {
            let k: K = Box::new(move |b, x, _z| call_y(y1, b, x));
            return (r, k);
        }
        // The backward `if`, written now (the macro is at hand) as an
        // expression over the seed `zs`, which the continuation binds.
        let zs = b.fresh("z");
        b.slot_ty.insert(zs.clone(), ty.clone());
        let mut arms = Vec::with_capacity(2);
        for branch in branches {
            b.open();
            let identity: Y = Box::new(|_, x| x);
            let (_, k) = self.d(b, branch, env, identity, None);
            let mut x = call_k(k, b, Cots::new(), Cot::Val(Atom::Var(zs.clone())));
            let items: Vec<ExprId> = frees
                .iter()
                .map(|(name, ty)| {
                    let g = x.remove(name).unwrap_or(Cot::Zero);
                    materialize(b, ty, g, &Atom::Var(name.clone()))
                })
                .collect();
            let result = match items.as_slice() {
                [only] => *only,
                _ => b.node(Expr::Tuple(items)),
            };
            arms.push(b.close(result));
        }
        b.span = self.m.span(e);
        let te = b.atom(test);
        let backward = b.ite(te, arms[0], arms[1]);
        let span = self.m.span(e);
        let k: K = Box::new({
            let r = r.clone();
            move |b, mut x, z| {
                if z.is_zero() {
                    return call_y(y1, b, x);
                }
                b.span = span;
                let ze = materialize(b, &ty, z, &r);
                b.bind_as(zs, ze);
                let t = b.bind("t", backward);
                for (j, (name, _)) in frees.iter().enumerate() {
                    let g = if frees.len() == 1 {
                        t.clone()
                    } else {
                        b.component(&t, j as u32 + 1)
                    };
                    add_into(b, &mut x, name, Cot::Val(g));
                }
                call_y(y1, b, x)
            }
        });
        (r, k)
    }

    /// The condition of an `if` on primal values: the Bool expression, and
    /// the continuation that runs those of its real operands with a zero
    /// cotangent, then Y.
    fn d_cond(&self, b: &mut Emit, e: ExprId, env: &Env, y: Y) -> (ExprId, Y) {
        syntax::stack::guard(|| {
            let span = self.m.span(e);
            match self.m.expr(e) {
                Expr::Prim { op, args } if matches!(op, Prim::And | Prim::Or) => {
                    let (l, y1) = self.d_cond(b, args[0], env, y);
                    let (r, y2) = self.d_cond(b, args[1], env, y1);
                    b.span = span;
                    (b.bin(*op, l, r), y2)
                }
                Expr::Prim {
                    op: Prim::Not,
                    args,
                } => {
                    let (a, y1) = self.d_cond(b, args[0], env, y);
                    b.span = span;
                    (b.un(Prim::Not, a), y1)
                }
                Expr::Prim { op, args } => {
                    // A comparison (`check` admits nothing else here).
                    let (a1, k1) = self.d(b, args[0], env, y, None);
                    let y1: Y = Box::new(move |b, x| call_k(k1, b, x, Cot::Zero));
                    let (a2, k2) = self.d(b, args[1], env, y1, None);
                    let y2: Y = Box::new(move |b, x| call_k(k2, b, x, Cot::Zero));
                    b.span = span;
                    let (e1, e2) = (b.atom(&a1), b.atom(&a2));
                    (b.bin(*op, e1, e2), y2)
                }
                _ => {
                    // `true` or `false`.
                    let lit = self.m.expr(e).clone();
                    b.span = span;
                    (b.node(lit), y)
                }
            }
        })
    }

    /// Whether `e` is a condition the macro takes: comparisons of values
    /// built from reals, combined by `&&`, `||`, `not`, and `true`/`false`.
    /// Returns the first node that is not, if any.
    pub(super) fn cond_offender(&self, e: ExprId) -> Option<ExprId> {
        syntax::stack::guard(|| match self.m.expr(e) {
            Expr::Bool(_) => None,
            Expr::Prim { op, args } => match op {
                Prim::And | Prim::Or | Prim::Not => {
                    args.iter().find_map(|&a| self.cond_offender(a))
                }
                Prim::Lt | Prim::Le | Prim::Gt | Prim::Ge | Prim::Eq | Prim::Ne => None,
                _ => Some(e),
            },
            _ => Some(e),
        })
    }

    /// The comparisons of a condition whose operands the macro evaluates.
    pub(super) fn cond_operands(&self, e: ExprId, out: &mut Vec<ExprId>) {
        syntax::stack::guard(|| {
            if let Expr::Prim { op, args } = self.m.expr(e) {
                match op {
                    Prim::And | Prim::Or | Prim::Not => {
                        args.iter().for_each(|&a| self.cond_operands(a, out));
                    }
                    _ => out.extend(args.iter().copied()),
                }
            }
        })
    }

    /// The free variables of the branches, as the output names holding
    /// them, with their types; each once, in order of first occurrence.
    fn branch_frees(&self, b: &Emit, branches: &[ExprId], env: &Env) -> Vec<(Name, Ty)> {
        let mut out: Vec<(Name, Ty)> = Vec::new();
        for &br in branches {
            for n in self.free_vars(br) {
                let name = env
                    .get(&n)
                    .cloned()
                    .expect("invariant: core-form programs have no free variables");
                if out.iter().any(|(m, _)| *m == name) {
                    continue;
                }
                let ty = b
                    .slot_ty
                    .get(&name)
                    .cloned()
                    .expect("invariant: every name in scope has a slot type");
                out.push((name, ty));
            }
        }
        out
    }
}
