//! Folds and scans as loops (`arrays.rs` is the rest of the array
//! builtins): `reduce`, `foldl` and `ifold` with scalar or array
//! accumulators (updated in place when the function is aligned,
//! `inplace.rs`), the reassociated and the parallel `reduce`, and `scanl`
//! / `scanr` written out or streamed.

use syntax::{Prim, Span, Ty};

use crate::arrays::{Dir, LANES, Source, Step, dims_of, simple_op};
use crate::error::Error;
use crate::layout::{Kind, has_array, scalar_kinds};
use crate::lower::{Lowerer, SiteKind};
use crate::streams::{Order, order, rebuild, scalars};
use crate::val::{Arr, Func, Leaves, Manifest, Val};

impl Lowerer<'_> {
    /// One mutable C variable per scalar of a value shaped like `z`
    /// (`kinds`), named from `base` and set to `zs`: the variables, and the
    /// value made of them.
    pub(crate) fn scalar_vars(
        &mut self,
        z: &Val,
        kinds: &[Kind],
        zs: &[String],
        base: &str,
    ) -> (Vec<String>, Val) {
        let vars: Vec<String> = kinds
            .iter()
            .zip(zs)
            .map(|(k, z)| {
                let a = self.fresh(base);
                self.w.line(format!("{} {a} = {z};", k.c_type()));
                a
            })
            .collect();
        let val = rebuild(
            z,
            &mut vars
                .iter()
                .zip(kinds)
                .map(|(a, k)| Val::Scalar(*k, a.clone())),
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
            Source::Array(a) => a.len().to_string(),
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
        let step =
            |cx: &mut Lowerer<'_>, acc: &Val, accs: &[String], i: &str| -> Result<(), Error> {
                let x = match &src {
                    Source::Array(a) => cx.elem(a, i)?,
                    Source::Count(_) => Val::Scalar(Kind::Int, i.to_string()),
                };
                let v = cx.apply(f, vec![acc.clone(), x], span)?;
                cx.update(accs, &kinds, &v, span)
            };
        if let Source::Array(a) = &src {
            self.open_streams(a);
        }
        let i = self.fresh("i");
        let (lines, flags) = self.capture(|cx| step(cx, &acc_val, &accs, &i))?;
        // Chunks and lanes compute the left fold only for the operators of
        // note [rebracketing] (`assoc.rs`); any other `reduce` stays sequential.
        let rebracket = op == Prim::Reduce && crate::assoc::rebracketable(self.m, f, &z);
        let parallel = rebracket && self.may_parallelize(flags);
        if parallel {
            self.w.open(format!(
                "if ({n} >= {} && ad_max_threads() > 1)",
                self.cfg.parallel_min
            ));
            self.parallel_reduce(f, &z, &accs, &kinds, &acc_val, &n, span, &step)?;
            self.w.reopen("else");
        }
        let random = match &src {
            Source::Array(a) => order(a) == Order::Any,
            Source::Count(_) => true,
        };
        let reassociate = rebracket && self.cfg.reassociate && random && !flags.sequential;
        let simd = match (accs.as_slice(), simple_op(self.m, f)) {
            ([acc], Some(sym)) if reassociate && !flags.fails && !flags.allocs => {
                Some((acc.clone(), sym))
            }
            _ => None,
        };
        if let Some((acc, sym)) = simd {
            // A vectorizable reduction (note [reassociation]).
            self.w
                .line(format!("AD_PRAGMA(omp simd reduction({sym}:{acc}))"));
            self.write_loop(&i, &n, Dir::Up, lines, flags, false, None);
        } else if reassociate {
            self.lanes_reduce(f, &z, &accs, &kinds, &acc_val, &n, span, &step)?;
        } else {
            self.write_loop(&i, &n, Dir::Up, lines, flags, false, None);
        }
        if parallel {
            self.w.close();
        }
        Ok(acc_val)
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
        accs: &[String],
        kinds: &[Kind],
        acc_val: &Val,
        n: &str,
        span: Span,
        step: &Step<'_>,
    ) -> Result<(), Error> {
        let mut zs = Vec::new();
        scalars(z, &mut zs);
        let mut lanes: Vec<(Vec<String>, Val)> = vec![(accs.to_vec(), acc_val.clone())];
        for _ in 1..LANES {
            let (vars, val) = self.scalar_vars(z, kinds, &zs, "lane");
            lanes.push((vars, val));
        }
        let i = self.fresh("i");
        self.w.line(format!("int64_t {i} = 0;"));
        let (lines, flags) = self.capture(|cx| {
            for (l, (vars, val)) in lanes.iter().enumerate() {
                let il = cx.let_var(Kind::Int, &format!("{i} + {l}"), "il");
                step(cx, val, vars, &il)?;
            }
            Ok(())
        })?;
        self.w
            .open(format!("for (; {i} + {LANES} <= {n}; {i} += {LANES})"));
        self.splice_body(lines, flags, None);
        self.w.close();
        let (lines, flags) = self.capture(|cx| step(cx, acc_val, accs, &i))?;
        self.w.open(format!("for (; {i} < {n}; {i}++)"));
        self.splice_body(lines, flags, None);
        self.w.close();
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
        accs: &[String],
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
        let tmps: Vec<String> = vs
            .iter()
            .zip(kinds)
            .map(|(c, k)| self.let_var(*k, c, "next"))
            .collect();
        for (a, t) in accs.iter().zip(tmps) {
            self.w.line(format!("{a} = {t};"));
        }
        Ok(())
    }

    /// `reduce` with a scalar accumulator, in parallel chunks combined in
    /// order (note [parallel loops]).
    #[allow(clippy::too_many_arguments)]
    fn parallel_reduce(
        &mut self,
        f: &Func,
        z: &Val,
        accs: &[String],
        kinds: &[Kind],
        acc_val: &Val,
        n: &str,
        span: Span,
        step: &Step<'_>,
    ) -> Result<(), Error> {
        let nt = self.fresh("nt");
        let used = self.fresh("used");
        self.w.line(format!("const int {nt} = ad_max_threads();"));
        self.w.line(format!("int {used} = 1;"));
        let parts: Vec<String> = kinds
            .iter()
            .map(|k| self.alloc(*k, &nt.to_string(), span, Some(Prim::Reduce)))
            .collect();
        self.w
            .line(format!("AD_PRAGMA(omp parallel num_threads({nt}))"));
        self.w.open("");
        let (t, tn) = (self.fresh("t"), self.fresh("tn"));
        self.w.line(format!(
            "const int {t} = ad_thread_num(), {tn} = ad_num_threads();"
        ));
        self.w.line(format!("if ({t} == 0) {used} = {tn};"));
        let (lo, hi) = (self.fresh("lo"), self.fresh("hi"));
        self.w.line(format!(
            "const int64_t {lo} = ad_split({n}, {t}, {tn}), {hi} = ad_split({n}, {t} + 1, {tn});"
        ));
        let mut zs = Vec::new();
        scalars(z, &mut zs);
        let (locals, local_val) = self.scalar_vars(z, kinds, &zs, "part");
        let i = self.fresh("i");
        self.w
            .open(format!("for (int64_t {i} = {lo}; {i} < {hi}; {i}++)"));
        self.loop_depth += 1;
        step(self, &local_val, &locals, &i)?;
        self.loop_depth -= 1;
        self.w.close();
        for (p, l) in parts.iter().zip(&locals) {
            self.w.line(format!("{p}[{t}] = {l};"));
        }
        self.w.close();
        // Combine the partial results in thread order.
        let t = self.fresh("t");
        self.w
            .open(format!("for (int {t} = 0; {t} < {used}; {t}++)"));
        let part_vals: Vec<Val> = parts
            .iter()
            .zip(kinds)
            .map(|(p, k)| self.let_scalar(*k, &format!("{p}[{t}]"), "part"))
            .collect();
        let part_val = rebuild(z, &mut part_vals.into_iter());
        let v = self.apply(f, vec![acc_val.clone(), part_val], span)?;
        self.update(accs, kinds, &v, span)?;
        self.w.close();
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
        n: &str,
        span: Span,
    ) -> Result<Val, Error> {
        let z = self.materialize_val(z)?;
        let mut dims = Vec::new();
        dims_of(&z, &mut dims);
        let dims: Vec<String> = dims
            .into_iter()
            .map(|d| self.let_var(Kind::Int, &d, "dim"))
            .collect();
        let cur = self.alloc_leaves_dims(ty, "1", &mut dims.iter(), span, Some(op))?;
        if crate::inplace::aligned(self.m, f) {
            // Each step writes its result over the accumulator, element
            // by element (`inplace.rs`): one set of buffers, no copy.
            self.store(&z, &cur, "0")?;
            if let Source::Array(a) = &src {
                self.open_streams(a);
            }
            self.for_loop(n, Dir::Up, false, None, |cx, i| {
                let acc = cx.element(&cur, "0", true);
                let x = match &src {
                    Source::Array(a) => cx.elem(a, i)?,
                    Source::Count(_) => Val::Scalar(Kind::Int, i.to_string()),
                };
                let v = cx.apply(f, vec![acc, x], span)?;
                cx.store(&v, &cur, "0")
            })?;
            return Ok(self.element(&cur, "0", true));
        }
        let next = self.alloc_leaves_dims(ty, "1", &mut dims.iter(), span, Some(op))?;
        self.store(&z, &cur, "0")?;
        // The pointers are swapped, so they must be variables.
        let (cur, next) = (self.pointer_vars(&cur), self.pointer_vars(&next));
        if let Source::Array(a) = &src {
            self.open_streams(a);
        }
        self.for_loop(n, Dir::Up, false, None, |cx, i| {
            let acc = cx.element(&cur, "0", true);
            let x = match &src {
                Source::Array(a) => cx.elem(a, i)?,
                Source::Count(_) => Val::Scalar(Kind::Int, i.to_string()),
            };
            let v = cx.apply(f, vec![acc, x], span)?;
            cx.step_buffers(v, &dims, &cur, &next, op, span)
        })?;
        Ok(self.element(&cur, "0", true))
    }

    /// One step of a loop whose state holds arrays (a fold's accumulator,
    /// a `while` loop's state): the new state `v`, its sizes checked to be
    /// `dims`, stored into `next`, whose pointers are then swapped with
    /// `cur`'s.
    pub(crate) fn step_buffers(
        &mut self,
        v: Val,
        dims: &[String],
        cur: &Leaves,
        next: &Leaves,
        op: Prim,
        span: Span,
    ) -> Result<(), Error> {
        let v = self.settle(v)?;
        let mut have = Vec::new();
        dims_of(&v, &mut have);
        self.check_dims(dims, &have, span, SiteKind::AccumulatorSize(op));
        self.store(&v, next, "0")?;
        let (mut pc, mut pn) = (Vec::new(), Vec::new());
        cur.ptrs(&mut pc);
        next.ptrs(&mut pn);
        for ((k, c), (_, nx)) in pc.iter().zip(&pn) {
            let t = self.fresh("swap");
            self.w.line(format!(
                "{} *{t} = {c}; {c} = {nx}; {nx} = {t};",
                k.c_type()
            ));
        }
        Ok(())
    }

    /// Copies the pointers of freshly allocated leaves into mutable variables.
    pub(crate) fn pointer_vars(&mut self, leaves: &Leaves) -> Leaves {
        match leaves {
            Leaves::Scalar { kind, ptr } => {
                let p = self.fresh("cur");
                self.w.line(format!("{} *{p} = {ptr};", kind.c_type()));
                Leaves::Scalar {
                    kind: *kind,
                    ptr: p,
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
        let n = a.len().to_string();
        let len = self.len_plus_one(&n);
        let first = if op == Prim::Scanl {
            "0".to_string()
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
                    format!("{i} + 1")
                } else {
                    i.to_string()
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
            let (prev, at) = if op == Prim::Scanl {
                (i.to_string(), format!("{i} + 1"))
            } else {
                (format!("{i} + 1"), i.to_string())
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
