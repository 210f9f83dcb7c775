//! The transposed Jacobians of the second-order primitives beyond the
//! paper's core, written as Target terms: `map`/`map2` over any ground
//! types (Appendix A.5), `foldl` and general `reduce` (Appendix A.3, with
//! the free variables of Section 7.1), the scans, `ifold`, `build`
//! (Section 7.3's recipe) and `if` (Section 7.2).
//!
//! Every one of them needs, per element, the body's transposed Jacobian
//! applied to a cotangent: the paper's `∇e *^ z` (Fig. 17), a vector-
//! Jacobian product. It is the body's reverse derivative (stored in the
//! `J^T` primitive) run on the element and seeded with the cotangent, so
//! the Jacobian matrix is never formed. The products of Jacobians that
//! Fig. 13, 16 and 17 form with `scanr (*~) 1` are reassociated into a
//! scan that carries the cotangent itself: `(J1 *~ J2) *^ z = J1 *^ (J2
//! *^ z)`. For reals this is the same arithmetic; for an accumulator of
//! dimension d it costs one body evaluation per element instead of d.
//!
//! A loop's cotangents of the element, of each free variable and of the
//! initial value are all produced in one pass over the elements, as one
//! tuple per element; the components that are zero are not written.

use super::emit::ValId;
use super::sparse::Part;
use super::{Abs, Raise, State, at, internal, truncate};
use crate::error::Error;
use crate::ir::{CtxId, Fun, LoopKind, Prim, TermId, TyId};
use syntax::{Expr, ExprId, Prim as P, Size, Ty};

/// The element type of an array type (the type itself otherwise).
pub(super) fn elem_of(ty: &Ty) -> Ty {
    match ty {
        Ty::Array(_, e) => (**e).clone(),
        other => other.clone(),
    }
}

/// `[_]T`.
pub(super) fn array_of(ty: Ty) -> Ty {
    Ty::array(Size::Dyn, ty)
}

/// The values of a function's free variables at the primal point.
pub(super) fn free_at(fun: &Fun, primal: &State) -> Vec<Abs> {
    fun.free
        .iter()
        .map(|&f| at(primal, f as usize - 1))
        .collect()
}

/// Whether cotangents of this type are always zero (no reals in it).
fn discrete(ty: &Ty) -> bool {
    match ty {
        Ty::Real => false,
        Ty::Int | Ty::Bool | Ty::Func(..) => true,
        Ty::Array(_, e) => discrete(e),
        Ty::Tuple(items) => items.iter().all(discrete),
    }
}

impl Raise<'_> {
    /// `fun (p1: T1, ..., pk: Tk) -> f(p1, ..., pk)`, `f` building the body
    /// in the lambda's block.
    pub(super) fn lam<F>(&mut self, params: &[(Ty, &str)], f: F) -> Result<ExprId, Error>
    where
        F: FnOnce(&mut Self, &[ValId]) -> Result<ValId, Error>,
    {
        let ps = self.b.params(params);
        self.b.open();
        let r = f(self, &ps)?;
        let e = self.b.use_val(r);
        let body = self.b.close_pruned(e);
        Ok(self.b.lambda(&ps, body))
    }

    /// A primitive applied to values, bound.
    pub(super) fn call(&mut self, op: P, args: &[ExprId], ty: Ty, base: &str) -> ValId {
        let e = self.b.prim(op, args.to_vec(), ty);
        self.b.bind(e, base)
    }

    /// `map2 (fun (x, y) -> (x, y)) a b`.
    pub(super) fn zip(&mut self, a: ValId, b: ValId) -> Result<ValId, Error> {
        let (ta, tb) = (elem_of(self.b.ty(a)), elem_of(self.b.ty(b)));
        let pair = Ty::Tuple(vec![ta.clone(), tb.clone()]);
        let lam = self.lam(&[(ta, "x"), (tb, "y")], |r, p| {
            let items = vec![r.b.use_val(p[0]), r.b.use_val(p[1])];
            let e = r.b.add(Expr::Tuple(items), pair.clone());
            Ok(r.b.bind(e, "p"))
        })?;
        let args = [lam, self.b.use_val(a), self.b.use_val(b)];
        let ty = array_of(Ty::Tuple(vec![
            elem_of(self.b.ty(a)),
            elem_of(self.b.ty(b)),
        ]));
        Ok(self.call(P::Map2, &args, ty, "z"))
    }

    /// `map (fun t -> t.j) g` (j 1-based).
    pub(super) fn proj_map(&mut self, g: ValId, j: u32) -> Result<ValId, Error> {
        let tt = elem_of(self.b.ty(g));
        let Ty::Tuple(items) = tt.clone() else {
            return Err(internal(self.b.span, "a projection of a non-tuple array"));
        };
        let item = items[j as usize - 1].clone();
        let lam = self.lam(&[(tt, "t")], |r, p| {
            let te = r.b.use_val(p[0]);
            let e = r.b.add(
                Expr::Proj {
                    tuple: te,
                    index: j,
                },
                item.clone(),
            );
            Ok(r.b.bind(e, "c"))
        })?;
        let args = [lam, self.b.use_val(g)];
        Ok(self.call(P::Map, &args, array_of(item), "c"))
    }

    /// `reduce (+^) 0_w a`: the sum of an array of cotangents of `w`.
    fn sum_all(&mut self, w: ValId, a: ValId) -> Result<ValId, Error> {
        let ty = self.b.ty(w).clone();
        let add = self.add_lambda(&ty);
        let zero = self.zero_of(w);
        let args = [add, self.b.use_val(zero), self.b.use_val(a)];
        Ok(self.call(P::Reduce, &args, ty, "d"))
    }

    /// `a[i]` for an integer node i, bound.
    pub(super) fn index_at(&mut self, a: ValId, i: ExprId) -> ValId {
        let e = self.b.index(a, i);
        self.b.bind(e, "e")
    }

    /// The positions of the cotangents among `candidates` that are not
    /// known to be zero.
    pub(super) fn nonzero(
        &self,
        cot: &[Abs],
        candidates: impl Iterator<Item = usize>,
    ) -> Vec<usize> {
        candidates
            .filter(|&j| match cot[j] {
                Abs::Zero(_) => false,
                Abs::Val(v) => !discrete(self.b.ty(v)),
                Abs::Sparse(_) | Abs::Cont(_) => true,
            })
            .collect()
    }

    /// Adds the per-element cotangents `g` (one value, or a tuple of the
    /// components `nz` of the body's input, laid out as `parts` says) into
    /// the context: a parameter component into the array position
    /// `param_pos` (None: dropped), a free variable's summed over the
    /// elements (its pairs scattered, `sparse.rs`).
    /// `src` is what the loop's trip count is read from (its array or
    /// count): free variables' pairs are kept as a segment of that length
    /// (`nested.rs`).
    #[allow(clippy::too_many_arguments)]
    fn scatter_components(
        &mut self,
        s: &mut State,
        g: ValId,
        nz: &[usize],
        parts: &[Part],
        fun: &Fun,
        free: &[Abs],
        param_pos: &[Option<usize>],
        src: ValId,
    ) -> Result<(), Error> {
        let nf = free.len();
        for (slot, &j) in nz.iter().enumerate() {
            let comp = if nz.len() == 1 {
                g
            } else {
                self.proj_map(g, slot as u32 + 1)?
            };
            let (pos, total) = if j < nf {
                let w = self.witness(free[j])?;
                let total = match parts[slot] {
                    Part::Dense => Abs::Val(self.sum_all(w, comp)?),
                    part => self.loop_pairs(w, comp, part, src)?,
                };
                (fun.free[j] as usize - 1, total)
            } else {
                match param_pos[j - nf] {
                    Some(p) => (p, Abs::Val(comp)),
                    None => continue,
                }
            };
            let acc = self.add(at(s, pos), total)?;
            s.set_mut(pos, acc);
        }
        Ok(())
    }

    /// The cotangent on top of `s` (after `keep` entries), removed; None
    /// when it is zero.
    pub(super) fn take_cot(
        &mut self,
        s: &State,
        keep: usize,
    ) -> Result<(State, Option<ValId>), Error> {
        let z = at(s, keep);
        let s = truncate(s.clone(), keep);
        Ok((s, self.cot_value(z)?))
    }

    /// `J^T map` and `J^T map2` (Fig. 16, Fig. 17): one pass
    /// `map2 (fun (x, z) -> ∇body(x) *^ z) A Z` (over `zip A B` for map2)
    /// gives every component's cotangent per element; parameters' go to the
    /// arrays, free variables' are summed.
    pub(super) fn jt_map(
        &mut self,
        ctx: CtxId,
        args: &[TyId],
        fun: &Fun,
        s: State,
        primal: &State,
    ) -> Result<State, Error> {
        self.b.retype = true;
        let n = self.ctx_len(ctx);
        let k = args.len();
        if let Some(pairs) = self.few_pairs(at(&s, n + k))
            && self.pairs_fit(fun, k, &pairs)
        {
            return self.jt_map_at_pairs(n, k, fun, s, primal, &pairs);
        }
        let (mut s, Some(z)) = self.take_cot(&s, n + k)? else {
            return Ok(truncate(s, n + k));
        };
        let mut arrays = Vec::with_capacity(k);
        for i in 0..k {
            arrays.push(self.materialize(at(primal, n + i))?);
        }
        let free: Vec<Abs> = fun
            .free
            .iter()
            .map(|&f| at(primal, f as usize - 1))
            .collect();
        let nf = free.len();
        let ps = self.fun_params(fun);
        let first = if k == 1 {
            ps[0].0.clone()
        } else {
            Ty::Tuple(vec![ps[0].0.clone(), ps[1].0.clone()])
        };
        let zty = elem_of(self.b.ty(z));
        let mut nz = Vec::new();
        let mut parts = Vec::new();
        let lam = self.lam(&[(first, "x"), (zty, "z")], |r, p| {
            let elems = if k == 1 {
                vec![p[0]]
            } else {
                r.b.unpack(p[0], "x")
            };
            let mut inputs = free.clone();
            inputs.extend(elems.into_iter().map(Abs::Val));
            let (_, cot) = r.grad(fun.body, inputs, Abs::Val(p[1]))?;
            nz = r.nonzero(&cot, 0..nf + k);
            if nz.is_empty() {
                return Ok(r.b.real(0.0));
            }
            let (v, ps) = r.pack_parts(&cot, &nz, nf, p[0])?;
            parts = ps;
            Ok(v)
        })?;
        if nz.is_empty() {
            return Ok(s);
        }
        let src = if k == 1 {
            arrays[0]
        } else {
            self.zip(arrays[0], arrays[1])?
        };
        let gty = array_of(self.b.node_ty(lam_ret(self, lam)).clone());
        let a = [lam, self.b.use_val(src), self.b.use_val(z)];
        let g = self.call(P::Map2, &a, gty, "g");
        let pos: Vec<Option<usize>> = (0..k).map(|i| Some(n + i)).collect();
        self.scatter_components(&mut s, g, &nz, &parts, fun, &free, &pos, arrays[0])?;
        Ok(s)
    }

    /// `J^T` of `foldl`, `reduce` (beyond the paper's core), the scans,
    /// `ifold` and `build` (module documentation; docs/derivatives.md has
    /// the derivation of each from its unrolled meaning).
    pub(super) fn jt_loop(
        &mut self,
        kind: LoopKind,
        ctx: CtxId,
        fun: &Fun,
        s: State,
        primal: &State,
    ) -> Result<State, Error> {
        self.b.retype = true;
        let n = self.ctx_len(ctx);
        let k = kind.operands();
        let (mut s, Some(z)) = self.take_cot(&s, n + k)? else {
            return Ok(truncate(s, n + k));
        };
        let free = free_at(fun, primal);
        if kind == LoopKind::Build {
            let count = self.materialize(at(primal, n))?;
            self.jt_build(&mut s, fun, &free, z, count)?;
            return Ok(s);
        }
        if let (LoopKind::Reduce | LoopKind::Foldl, Some(sel)) = (kind, self.selection(fun)) {
            // One comparison pass instead of stored states (select.rs).
            let s0 = self.materialize(at(primal, n))?;
            let x = self.materialize(at(primal, n + 1))?;
            let (d0, dx) = self.jt_select(sel, s0, x, z)?;
            let acc = self.add(at(&s, n), Abs::Val(d0))?;
            s.set_mut(n, acc);
            let acc = self.add(at(&s, n + 1), dx)?;
            s.set_mut(n + 1, acc);
            return Ok(s);
        }
        if self.checkpoint.applies(kind) {
            return self.jt_fold_checkpointed(kind, fun, free, z, s, n, primal);
        }
        let s0 = self.materialize(at(primal, n))?;
        let x = self.materialize(at(primal, n + 1))?;
        // The elements the function is applied to: the array, or the
        // indices 0..n-1 of ifold.
        let xs = if kind == LoopKind::Ifold {
            let i = self.lam(&[(Ty::Int, "i")], |_, p| Ok(p[0]))?;
            let ne = self.b.use_val(x);
            self.call(P::Build, &[ne, i], array_of(Ty::Int), "i")
        } else {
            x
        };
        let f = self.fun_lambda_d(fun, &free, true)?;
        let (acc_ix, elem_ix) = if kind == LoopKind::Scanr {
            (1, 0)
        } else {
            (0, 1)
        };
        let nf = free.len();
        let sty = self.b.ty(s0).clone();
        let scan_op = if kind == LoopKind::Scanr {
            P::Scanr
        } else {
            P::Scanl
        };
        let args = [f, self.b.use_val(s0), self.b.use_val(xs)];
        let sc = self.call(scan_op, &args, array_of(sty.clone()), "s");
        // The accumulator each element meets, zipped with the element (in
        // the function's parameter order).
        let accs = {
            let shift = if kind == LoopKind::Scanr {
                P::Shift1L
            } else {
                P::Shift1R
            };
            let e = self.b.use_val(sc);
            self.call(shift, &[e], array_of(sty.clone()), "a")
        };
        let pairs = if kind == LoopKind::Scanr {
            self.zip(xs, accs)?
        } else {
            self.zip(accs, xs)?
        };
        let pty = elem_of(self.b.ty(pairs));
        // The cotangents c_i of the accumulators, by a scan that runs the
        // other way, adding the result's own cotangent for the scans.
        let scan_result = matches!(kind, LoopKind::Scanl | LoopKind::Scanr);
        let (start, extra) = if scan_result {
            let (first_ix, rest_shift) = if kind == LoopKind::Scanl {
                (self.b.length(xs), P::Shift1R)
            } else {
                (self.b.add(Expr::Int(0), Ty::Int), P::Shift1L)
            };
            let start = self.index_at(z, first_ix);
            let ze = self.b.use_val(z);
            let rest = self.call(rest_shift, &[ze], array_of(sty.clone()), "z");
            (start, Some(rest))
        } else {
            (z, None)
        };
        let (carried, qty) = match extra {
            Some(rest) => {
                let q = self.zip(pairs, rest)?;
                let t = elem_of(self.b.ty(q));
                (q, t)
            }
            None => (pairs, pty.clone()),
        };
        let step = |r: &mut Self, q: ValId, c: ValId| -> Result<ValId, Error> {
            let (p, zi) = if scan_result {
                let parts = r.b.unpack(q, "q");
                (parts[0], Some(parts[1]))
            } else {
                (q, None)
            };
            let params = r.b.unpack(p, "x");
            let mut inputs = free.clone();
            inputs.extend(params.iter().map(|&v| Abs::Val(v)));
            let (_, cot) = r.grad(fun.body, inputs, Abs::Val(c))?;
            let back = cot[nf + acc_ix];
            let total = match zi {
                Some(zi) => r.add(Abs::Val(zi), back)?,
                None => back,
            };
            match total {
                Abs::Zero(_) => Ok(r.zero_of(c)),
                other => r.materialize(other),
            }
        };
        let cs = if kind == LoopKind::Scanr {
            let lam = self.lam(&[(sty.clone(), "c"), (qty.clone(), "q")], |r, p| {
                step(r, p[1], p[0])
            })?;
            let a = [lam, self.b.use_val(start), self.b.use_val(carried)];
            self.call(P::Scanl, &a, array_of(sty.clone()), "c")
        } else {
            let lam = self.lam(&[(qty.clone(), "q"), (sty.clone(), "c")], |r, p| {
                step(r, p[0], p[1])
            })?;
            let a = [lam, self.b.use_val(start), self.b.use_val(carried)];
            self.call(P::Scanr, &a, array_of(sty.clone()), "c")
        };
        // The initial value's cotangent: c_0 (c_n for scanr).
        let first = if kind == LoopKind::Scanr {
            self.b.length(xs)
        } else {
            self.b.add(Expr::Int(0), Ty::Int)
        };
        let ds0 = self.index_at(cs, first);
        let acc = self.add(at(&s, n), Abs::Val(ds0))?;
        s.set_mut(n, acc);
        // Per element, the cotangents of the element and the free
        // variables, read at the cotangent of the accumulator it makes.
        let next = {
            let shift = if kind == LoopKind::Scanr {
                P::Shift1R
            } else {
                P::Shift1L
            };
            let e = self.b.use_val(cs);
            self.call(shift, &[e], array_of(sty.clone()), "c")
        };
        let mut nz = Vec::new();
        let mut parts = Vec::new();
        let wanted: Vec<usize> = (0..nf).chain([nf + elem_ix]).collect();
        let lam = self.lam(&[(pty, "p"), (sty.clone(), "c")], |r, p| {
            let params = r.b.unpack(p[0], "x");
            let mut inputs = free.clone();
            inputs.extend(params.iter().map(|&v| Abs::Val(v)));
            let (_, cot) = r.grad(fun.body, inputs, Abs::Val(p[1]))?;
            nz = r.nonzero(&cot, wanted.iter().copied());
            if nz.is_empty() {
                return Ok(r.b.real(0.0));
            }
            let (v, ps) = r.pack_parts(&cot, &nz, nf, p[0])?;
            parts = ps;
            Ok(v)
        })?;
        if nz.is_empty() {
            return Ok(s);
        }
        let gty = array_of(self.b.node_ty(lam_ret(self, lam)).clone());
        let a = [lam, self.b.use_val(pairs), self.b.use_val(next)];
        let g = self.call(P::Map2, &a, gty, "g");
        // Component nf + elem_ix is the element's; ifold's are indices.
        let mut pos = vec![None, None];
        if kind != LoopKind::Ifold {
            pos[elem_ix] = Some(n + 1);
        }
        self.scatter_components(&mut s, g, &nz, &parts, fun, &free, &pos, x)?;
        Ok(s)
    }

    /// `J^T build`: `build (length Z) (fun i -> ∇_F f(i) *^ Z[i])`, summed
    /// per free variable.
    fn jt_build(
        &mut self,
        s: &mut State,
        fun: &Fun,
        free: &[Abs],
        z: ValId,
        count: ValId,
    ) -> Result<(), Error> {
        let nf = free.len();
        let mut nz = Vec::new();
        let mut parts = Vec::new();
        let lam = self.lam(&[(Ty::Int, "i")], |r, p| {
            let ie = r.b.use_val(p[0]);
            let zi = r.index_at(z, ie);
            let mut inputs = free.to_vec();
            inputs.push(Abs::Val(p[0]));
            let (_, cot) = r.grad(fun.body, inputs, Abs::Val(zi))?;
            nz = r.nonzero(&cot, 0..nf);
            if nz.is_empty() {
                return Ok(r.b.real(0.0));
            }
            let (v, ps) = r.pack_parts(&cot, &nz, nf, p[0])?;
            parts = ps;
            Ok(v)
        })?;
        if nz.is_empty() {
            return Ok(());
        }
        let gty = array_of(self.b.node_ty(lam_ret(self, lam)).clone());
        let len = self.b.length(z);
        let g = self.call(P::Build, &[len, lam], gty, "g");
        self.scatter_components(s, g, &nz, &parts, fun, free, &[None], count)
    }

    /// `J^T if` (Section 7.2, with the adjoint sent into the taken branch
    /// only): `if b then ∇_F e2 *^ z else ∇_F e3 *^ z`, one tuple over the
    /// free variables of either branch whose cotangent is not zero.
    pub(super) fn jt_if(
        &mut self,
        ctx: CtxId,
        then_fun: &Fun,
        else_fun: &Fun,
        s: State,
        primal: &State,
    ) -> Result<State, Error> {
        self.b.retype = true;
        let n = self.ctx_len(ctx);
        let (mut s, Some(z)) = self.take_cot(&s, n + 1)? else {
            return Ok(truncate(s, n + 1));
        };
        let cond = self.materialize(at(primal, n))?;
        let mut runs = Vec::with_capacity(2);
        for fun in [then_fun, else_fun] {
            let free: Vec<Abs> = fun
                .free
                .iter()
                .map(|&f| at(primal, f as usize - 1))
                .collect();
            self.b.open();
            let (_, cot) = self.grad(fun.body, free, Abs::Val(z))?;
            let nz = self.nonzero(&cot, 0..fun.free.len());
            let block = self.b.suspend();
            let cot: Vec<(u32, Abs)> = nz.iter().map(|&j| (fun.free[j], cot[j])).collect();
            runs.push((block, cot));
        }
        let mut union: Vec<u32> = runs
            .iter()
            .flat_map(|(_, c)| c.iter().map(|(p, _)| *p))
            .collect();
        union.sort_unstable();
        union.dedup();
        if union.is_empty() {
            return Ok(s);
        }
        // Each branch's cotangent of each variable of the union (zero where
        // the branch has none), and how the `if` returns it (pairs of the
        // reads' transposes stay pairs: `sparse.rs`).
        let mut per_run = Vec::with_capacity(2);
        for (_, cot) in &runs {
            let mut vals = Vec::with_capacity(union.len());
            for &pos in &union {
                let v = match cot.iter().find(|(p, _)| *p == pos) {
                    Some((_, a)) => *a,
                    None => Abs::Zero(self.witness(at(primal, pos as usize - 1))?),
                };
                vals.push(v);
            }
            per_run.push(vals);
        }
        let parts: Vec<Part> = (0..union.len())
            .map(|u| self.branch_part(&[per_run[0][u], per_run[1][u]]))
            .collect();
        let mut branches = Vec::with_capacity(2);
        for ((block, _), vals) in runs.into_iter().zip(&per_run) {
            self.b.resume(block);
            let v = self.pack_with(vals, &parts)?;
            let e = self.b.use_val(v);
            branches.push(self.b.close_pruned(e));
        }
        let ty = self.b.node_ty(branches[0]).clone();
        let ce = self.b.use_val(cond);
        let e = self.b.add(
            Expr::If {
                cond: ce,
                then_branch: branches[0],
                else_branch: branches[1],
            },
            ty,
        );
        let d = self.b.bind(e, "d");
        let vals = if union.len() == 1 {
            vec![d]
        } else {
            self.b.unpack(d, "d")
        };
        for ((&pos, &v), &part) in union.iter().zip(&vals).zip(&parts) {
            let i = pos as usize - 1;
            let w = self.witness(at(primal, i))?;
            let d = self.unpacked(v, part, w, None)?;
            let acc = self.add(at(&s, i), d)?;
            s.set_mut(i, acc);
        }
        Ok(s)
    }

    /// `F(if, J^T if)` of a real-valued `if` in one piece
    /// (`Term::Fused`): each branch computes its value and, with the same
    /// forward pass, its gradient with respect to its free variables (the
    /// paper's `∇_Γ e2`, seeded with 1), `let (v, g) = if b then (v2, ∇e2)
    /// else (v3, ∇e3)`, and the continuation is precomposed with `g * z`.
    /// `s` is `D(T_in) = T_in · K`.
    pub(super) fn fused(&mut self, p: &Prim, s: &State) -> Result<State, Error> {
        let Prim::If {
            ctx,
            then_fun,
            else_fun,
            ..
        } = p
        else {
            return Err(internal(self.b.span, "a fused primitive that is not an if"));
        };
        let Some(Abs::Cont(prev)) = s.last().copied() else {
            return Err(internal(self.b.span, "a derivative without a continuation"));
        };
        self.b.retype = true;
        let s1 = truncate(s.clone(), s.len() - 1);
        let n = self.ctx_len(*ctx);
        let cond = self.materialize(at(&s1, n))?;
        let mut runs = Vec::with_capacity(2);
        for fun in [then_fun, else_fun] {
            let free: Vec<Abs> = fun.free.iter().map(|&f| at(&s1, f as usize - 1)).collect();
            self.b.open();
            let one = Abs::Val(self.b.real(1.0));
            let (value, cot) = self.grad(fun.body, free, one)?;
            let nz = self.nonzero(&cot, 0..fun.free.len());
            let block = self.b.suspend();
            let cot: Vec<(u32, Abs)> = nz.iter().map(|&j| (fun.free[j], cot[j])).collect();
            runs.push((block, value, cot));
        }
        let mut union: Vec<u32> = runs
            .iter()
            .flat_map(|(_, _, c)| c.iter().map(|(p, _)| *p))
            .collect();
        union.sort_unstable();
        union.dedup();
        // The value, then each variable's gradient, laid out as `jt_if`.
        let mut per_run = Vec::with_capacity(2);
        for (_, value, cot) in &runs {
            let mut vals = vec![Abs::Val(*value)];
            for &pos in &union {
                let v = match cot.iter().find(|(p, _)| *p == pos) {
                    Some((_, a)) => *a,
                    None => Abs::Zero(self.witness(at(&s1, pos as usize - 1))?),
                };
                vals.push(v);
            }
            per_run.push(vals);
        }
        let parts: Vec<Part> = (0..=union.len())
            .map(|u| match u {
                0 => Part::Dense,
                u => self.branch_part(&[per_run[0][u], per_run[1][u]]),
            })
            .collect();
        let mut branches = Vec::with_capacity(2);
        for ((block, _, _), vals) in runs.into_iter().zip(&per_run) {
            self.b.resume(block);
            let v = self.pack_with(vals, &parts)?;
            let e = self.b.use_val(v);
            branches.push(self.b.close_pruned(e));
        }
        let ty = self.b.node_ty(branches[0]).clone();
        let ce = self.b.use_val(cond);
        let e = self.b.add(
            Expr::If {
                cond: ce,
                then_branch: branches[0],
                else_branch: branches[1],
            },
            ty,
        );
        let d = self.b.bind(e, "v");
        let vals = if union.is_empty() {
            vec![d]
        } else {
            self.b.unpack(d, "v")
        };
        let mut grads = Vec::with_capacity(union.len());
        for ((&pos, &g), &part) in union.iter().zip(&vals[1..]).zip(&parts[1..]) {
            let i = pos as usize - 1;
            let w = self.witness(at(&s1, i))?;
            grads.push(super::ScaledGrad {
                pos: i,
                g,
                part,
                witness: w,
            });
        }
        let mut out = s1;
        out.push_back_mut(Abs::Val(vals[0]));
        let id = self.conts.len() as u32;
        self.conts.push(super::Cont::Scaled { prev, n, grads });
        out.push_back_mut(Abs::Cont(id));
        Ok(out)
    }

    /// Applies `J^T if = g * z` (see [`Raise::fused`]) to cotangents.
    pub(super) fn apply_scaled(
        &mut self,
        cot: State,
        n: usize,
        grads: &[super::ScaledGrad],
    ) -> Result<State, Error> {
        let (mut s, Some(z)) = self.take_cot(&cot, n + 1)? else {
            return Ok(truncate(cot, n + 1));
        };
        let scale = (!self.b.is_const(z, 1.0)).then_some(z);
        for g in grads {
            let d = self.unpacked(g.g, g.part, g.witness, scale)?;
            let acc = self.add(at(&s, g.pos), d)?;
            s.set_mut(g.pos, acc);
        }
        Ok(s)
    }

    /// `g * z` for a value g of a ground type and a real z: every real in
    /// g times z.
    pub(super) fn scale(&mut self, g: ValId, z: ValId) -> Result<ValId, Error> {
        Ok(match self.b.ty(g).clone() {
            Ty::Real => {
                let e = self.b.bin_vals(P::Mul, g, z);
                self.b.bind(e, "d")
            }
            Ty::Array(_, elem) => {
                let lam = self.lam(&[((*elem).clone(), "u")], |r, p| r.scale(p[0], z))?;
                let ty = self.b.ty(g).clone();
                let a = [lam, self.b.use_val(g)];
                self.call(P::Map, &a, ty, "d")
            }
            Ty::Tuple(_) => {
                let parts = self.b.unpack(g, "d");
                let mut items = Vec::with_capacity(parts.len());
                for p in parts {
                    let v = self.scale(p, z)?;
                    items.push(self.b.use_val(v));
                }
                let ty = self.b.ty(g).clone();
                let e = self.b.add(Expr::Tuple(items), ty);
                self.b.bind(e, "d")
            }
            Ty::Int | Ty::Bool | Ty::Func(..) => g,
        })
    }

    /// The Target lambda of a function whose body is `body` (a reverse
    /// derivative when `derivative`, returning its value then).
    pub(super) fn fun_lambda_d(
        &mut self,
        fun: &Fun,
        free: &[Abs],
        derivative: bool,
    ) -> Result<ExprId, Error> {
        if !derivative {
            return self.fun_lambda(fun, free);
        }
        let ps = self.fun_params(fun);
        let spec: Vec<(Ty, &str)> = ps.iter().map(|(t, n)| (t.clone(), n.as_str())).collect();
        let body: TermId = fun.body;
        self.lam(&spec, |r, p| {
            let mut inputs = free.to_vec();
            inputs.extend(p.iter().map(|&v| Abs::Val(v)));
            r.primal_value(body, inputs)
        })
    }
}

/// The body of a lambda node.
pub(super) fn lam_ret(r: &Raise<'_>, lam: ExprId) -> ExprId {
    match &r.b.out.exprs[lam.index()] {
        Expr::Lambda { body, .. } => *body,
        _ => lam,
    }
}
