//! The transposed Jacobian of a `max` or `min` reduction by selection.
//!
//! `reduce (fun (a, b) -> max a b) z A` (and `min`, either argument order,
//! as `reduce` or `foldl`) passes its result's cotangent to exactly one
//! place: the element that won the last comparison it took part in, or the
//! initial value if no element won. The general formula (Fig. 10's scans,
//! or `foldl`'s stored states and backward scan, `loops.rs`) finds that
//! place by storing all n prefix results and running a scan of 0/1
//! partials back over them: two extra passes and an n-element array, for
//! what one comparison pass gives. Here the reverse pass recomputes the
//! winner's index with one `ifold` over A and writes the cotangent as
//! `build n (fun i -> if i == w then z else 0)`.
//!
//! The same bits as the general formula: its partials select
//! (`max x y`'s are `if x > y then 1 else 0` and its complement,
//! crates/syntax/src/derivatives.rs), so the backward scan carries `z` to
//! the winner and an exact `0` everywhere else, and the winner here is
//! decided by the same comparison, ties included (a tie goes to the
//! second argument). lse's shift and kmeans' nearest centroid are such
//! reductions.

use super::emit::ValId;
use super::loops::elem_of;
use super::{Abs, Raise, internal};
use crate::error::Error;
use crate::ir::Fun;
use syntax::{Expr, ExprId, Prim as P, Ty};

/// A reduction whose function is `max` or `min` of its two parameters.
#[derive(Debug, Clone, Copy)]
pub(super) struct Selection {
    /// `Gt` for `max`, `Lt` for `min`: the first argument wins where
    /// `first <op> second` holds.
    wins: P,
    /// Whether the accumulator is the first argument (`max a b` with `a`
    /// the accumulator) rather than the second (`max b a`).
    acc_first: bool,
}

impl Raise<'_> {
    /// The selection a loop's function makes, when it is `max` or `min`
    /// of its two real parameters and reads no free variable.
    pub(super) fn selection(&self, fun: &Fun) -> Option<Selection> {
        let exprs = &self.m.source.exprs;
        let Some(Expr::Lambda { params, body }) = exprs.get(fun.lambda.index()) else {
            return None;
        };
        if !fun.free.is_empty() || params.len() != 2 {
            return None;
        }
        if params.iter().any(|p| p.ty.as_ref() != Some(&Ty::Real)) {
            return None;
        }
        let Some(Expr::Prim { op, args }) = exprs.get(body.index()) else {
            return None;
        };
        let wins = match op {
            P::Max => P::Gt,
            P::Min => P::Lt,
            _ => return None,
        };
        let var = |e: &syntax::ExprId| match exprs.get(e.index()) {
            Some(Expr::Var(name)) => params.iter().position(|p| &p.name == name),
            _ => None,
        };
        match (var(args.first()?), var(args.get(1)?)) {
            (Some(0), Some(1)) => Some(Selection {
                wins,
                acc_first: true,
            }),
            (Some(1), Some(0)) => Some(Selection {
                wins,
                acc_first: false,
            }),
            _ => None,
        }
    }

    /// The cotangents of the initial value `s0` and of the elements `xs`
    /// of the reduction `sel` whose result has cotangent `z`.
    pub(super) fn jt_select(
        &mut self,
        sel: Selection,
        s0: ValId,
        xs: ValId,
        z: ValId,
    ) -> Result<(ValId, Abs), Error> {
        if elem_of(self.b.ty(xs)) != Ty::Real || *self.b.ty(s0) != Ty::Real {
            return Err(internal(self.b.span, "a selection over non-reals"));
        }
        let w = self.winner(sel, s0, xs)?;
        let none = self.b.int(-1);
        let d0 = self.pick(w, none, z);
        // One pair (w, z); `hist_add` skips the index -1 when it is
        // written out, so the initial value's win adds nothing to A.
        self.maybe_none.push(w);
        let dx = self.add_read(Abs::Zero(xs), xs, w, z)?;
        Ok((d0, dx))
    }

    /// The index of the element that wins the reduction, -1 for the
    /// initial value.
    ///
    /// Note [winner by scans]: when the accumulator is the first argument
    /// (`max a b`, `a` the accumulator), an element wins iff `!(held op
    /// e)`, and with no NaN among `s0` and `A` the held value after each
    /// step equals (by `==`) the largest (smallest) value so far. So the
    /// winner is the last index whose element `==` the reduction's result
    /// `m`, or -1 when none does (`s0` beat every element): each element
    /// from the last equal one on is taken, each one after it is beaten by
    /// a held value equal to `m`. A NaN breaks this (`held > NaN` is false:
    /// the NaN is taken, and the next element then too), so the last NaN's
    /// index is found beside it, and when there is one (or `s0` is NaN)
    /// the sequential `ifold` below decides: the same index in every case.
    /// The two scans have no carried comparison, so they vectorize (the
    /// `ifold` is one compare-and-select chain through the held value);
    /// `m` is the primal's own reduction, which `cse` shares. With the
    /// element first (`max e a`: ties keep the held value, the first
    /// maximum wins) the `ifold` is used as it is, and so it is inside a
    /// loop's function: there the rows are short (kmeans' nearest of k
    /// centroids per point), and the scans, beside the `ifold` the
    /// primal's `reduce min` already runs in lanes, made GradBench's
    /// kmeans Hessian diagonal 2.3x (k = 10) to 4x (k = 100) slower,
    /// where lse's gradient (one long array) got 2-9% faster (measured
    /// 2026-12-04, docs/gradbench.md).
    fn winner(&mut self, sel: Selection, s0: ValId, xs: ValId) -> Result<ValId, Error> {
        if !sel.acc_first || self.b.depth() > 1 {
            return self.winner_by_fold(sel, s0, xs);
        }
        let m = self.reduce_selection(sel, s0, xs)?;
        let (last_eq, last_nan) = self.last_equal_and_nan(xs, m)?;
        let none = {
            let (l, k) = (self.b.use_val(last_nan), self.b.add(Expr::Int(-1), Ty::Int));
            self.b.cmp(P::Eq, l, k)
        };
        let ordered = {
            let (a, b) = (self.b.use_val(s0), self.b.use_val(s0));
            self.b.cmp(P::Eq, a, b)
        };
        let cond = self.b.prim(P::And, vec![none, ordered], Ty::Bool);
        let fast = self.b.use_val(last_eq);
        self.b.open();
        let w = self.winner_by_fold(sel, s0, xs)?;
        let we = self.b.use_val(w);
        let slow = self.b.close_pruned(we);
        let e = self.b.ite(cond, fast, slow);
        Ok(self.b.bind(e, "w"))
    }

    /// `reduce (fun (a, b) -> max a b) s0 xs` (or `min`): the selection's
    /// own result.
    fn reduce_selection(&mut self, sel: Selection, s0: ValId, xs: ValId) -> Result<ValId, Error> {
        let op = if sel.wins == P::Gt { P::Max } else { P::Min };
        let f = self.lam(&[(Ty::Real, "a"), (Ty::Real, "b")], |r, p| {
            let (a, b) = (r.b.use_val(p[0]), r.b.use_val(p[1]));
            let e = r.b.prim_r(op, vec![a, b]);
            Ok(r.b.bind(e, "m"))
        })?;
        let args = [f, self.b.use_val(s0), self.b.use_val(xs)];
        Ok(self.call(P::Reduce, &args, Ty::Real, "m"))
    }

    /// The last index whose element `== m` and the last whose element is
    /// NaN (-1 for none), in one pass: `ifold (fun ((j, q), i) -> let e =
    /// xs[i] in (if e == m then i else j, if e != e then i else q)) (-1,
    /// -1) (length xs)`.
    fn last_equal_and_nan(&mut self, xs: ValId, m: ValId) -> Result<(ValId, ValId), Error> {
        let st = Ty::Tuple(vec![Ty::Int, Ty::Int]);
        let step = self.lam(&[(st.clone(), "st"), (Ty::Int, "i")], |r, p| {
            let held = r.b.unpack(p[0], "j");
            let ie = r.b.use_val(p[1]);
            let e = r.b.index(xs, ie);
            let e = r.b.bind(e, "e");
            let pick = |r: &mut Self, cond: ExprId, keep: ValId| {
                let (i, k) = (r.b.use_val(p[1]), r.b.use_val(keep));
                r.b.ite(cond, i, k)
            };
            let eq = {
                let (a, b) = (r.b.use_val(e), r.b.use_val(m));
                r.b.cmp(P::Eq, a, b)
            };
            let j = pick(r, eq, held[0]);
            let nan = {
                let (a, b) = (r.b.use_val(e), r.b.use_val(e));
                r.b.cmp(P::Ne, a, b)
            };
            let q = pick(r, nan, held[1]);
            let t = r.b.add(Expr::Tuple(vec![j, q]), st.clone());
            Ok(r.b.bind(t, "j"))
        })?;
        let init = {
            let items = vec![
                self.b.add(Expr::Int(-1), Ty::Int),
                self.b.add(Expr::Int(-1), Ty::Int),
            ];
            self.b.add(Expr::Tuple(items), st.clone())
        };
        let n = self.b.length(xs);
        let both = self.call(P::Ifold, &[step, init, n], st, "j");
        let parts = self.b.unpack(both, "j");
        Ok((parts[0], parts[1]))
    }

    /// The winner by the reduction's own comparisons, in order:
    /// `(ifold (fun ((m, j), i) -> ...) (s0, -1) n).2`.
    fn winner_by_fold(&mut self, sel: Selection, s0: ValId, xs: ValId) -> Result<ValId, Error> {
        let st = Ty::Tuple(vec![Ty::Real, Ty::Int]);
        let step = self.lam(&[(st.clone(), "st"), (Ty::Int, "i")], |r, p| {
            let held = r.b.unpack(p[0], "w");
            let ie = r.b.use_val(p[1]);
            let e = r.b.index(xs, ie);
            let e = r.b.bind(e, "e");
            let (first, second) = if sel.acc_first {
                (held[0], e)
            } else {
                (e, held[0])
            };
            let (f, s) = (r.b.use_val(first), r.b.use_val(second));
            let cond = r.b.prim(sel.wins, vec![f, s], Ty::Bool);
            let acc = r.b.use_val(p[0]);
            let fresh = {
                let items = vec![r.b.use_val(e), r.b.use_val(p[1])];
                r.b.add(Expr::Tuple(items), st.clone())
            };
            let (then_branch, else_branch) = if sel.acc_first {
                (acc, fresh)
            } else {
                (fresh, acc)
            };
            let e = r.b.ite(cond, then_branch, else_branch);
            Ok(r.b.bind(e, "w"))
        })?;
        let init = {
            let items = vec![self.b.use_val(s0), self.b.add(Expr::Int(-1), Ty::Int)];
            self.b.add(Expr::Tuple(items), st.clone())
        };
        let n = self.b.length(xs);
        let r = self.call(P::Ifold, &[step, init, n], st, "w");
        let re = self.b.use_val(r);
        let e = self.b.add(
            Expr::Proj {
                tuple: re,
                index: 2,
            },
            Ty::Int,
        );
        Ok(self.b.bind(e, "w"))
    }

    /// `if w == i then z else 0`.
    fn pick(&mut self, w: ValId, i: ValId, z: ValId) -> ValId {
        let (we, ie) = (self.b.use_val(w), self.b.use_val(i));
        let cond = self.b.prim(P::Eq, vec![we, ie], Ty::Bool);
        let (ze, zero) = (self.b.use_val(z), self.b.real_node(0.0));
        let e = self.b.ite(cond, ze, zero);
        self.b.bind(e, "d")
    }
}
