//! The pairs of reads inside nested loops, collected through both loops.
//!
//! A loop whose per-element cotangent of a free array is only pairs
//! (`sparse.rs`) returns them from its per-element pass and scatters them
//! after the loop. Inside another loop's body, that scatter would make a
//! dense array per element of the outer loop: O(n · m) for n outer
//! elements and an array of m. Here the inner loop's pairs are kept as a
//! *segment*, the arrays `(is, zs)` of its pairs laid end to end
//! (`Seg`), and the outer loop returns them from its own per-element
//! pass (`Part::Flat`), laid end to end again after it and scattered with
//! one `hist_add`: O(n · p + m) for p pairs per outer element.
//!
//! The outer loop's per-element arrays must have one length (the C
//! backend takes no ragged arrays of arrays): a segment's length is the
//! inner loop's trip count times its pairs per element, so it stays a
//! segment in the outer loop only when that count is a constant or a
//! value made before the outer loop's per-element lambda (its array, its
//! count, or a free variable). Otherwise, and in a branch of a
//! conditional, the segment is written out as before (`Sparse`'s dense
//! part).
//!
//! What changes in the numbers: the outer loop used to add each element's
//! dense array, itself the sum of the inner loop's pairs, to the running
//! sum; now every pair is added one after the other, in the same element
//! order. The same values, associated differently: a bin that one outer
//! element reaches twice can round differently in its last bit. A loop
//! that is not inside another scatters exactly as before.

use super::emit::ValId;
use super::loops::elem_of;
use super::sparse::{Part, Seg, Sparse};
use super::{Abs, Raise, internal};
use crate::error::Error;
use rpds::Vector;
use syntax::{Expr, Prim as P, Ty};

impl Raise<'_> {
    /// What a loop whose trip count depends on `src` adds for the
    /// per-element pairs `g` of the free array `w`, laid out as `part`:
    /// one segment.
    pub(super) fn loop_pairs(
        &mut self,
        w: ValId,
        g: ValId,
        part: Part,
        src: ValId,
    ) -> Result<Abs, Error> {
        self.b.retype = true;
        let elem = elem_of(self.b.ty(w));
        let (is, zs, inner) = match part {
            Part::Pairs(1) => (self.proj_map(g, 1)?, self.proj_map(g, 2)?, 0),
            Part::Pairs(k) => (
                self.flat(g, 1, k, Ty::Int)?,
                self.flat(g, 2, k, elem.clone())?,
                0,
            ),
            Part::Flat(newest) => (
                self.flat_rows(g, 1, Ty::Int)?,
                self.flat_rows(g, 2, elem)?,
                newest,
            ),
            Part::Dense => return Err(internal(self.b.span, "a dense part as pairs")),
        };
        let newest = inner.max(self.newest(src));
        let span = self.b.span;
        let seg = Seg {
            is,
            zs,
            newest,
            span,
        };
        Ok(self.sparse_abs(Sparse::segment(w, seg)))
    }

    /// 0 for a constant or an array whose type gives its length (the same
    /// at every element of every loop), the value's number otherwise.
    fn newest(&self, v: ValId) -> u32 {
        let fixed = matches!(self.b.ty(v), Ty::Array(syntax::Size::Lit(_), _));
        if fixed || self.b.is_literal(v) {
            0
        } else {
            v.0
        }
    }

    /// The packed value of `Part::Flat`: `(is, zs)`, the segments' arrays
    /// then the single pairs', laid end to end.
    pub(super) fn packed_flat(&mut self, a: Abs) -> Result<ValId, Error> {
        let Abs::Sparse(id) = a else {
            return Err(internal(self.b.span, "segments that are not pairs"));
        };
        let s = self.sparse[id as usize].clone();
        let mut pieces: Vec<(ValId, ValId)> = s.segs.iter().map(|g| (g.is, g.zs)).collect();
        if !s.pairs.is_empty() {
            pieces.push(self.pair_arrays(s.witness, &s.pairs));
        }
        let (mut is, mut zs) = pieces[0];
        for &(i2, z2) in &pieces[1..] {
            is = self.concat(is, i2)?;
            zs = self.concat(zs, z2)?;
        }
        Ok(self.tuple_of(&[is, zs]))
    }

    /// `build (length a + length b) (fun t -> if t < length a then a[t]
    /// else b[t - length a])`.
    fn concat(&mut self, a: ValId, b: ValId) -> Result<ValId, Error> {
        let la = {
            let e = self.b.length(a);
            self.b.bind(e, "n")
        };
        let lb = {
            let e = self.b.length(b);
            self.b.bind(e, "n")
        };
        let total = self.int_op(P::Add, la, lb);
        let lam = self.lam(&[(Ty::Int, "t")], |r, p| {
            let t = p[0];
            let (te, le) = (r.b.use_val(t), r.b.use_val(la));
            let test = r.b.cmp(P::Lt, te, le);
            r.guarded(
                test,
                |r| {
                    let te = r.b.use_val(t);
                    Ok(r.index_at(a, te))
                },
                |r| {
                    let d = r.int_op(P::Sub, t, la);
                    let de = r.b.use_val(d);
                    Ok(r.index_at(b, de))
                },
            )
        })?;
        let ty = self.b.ty(a).clone();
        let te = self.b.use_val(total);
        Ok(self.call(P::Build, &[te, lam], ty, "p"))
    }

    /// The arrays of component c of `g`'s elements (one length p, as the
    /// packing of `Part::Flat` ensures), laid end to end:
    /// `build (n * p) (fun t -> g[t / p].c[t mod p])`, p read from the
    /// first element (0 when there is none).
    fn flat_rows(&mut self, g: ValId, c: u32, elem: Ty) -> Result<ValId, Error> {
        let arr = self.component_ty(g, c)?;
        let n = {
            let e = self.b.length(g);
            self.b.bind(e, "n")
        };
        let zero = self.b.int(0);
        let (ne, ze) = (self.b.use_val(n), self.b.use_val(zero));
        let test = self.b.cmp(P::Eq, ne, ze);
        let p = self.guarded(
            test,
            |r| Ok(r.b.int(0)),
            |r| {
                let first = r.b.add(Expr::Int(0), Ty::Int);
                let a = r.component_at(g, first, c, &arr);
                let e = r.b.length(a);
                Ok(r.b.bind(e, "p"))
            },
        )?;
        self.flat_by(g, c, p, elem)
    }
}

impl Sparse {
    /// The cotangent of `witness` that is one segment.
    pub(super) fn segment(witness: ValId, seg: Seg) -> Sparse {
        Sparse {
            witness,
            dense: None,
            pairs: Vector::new(),
            segs: Vector::new().push_back(seg),
        }
    }
}
