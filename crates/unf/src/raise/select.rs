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
use syntax::{Expr, Prim as P, Ty};

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
    /// initial value: `(ifold (fun ((m, j), i) -> ...) (s0, -1) n).2`.
    fn winner(&mut self, sel: Selection, s0: ValId, xs: ValId) -> Result<ValId, Error> {
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
