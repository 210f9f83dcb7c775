//! The transposed Jacobians of `scatter` and the histograms, written as
//! Target terms over their partial-derivative primitives (`gather`,
//! `gather_won`, `pick_dest`, the winners, `dhist_mul_*`; their meaning is
//! `syntax::hist`). Each costs O(n + m) for n elements into m bins: the
//! Jacobian of a histogram is a diagonal on `dest` plus one entry per
//! element (element j reaches one bin), so its transpose is an elementwise
//! product on `dest` and a gather on the elements, never a dense one-hot
//! array per element (docs/derivatives.md, "Scatter and histograms").

use super::emit::ValId;
use super::{Raise, internal};
use crate::error::Error;
use syntax::fxhash::FxHashMap;
use syntax::{Prim as P, Ty};

impl Raise<'_> {
    /// The cotangents of `dest` and of `vs` of `op dest is vs` at the
    /// cotangent `z` of its result.
    pub(super) fn jt_hist(
        &mut self,
        op: P,
        d: ValId,
        is: ValId,
        v: ValId,
        z: ValId,
    ) -> Result<(ValId, ValId), Error> {
        self.b.retype = true;
        let (dty, vty) = (self.b.ty(d).clone(), self.b.ty(v).clone());
        let winners = match &dty {
            Ty::Array(m, _) => Ty::array(m.clone(), Ty::Int),
            _ => Ty::array(syntax::Size::Dyn, Ty::Int),
        };
        Ok(match op {
            P::Scatter => {
                let zeros = self.zero_of(v);
                let dd = self.hist_call(P::Scatter, &[z, is, zeros], &dty);
                let w = self.hist_call(P::WinnerScatter, &[z, is], &winners);
                (dd, self.hist_call(P::GatherWon, &[z, is, w], &vty))
            }
            P::HistAdd => (z, self.hist_call(P::Gather, &[z, is], &vty)),
            P::HistMul => {
                let pd = self.hist_call(P::DHistMulDest, &[d, is, v], &dty);
                let dd = self.times(z, pd, &dty);
                let pv = self.hist_call(P::DHistMulVals, &[d, is, v], &vty);
                let g = self.hist_call(P::Gather, &[z, is], &vty);
                (dd, self.times(g, pv, &vty))
            }
            _ => {
                let which = if op == P::HistMax {
                    P::WinnerMax
                } else {
                    P::WinnerMin
                };
                let w = self.hist_call(which, &[d, is, v], &winners);
                let dd = self.hist_call(P::PickDest, &[z, w], &dty);
                (dd, self.hist_call(P::GatherWon, &[z, is, w], &vty))
            }
        })
    }

    /// The cotangents of the operands of a histogram's partial `op args`
    /// (or of `hist_add_rows`, by its rule `cotangent_hist_add_rows`)
    /// (what an inner `grad_rev` spliced in: reverse over reverse) at the
    /// cotangent `z` of its result, each with the operand's position: the
    /// rule `cotangent_<op>` of `syntax::hist::rules` written out at the
    /// operands and `z` (a scatter-add for a gather, a gather for a
    /// histogram, O(n + m)). Only the operands that are arrays of reals
    /// have one, in order; the winners (arrays of `Int`) have none.
    pub(super) fn jt_partial(
        &mut self,
        op: P,
        args: &[ValId],
        z: ValId,
    ) -> Result<Vec<(usize, ValId)>, Error> {
        // Arrays of reals, or of rows of reals (`hist_add_rows`).
        let reals: Vec<usize> = (0..args.len())
            .filter(|&i| match self.b.ty(args[i]) {
                Ty::Array(_, e) => match &**e {
                    Ty::Real => true,
                    Ty::Array(_, r) => **r == Ty::Real,
                    _ => false,
                },
                _ => false,
            })
            .collect();
        let rules = syntax::hist::rules()
            .map_err(|e| internal(self.b.span, &format!("the partials' rules: {e}")))?;
        let name = format!("cotangent_{}", op.symbol());
        let Some(def) = rules.def(&name) else {
            return Ok(Vec::new());
        };
        if def.params.len() != args.len() + 1 || reals.is_empty() {
            return Err(internal(
                self.b.span,
                &format!("the rule `{name}` does not fit"),
            ));
        }
        // The rule's sizes are its own: the module is retyped afterwards.
        self.b.retype = true;
        let mut subst = FxHashMap::default();
        for (param, &v) in def.params.iter().zip(args.iter().chain([&z])) {
            let e = self.b.use_val(v);
            let bound = self.b.bind_name(e, param.name.as_str());
            subst.insert(param.name.clone(), bound);
        }
        let cot = self.b.paste(rules, def.body, &subst);
        let whole = self.b.bind(cot, "d");
        let parts = if reals.len() == 1 {
            vec![whole]
        } else {
            self.b.unpack(whole, "d")
        };
        Ok(reals.into_iter().zip(parts).collect())
    }

    /// `op args`, bound to a fresh name.
    fn hist_call(&mut self, op: P, args: &[ValId], ty: &Ty) -> ValId {
        let operands: Vec<_> = args.iter().map(|&a| self.b.use_val(a)).collect();
        self.call(op, &operands, ty.clone(), "d")
    }

    /// `map2 (*) a b`.
    fn times(&mut self, a: ValId, b: ValId, ty: &Ty) -> ValId {
        let lam = self.mul_lambda(None);
        let operands = vec![lam, self.b.use_val(a), self.b.use_val(b)];
        let e = self.b.prim(P::Map2, operands, ty.clone());
        self.b.bind(e, "d")
    }
}
