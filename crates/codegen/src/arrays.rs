//! The array builtins as loops: delayed arrays and their fusion,
//! materialization into arena buffers, folds and scans.
//!
//! - `map`, `map2`, `build` and the shifts of delayed arrays make delayed
//!   arrays (no loop yet); the consumer's loop computes their elements.
//! - `reduce`, `foldl`, `ifold`, `scanl` and `scanr` are loops that pull
//!   the elements of their input (`folds.rs`), so a chain `reduce f z (map
//!   g (map2 h A B))` is one loop.
//! - An array is *materialized* (written to buffers) when a result, a
//!   conditional, or a name used more than once needs it.
//! - Every loop whose body allocates takes an arena mark at the top of the
//!   body and resets to it at the bottom, so temporaries of one element are
//!   gone before the next (no allocation grows with the trip count). Values
//!   that must survive an iteration are stored into buffers allocated
//!   before the loop.
//! - With `Config::parallel`, an outermost materializing loop or reduction
//!   whose body neither allocates nor can fail gets an OpenMP pragma (see
//!   note [parallel loops]).

use std::rc::Rc;

use syntax::{ExprId, Prim, Span, Ty, stack};

use crate::error::Error;
use crate::layout::{Kind, has_array};
use crate::lower::{Flags, Lowerer, SiteKind, int_lit};
use crate::streams::{Order, order};
use crate::val::{Arr, Delayed, Env, Func, Gen, Leaves, Manifest, Val};

/// The direction of a loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Dir {
    Up,
    Down,
}

/// The accumulators of a reassociated `reduce`.
pub(crate) const LANES: usize = 4;

/// The default trip count from which parallel loops use more than one
/// thread (`Config::parallel_min`).
pub(crate) const PAR_MIN: u32 = 32768;

impl Lowerer<'_> {
    /// Compiles a builtin application.
    pub fn prim(&mut self, id: ExprId, op: Prim, args: &[ExprId], env: &Env) -> Result<Val, Error> {
        let span = self.span(id);
        if args.len() != op.arity() {
            return Err(Error::core(
                span,
                format!("`{op}` takes {} operands, given {}", op.arity(), args.len()),
            ));
        }
        if op.is_derivative_construct() {
            return Err(Error::unsupported(
                span,
                format!("`{op}` (expand it with the forward stage first)"),
            ));
        }
        let vals = args
            .iter()
            .map(|&a| self.expr(a, env))
            .collect::<Result<Vec<_>, _>>()?;
        let ty = self.ty(id)?.clone();
        match op {
            Prim::Map | Prim::Map2 => {
                let f = func(&vals[0], span)?;
                let srcs = vals[1..]
                    .iter()
                    .map(|v| array(v, span))
                    .collect::<Result<Vec<_>, _>>()?;
                let srcs = self.compatible(srcs)?;
                if let [a, b] = srcs.as_slice() {
                    let (la, lb) = (a.len().to_string(), b.len().to_string());
                    if la != lb {
                        self.fail_if(
                            &format!("{la} != {lb}"),
                            span,
                            SiteKind::SizeMismatch(op),
                            &la,
                            &lb,
                        );
                    }
                }
                let len = srcs[0].len().to_string();
                // Projections and zips of arrays in memory are views of
                // their buffers (structure of arrays): no loop at all.
                if let Some(view) = structural_view(self.m, &f, &srcs) {
                    return Ok(Val::Array(Arr::Manifest(Manifest {
                        len,
                        elem: view,
                        owned: srcs
                            .iter()
                            .all(|s| matches!(s, Arr::Manifest(m) if m.owned)),
                    })));
                }
                Ok(delayed(len, ty, Gen::Map { f, srcs }, span))
            }
            Prim::Build => {
                let Some((Kind::Int, n)) = vals[0].scalar() else {
                    return Err(Error::core(span, "`build` needs an integer count"));
                };
                let n = n.to_string();
                self.fail_if(
                    &format!("{n} < 0"),
                    span,
                    SiteKind::NegativeCount(op),
                    &n,
                    "0",
                );
                let f = func(&vals[1], span)?;
                Ok(delayed(n, ty, Gen::Build { f }, span))
            }
            Prim::Shift1L | Prim::Shift1R => {
                let a = array(&vals[0], span)?;
                // A stream read upwards may lose its last element, one
                // read downwards its first: the reads stay aligned.
                let aligned = matches!(
                    (op, order(&a)),
                    (_, Order::Any) | (Prim::Shift1R, Order::Up) | (Prim::Shift1L, Order::Down)
                );
                let a = if aligned { a } else { self.random_access(a)? };
                let n = a.len().to_string();
                let len = self.len_minus_one(&n);
                let off = if op == Prim::Shift1L { 1 } else { 0 };
                Ok(match a {
                    Arr::Manifest(m) => Val::Array(Arr::Manifest(Manifest {
                        len,
                        elem: if off == 1 { m.elem.offset("1") } else { m.elem },
                        owned: m.owned,
                    })),
                    Arr::Delayed(_) => delayed(len, ty, Gen::Offset { src: a, off }, span),
                })
            }
            Prim::Length => {
                let a = array(&vals[0], span)?;
                Ok(Val::Scalar(Kind::Int, a.len().to_string()))
            }
            Prim::Reduce | Prim::Foldl => {
                let f = func(&vals[0], span)?;
                let a = array(&vals[2], span)?;
                self.fold(op, &f, vals[1].clone(), Source::Array(a), &ty, span)
            }
            Prim::Ifold => {
                let f = func(&vals[0], span)?;
                let Some((Kind::Int, n)) = vals[2].scalar() else {
                    return Err(Error::core(span, "`ifold` needs an integer count"));
                };
                let n = n.to_string();
                self.fail_if(
                    &format!("{n} < 0"),
                    span,
                    SiteKind::NegativeCount(op),
                    &n,
                    "0",
                );
                self.fold(op, &f, vals[1].clone(), Source::Count(n), &ty, span)
            }
            Prim::While | Prim::Trips => {
                let c = func(&vals[0], span)?;
                let b = func(&vals[1], span)?;
                let state_ty = self.ty(args[2])?.clone();
                self.while_loop(op, &c, &b, vals[2].clone(), &state_ty, span)
            }
            Prim::Scanl | Prim::Scanr => {
                let f = func(&vals[0], span)?;
                let a = array(&vals[2], span)?;
                let Ty::Array(_, acc_ty) = &ty else {
                    return Err(Error::core(
                        span,
                        format!("`{op}` whose type is not an array"),
                    ));
                };
                if let Some(stream) = self.scan_stream(op, &f, &vals[1], &a, &ty, span)? {
                    return Ok(stream);
                }
                self.scan(op, &f, vals[1].clone(), a, acc_ty, span)
                    .map(|m| Val::Array(Arr::Manifest(m)))
            }
            Prim::Scatter
            | Prim::HistAdd
            | Prim::HistMul
            | Prim::HistMin
            | Prim::HistMax
            | Prim::Gather
            | Prim::WinnerScatter
            | Prim::WinnerMin
            | Prim::WinnerMax
            | Prim::GatherWon
            | Prim::PickDest
            | Prim::DHistMulDest
            | Prim::DHistMulVals => self.hist(op, &vals, &ty, span),
            _ => self.scalar_prim(op, &vals, span),
        }
    }

    /// The length `n + 1`, remembered as an offset of `n`'s base.
    pub fn len_plus_one(&mut self, n: &str) -> String {
        let (base, off) = self.lens.get(n).cloned().unwrap_or((n.to_string(), 0));
        let len = self.fresh("n");
        self.w.line(format!("const int64_t {len} = {n} + 1;"));
        self.lens.insert(len.clone(), (base, off + 1));
        len
    }

    /// The length `max(n - 1, 0)` (a shift): when `n` is known to be a
    /// length plus at least one, that length plus one less, so that
    /// `shift1L (scanl f z A)` has the length of `A` itself (and its loops
    /// fuse with those over `A`).
    pub fn len_minus_one(&mut self, n: &str) -> String {
        match self.lens.get(n).cloned() {
            Some((base, 1)) => base,
            Some((base, off)) if off > 1 => {
                let len = self.fresh("n");
                self.w
                    .line(format!("const int64_t {len} = {base} + {};", off - 1));
                self.lens.insert(len.clone(), (base, off - 1));
                len
            }
            _ => {
                let len = self.fresh("n");
                self.w
                    .line(format!("const int64_t {len} = {n} > 0 ? {n} - 1 : 0;"));
                len
            }
        }
    }

    /// Element `i` of an array (no bounds check).
    pub fn elem(&mut self, a: &Arr, i: &str) -> Result<Val, Error> {
        match a {
            Arr::Manifest(m) => Ok(self.element(&m.elem, i, m.owned)),
            Arr::Delayed(d) => self.element_of(d, i),
        }
    }

    /// Element `i` of manifest leaves; scalars are loaded into variables.
    pub fn element(&mut self, leaves: &Leaves, i: &str, owned: bool) -> Val {
        match leaves {
            Leaves::Scalar { kind, ptr } => self.let_scalar(*kind, &format!("{ptr}[{i}]"), "x"),
            Leaves::Tuple(items) => Val::Tuple(
                items
                    .iter()
                    .map(|l| self.element(l, i, owned))
                    .collect::<Vec<_>>()
                    .into(),
            ),
            Leaves::Array { len, elem } => Val::Array(Arr::Manifest(Manifest {
                len: len.clone(),
                elem: elem.offset(&format!("({i}) * {len}")),
                owned,
            })),
        }
    }

    /// Computes element `i` of a delayed array.
    pub(crate) fn element_of(&mut self, d: &Delayed, i: &str) -> Result<Val, Error> {
        stack::guard(|| match &d.recipe {
            Gen::Map { f, srcs } => {
                let args = srcs
                    .iter()
                    .map(|s| self.elem(s, i))
                    .collect::<Result<Vec<_>, _>>()?;
                self.apply(f, args, d.span)
            }
            Gen::Build { f } => self.apply(f, vec![Val::Scalar(Kind::Int, i.to_string())], d.span),
            Gen::Scan { .. } => self.scan_element(d, i),
            Gen::Offset { src, off } => {
                if *off == 0 {
                    self.elem(src, i)
                } else {
                    let j = self.fresh("j");
                    self.w.line(format!("const int64_t {j} = {i} + {off};"));
                    self.elem(src, &j)
                }
            }
        })
    }

    /// Writes every delayed array inside a value to buffers.
    pub fn materialize_val(&mut self, v: Val) -> Result<Val, Error> {
        stack::guard(|| match v {
            Val::Array(a @ Arr::Delayed(_)) => Ok(Val::Array(Arr::Manifest(self.materialize(&a)?))),
            Val::Tuple(items) => Ok(Val::Tuple(
                items
                    .iter()
                    .map(|v| self.materialize_val(v.clone()))
                    .collect::<Result<Vec<_>, _>>()?
                    .into(),
            )),
            v => Ok(v),
        })
    }

    /// Writes an array to buffers (a manifest array is returned as it is).
    pub fn materialize(&mut self, a: &Arr) -> Result<Manifest, Error> {
        let d = match a {
            Arr::Manifest(m) => return Ok(m.clone()),
            Arr::Delayed(d) => d.clone(),
        };
        let Ty::Array(_, elem_ty) = &d.ty else {
            return Err(Error::core(
                d.span,
                "a delayed array whose type is not an array",
            ));
        };
        let span = d.span;
        let op = match d.recipe {
            Gen::Map { .. } => Some(Prim::Map),
            Gen::Build { .. } => Some(Prim::Build),
            Gen::Scan { op, .. } => Some(op),
            Gen::Offset { .. } => None,
        };
        if let Gen::Scan { op, f, z, src, .. } = &d.recipe
            && *op == Prim::Scanl
            && !has_array(elem_ty)
        {
            // A `scanl` stream written out as a whole: the scan's own
            // loop, which stores the start and then one accumulator per
            // element (the stream's reading loop would run n + 1 times
            // and test each time whether an element is left to take in),
            // and leaves the last element in the accumulator
            // (`Lowerer::last_element`). `scanr` keeps the stream's loop: the
            // same change there made GMM's gradient 10% slower, through
            // the C compiler's register allocation in its one large
            // function rather than through the loop itself.
            return self.scan(*op, f, z.clone(), src.clone(), elem_ty, span);
        }
        let len = d.len.clone();
        let dir = order(a).dir();
        if !has_array(elem_ty) {
            let leaves = self.alloc_leaves(elem_ty, &len, span, op)?;
            self.open_streams(a);
            self.for_loop(&len, dir, true, None, |cx, i| {
                let v = cx.element_of(&d, i)?;
                cx.store(&v, &leaves, i)
            })?;
            return Ok(Manifest {
                len,
                elem: leaves,
                owned: true,
            });
        }
        // The rows' dims are known once the first row is computed: the
        // buffers are allocated in iteration 0, whose temporaries are then
        // kept (see note [rows of unknown length]).
        let leaves = self.declare_leaves(elem_ty, span, false)?;
        self.open_streams(a);
        // The rows' buffers are allocated in the first iteration, whose
        // temporaries are kept.
        let (first, later) = match dir {
            Dir::Up => ("0".to_string(), "> 0".to_string()),
            Dir::Down => (format!("{len} - 1"), format!("< {len} - 1")),
        };
        self.for_loop(&len, dir, false, Some(&later), |cx, i| {
            let v = cx.element_of(&d, i)?;
            let v = cx.settle(v)?;
            cx.fit_row(&v, &leaves, i, &first, &len, span, SiteKind::Ragged, op)?;
            cx.store(&v, &leaves, i)
        })?;
        Ok(Manifest {
            len,
            elem: leaves,
            owned: true,
        })
    }

    /// Materializes the delayed arrays of a value whose elements contain
    /// arrays, so that every dim of the value is known.
    pub(crate) fn settle(&mut self, v: Val) -> Result<Val, Error> {
        stack::guard(|| match v {
            Val::Array(Arr::Delayed(d)) => {
                let deep = matches!(&d.ty, Ty::Array(_, e) if has_array(e));
                if deep {
                    let m = self.materialize(&Arr::Delayed(d))?;
                    Ok(Val::Array(Arr::Manifest(m)))
                } else {
                    Ok(Val::Array(Arr::Delayed(d)))
                }
            }
            Val::Tuple(items) => Ok(Val::Tuple(
                items
                    .iter()
                    .map(|v| self.settle(v.clone()))
                    .collect::<Result<Vec<_>, _>>()?
                    .into(),
            )),
            v => Ok(v),
        })
    }

    /// In row `i` of an array being written into `leaves` (declared by
    /// `declare_leaves`, `n` rows): on the first row written (index
    /// `first`), sets the dims from the row and allocates the buffers; on
    /// the others, checks the dims.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn fit_row(
        &mut self,
        row: &Val,
        leaves: &Leaves,
        i: &str,
        first: &str,
        n: &str,
        span: Span,
        kind: SiteKind,
        op: Option<Prim>,
    ) -> Result<(), Error> {
        let mut have = Vec::new();
        dims_of(row, &mut have);
        let mut want = Vec::new();
        leaves.dims(&mut want);
        self.w.open(format!("if ({i} == {first})"));
        for (w, h) in want.iter().zip(&have) {
            self.w.line(format!("{w} = {h};"));
        }
        self.alloc_declared(leaves, n, span, op);
        self.w.reopen("else");
        self.check_dims(&want, &have, span, kind);
        self.w.close();
        Ok(())
    }

    /// Fails unless the dims `have` equal the dims `want` (checks between
    /// identical expressions are left out).
    pub(crate) fn check_dims(
        &mut self,
        want: &[String],
        have: &[String],
        span: Span,
        kind: SiteKind,
    ) {
        for (w, h) in want.iter().zip(have) {
            if w != h {
                self.fail_if(&format!("{h} != {w}"), span, kind.clone(), w, h);
            }
        }
    }

    /// Allocates the declared pointers of `leaves` for `n` elements.
    pub(crate) fn alloc_declared(
        &mut self,
        leaves: &Leaves,
        n: &str,
        span: Span,
        op: Option<Prim>,
    ) {
        match leaves {
            Leaves::Scalar { kind, ptr } => self.alloc_into(ptr, *kind, n, span, op),
            Leaves::Tuple(items) => items
                .iter()
                .for_each(|l| self.alloc_declared(l, n, span, op)),
            Leaves::Array { len, elem } => {
                let count = format!("ad_mulc({n}, {len})");
                self.alloc_declared(elem, &count, span, op);
            }
        }
    }

    /// Allocates buffers for `n` elements of a type whose dims are given
    /// (`dims` in preorder; none for a type without arrays).
    pub(crate) fn alloc_leaves_dims(
        &mut self,
        elem: &Ty,
        n: &str,
        dims: &mut std::slice::Iter<'_, String>,
        span: Span,
        op: Option<Prim>,
    ) -> Result<Leaves, Error> {
        stack::guard(|| match elem {
            Ty::Real | Ty::Int | Ty::Bool => {
                let kind = Kind::of(elem).expect("invariant: a scalar type");
                let ptr = self.alloc(kind, n, span, op);
                Ok(Leaves::Scalar { kind, ptr })
            }
            Ty::Tuple(items) => Ok(Leaves::Tuple(
                items
                    .iter()
                    .map(|t| self.alloc_leaves_dims(t, n, dims, span, op))
                    .collect::<Result<Vec<_>, _>>()?,
            )),
            Ty::Array(_, inner) => {
                let len = dims
                    .next()
                    .cloned()
                    .ok_or_else(|| Error::core(span, "a value with fewer dims than its type"))?;
                let count = self.fresh("c");
                self.w
                    .line(format!("const int64_t {count} = ad_mulc({n}, {len});"));
                let elem = self.alloc_leaves_dims(inner, &count, dims, span, op)?;
                Ok(Leaves::Array {
                    len,
                    elem: Box::new(elem),
                })
            }
            Ty::Func(..) => Err(Error::unsupported(span, "an array of functions")),
        })
    }

    pub(crate) fn alloc_leaves(
        &mut self,
        elem: &Ty,
        n: &str,
        span: Span,
        op: Option<Prim>,
    ) -> Result<Leaves, Error> {
        self.alloc_leaves_dims(elem, n, &mut [].iter(), span, op)
    }

    /// A copy of a manifest array in fresh buffers (`inner` are the dims
    /// of its elements, in preorder).
    pub fn copy_array(
        &mut self,
        m: &Manifest,
        elem_ty: &Ty,
        inner: &[String],
        span: Span,
    ) -> Result<Manifest, Error> {
        let leaves = self.alloc_leaves_dims(elem_ty, &m.len, &mut inner.iter(), span, None)?;
        let src = Arr::Manifest(m.clone());
        self.for_loop(&m.len, Dir::Up, true, None, |cx, i| {
            let e = cx.elem(&src, i)?;
            cx.store(&e, &leaves, i)
        })?;
        Ok(Manifest {
            len: m.len.clone(),
            elem: leaves,
            owned: true,
        })
    }

    /// Writes value `v` as element `i` of `dest` (whose dims `v` matches).
    pub fn store(&mut self, v: &Val, dest: &Leaves, i: &str) -> Result<(), Error> {
        stack::guard(|| match (v, dest) {
            (Val::Scalar(_, c), Leaves::Scalar { ptr, .. }) => {
                self.w.line(format!("{ptr}[{i}] = {c};"));
                Ok(())
            }
            (Val::Tuple(vs), Leaves::Tuple(ds)) if vs.len() == ds.len() => {
                for (v, d) in vs.iter().zip(ds) {
                    self.store(v, d, i)?;
                }
                Ok(())
            }
            (Val::Array(a), Leaves::Array { len, elem }) => {
                let sub = elem.offset(&format!("({i}) * {len}"));
                let a = a.clone();
                let n = a.len().to_string();
                self.open_streams(&a);
                self.for_loop(&n, order(&a).dir(), true, None, |cx, j| {
                    let e = cx.elem(&a, j)?;
                    cx.store(&e, &sub, j)
                })
            }
            _ => Err(Error::core(
                Span::GENERATED,
                "a value stored into buffers of another shape",
            )),
        })
    }

    /// Writes a loop over `0..n` (in direction `dir`); `body` gets the
    /// index variable. `parallel` says whether the loop may run in
    /// parallel if its body allows; `reset_when` is a condition on the
    /// index (`"> 0"`) under which the arena is reset after the body, when
    /// not every iteration's temporaries may be dropped.
    pub fn for_loop(
        &mut self,
        n: &str,
        dir: Dir,
        parallel: bool,
        reset_when: Option<&str>,
        body: impl FnOnce(&mut Self, &str) -> Result<(), Error>,
    ) -> Result<(), Error> {
        let i = self.fresh("i");
        let (lines, flags) = self.capture(|cx| body(cx, &i))?;
        self.write_loop(&i, n, dir, lines, flags, parallel, reset_when);
        Ok(())
    }

    /// Writes a loop around a captured body.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn write_loop(
        &mut self,
        i: &str,
        n: &str,
        dir: Dir,
        lines: Vec<String>,
        flags: Flags,
        parallel: bool,
        reset_when: Option<&str>,
    ) {
        let head = match dir {
            Dir::Up => format!("for (int64_t {i} = 0; {i} < {n}; {i}++)"),
            Dir::Down => format!("for (int64_t {i} = {n} - 1; {i} >= 0; {i}--)"),
        };
        if parallel && self.may_parallelize(flags) {
            self.w.line(format!(
                "AD_PRAGMA(omp parallel for schedule(static) if ({n} >= {}))",
                self.cfg.parallel_min
            ));
        }
        self.w.open(head);
        let reset_when = reset_when.map(|cond| format!("{i} {cond}"));
        self.splice_body(lines, flags, reset_when.as_deref());
        self.w.close();
    }

    /// A captured loop body; if it allocates, an arena mark taken before it
    /// and reset after it (only where `reset_when`, a C condition, holds).
    pub(crate) fn splice_body(
        &mut self,
        lines: Vec<String>,
        flags: Flags,
        reset_when: Option<&str>,
    ) {
        let mark = flags.allocs.then(|| self.fresh("mark"));
        if let Some(mark) = &mark {
            self.w
                .line(format!("const ad_mark {mark} = ad_mark_get(ctx);"));
        }
        self.w.splice(lines);
        if let Some(mark) = &mark {
            match reset_when {
                Some(cond) => self.w.line(format!("if ({cond}) ad_reset(ctx, {mark});")),
                None => self.w.line(format!("ad_reset(ctx, {mark});")),
            }
        }
    }

    /// Whether a loop with this body may get a parallel pragma: only when
    /// asked for, outside every other loop, and when the body neither
    /// allocates nor fails (note [parallel loops]).
    pub fn may_parallelize(&self, flags: Flags) -> bool {
        self.cfg.parallel
            && self.loop_depth == 0
            && !flags.allocs
            && !flags.fails
            && !flags.sequential
    }

    /// Runs `f` writing into a detached buffer, inside a new loop frame;
    /// returns the lines and what the body did (also recorded in the
    /// enclosing frames).
    pub fn capture(
        &mut self,
        f: impl FnOnce(&mut Self) -> Result<(), Error>,
    ) -> Result<(Vec<String>, Flags), Error> {
        let saved = std::mem::take(&mut self.w);
        self.frames.push(Flags::default());
        self.loop_depth += 1;
        let res = f(self);
        self.loop_depth -= 1;
        let flags = self.frames.pop().unwrap_or_default();
        if let Some(outer) = self.frames.last_mut() {
            outer.allocs |= flags.allocs;
            outer.fails |= flags.fails;
        }
        let inner = std::mem::replace(&mut self.w, saved);
        res?;
        Ok((inner.into_lines(), flags))
    }

    /// An array literal, written to buffers.
    pub fn literal_array(
        &mut self,
        ty: &Ty,
        vals: Vec<Val>,
        span: Span,
    ) -> Result<Manifest, Error> {
        let Ty::Array(_, elem_ty) = ty else {
            return Err(Error::core(
                span,
                "an array literal whose type is not an array",
            ));
        };
        let len = int_lit(vals.len() as i64);
        let vals = vals
            .into_iter()
            .map(|v| self.settle(v))
            .collect::<Result<Vec<_>, _>>()?;
        let mut dims = Vec::new();
        if let Some(v) = vals.first() {
            dims_of(v, &mut dims);
        } else {
            dims = vec!["INT64_C(0)".to_string(); crate::layout::count(elem_ty).0];
        }
        let dims: Vec<String> = dims
            .into_iter()
            .map(|d| self.let_var(Kind::Int, &d, "dim"))
            .collect();
        for v in vals.iter().skip(1) {
            let mut have = Vec::new();
            dims_of(v, &mut have);
            self.check_dims(&dims, &have, span, SiteKind::Ragged);
        }
        let out = self.alloc_leaves_dims(elem_ty, &len, &mut dims.iter(), span, None)?;
        for (j, v) in vals.iter().enumerate() {
            self.store(v, &out, &int_lit(j as i64))?;
        }
        Ok(Manifest {
            len,
            elem: out,
            owned: true,
        })
    }
}

/// Writes one step of a fold: the context, the accumulator value, its
/// variables, the index.
pub(crate) type Step<'s> =
    dyn Fn(&mut Lowerer<'_>, &Val, &[String], &str) -> Result<(), Error> + 's;

/// The elements of `map f A` / `map2 f A B` over manifest arrays as leaves
/// of the sources, when `f` only takes tuples apart and puts them together
/// (`fun t -> t.2`, `fun (x, y) -> (x, y)`, `fun (x, y) -> y`, and `let`s
/// of such): the result is a view of the sources' buffers.
fn structural_view(m: &syntax::Module, f: &Func, srcs: &[Arr]) -> Option<Leaves> {
    use std::collections::HashMap;
    use syntax::{Expr, Pat};
    fn go(m: &syntax::Module, id: ExprId, env: &HashMap<syntax::Name, Leaves>) -> Option<Leaves> {
        stack::guard(|| match m.expr(id) {
            Expr::Var(n) => env.get(n).cloned(),
            Expr::Proj { tuple, index } => match go(m, *tuple, env)? {
                Leaves::Tuple(items) => items.get((*index as usize).checked_sub(1)?).cloned(),
                _ => None,
            },
            Expr::Tuple(items) if !items.is_empty() => Some(Leaves::Tuple(
                items
                    .iter()
                    .map(|&i| go(m, i, env))
                    .collect::<Option<Vec<_>>>()?,
            )),
            Expr::Let {
                pat, value, body, ..
            } => {
                let v = go(m, *value, env)?;
                let mut env = env.clone();
                match (pat, v) {
                    (Pat::Var(n), v) => {
                        env.insert(n.clone(), v);
                    }
                    (Pat::Tuple(ns), Leaves::Tuple(items)) if ns.len() == items.len() => {
                        for (n, l) in ns.iter().zip(items) {
                            env.insert(n.clone(), l);
                        }
                    }
                    _ => return None,
                }
                go(m, *body, &env)
            }
            _ => None,
        })
    }
    let Expr::Lambda { params, body } = m.expr(f.lambda) else {
        return None;
    };
    if params.len() != srcs.len() {
        return None;
    }
    let mut env = HashMap::new();
    for (p, s) in params.iter().zip(srcs) {
        let Arr::Manifest(man) = s else { return None };
        env.insert(p.name.clone(), man.elem.clone());
    }
    go(m, *body, &env)
}

/// The C operator of a reduction's function when it is `fun (a, b) -> a +
/// b` or `a * b` (also as `let v = a op b in v`, reverse mode's form),
/// which OpenMP can reduce in vector lanes.
pub(crate) fn simple_op(m: &syntax::Module, f: &Func) -> Option<&'static str> {
    use syntax::Expr;
    let Expr::Lambda { params, body } = m.expr(f.lambda) else {
        return None;
    };
    let [a, b] = params.as_slice() else {
        return None;
    };
    let mut e = m.expr(*body);
    if let Expr::Let {
        pat: syntax::Pat::Var(v),
        value,
        body,
        ..
    } = e
        && matches!(m.expr(*body), Expr::Var(w) if w == v)
    {
        e = m.expr(*value);
    }
    let Expr::Prim { op, args } = e else {
        return None;
    };
    let names: Vec<&syntax::Name> = args
        .iter()
        .filter_map(|x| match m.expr(*x) {
            Expr::Var(n) => Some(n),
            _ => None,
        })
        .collect();
    let operands = names.len() == 2
        && ((names[0] == &a.name && names[1] == &b.name)
            || (names[0] == &b.name && names[1] == &a.name));
    match op {
        Prim::Add if operands => Some("+"),
        Prim::Mul if operands => Some("*"),
        _ => None,
    }
}

/// What a fold runs over.
pub(crate) enum Source {
    /// The elements of an array.
    Array(Arr),
    /// The integers `0..n`.
    Count(String),
}

fn delayed(len: String, ty: Ty, recipe: Gen, span: Span) -> Val {
    Val::Array(Arr::Delayed(Rc::new(Delayed {
        len,
        ty,
        recipe,
        span,
    })))
}

fn func(v: &Val, span: Span) -> Result<Rc<Func>, Error> {
    match v {
        Val::Func(f) => Ok(f.clone()),
        _ => Err(Error::core(
            span,
            "a builtin's function argument is not a function",
        )),
    }
}

fn array(v: &Val, span: Span) -> Result<Arr, Error> {
    v.arr()
        .cloned()
        .ok_or_else(|| Error::core(span, "a builtin's array argument is not an array"))
}

/// The dims of a value, in the preorder of its type (`settle`d values).
pub(crate) fn dims_of(v: &Val, out: &mut Vec<String>) {
    match v {
        Val::Scalar(..) | Val::Func(_) => {}
        Val::Tuple(items) => items.iter().for_each(|v| dims_of(v, out)),
        Val::Array(Arr::Manifest(m)) => {
            out.push(m.len.clone());
            m.elem.dims(out);
        }
        Val::Array(Arr::Delayed(d)) => out.push(d.len.clone()),
    }
}
