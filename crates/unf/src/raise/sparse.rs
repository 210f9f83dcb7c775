//! Cotangents of arrays of reals kept as sums of one-hot arrays, so that
//! the transpose of a read `a[i]` costs what the read costs.
//!
//! The transpose of `a[i]` adds the cotangent z at position i of a zero
//! array. Written out at once (`build (length a) (fun j -> if j == i then
//! z else 0)`, `arrays.rs`) it costs the length m of `a` where the read
//! cost one move, and inside a `map` over n elements whose body reads a
//! free array, each element's cotangent of that array is such a dense
//! one-hot array, then summed: O(n·m) for a gather that costs O(n). Here
//! a read's transpose is kept symbolic instead, as the list of pairs
//! `(i, z)` it adds (`Abs::Sparse`), plus the dense cotangent added to it
//! by anything else. Where a value is needed the pairs are scattered in
//! one `hist_add dense [i1, ..., ik] [z1, ..., zk]` (O(m + k)); and a
//! loop whose per-element cotangent of a free variable is only pairs
//! (`Part::Pairs`) returns the pairs from its per-element pass and adds
//! them all, in element order, with one `hist_add 0 is zs` after it:
//! O(n + m), the scatter-add that is the transpose of a gather (Futhark
//! accumulates such adjoints in place the same way, with `upd_acc`).
//!
//! The sum is the same left-to-right sum the dense arrays made, element
//! by element (a bin that no read reaches adds `+0`, which changes no
//! value), so a read per element gives the same bits as before; two reads
//! of one element that reach the same bin are added one after the other
//! instead of to each other first, a different rounding only. The
//! checkpointed loops (`checkpoint.rs`) add each block's pairs to the
//! carried sum with the same `hist_add`, in the same order, so they stay
//! bit-identical to the stored loops.
//!
//! The pairs of a read of a row `M[i]` of a matrix carry the row's
//! cotangent, scattered column by column (`rows.rs`); the pairs a loop
//! returns inside another loop's body stay pairs through the outer loop
//! as segments (`nested.rs`).

use super::emit::ValId;
use super::loops::{array_of, elem_of};
use super::rows::rows_of_reals;
use super::{Abs, Raise, internal};
use crate::error::Error;
use rpds::Vector;
use syntax::{Expr, Prim as P, Ty};

/// A cotangent of an array of reals: `dense` (zero when absent) plus, at
/// each pair's index, the pair's value.
#[derive(Debug, Clone)]
pub(super) struct Sparse {
    /// A value of the cotangent's type and shape (the array read).
    pub(super) witness: ValId,
    /// The dense part, when something other than a read added to it.
    pub(super) dense: Option<ValId>,
    /// `(index, value)`, in the order the reads' transposes added them.
    pub(super) pairs: Vector<(ValId, ValId)>,
    /// The pairs inner loops returned, as arrays (`nested.rs`); never
    /// together with `dense` (`add_sparse`).
    pub(super) segs: Vector<Seg>,
}

/// The pairs of a loop's per-element pass laid end to end (`nested.rs`):
/// `is[t]` gets `zs[t]`.
#[derive(Debug, Clone, Copy)]
pub(super) struct Seg {
    pub(super) is: ValId,
    pub(super) zs: ValId,
    /// The newest value the arrays' length depends on (the loops' arrays
    /// or counts; 0 for constants): a loop whose per-element lambda was
    /// opened after it sees the same length at every element.
    pub(super) newest: u32,
    /// Where the loop that made it is written (its scatter's errors say so).
    pub(super) span: syntax::Span,
}

/// How a component of a loop's per-element cotangent tuple is laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Part {
    /// The cotangent itself.
    Dense,
    /// `k` pairs: `(i, z)` for k = 1, `([i1, ..., ik], [z1, ..., zk])`
    /// otherwise; the cotangent is the one-hot arrays they stand for.
    Pairs(usize),
    /// Pairs and inner loops' segments as `(is, zs)` arrays whose length is
    /// the same at every element, the newest value it depends on `newest`.
    Flat(u32),
}

impl Raise<'_> {
    /// `acc +^ (the transpose of a[i] at z)`: pairs for an array of reals,
    /// the dense one-hot array otherwise.
    pub(super) fn add_read(
        &mut self,
        acc: Abs,
        a: ValId,
        i: ValId,
        z: ValId,
    ) -> Result<Abs, Error> {
        let reals = matches!(self.b.ty(a), Ty::Array(_, e) if **e == Ty::Real);
        if !reals && !rows_of_reals(self.b.ty(a)) {
            let d = self.jt_index(a, i, z)?;
            return self.add(acc, Abs::Val(d));
        }
        let read = self.sparse_abs(Sparse {
            witness: a,
            dense: None,
            pairs: Vector::new().push_back((i, z)),
            segs: Vector::new(),
        });
        self.add(acc, read)
    }

    pub(super) fn sparse_abs(&mut self, s: Sparse) -> Abs {
        let id = self.sparse.len() as u32;
        self.sparse.push(s);
        Abs::Sparse(id)
    }

    /// `a +^ b` when one of them is pairs (the other not zero).
    ///
    /// A cotangent holds a dense part or segments, never both: the
    /// segments stand for the dense sum their `hist_add`s into zeros made
    /// before they were kept (`nested.rs`), and are written out as that
    /// sum, in order, when a dense value meets them, so that a loop not
    /// inside another adds what it added before, in the same order.
    pub(super) fn add_sparse(&mut self, a: Abs, b: Abs) -> Result<Abs, Error> {
        let (x, y) = match (a, b) {
            (Abs::Sparse(x), Abs::Sparse(y)) => {
                let (x, y) = (
                    self.sparse[x as usize].clone(),
                    self.sparse[y as usize].clone(),
                );
                let mixed = (x.dense.is_some() || y.dense.is_some())
                    && (!x.segs.is_empty() || !y.segs.is_empty());
                let (x, y) = if mixed {
                    (self.segs_written(x)?, self.segs_written(y)?)
                } else {
                    (x, y)
                };
                let mut pairs = x.pairs;
                for p in y.pairs.iter() {
                    pairs.push_back_mut(*p);
                }
                let mut segs = x.segs;
                for g in y.segs.iter() {
                    segs.push_back_mut(*g);
                }
                let dense = (x.dense, y.dense);
                let dense = match dense {
                    (Some(u), Some(v)) => Some(self.add_dense(u, v)),
                    (u, v) => u.or(v),
                };
                return Ok(self.sparse_abs(Sparse {
                    witness: x.witness,
                    dense,
                    pairs,
                    segs,
                }));
            }
            (Abs::Sparse(x), Abs::Val(d)) | (Abs::Val(d), Abs::Sparse(x)) => (x, d),
            _ => return Err(internal(self.b.span, "a continuation as a cotangent")),
        };
        let mut s = self.sparse[x as usize].clone();
        s = self.segs_written(s)?;
        s.dense = Some(match s.dense {
            Some(u) => self.add_dense(u, y),
            None => y,
        });
        Ok(self.sparse_abs(s))
    }

    fn add_dense(&mut self, u: ValId, v: ValId) -> ValId {
        match self.add(Abs::Val(u), Abs::Val(v)) {
            Ok(Abs::Val(w)) => w,
            _ => u,
        }
    }

    /// `s` with its segments written out as its dense part: the sum, in
    /// order, of each segment's `hist_add` into zeros.
    fn segs_written(&mut self, mut s: Sparse) -> Result<Sparse, Error> {
        for g in std::mem::take(&mut s.segs).iter() {
            let saved = std::mem::replace(&mut self.b.span, g.span);
            let zero = self.zero_of(s.witness);
            let t = self.hist_add(zero, g.is, g.zs);
            let t = match t {
                Ok(t) => t,
                Err(e) => {
                    self.b.span = saved;
                    return Err(e);
                }
            };
            s.dense = Some(match s.dense {
                Some(u) => self.add_dense(u, t),
                None => t,
            });
            self.b.span = saved;
        }
        Ok(s)
    }

    /// The array value of pairs: `hist_add dense [i1, ..., ik] [z1, ..., zk]`
    /// (the dense part of the segments first).
    pub(super) fn materialize_sparse(&mut self, id: u32) -> Result<ValId, Error> {
        let s = self.sparse[id as usize].clone();
        let s = self.segs_written(s)?;
        let base = match s.dense {
            Some(d) => d,
            None => self.zero_of(s.witness),
        };
        if s.pairs.is_empty() {
            return Ok(base);
        }
        let (is, zs) = self.pair_arrays(s.witness, &s.pairs);
        self.hist_add(base, is, zs)
    }

    /// The array literals `[i1, ..., ik]` and `[z1, ..., zk]` of the pairs.
    pub(super) fn pair_arrays(
        &mut self,
        witness: ValId,
        pairs: &Vector<(ValId, ValId)>,
    ) -> (ValId, ValId) {
        self.b.retype = true;
        let k = pairs.len() as u64;
        let is: Vec<_> = pairs.iter().map(|&(i, _)| self.b.use_val(i)).collect();
        let ty = Ty::array(syntax::Size::Lit(k), Ty::Int);
        let e = self.b.add(Expr::Array(is), ty);
        let is = self.b.bind(e, "i");
        let zs: Vec<_> = pairs.iter().map(|&(_, z)| self.b.use_val(z)).collect();
        let elem = elem_of(self.b.ty(witness));
        let ty = Ty::array(syntax::Size::Lit(k), elem);
        let e = self.b.add(Expr::Array(zs), ty);
        (is, self.b.bind(e, "d"))
    }

    /// `hist_add dest is zs`, row by row for a matrix (`rows.rs`).
    pub(super) fn hist_add(&mut self, dest: ValId, is: ValId, zs: ValId) -> Result<ValId, Error> {
        if rows_of_reals(self.b.ty(dest)) {
            return self.scatter_rows(dest, is, zs);
        }
        self.b.retype = true;
        let ty = self.b.ty(dest).clone();
        let args = [dest, is, zs].map(|v| self.b.use_val(v));
        Ok(self.call(P::HistAdd, &args, ty, "d"))
    }

    /// The components `which` of a cotangent list as one value, as
    /// one value or their tuple, with the components below `pairs_below` (a
    /// loop's free variables, which it sums) that are only pairs kept as
    /// pairs: their layout is the second result.
    ///
    /// `mark` is the first parameter of the loop's per-element lambda:
    /// segments whose length depends only on older values have the same
    /// length at every element, and stay pairs (`Part::Flat`).
    pub(super) fn pack_parts(
        &mut self,
        cot: &[Abs],
        which: &[usize],
        pairs_below: usize,
        mark: ValId,
    ) -> Result<(ValId, Vec<Part>), Error> {
        let picked: Vec<Abs> = which.iter().map(|&j| cot[j]).collect();
        let parts: Vec<Part> = which
            .iter()
            .map(
                |&j| match (self.pure_pairs(cot[j]), self.flat_part(cot[j], mark)) {
                    (Some(k), _) if j < pairs_below => Part::Pairs(k),
                    (_, Some(part)) if j < pairs_below => part,
                    _ => Part::Dense,
                },
            )
            .collect();
        Ok((self.pack_with(&picked, &parts)?, parts))
    }

    /// The number of pairs of a cotangent that is only single pairs.
    fn pure_pairs(&self, a: Abs) -> Option<usize> {
        match a {
            Abs::Sparse(id) => {
                let s = &self.sparse[id as usize];
                (s.dense.is_none() && s.segs.is_empty()).then_some(s.pairs.len())
            }
            _ => None,
        }
    }

    /// `Part::Flat` for a cotangent that is only pairs and segments, each
    /// segment of a length fixed before `mark`.
    fn flat_part(&self, a: Abs, mark: ValId) -> Option<Part> {
        let Abs::Sparse(id) = a else {
            return None;
        };
        let s = &self.sparse[id as usize];
        if s.dense.is_some() || s.segs.is_empty() {
            return None;
        }
        let newest = s.segs.iter().map(|g| g.newest).max().unwrap_or(0);
        (newest < mark.0).then_some(Part::Flat(newest))
    }

    /// The layout of a cotangent that each branch of an `if` computes
    /// (`branches`, one per branch): pairs when every branch's is pairs
    /// or zero (as many as the branch with most, the others padded with
    /// `(-1, 0)`, which `hist_add` skips), the value otherwise.
    pub(super) fn branch_part(&self, branches: &[Abs]) -> Part {
        let mut most = 0;
        for &a in branches {
            match (a, self.pure_pairs(a)) {
                (Abs::Zero(_), _) => {}
                (_, Some(k)) => most = most.max(k),
                _ => return Part::Dense,
            }
        }
        if most == 0 {
            Part::Dense
        } else {
            Part::Pairs(most)
        }
    }

    /// Cotangents packed as one value (the one itself, or their tuple),
    /// each laid out as its part says.
    pub(super) fn pack_with(&mut self, cot: &[Abs], parts: &[Part]) -> Result<ValId, Error> {
        let mut vals = Vec::with_capacity(cot.len());
        for (&a, &part) in cot.iter().zip(parts) {
            vals.push(match part {
                Part::Dense => self.materialize(a)?,
                Part::Pairs(k) => self.packed_pairs(a, k)?,
                Part::Flat(_) => self.packed_flat(a)?,
            });
        }
        Ok(self.tuple_of(&vals))
    }

    /// The pairs of `a` (pairs or zero) padded to `k`: `(i, z)` for one,
    /// `([i1, ..., ik], [z1, ..., zk])` otherwise.
    fn packed_pairs(&mut self, a: Abs, k: usize) -> Result<ValId, Error> {
        let (witness, mut pairs) = match a {
            Abs::Sparse(id) => {
                let s = &self.sparse[id as usize];
                (s.witness, s.pairs.clone())
            }
            other => (self.witness(other)?, Vector::new()),
        };
        if pairs.len() < k {
            // Index -1 is skipped; its value only has the pairs' shape.
            let pad = if rows_of_reals(self.b.ty(witness)) {
                self.pad_row(witness)?
            } else {
                self.b.real(0.0)
            };
            while pairs.len() < k {
                pairs.push_back_mut((self.b.int(-1), pad));
            }
        }
        if k == 1 {
            let (i, z) = pairs[0];
            return Ok(self.tuple_of(&[i, z]));
        }
        let (is, zs) = self.pair_arrays(witness, &pairs);
        Ok(self.tuple_of(&[is, zs]))
    }

    /// The cotangent a value packed as `part` stands for, its values
    /// times `scale` when given: pairs are read back into pairs.
    pub(super) fn unpacked(
        &mut self,
        v: ValId,
        part: Part,
        witness: ValId,
        scale: Option<ValId>,
    ) -> Result<Abs, Error> {
        let Part::Pairs(k) = part else {
            if let Part::Flat(_) = part {
                return Err(internal(
                    self.b.span,
                    "segments where a branch's pairs are read",
                ));
            }
            return Ok(Abs::Val(match scale {
                Some(z) => self.scale(v, z)?,
                None => v,
            }));
        };
        let halves = self.b.unpack(v, "g");
        let mut pairs = Vector::new();
        for r in 0..k {
            let (i, z) = if k == 1 {
                (halves[0], halves[1])
            } else {
                let re = self.b.add(Expr::Int(r as i64), Ty::Int);
                let i = self.index_at(halves[0], re);
                let re = self.b.add(Expr::Int(r as i64), Ty::Int);
                (i, self.index_at(halves[1], re))
            };
            let z = match scale {
                Some(c) => self.scale(z, c)?,
                None => z,
            };
            pairs.push_back_mut((i, z));
        }
        Ok(self.sparse_abs(Sparse {
            witness,
            dense: None,
            pairs,
            segs: Vector::new(),
        }))
    }

    /// `acc` (the zero of `w` when None) plus every pair of the array `g`
    /// of per-element pairs (laid out as `Part::Pairs(k)`), in element
    /// order: `hist_add acc is zs` with the pairs' indices and values laid
    /// end to end.
    pub(super) fn add_pairs(
        &mut self,
        w: ValId,
        acc: Option<ValId>,
        g: ValId,
        k: usize,
    ) -> Result<ValId, Error> {
        self.b.retype = true;
        let acc = match acc {
            Some(a) => a,
            None => self.zero_of(w),
        };
        let (is, zs) = if k == 1 {
            (self.proj_map(g, 1)?, self.proj_map(g, 2)?)
        } else {
            let elem = elem_of(self.b.ty(w));
            (self.flat(g, 1, k, Ty::Int)?, self.flat(g, 2, k, elem)?)
        };
        self.hist_add(acc, is, zs)
    }

    /// `build (length g * k) (fun t -> g[t / k].c[t mod k])`: the arrays
    /// of component c of the pairs of `g`, laid end to end.
    pub(super) fn flat(&mut self, g: ValId, c: u32, k: usize, elem: Ty) -> Result<ValId, Error> {
        let kv = self.b.int(k as i64);
        self.flat_by(g, c, kv, elem)
    }

    /// [`Raise::flat`] with each element's arrays `p` long (a value).
    pub(super) fn flat_by(&mut self, g: ValId, c: u32, p: ValId, elem: Ty) -> Result<ValId, Error> {
        let n = {
            let e = self.b.length(g);
            self.b.bind(e, "n")
        };
        let total = self.int_op(P::Mul, n, p);
        let arr = self.component_ty(g, c)?;
        let lam = self.lam(&[(Ty::Int, "t")], |r, q| {
            let row = r.int_op(P::Div, q[0], p);
            let re = r.b.use_val(row);
            let a = r.component_at(g, re, c, &arr);
            let col = r.int_op(P::Mod, q[0], p);
            let ce = r.b.use_val(col);
            Ok(r.index_at(a, ce))
        })?;
        let te = self.b.use_val(total);
        Ok(self.call(P::Build, &[te, lam], array_of(elem), "p"))
    }

    /// The type of component c of `g`'s elements (tuples).
    pub(super) fn component_ty(&self, g: ValId, c: u32) -> Result<Ty, Error> {
        match elem_of(self.b.ty(g)) {
            Ty::Tuple(items) => Ok(items[c as usize - 1].clone()),
            _ => Err(internal(self.b.span, "pairs that are not a tuple")),
        }
    }

    /// `g[i].c`, bound.
    pub(super) fn component_at(&mut self, g: ValId, i: syntax::ExprId, c: u32, ty: &Ty) -> ValId {
        let t = self.index_at(g, i);
        let te = self.b.use_val(t);
        let e = self.b.add(
            Expr::Proj {
                tuple: te,
                index: c,
            },
            ty.clone(),
        );
        self.b.bind(e, "p")
    }
}
