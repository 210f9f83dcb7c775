//! The transposed Jacobians of indexing and of the shifts, written as
//! Target terms by the recipe of Section 7.3 (the transpose of the unrolled
//! program).
//!
//! `a[i]` reads one element: its transpose adds the cotangent z at
//! position i of a zero array, `build (length a) (fun j -> if j == i then z
//! else 0)` (a scatter-add into a zero array). In a language without
//! in-place update that array costs the length of `a`, where the read cost
//! one move: docs/derivatives.md states the weaker cost guarantee this
//! gives. The shifts drop an element; their transposes put a zero back.

use super::emit::ValId;
use super::loops::{array_of, elem_of};
use super::{Raise, internal};
use crate::error::Error;
use syntax::{Expr, ExprId, Prim as P, Ty};

impl Raise<'_> {
    /// `fun j -> if cond(j) then then_(j) else 0_{a[j]}`, the lambda of a
    /// `build` over the positions of `a`.
    fn masked<C, T>(&mut self, a: ValId, cond: C, then_: T) -> Result<ExprId, Error>
    where
        C: FnOnce(&mut Self, ValId) -> ExprId,
        T: FnOnce(&mut Self, ValId) -> Result<ValId, Error>,
    {
        self.lam(&[(Ty::Int, "j")], |r, p| {
            let j = p[0];
            let c = cond(r, j);
            r.b.open();
            let t = then_(r, j)?;
            let te = r.b.use_val(t);
            let then_branch = r.b.close_pruned(te);
            r.b.open();
            let je = r.b.use_val(j);
            let w = r.index_at(a, je);
            let z = r.zero_of(w);
            let ze = r.b.use_val(z);
            let else_branch = r.b.close_pruned(ze);
            let ty = r.b.node_ty(then_branch).clone();
            let e = r.b.add(
                Expr::If {
                    cond: c,
                    then_branch,
                    else_branch,
                },
                ty,
            );
            Ok(r.b.bind(e, "d"))
        })
    }

    /// `build (length a) f`.
    fn build_like(&mut self, a: ValId, f: ExprId) -> ValId {
        let len = self.b.length(a);
        let ty = array_of(elem_of(self.b.ty(a)));
        self.call(P::Build, &[len, f], ty, "d")
    }

    /// The transpose of `a[i]` at the cotangent z of the element:
    /// `build (length a) (fun j -> if j == i then z else 0)`.
    pub(super) fn jt_index(&mut self, a: ValId, i: ValId, z: ValId) -> Result<ValId, Error> {
        self.b.retype = true;
        let f = self.masked(
            a,
            |r, j| {
                let (je, ie) = (r.b.use_val(j), r.b.use_val(i));
                r.b.cmp(P::Eq, je, ie)
            },
            |_, _| Ok(z),
        )?;
        Ok(self.build_like(a, f))
    }

    /// The transpose of `shift1L a` (`shift1R a`) at the cotangent `z` of
    /// its result: z moved one place right (left), a zero in the freed
    /// place; `[]` for `[]`.
    pub(super) fn jt_shift(&mut self, op: P, a: ValId, z: ValId) -> Result<ValId, Error> {
        self.b.retype = true;
        let f = match op {
            // build (length a) (fun j -> if j > 0 then z[j - 1] else 0)
            P::Shift1L => self.masked(
                a,
                |r, j| {
                    let je = r.b.use_val(j);
                    let zero = r.b.add(Expr::Int(0), Ty::Int);
                    r.b.cmp(P::Gt, je, zero)
                },
                |r, j| {
                    let je = r.b.use_val(j);
                    let one = r.b.add(Expr::Int(1), Ty::Int);
                    let prev = r.b.prim(P::Sub, vec![je, one], Ty::Int);
                    Ok(r.index_at(z, prev))
                },
            )?,
            // build (length a) (fun j -> if j < length z then z[j] else 0)
            P::Shift1R => self.masked(
                a,
                |r, j| {
                    let je = r.b.use_val(j);
                    let len = r.b.length(z);
                    r.b.cmp(P::Lt, je, len)
                },
                |r, j| {
                    let je = r.b.use_val(j);
                    Ok(r.index_at(z, je))
                },
            )?,
            other => {
                return Err(internal(self.b.span, &format!("`{other}` is not a shift")));
            }
        };
        Ok(self.build_like(a, f))
    }
}
