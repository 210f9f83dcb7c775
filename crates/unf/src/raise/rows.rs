//! The scatter-add of row cotangents: the transpose of reads `M[i]` of
//! rows of a matrix (an array of arrays of reals), kept as pairs `(i, z)`
//! with z a row (`sparse.rs`), written out in O((m + p) · k) for p pairs
//! into m rows of length k, where the dense one-hot arrays of the reads
//! cost O(p · m · k).
//!
//! `hist_add` adds reals into bins; a row is k bins, one per column. So
//! the rows are scattered column by column, and the k columns put back
//! together:
//!
//! ```text
//! K = foldl (fun (a, r) -> if a < length r then length r else a) 0 base
//! H = build K (fun c -> hist_add (map (fun r -> r[c] or 0) base) is
//!                                (map (fun z -> z[c] or 0) zs))
//! D = build (length base) (fun r -> build (length base[r]) (fun c -> H[c][r]))
//! ```
//!
//! K is the longest row (every row of a regular matrix, which is all the C
//! backend takes; `or 0` reads past the end of a shorter row of a ragged
//! one, which the evaluator takes, as 0, and D keeps each row's length).
//! Each entry `D[r][c]` is `base[r][c]` plus the pairs' `z[c]` that reach
//! row r, in order: the sum the dense one-hot rows made, with the same
//! `+0` for the rows a read does not reach (`sparse.rs` on why the bits
//! agree).

use super::Raise;
use super::emit::ValId;
use super::loops::{array_of, elem_of};
use crate::error::Error;
use syntax::{ExprId, Prim as P, Ty};

/// Whether the elements of an array of this type are rows of reals, whose
/// reads' transposes are row pairs.
pub(super) fn rows_of_reals(ty: &Ty) -> bool {
    matches!(ty, Ty::Array(_, row) if matches!(&**row, Ty::Array(_, e) if **e == Ty::Real))
}

impl Raise<'_> {
    /// `hist_add base is zs` for a matrix `base` and rows `zs`.
    pub(super) fn scatter_rows(
        &mut self,
        base: ValId,
        is: ValId,
        zs: ValId,
    ) -> Result<ValId, Error> {
        self.b.retype = true;
        let row_ty = elem_of(self.b.ty(base));
        let longest = self.longest_row(base, &row_ty)?;
        let cols = self.lam(&[(Ty::Int, "c")], |r, p| {
            let c = p[0];
            let col = r.column(base, c)?;
            let vals = r.column(zs, c)?;
            let args = [col, is, vals].map(|v| r.b.use_val(v));
            Ok(r.call(P::HistAdd, &args, array_of(Ty::Real), "h"))
        })?;
        let ke = self.b.use_val(longest);
        let h = self.call(P::Build, &[ke, cols], array_of(array_of(Ty::Real)), "h");
        let rows = self.lam(&[(Ty::Int, "r")], |r, p| {
            let row = p[0];
            let re = r.b.use_val(row);
            let this = r.index_at(base, re);
            let entry = r.lam(&[(Ty::Int, "c")], |r, q| {
                let ce = r.b.use_val(q[0]);
                let hc = r.index_at(h, ce);
                let re = r.b.use_val(row);
                Ok(r.index_at(hc, re))
            })?;
            let len = r.b.length(this);
            Ok(r.call(P::Build, &[len, entry], row_ty.clone(), "d"))
        })?;
        let m = self.b.length(base);
        let ty = self.b.ty(base).clone();
        Ok(self.call(P::Build, &[m, rows], ty, "d"))
    }

    /// `foldl (fun (a, r) -> if a < length r then length r else a) 0 rows`.
    fn longest_row(&mut self, rows: ValId, row_ty: &Ty) -> Result<ValId, Error> {
        let step = self.lam(&[(Ty::Int, "a"), (row_ty.clone(), "r")], |r, p| {
            let (a, row) = (p[0], p[1]);
            let len = r.b.length(row);
            let len = r.b.bind(len, "k");
            let (ae, le) = (r.b.use_val(a), r.b.use_val(len));
            let test = r.b.cmp(P::Lt, ae, le);
            let (le, ae) = (r.b.use_val(len), r.b.use_val(a));
            let e = r.b.ite(test, le, ae);
            Ok(r.b.bind(e, "k"))
        })?;
        let zero = self.b.int(0);
        let args = [step, self.b.use_val(zero), self.b.use_val(rows)];
        Ok(self.call(P::Foldl, &args, Ty::Int, "k"))
    }

    /// `map (fun r -> if c < length r then r[c] else 0) rows`: column c.
    fn column(&mut self, rows: ValId, c: ValId) -> Result<ValId, Error> {
        let row_ty = elem_of(self.b.ty(rows));
        let lam = self.lam(&[(row_ty, "r")], |r, p| {
            let row = p[0];
            let (ce, le) = (r.b.use_val(c), r.b.length(row));
            let test = r.b.cmp(P::Lt, ce, le);
            r.guarded(
                test,
                |r| {
                    let ce = r.b.use_val(c);
                    Ok(r.index_at(row, ce))
                },
                |r| Ok(r.b.real(0.0)),
            )
        })?;
        let args = [lam, self.b.use_val(rows)];
        Ok(self.call(P::Map, &args, array_of(Ty::Real), "c"))
    }

    /// `if test then yes else no`, each branch built in its own block (so
    /// that a read the test guards is not evaluated when it fails).
    pub(super) fn guarded<Y, N>(&mut self, test: ExprId, yes: Y, no: N) -> Result<ValId, Error>
    where
        Y: FnOnce(&mut Self) -> Result<ValId, Error>,
        N: FnOnce(&mut Self) -> Result<ValId, Error>,
    {
        self.b.open();
        let y = yes(self)?;
        let ye = self.b.use_val(y);
        let then_branch = self.b.close_pruned(ye);
        self.b.open();
        let n = no(self)?;
        let ne = self.b.use_val(n);
        let else_branch = self.b.close_pruned(ne);
        let e = self.b.ite(test, then_branch, else_branch);
        Ok(self.b.bind(e, "v"))
    }

    /// A row of zeros as long as the first row of `matrix` (empty when it
    /// has none): what pads a branch's row pairs (their index -1 is
    /// skipped; the row only keeps the pairs' rows one length, as the C
    /// backend's arrays of arrays need). Its length is a value, not the
    /// literal 0 of an empty array, so that the row types as the others.
    pub(super) fn pad_row(&mut self, matrix: ValId) -> Result<ValId, Error> {
        let row_ty = elem_of(self.b.ty(matrix));
        let len = self.b.length(matrix);
        let zero = self.b.add(syntax::Expr::Int(0), Ty::Int);
        let test = self.b.cmp(P::Eq, len, zero);
        let k = self.guarded(
            test,
            |r| Ok(r.b.int(0)),
            |r| {
                let first = r.b.add(syntax::Expr::Int(0), Ty::Int);
                let row = r.index_at(matrix, first);
                let len = r.b.length(row);
                Ok(r.b.bind(len, "k"))
            },
        )?;
        let lam = self.lam(&[(Ty::Int, "j")], |r, _| Ok(r.b.real(0.0)))?;
        let ke = self.b.use_val(k);
        Ok(self.call(P::Build, &[ke, lam], row_ty, "z"))
    }
}
