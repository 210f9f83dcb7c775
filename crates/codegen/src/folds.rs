//! Folds and scans as loops (`arrays.rs` is the rest of the array
//! builtins): `reduce`, `foldl` and `ifold` with scalar or array
//! accumulators (updated in place when the function is aligned,
//! `inplace.rs`), the reassociated and the parallel `reduce`, and `scanl`
//! / `scanr` written out or streamed.

use syntax::{Prim, Span, Ty};

use crate::arrays::{Dir, LANES, Source, Step, dims_of, simple_op};
use crate::error::Error;
use crate::imp::{self, BinOp, Expr as E, Pragma, Scalar, Stmt, VarId};
use crate::layout::{Kind, has_array, scalar_kinds};
use crate::lower::{Lowerer, SiteKind};
use crate::streams::{Order, order, rebuild, scalars};
use crate::val::{Arr, Func, Leaves, Manifest, Val};

impl Lowerer<'_> {
    /// One mutable variable per scalar of a value shaped like `z`
    /// (`kinds`), named from `base` and set to `zs`: the variables, and the
    /// value made of them.
    pub(crate) fn scalar_vars(
        &mut self,
        z: &Val,
        kinds: &[Kind],
        zs: &[E],
        base: &str,
    ) -> (Vec<VarId>, Val) {
        let vars: Vec<VarId> = kinds
            .iter()
            .zip(zs)
            .map(|(k, z)| self.mut_var(*k, Some(z.clone()), base))
            .collect();
        let val = rebuild(
            z,
            &mut vars
                .iter()
                .zip(kinds)
                .map(|(a, k)| Val::Scalar(*k, E::Var(*a))),
        );
        (vars, val)
    }

    /// `reduce`, `foldl`, `ifold`.
    pub(crate) fn fold(
        &mut self,
        op: Prim,
        f: &Func,
        z: Val,
        src: Source,
        ty: &Ty,
        span: Span,
    ) -> Result<Val, Error> {
        let src = match src {
            Source::Array(a) => Source::Array(self.readable(a, Dir::Up)?),
            count => count,
        };
        let n = match &src {
            Source::Array(a) => a.len().clone(),
            Source::Count(n) => n.clone(),
        };
        if has_array(ty) {
            return self.fold_arrays(op, f, z, src, ty, &n, span);
        }
        let kinds = scalar_kinds(ty);
        let mut zs = Vec::new();
        scalars(&z, &mut zs);
        if zs.len() != kinds.len() {
            return Err(Error::core(
                span,
                format!("`{op}` with an initial value of another type"),
            ));
        }
        // The accumulator lives in mutable variables.
        let (accs, acc_val) = self.scalar_vars(&z, &kinds, &zs, "acc");
        let step = |cx: &mut Lowerer<'_>, acc: &Val, accs: &[VarId], i: &E| -> Result<(), Error> {
            let x = match &src {
                Source::Array(a) => cx.elem(a, i)?,
                Source::Count(_) => Val::Scalar(Kind::Int, i.clone()),
            };
            let v = cx.apply(f, vec![acc.clone(), x], span)?;
            cx.update(accs, &kinds, &v, span)
        };
        if let Source::Array(a) = &src {
            self.open_streams(a);
        }
        let i = self.index_var();
        let (lines, flags) = self.capture(|cx| step(cx, &acc_val, &accs, &E::Var(i)))?;
        // Chunks and lanes compute the left fold only for the operators of
        // note [rebracketing] (`assoc.rs`); any other `reduce` stays sequential.
        let rebracket = op == Prim::Reduce && crate::assoc::rebracketable(self.m, f, &z);
        let parallel = rebracket && self.may_parallelize_own(flags);
        // In parallel: `if (n >= min && threads > 1) { chunks } else { loop }`.
        let chunked = if parallel {
            self.w.open();
            let own = flags.allocs || flags.fails;
            self.parallel_reduce(f, &z, &accs, &kinds, &acc_val, &n, span, &step, own)?;
            let then = self.w.close();
            let threads = self.call("ad_max_threads", &[], Scalar::I32, vec![]);
            let cond = E::bin(
                BinOp::And,
                E::bin(BinOp::Ge, n.clone(), E::I64(self.par_min(flags).into())),
                E::bin(BinOp::Gt, threads, E::I32(1)),
            );
            self.w.open();
            Some((cond, then))
        } else {
            None
        };
        self.fold_loop(
            f,
            &z,
            (&accs, &kinds, &acc_val),
            &n,
            span,
            &step,
            (i, lines, flags),
            op,
            &src,
        )?;
        if let Some((cond, then)) = chunked {
            let els = self.w.close();
            self.w.push(Stmt::If { cond, then, els });
        }
        Ok(acc_val)
    }

    /// The sequential loop of a scalar fold: plain, a vector reduction or
    /// several lanes (note [reassociation]).
    #[allow(clippy::too_many_arguments)]
    fn fold_loop(
        &mut self,
        f: &Func,
        z: &Val,
        (accs, kinds, acc_val): (&[VarId], &[Kind], &Val),
        n: &E,
        span: Span,
        step: &Step<'_>,
        (i, lines, flags): (VarId, imp::Block, crate::lower::Flags),
        op: Prim,
        src: &Source,
    ) -> Result<(), Error> {
        let random = match src {
            Source::Array(a) => order(a) == Order::Any,
            Source::Count(_) => true,
        };
        let rebracket = op == Prim::Reduce && crate::assoc::rebracketable(self.m, f, z);
        let reassociate = rebracket && self.cfg.reassociate && random && !flags.sequential;
        let simd = match (accs, simple_op(self.m, f)) {
            ([acc], Some(sym)) if reassociate && !flags.fails && !flags.allocs => Some((*acc, sym)),
            _ => None,
        };
        if let Some((acc, sym)) = simd {
            // A vectorizable reduction (note [reassociation]).
            let pragma = Pragma::SimdReduction {
                reductions: vec![imp::Reduction {
                    op: sym.to_string(),
                    acc,
                }],
                width: (self.loop_depth > 0).then_some(imp::NESTED_SIMD_WIDTH),
            };
            let body = self.body_block(lines, flags, None);
            self.push_loop(i, Some(E::I64(0)), n, Dir::Up, 1, Some(pragma), body);
        } else if reassociate {
            self.lanes_reduce(f, z, accs, kinds, acc_val, n, span, step)?;
        } else {
            let body = self.body_block(lines, flags, None);
            self.push_loop(i, Some(E::I64(0)), n, Dir::Up, 1, None, body);
        }
        Ok(())
    }

    /// `reduce` with [`LANES`] accumulators, each taking every `LANES`-th
    /// element, combined in lane order at the end: independent chains the
    /// processor overlaps and the compiler may vectorize
    /// (`Config::reassociate`; note [reassociation]).
    #[allow(clippy::too_many_arguments)]
    fn lanes_reduce(
        &mut self,
        f: &Func,
        z: &Val,
        accs: &[VarId],
        kinds: &[Kind],
        acc_val: &Val,
        n: &E,
        span: Span,
        step: &Step<'_>,
    ) -> Result<(), Error> {
        let mut zs = Vec::new();
        scalars(z, &mut zs);
        let mut lanes: Vec<(Vec<VarId>, Val)> = vec![(accs.to_vec(), acc_val.clone())];
        for _ in 1..LANES {
            let (vars, val) = self.scalar_vars(z, kinds, &zs, "lane");
            lanes.push((vars, val));
        }
        let i = self.mut_var(Kind::Int, Some(E::I64(0)), "i");
        let (lines, flags) = self.capture(|cx| {
            for (l, (vars, val)) in lanes.iter().enumerate() {
                let il = E::bin(BinOp::Add, E::Var(i), E::I64(l as i64));
                let il = cx.let_var(Kind::Int, il, "il");
                step(cx, val, vars, &E::Var(il))?;
            }
            Ok(())
        })?;
        let body = self.body_block(lines, flags, None);
        self.push_loop(i, None, n, Dir::Up, LANES as u32, None, body);
        let (lines, flags) = self.capture(|cx| step(cx, acc_val, accs, &E::Var(i)))?;
        let body = self.body_block(lines, flags, None);
        self.push_loop(i, None, n, Dir::Up, 1, None, body);
        for (_, val) in lanes.iter().skip(1) {
            let v = self.apply(f, vec![acc_val.clone(), val.clone()], span)?;
            self.update(accs, kinds, &v, span)?;
        }
        Ok(())
    }

    /// Assigns a new scalar accumulator value to the accumulator variables
    /// (through temporaries, so that `(a, b) -> (b, a)` is right).
    pub fn update(
        &mut self,
        accs: &[VarId],
        kinds: &[Kind],
        v: &Val,
        span: Span,
    ) -> Result<(), Error> {
        let mut vs = Vec::new();
        scalars(v, &mut vs);
        if vs.len() != accs.len() {
            return Err(Error::core(
                span,
                "a fold step of another type than its accumulator",
            ));
        }
        let tmps: Vec<VarId> = vs
            .iter()
            .zip(kinds)
            .map(|(c, k)| self.let_var(*k, c.clone(), "next"))
            .collect();
        for (a, t) in accs.iter().zip(tmps) {
            self.set(*a, E::Var(t));
        }
        Ok(())
    }

    /// `reduce` with a scalar accumulator, in parallel chunks combined in
    /// order (note [parallel loops]); `own`: the step allocates or fails,
    /// so the threads get arenas and failure records of their own.
    #[allow(clippy::too_many_arguments)]
    fn parallel_reduce(
        &mut self,
        f: &Func,
        z: &Val,
        accs: &[VarId],
        kinds: &[Kind],
        acc_val: &Val,
        n: &E,
        span: Span,
        step: &Step<'_>,
        own: bool,
    ) -> Result<(), Error> {
        let (nt, used) = self.thread_slots();
        let count = E::Cast(Scalar::I64, Box::new(nt.clone()));
        let parts: Vec<E> = kinds
            .iter()
            .map(|k| self.alloc(*k, &count, span, Some(Prim::Reduce)))
            .collect();
        self.w.open();
        let [t, lo, hi] = self.counted_chunk(n, used);
        let mut zs = Vec::new();
        scalars(z, &mut zs);
        let (locals, local_val) = self.scalar_vars(z, kinds, &zs, "part");
        let i = self.index_var();
        let (body, flags) = self.capture(|cx| step(cx, &local_val, &locals, &E::Var(i)))?;
        let body = self.body_block(body, flags, None);
        self.push_loop(i, Some(lo), &hi, Dir::Up, 1, None, body);
        for (p, l) in parts.iter().zip(&locals) {
            self.store_at(p, &t, E::Var(*l));
        }
        let body = self.w.close();
        let workers = own.then(|| self.site(Span::GENERATED, SiteKind::Alloc(None)) as u32);
        if own {
            self.note_fails();
        }
        self.w.push(Stmt::Parallel {
            threads: nt,
            body,
            workers,
        });
        // Combine the partial results in thread order.
        let t = self.new_var("t", imp::Ty::Scalar(Scalar::I32), false);
        self.w.open();
        let part_vals: Vec<Val> = parts
            .iter()
            .zip(kinds)
            .map(|(p, k)| self.let_scalar(*k, E::load(p.clone(), E::Var(t)), "part"))
            .collect();
        let part_val = rebuild(z, &mut part_vals.into_iter());
        let r = self
            .apply(f, vec![acc_val.clone(), part_val], span)
            .and_then(|v| self.update(accs, kinds, &v, span));
        let body = self.w.close();
        r?;
        self.w.push(Stmt::For(Box::new(imp::For {
            index: t,
            lo: Some(E::I32(0)),
            hi: E::Var(used),
            dir: imp::Dir::Up,
            step: 1,
            pragma: None,
            body,
        })));
        Ok(())
    }

    /// A fold whose accumulator contains arrays: two buffer sets, the
    /// current and the next, swapped after each step.
    #[allow(clippy::too_many_arguments)]
    fn fold_arrays(
        &mut self,
        op: Prim,
        f: &Func,
        z: Val,
        src: Source,
        ty: &Ty,
        n: &E,
        span: Span,
    ) -> Result<Val, Error> {
        let z = self.materialize_val(z)?;
        let mut dims = Vec::new();
        dims_of(&z, &mut dims);
        let dims: Vec<E> = dims
            .into_iter()
            .map(|d| E::Var(self.let_var(Kind::Int, d, "dim")))
            .collect();
        let (one, zero) = (E::I64(1), E::I64(0));
        let cur = self.alloc_leaves_dims(ty, &one, &mut dims.iter(), span, Some(op))?;
        if crate::inplace::aligned(self.m, f) {
            // Each step writes its result over the accumulator, element
            // by element (`inplace.rs`): one set of buffers, no copy.
            self.store(&z, &cur, &zero)?;
            if let Source::Array(a) = &src {
                self.open_streams(a);
            }
            let random = match &src {
                Source::Array(a) => order(a) == Order::Any,
                Source::Count(_) => true,
            };
            // In parallel (note [parallel loops]): `if (n >= min && threads
            // > 1 && z is zeros) { chunks } else { loop }`.
            let chunked = op == Prim::Reduce
                && random
                && self.cfg.parallel
                && self.loop_depth == 0
                && crate::assoc::rebracketable_arrays(self.m, f);
            let par = if chunked {
                self.w.open();
                let flags = self.parallel_fold_arrays(f, &src, ty, &dims, &cur, n, span, op)?;
                let then = self.w.close();
                self.w.open();
                Some((then, flags))
            } else {
                None
            };
            self.for_loop(n, Dir::Up, false, None, |cx, i| {
                let acc = cx.element(&cur, &zero, true);
                let x = match &src {
                    Source::Array(a) => cx.elem(a, i)?,
                    Source::Count(_) => Val::Scalar(Kind::Int, i.clone()),
                };
                let v = cx.apply(f, vec![acc, x], span)?;
                cx.store(&v, &cur, &zero)
            })?;
            if let Some((then, flags)) = par {
                let els = self.w.close();
                let zeros = self.mut_var(Kind::Bool, Some(E::Bool(true)), "zeros");
                let z = self.element(&cur, &zero, true);
                self.all_zero(&z, zeros)?;
                let threads = self.call("ad_max_threads", &[], Scalar::I32, vec![]);
                let min = E::I64(self.par_min(flags).into());
                let cond = E::bin(
                    BinOp::And,
                    E::bin(
                        BinOp::And,
                        E::bin(BinOp::Ge, n.clone(), min),
                        E::bin(BinOp::Gt, threads, E::I32(1)),
                    ),
                    E::Var(zeros),
                );
                self.w.push(Stmt::If { cond, then, els });
            }
            return Ok(self.element(&cur, &zero, true));
        }
        let next = self.alloc_leaves_dims(ty, &one, &mut dims.iter(), span, Some(op))?;
        self.store(&z, &cur, &zero)?;
        // The pointers are swapped, so they must be variables.
        let (cur, next) = (self.pointer_vars(&cur), self.pointer_vars(&next));
        if let Source::Array(a) = &src {
            self.open_streams(a);
        }
        self.for_loop(n, Dir::Up, false, None, |cx, i| {
            let acc = cx.element(&cur, &zero, true);
            let x = match &src {
                Source::Array(a) => cx.elem(a, i)?,
                Source::Count(_) => Val::Scalar(Kind::Int, i.clone()),
            };
            let v = cx.apply(f, vec![acc, x], span)?;
            cx.step_buffers(v, &dims, &cur, &next, op, span)
        })?;
        Ok(self.element(&cur, &zero, true))
    }

    /// `reduce` with an accumulator holding arrays, updated in place, in
    /// parallel chunks (note [parallel loops]): each thread folds its chunk
    /// into an accumulator of its own started from `z` (in `cur`), and the
    /// threads' accumulators are then added into `cur` in thread order.
    /// Returns what the step's body did.
    #[allow(clippy::too_many_arguments)]
    fn parallel_fold_arrays(
        &mut self,
        f: &Func,
        src: &Source,
        ty: &Ty,
        dims: &[E],
        cur: &Leaves,
        n: &E,
        span: Span,
        op: Prim,
    ) -> Result<crate::lower::Flags, Error> {
        let zero = E::I64(0);
        let (nt, used) = self.thread_slots();
        let count = E::Cast(Scalar::I64, Box::new(nt.clone()));
        let parts = self.alloc_leaves_dims(ty, &count, &mut dims.iter(), span, Some(op))?;
        self.w.open();
        // The body is one thread's: no loop in it is parallel again.
        self.loop_depth += 1;
        let [t, lo, hi] = self.counted_chunk(n, used);
        let me = E::Cast(Scalar::I64, Box::new(t));
        let z = self.element(cur, &zero, true);
        let r = self.store(&z, &parts, &me);
        let i = self.index_var();
        let r = r.and_then(|()| {
            self.capture(|cx| {
                let acc = cx.element(&parts, &me, true);
                let x = match src {
                    Source::Array(a) => cx.elem(a, &E::Var(i))?,
                    Source::Count(_) => Val::Scalar(Kind::Int, E::Var(i)),
                };
                let v = cx.apply(f, vec![acc, x], span)?;
                cx.store(&v, &parts, &me)
            })
        });
        self.loop_depth -= 1;
        let (body, flags) = r?;
        let body = self.body_block(body, flags, None);
        self.push_loop(i, Some(lo), &hi, Dir::Up, 1, None, body);
        let body = self.w.close();
        let site = self.site(Span::GENERATED, SiteKind::Alloc(None)) as u32;
        self.note_fails();
        self.w.push(Stmt::Parallel {
            threads: nt,
            body,
            workers: Some(site),
        });
        // Combine the threads' accumulators in thread order.
        let n_used = E::Cast(Scalar::I64, Box::new(E::Var(used)));
        self.for_loop(&n_used, Dir::Up, false, None, |cx, t| {
            let acc = cx.element(cur, &zero, true);
            let part = cx.element(&parts, t, true);
            let v = cx.apply(f, vec![acc, part], span)?;
            cx.store(&v, cur, &zero)
        })?;
        Ok(flags)
    }

    /// Before a chunked reduction's parallel block: how many threads it
    /// may have (`ad_max_threads`, the size of the per-thread partial
    /// results) and `used`, how many it had, 1 until thread 0 says.
    fn thread_slots(&mut self) -> (E, VarId) {
        let int = imp::Ty::Scalar(Scalar::I32);
        let threads = self.call("ad_max_threads", &[], Scalar::I32, vec![]);
        let nt = E::Var(self.let_typed(int.clone(), threads, "nt"));
        let used = self.new_var("used", int, true);
        self.w.push(Stmt::Let {
            var: used,
            init: Some(E::I32(1)),
        });
        (nt, used)
    }

    /// Inside the parallel block: this thread's number and its share
    /// `lo..hi` of `0..n` (`chunk`), thread 0 recording in `used` how many
    /// threads run (the partial results to combine).
    fn counted_chunk(&mut self, n: &E, used: VarId) -> [E; 3] {
        let [t, tn, lo, hi] = self.chunk(n);
        self.w.push(Stmt::If {
            cond: E::bin(BinOp::Eq, t.clone(), E::I32(0)),
            then: vec![Stmt::Set {
                place: imp::Place::Var(used),
                value: tn,
            }],
            els: vec![],
        });
        [t, lo, hi]
    }

    /// Sets `ok` to false unless every scalar of `v` is zero.
    fn all_zero(&mut self, v: &Val, ok: VarId) -> Result<(), Error> {
        match v {
            Val::Scalar(kind, e) => {
                let is_zero = match kind {
                    Kind::Real => E::bin(BinOp::Eq, e.clone(), E::F64(0.0)),
                    Kind::Int => E::bin(BinOp::Eq, e.clone(), E::I64(0)),
                    Kind::Bool => E::Bool(false),
                };
                self.set(ok, E::bin(BinOp::And, E::Var(ok), is_zero));
                Ok(())
            }
            Val::Tuple(vs) => vs.iter().try_for_each(|v| self.all_zero(v, ok)),
            Val::Array(a) => {
                let a = a.clone();
                let n = a.len().clone();
                self.for_loop(&n, Dir::Up, false, None, |cx, i| {
                    let x = cx.elem(&a, i)?;
                    cx.all_zero(&x, ok)
                })
            }
            _ => Ok(()),
        }
    }

    /// One step of a loop whose state holds arrays (a fold's accumulator,
    /// a `while` loop's state): the new state `v`, its sizes checked to be
    /// `dims`, stored into `next`, whose pointers are then swapped with
    /// `cur`'s.
    pub(crate) fn step_buffers(
        &mut self,
        v: Val,
        dims: &[E],
        cur: &Leaves,
        next: &Leaves,
        op: Prim,
        span: Span,
    ) -> Result<(), Error> {
        let v = self.settle(v)?;
        let mut have = Vec::new();
        dims_of(&v, &mut have);
        self.check_dims(dims, &have, span, SiteKind::AccumulatorSize(op));
        self.store(&v, next, &E::I64(0))?;
        let (mut pc, mut pn) = (Vec::new(), Vec::new());
        cur.ptrs(&mut pc);
        next.ptrs(&mut pn);
        for ((k, c), (_, nx)) in pc.iter().zip(&pn) {
            let (E::Var(c), E::Var(nx)) = (c, nx) else {
                return Err(Error::core(span, "swapped buffers that are not variables"));
            };
            let t = self.let_typed(crate::lower::mem(*k, true), E::Var(*c), "swap");
            self.set(*c, E::Var(*nx));
            self.set(*nx, E::Var(t));
        }
        Ok(())
    }

    /// Copies the pointers of freshly allocated leaves into mutable variables.
    pub(crate) fn pointer_vars(&mut self, leaves: &Leaves) -> Leaves {
        match leaves {
            Leaves::Scalar { kind, ptr } => {
                let p = self.new_var("cur", crate::lower::mem(*kind, true), true);
                self.w.push(Stmt::Let {
                    var: p,
                    init: Some(ptr.clone()),
                });
                Leaves::Scalar {
                    kind: *kind,
                    ptr: E::Var(p),
                }
            }
            Leaves::Tuple(items) => {
                Leaves::Tuple(items.iter().map(|l| self.pointer_vars(l)).collect())
            }
            Leaves::Array { len, elem } => Leaves::Array {
                len: len.clone(),
                elem: Box::new(self.pointer_vars(elem)),
            },
        }
    }

    /// `scanl` and `scanr`: `n + 1` accumulators written to buffers.
    pub(crate) fn scan(
        &mut self,
        op: Prim,
        f: &Func,
        z: Val,
        a: Arr,
        acc_ty: &Ty,
        span: Span,
    ) -> Result<Manifest, Error> {
        let a = self.readable(
            a,
            if op == Prim::Scanl {
                Dir::Up
            } else {
                Dir::Down
            },
        )?;
        // A source that is itself a stream is read by the loops below.
        self.open_streams(&a);
        let n = a.len().clone();
        let len = self.len_plus_one(&n);
        let first = if op == Prim::Scanl {
            E::I64(0)
        } else {
            n.clone()
        };
        if !has_array(acc_ty) {
            let kinds = scalar_kinds(acc_ty);
            let out = self.alloc_leaves(acc_ty, &len, span, Some(op))?;
            let mut zs = Vec::new();
            scalars(&z, &mut zs);
            let (accs, acc_val) = self.scalar_vars(&z, &kinds, &zs, "acc");
            self.store(&acc_val, &out, &first)?;
            let dir = if op == Prim::Scanl {
                Dir::Up
            } else {
                Dir::Down
            };
            self.for_loop(&n, dir, false, None, |cx, i| {
                let x = cx.elem(&a, i)?;
                let args = if op == Prim::Scanl {
                    vec![acc_val.clone(), x]
                } else {
                    vec![x, acc_val.clone()]
                };
                let v = cx.apply(f, args, span)?;
                cx.update(&accs, &kinds, &v, span)?;
                let at = if op == Prim::Scanl {
                    E::bin(BinOp::Add, i.clone(), E::I64(1))
                } else {
                    i.clone()
                };
                cx.store(&acc_val, &out, &at)
            })?;
            let m = Manifest {
                len,
                elem: out,
                owned: true,
            };
            if op == Prim::Scanl {
                self.record_last(&m, &n, acc_val);
            }
            return Ok(m);
        }
        // Array accumulators: each step reads the previous one from the result.
        let z = self.materialize_val(z)?;
        let mut dims = Vec::new();
        dims_of(&z, &mut dims);
        let out = self.alloc_leaves_dims(acc_ty, &len, &mut dims.iter(), span, Some(op))?;
        self.store(&z, &out, &first)?;
        let dir = if op == Prim::Scanl {
            Dir::Up
        } else {
            Dir::Down
        };
        self.for_loop(&n, dir, false, None, |cx, i| {
            let next = E::bin(BinOp::Add, i.clone(), E::I64(1));
            let (prev, at) = if op == Prim::Scanl {
                (i.clone(), next)
            } else {
                (next, i.clone())
            };
            let acc = cx.element(&out, &prev, true);
            let x = cx.elem(&a, i)?;
            let args = if op == Prim::Scanl {
                vec![acc, x]
            } else {
                vec![x, acc]
            };
            let v = cx.apply(f, args, span)?;
            let v = cx.settle(v)?;
            let mut have = Vec::new();
            dims_of(&v, &mut have);
            cx.check_dims(&dims, &have, span, SiteKind::AccumulatorSize(op));
            cx.store(&v, &out, &at)
        })?;
        Ok(Manifest {
            len,
            elem: out,
            owned: true,
        })
    }
}
