//! `J^T map` where the result's cotangent is a few one-hot pairs.
//!
//! A selection (`select.rs`) or a read `A[i]` of a map's result gives that
//! result a cotangent that is zero except at a few positions, kept as
//! pairs (`sparse.rs`). The general `J^T map` (`loops.rs`) writes it out
//! and runs the body's reverse derivative on every element, seeded with
//! the zeros too: for kmeans' nearest centroid, the distance's adjoint of
//! all k centroids per point where one has a nonzero cotangent. Here the
//! body's reverse derivative runs at the pairs' elements only, and each
//! element's cotangent is itself a pair of the array it came from (a row,
//! for an array of arrays: `rows.rs`), so a loop around the map keeps
//! them as pairs as well.
//!
//! The general form adds, for every other element, the body's adjoint at
//! a zero cotangent: exactly zero for finite values, so the sums are the
//! same bits, except that a zero it adds may turn a `-0` into `+0`, and
//! an infinite or NaN primal value there (`0 * inf`) made it NaN where
//! this form, like the derivative itself, has no contribution.

use super::emit::ValId;
use super::loops::{array_of, elem_of};
use super::{Abs, Raise, State, at, internal, truncate};
use crate::error::Error;
use crate::ir::Fun;
use syntax::{Expr, Prim as P, Ty};

/// How many pairs a map's result cotangent may have for its elements'
/// adjoints to be written once per pair rather than as one loop: each
/// pair is a copy of the body's reverse derivative in the program.
const MAX_PAIRS: usize = 4;

impl Raise<'_> {
    /// The pairs of a cotangent that is only a few pairs (no dense part,
    /// no segments), if it is one.
    pub(super) fn few_pairs(&self, a: Abs) -> Option<Vec<(ValId, ValId)>> {
        let Abs::Sparse(id) = a else { return None };
        let sp = &self.sparse[id as usize];
        if sp.dense.is_some() || !sp.segs.is_empty() || sp.pairs.len() > MAX_PAIRS {
            return None;
        }
        Some(sp.pairs.iter().copied().collect())
    }

    /// Whether `J^T map` can take these pairs one by one: an index that
    /// may be -1 (`maybe_none`) needs every element to be a real or an
    /// array of reals, whose zero the guard's other branch can write
    /// without reading the array.
    pub(super) fn pairs_fit(&self, fun: &Fun, k: usize, pairs: &[(ValId, ValId)]) -> bool {
        if !pairs.iter().any(|(i, _)| self.maybe_none.contains(i)) {
            return true;
        }
        let ps = self.fun_params(fun);
        ps.len() == k
            && ps.iter().all(|(t, _)| match t {
                Ty::Real => true,
                Ty::Array(_, e) => **e == Ty::Real,
                _ => false,
            })
    }

    /// `J^T map` (k = 1) or `map2` (k = 2) at a cotangent that is `pairs`:
    /// per pair `(i, z)`, the body's reverse derivative at the elements
    /// `A[i]` (and `B[i]`) seeded with z; the free variables' cotangents
    /// added, the elements' added as pairs at i.
    pub(super) fn jt_map_at_pairs(
        &mut self,
        n: usize,
        k: usize,
        fun: &Fun,
        s: State,
        primal: &State,
        pairs: &[(ValId, ValId)],
    ) -> Result<State, Error> {
        let mut s = truncate(s, n + k);
        let mut arrays = Vec::with_capacity(k);
        for c in 0..k {
            arrays.push(self.materialize(at(primal, n + c))?);
        }
        let free: Vec<Abs> = fun
            .free
            .iter()
            .map(|&f| at(primal, f as usize - 1))
            .collect();
        let nf = free.len();
        for &(i, z) in pairs {
            let cot = if self.maybe_none.contains(&i) {
                self.adjoint_if_some(fun, &free, &arrays, i, z)?
            } else {
                self.adjoint_at(fun, &free, &arrays, i, z)?
            };
            for (j, &f) in fun.free.iter().enumerate() {
                let pos = f as usize - 1;
                let acc = self.add(at(&s, pos), cot[j])?;
                s.set_mut(pos, acc);
            }
            for (c, &a) in arrays.iter().enumerate() {
                let Some(d) = self.cot_value(cot[nf + c])? else {
                    continue;
                };
                let acc = if matches!(self.b.ty(a), Ty::Array(..)) {
                    self.add_read(at(&s, n + c), a, i, d)?
                } else {
                    self.add(at(&s, n + c), Abs::Val(d))?
                };
                s.set_mut(n + c, acc);
            }
        }
        Ok(s)
    }

    /// The cotangents of the free variables and the elements of the
    /// body at the elements `i` of the arrays, seeded with z.
    fn adjoint_at(
        &mut self,
        fun: &Fun,
        free: &[Abs],
        arrays: &[ValId],
        i: ValId,
        z: ValId,
    ) -> Result<Vec<Abs>, Error> {
        let mut inputs = free.to_vec();
        for &a in arrays {
            let ie = self.b.use_val(i);
            inputs.push(Abs::Val(self.index_at(a, ie)));
        }
        Ok(self.grad(fun.body, inputs, Abs::Val(z))?.1)
    }

    /// [`Raise::adjoint_at`] where i may be -1: `if i >= 0 then (the
    /// cotangents) else (zeros)` (the pair at -1 that carries the
    /// elements' zeros is skipped when written out).
    fn adjoint_if_some(
        &mut self,
        fun: &Fun,
        free: &[Abs],
        arrays: &[ValId],
        i: ValId,
        z: ValId,
    ) -> Result<Vec<Abs>, Error> {
        let nf = free.len();
        let (ie, zero) = (self.b.use_val(i), self.b.add(Expr::Int(0), Ty::Int));
        let cond = self.b.prim(P::Ge, vec![ie, zero], Ty::Bool);
        self.b.open();
        let cot = self.adjoint_at(fun, free, arrays, i, z)?;
        let nz = self.nonzero(&cot, 0..cot.len());
        let mut vals = Vec::with_capacity(nz.len());
        for &j in &nz {
            let v = self.cot_value(cot[j])?;
            vals.push(v.ok_or_else(|| internal(self.b.span, "a nonzero cotangent is zero"))?);
        }
        let t = self.tuple_of(&vals);
        let te = self.b.use_val(t);
        let then_branch = self.b.close_pruned(te);
        self.b.open();
        let mut zeros = Vec::with_capacity(nz.len());
        for &j in &nz {
            zeros.push(if j < nf {
                let w = self.witness(free[j])?;
                self.zero_of(w)
            } else {
                self.zero_elem(arrays[j - nf])?
            });
        }
        let t = self.tuple_of(&zeros);
        let te = self.b.use_val(t);
        let else_branch = self.b.close_pruned(te);
        let e = self.b.ite(cond, then_branch, else_branch);
        let t = self.b.bind(e, "d");
        let parts = if nz.len() == 1 {
            vec![t]
        } else {
            self.b.unpack(t, "d")
        };
        let mut out: Vec<Abs> = cot;
        for (&j, v) in nz.iter().zip(parts) {
            out[j] = Abs::Val(v);
        }
        Ok(out)
    }

    /// A zero of the elements of `a` (reals, or rows of reals) written
    /// without reading the element that may not exist: a row as long as
    /// `a`'s first, or empty when `a` is (the C backend takes no ragged
    /// arrays; every row of a regular array is as long as its first).
    fn zero_elem(&mut self, a: ValId) -> Result<ValId, Error> {
        if elem_of(self.b.ty(a)) == Ty::Real {
            return Ok(self.b.real(0.0));
        }
        let len = self.b.length(a);
        let zero = self.b.add(Expr::Int(0), Ty::Int);
        let cond = self.b.prim(P::Gt, vec![len, zero], Ty::Bool);
        self.b.open();
        let first = self.b.add(Expr::Int(0), Ty::Int);
        let row = self.index_at(a, first);
        let row_len = self.b.length(row);
        let then_branch = self.b.close_pruned(row_len);
        let zero = self.b.add(Expr::Int(0), Ty::Int);
        let n = self.b.ite(cond, then_branch, zero);
        let lam = self.lam(&[(Ty::Int, "j")], |r, _| Ok(r.b.real(0.0)))?;
        Ok(self.call(P::Build, &[n, lam], array_of(Ty::Real), "z"))
    }
}
