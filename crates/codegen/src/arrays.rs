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
//!   runs on several threads: an OpenMP pragma when its body neither
//!   allocates nor can fail, else threads with arenas and failure records
//!   of their own (see note [parallel loops]).

use std::rc::Rc;

use syntax::{ExprId, Prim, Span, Ty, stack};

use crate::error::Error;
use crate::imp::{self, BinOp, Block, Expr as E, Pragma, Scalar, Stmt, VarId};
use crate::layout::{Kind, has_array};
use crate::lower::{Flags, Lowerer, SiteKind};
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

/// The same for a loop whose body has a loop of its own (GMM's per-point
/// work: k components of d x d), when `Config::parallel_min` is larger.
pub(crate) const PAR_MIN_NESTED: u32 = 1024;

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
                    let (la, lb) = (a.len().clone(), b.len().clone());
                    if la != lb {
                        self.fail_if(
                            E::bin(BinOp::Ne, la.clone(), lb.clone()),
                            span,
                            SiteKind::SizeMismatch(op),
                            la,
                            lb,
                        );
                    }
                }
                let len = srcs[0].len().clone();
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
                let n = n.clone();
                self.fail_if(
                    E::bin(BinOp::Lt, n.clone(), E::I64(0)),
                    span,
                    SiteKind::NegativeCount(op),
                    n.clone(),
                    E::I64(0),
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
                let n = a.len().clone();
                let len = self.len_minus_one(&n);
                let off = if op == Prim::Shift1L { 1 } else { 0 };
                Ok(match a {
                    Arr::Manifest(m) => Val::Array(Arr::Manifest(Manifest {
                        len,
                        elem: if off == 1 {
                            m.elem.offset(&E::I64(1))
                        } else {
                            m.elem
                        },
                        owned: m.owned,
                    })),
                    Arr::Delayed(_) => delayed(len, ty, Gen::Offset { src: a, off }, span),
                })
            }
            Prim::Length => {
                let a = array(&vals[0], span)?;
                Ok(Val::Scalar(Kind::Int, a.len().clone()))
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
                let n = n.clone();
                self.fail_if(
                    E::bin(BinOp::Lt, n.clone(), E::I64(0)),
                    span,
                    SiteKind::NegativeCount(op),
                    n.clone(),
                    E::I64(0),
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
            | Prim::HistAddRows
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
    pub fn len_plus_one(&mut self, n: &E) -> E {
        let (base, off) = self.len_base(n);
        let len = self.let_var(Kind::Int, E::bin(BinOp::Add, n.clone(), E::I64(1)), "n");
        self.lens.insert(len, (base, off + 1));
        E::Var(len)
    }

    /// The length `n` as a length it is known to exceed by a constant
    /// (itself and 0 when none is known).
    fn len_base(&self, n: &E) -> (E, i64) {
        match n {
            E::Var(v) => self.lens.get(v).cloned(),
            _ => None,
        }
        .unwrap_or((n.clone(), 0))
    }

    /// The length `max(n - 1, 0)` (a shift): when `n` is known to be a
    /// length plus at least one, that length plus one less, so that
    /// `shift1L (scanl f z A)` has the length of `A` itself (and its loops
    /// fuse with those over `A`).
    pub fn len_minus_one(&mut self, n: &E) -> E {
        match self.len_base(n) {
            (base, 1) => base,
            (base, off) if off > 1 => {
                let e = E::bin(BinOp::Add, base.clone(), E::I64(off - 1));
                let len = self.let_var(Kind::Int, e, "n");
                self.lens.insert(len, (base, off - 1));
                E::Var(len)
            }
            _ => {
                let e = E::Select(
                    Box::new(E::bin(BinOp::Gt, n.clone(), E::I64(0))),
                    Box::new(E::bin(BinOp::Sub, n.clone(), E::I64(1))),
                    Box::new(E::I64(0)),
                );
                E::Var(self.let_var(Kind::Int, e, "n"))
            }
        }
    }

    /// Element `i` of an array (no bounds check).
    pub fn elem(&mut self, a: &Arr, i: &E) -> Result<Val, Error> {
        match a {
            Arr::Manifest(m) => Ok(self.element(&m.elem, i, m.owned)),
            Arr::Delayed(d) => self.element_of(d, i),
        }
    }

    /// Element `i` of manifest leaves; scalars are loaded into variables.
    pub fn element(&mut self, leaves: &Leaves, i: &E, owned: bool) -> Val {
        match leaves {
            Leaves::Scalar { kind, ptr } => {
                self.let_scalar(*kind, E::load(ptr.clone(), i.clone()), "x")
            }
            Leaves::Tuple(items) => Val::Tuple(
                items
                    .iter()
                    .map(|l| self.element(l, i, owned))
                    .collect::<Vec<_>>()
                    .into(),
            ),
            Leaves::Array { len, elem } => Val::Array(Arr::Manifest(Manifest {
                len: len.clone(),
                elem: elem.offset(&crate::val::row_start(i, len)),
                owned,
            })),
        }
    }

    /// Computes element `i` of a delayed array.
    pub(crate) fn element_of(&mut self, d: &Delayed, i: &E) -> Result<Val, Error> {
        stack::guard(|| match &d.recipe {
            Gen::Map { f, srcs } => {
                let args = srcs
                    .iter()
                    .map(|s| self.elem(s, i))
                    .collect::<Result<Vec<_>, _>>()?;
                self.apply(f, args, d.span)
            }
            Gen::Build { f } => self.apply(f, vec![Val::Scalar(Kind::Int, i.clone())], d.span),
            Gen::Scan { .. } => self.scan_element(d, i),
            Gen::Offset { src, off } => {
                if *off == 0 {
                    self.elem(src, i)
                } else {
                    let j =
                        self.let_var(Kind::Int, E::bin(BinOp::Add, i.clone(), E::I64(*off)), "j");
                    self.elem(src, &E::Var(j))
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
            self.write_into(&d, &leaves)?;
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
        let last = E::bin(BinOp::Sub, len.clone(), E::I64(1));
        let (first, later) = match dir {
            Dir::Up => (E::I64(0), (BinOp::Gt, E::I64(0))),
            Dir::Down => (last.clone(), (BinOp::Lt, last)),
        };
        self.for_loop(&len, dir, false, Some(later), |cx, i| {
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

    /// Writes the elements of a delayed array with no arrays in its
    /// elements into buffers `leaves` of its length, in the order its
    /// streams are read.
    pub(crate) fn write_into(&mut self, d: &Rc<Delayed>, leaves: &Leaves) -> Result<(), Error> {
        let a = Arr::Delayed(d.clone());
        let dir = order(&a).dir();
        self.open_streams(&a);
        self.for_loop(&d.len, dir, true, None, |cx, i| {
            let v = cx.element_of(d, i)?;
            cx.store(&v, leaves, i)
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
        i: &E,
        first: &E,
        n: &E,
        span: Span,
        kind: SiteKind,
        op: Option<Prim>,
    ) -> Result<(), Error> {
        let mut have = Vec::new();
        dims_of(row, &mut have);
        let mut want = Vec::new();
        leaves.dims(&mut want);
        self.w.open();
        for (w, h) in want.iter().zip(&have) {
            if let E::Var(w) = w {
                self.set(*w, h.clone());
            }
        }
        self.alloc_declared(leaves, n, span, op);
        let then = self.w.close();
        self.w.open();
        self.check_dims(&want, &have, span, kind);
        let els = self.w.close();
        self.w.push(Stmt::If {
            cond: E::bin(BinOp::Eq, i.clone(), first.clone()),
            then,
            els,
        });
        Ok(())
    }

    /// Fails unless the dims `have` equal the dims `want` (checks between
    /// identical expressions are left out).
    pub(crate) fn check_dims(&mut self, want: &[E], have: &[E], span: Span, kind: SiteKind) {
        for (w, h) in want.iter().zip(have) {
            if w != h {
                let cond = E::bin(BinOp::Ne, h.clone(), w.clone());
                self.fail_if(cond, span, kind.clone(), w.clone(), h.clone());
            }
        }
    }

    /// Allocates the declared pointers of `leaves` for `n` elements.
    pub(crate) fn alloc_declared(&mut self, leaves: &Leaves, n: &E, span: Span, op: Option<Prim>) {
        match leaves {
            Leaves::Scalar {
                kind,
                ptr: E::Var(p),
            } => self.alloc_into(*p, *kind, n, span, op),
            Leaves::Scalar { .. } => {}
            Leaves::Tuple(items) => items
                .iter()
                .for_each(|l| self.alloc_declared(l, n, span, op)),
            Leaves::Array { len, elem } => {
                let count = self.mulc(n.clone(), len.clone());
                self.alloc_declared(elem, &count, span, op);
            }
        }
    }

    /// Allocates buffers for `n` elements of a type whose dims are given
    /// (`dims` in preorder; none for a type without arrays).
    pub(crate) fn alloc_leaves_dims(
        &mut self,
        elem: &Ty,
        n: &E,
        dims: &mut std::slice::Iter<'_, E>,
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
                let c = self.mulc(n.clone(), len.clone());
                let count = E::Var(self.let_var(Kind::Int, c, "c"));
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
        n: &E,
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
        inner: &[E],
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
    pub fn store(&mut self, v: &Val, dest: &Leaves, i: &E) -> Result<(), Error> {
        stack::guard(|| match (v, dest) {
            (Val::Scalar(_, c), Leaves::Scalar { ptr, .. }) => {
                self.store_at(ptr, i, c.clone());
                Ok(())
            }
            (Val::Tuple(vs), Leaves::Tuple(ds)) if vs.len() == ds.len() => {
                for (v, d) in vs.iter().zip(ds) {
                    self.store(v, d, i)?;
                }
                Ok(())
            }
            (Val::Array(a), Leaves::Array { len, elem }) => {
                let sub = elem.offset(&crate::val::row_start(i, len));
                let a = a.clone();
                let n = a.len().clone();
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
    /// index (`i > 0`: the operator and its right operand) under which
    /// the arena is reset after the body, when not every iteration's
    /// temporaries may be dropped.
    pub fn for_loop(
        &mut self,
        n: &E,
        dir: Dir,
        parallel: bool,
        reset_when: Option<(BinOp, E)>,
        body: impl FnOnce(&mut Self, &E) -> Result<(), Error>,
    ) -> Result<(), Error> {
        let i = self.index_var();
        let (block, flags) = self.capture(|cx| body(cx, &E::Var(i)))?;
        let reset_when = reset_when.map(|(op, e)| E::bin(op, E::Var(i), e));
        let own = (flags.allocs || flags.fails) && reset_when.is_none() && dir == Dir::Up;
        if parallel && own && self.may_parallelize_own(flags) {
            // Threads with their own arenas (note [parallel loops]).
            let body = self.body_block(block, flags, None);
            let min = self.par_min(flags);
            let nt = self.chunk_threads(n, min);
            let site = self.site(Span::GENERATED, SiteKind::Alloc(None)) as u32;
            self.note_fails();
            self.w.open();
            let [_, _, lo, hi] = self.chunk(n);
            self.push_loop(i, Some(lo), &hi, dir, 1, None, body);
            let body = self.w.close();
            self.w.push(Stmt::Parallel {
                threads: nt,
                body,
                workers: Some(site),
            });
            return Ok(());
        }
        let pragma = (parallel && self.may_parallelize(flags)).then_some(Pragma::ParallelFor {
            min: self.par_min(flags),
        });
        let body = self.body_block(block, flags, reset_when);
        self.push_loop(i, Some(E::I64(0)), n, dir, 1, pragma, body);
        Ok(())
    }

    /// The least trip count at which a loop with this body runs on several
    /// threads: `Config::parallel_min`, or at most [`PAR_MIN_NESTED`] when
    /// the body has a loop of its own.
    pub(crate) fn par_min(&self, flags: Flags) -> u32 {
        if flags.loops {
            self.cfg.parallel_min.min(PAR_MIN_NESTED)
        } else {
            self.cfg.parallel_min
        }
    }

    /// The threads of a parallel body over `0..n`: all there are from
    /// `min` iterations on, else one (which runs the whole loop).
    pub(crate) fn chunk_threads(&mut self, n: &E, min: u32) -> E {
        let threads = self.call("ad_max_threads", &[], Scalar::I32, vec![]);
        let enough = E::bin(BinOp::Ge, n.clone(), E::I64(min.into()));
        let nt = E::Select(Box::new(enough), Box::new(threads), Box::new(E::I32(1)));
        E::Var(self.let_typed(imp::Ty::Scalar(Scalar::I32), nt, "nt"))
    }

    /// Inside a parallel body: the thread's number `t` (`I32`), the number
    /// of threads `tn` and its chunk `lo ..< hi` of `0..n`, the chunks in
    /// thread order (`ad_split`).
    pub(crate) fn chunk(&mut self, n: &E) -> [E; 4] {
        let int = imp::Ty::Scalar(Scalar::I32);
        let me = self.call("ad_thread_num", &[], Scalar::I32, vec![]);
        let t = E::Var(self.let_typed(int.clone(), me, "t"));
        let all = self.call("ad_num_threads", &[], Scalar::I32, vec![]);
        let tn = E::Var(self.let_typed(int, all, "tn"));
        let split = [Scalar::I64, Scalar::I64, Scalar::I64];
        let wide = |e: E| E::Cast(Scalar::I64, Box::new(e));
        let lo = self.call(
            "ad_split",
            &split,
            Scalar::I64,
            vec![n.clone(), wide(t.clone()), wide(tn.clone())],
        );
        let lo = E::Var(self.let_var(Kind::Int, lo, "lo"));
        let next = E::bin(BinOp::Add, t.clone(), E::I32(1));
        let hi = self.call(
            "ad_split",
            &split,
            Scalar::I64,
            vec![n.clone(), wide(next), wide(tn.clone())],
        );
        let hi = E::Var(self.let_var(Kind::Int, hi, "hi"));
        [t, tn, lo, hi]
    }

    /// A fresh loop index.
    pub(crate) fn index_var(&mut self) -> VarId {
        self.new_var("i", imp::Ty::Scalar(imp::Scalar::I64), false)
    }

    /// Appends a counted loop.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn push_loop(
        &mut self,
        index: VarId,
        lo: Option<E>,
        n: &E,
        dir: Dir,
        step: u32,
        pragma: Option<Pragma>,
        body: Block,
    ) {
        for f in &mut self.frames {
            f.loops = true;
        }
        self.w.push(Stmt::For(Box::new(imp::For {
            index,
            lo,
            hi: n.clone(),
            dir: match dir {
                Dir::Up => imp::Dir::Up,
                Dir::Down => imp::Dir::Down,
            },
            step,
            pragma,
            body,
        })));
    }

    /// A captured loop body; if it allocates, a region around it
    /// (released only where `reset_when` holds, if given).
    pub(crate) fn body_block(
        &mut self,
        block: Block,
        flags: Flags,
        reset_when: Option<E>,
    ) -> Block {
        if !flags.allocs {
            return block;
        }
        let mark = self.new_var("mark", imp::Ty::Mark, false);
        vec![Stmt::Region {
            mark,
            body: block,
            reset_if: reset_when,
        }]
    }

    /// Whether a loop with this body may get a parallel pragma: only when
    /// asked for, outside every other loop, and when the body neither
    /// allocates nor fails (note [parallel loops]).
    pub fn may_parallelize(&self, flags: Flags) -> bool {
        self.may_parallelize_own(flags) && !flags.allocs && !flags.fails
    }

    /// Whether it may run in parallel on threads with their own arenas
    /// and failure records (`Stmt::Parallel` with workers): when asked
    /// for, outside every other loop, and when its iterations need not
    /// run in order.
    pub fn may_parallelize_own(&self, flags: Flags) -> bool {
        self.cfg.parallel && self.loop_depth == 0 && !flags.sequential
    }

    /// Runs `f` writing into a detached block, inside a new loop frame;
    /// returns the block and what the body did (also recorded in the
    /// enclosing frames).
    pub fn capture(
        &mut self,
        f: impl FnOnce(&mut Self) -> Result<(), Error>,
    ) -> Result<(Block, Flags), Error> {
        self.w.open();
        self.frames.push(Flags::default());
        self.loop_depth += 1;
        let res = f(self);
        self.loop_depth -= 1;
        let flags = self.frames.pop().unwrap_or_default();
        if let Some(outer) = self.frames.last_mut() {
            outer.allocs |= flags.allocs;
            outer.fails |= flags.fails;
        }
        let block = self.w.close();
        res?;
        Ok((block, flags))
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
        let len = E::I64(vals.len() as i64);
        let vals = vals
            .into_iter()
            .map(|v| self.settle(v))
            .collect::<Result<Vec<_>, _>>()?;
        let mut dims = Vec::new();
        if let Some(v) = vals.first() {
            dims_of(v, &mut dims);
        } else {
            dims = vec![E::I64(0); crate::layout::count(elem_ty).0];
        }
        let dims: Vec<E> = dims
            .into_iter()
            .map(|d| E::Var(self.let_var(Kind::Int, d, "dim")))
            .collect();
        for v in vals.iter().skip(1) {
            let mut have = Vec::new();
            dims_of(v, &mut have);
            self.check_dims(&dims, &have, span, SiteKind::Ragged);
        }
        let out = self.alloc_leaves_dims(elem_ty, &len, &mut dims.iter(), span, None)?;
        for (j, v) in vals.iter().enumerate() {
            self.store(v, &out, &E::I64(j as i64))?;
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
pub(crate) type Step<'s> = dyn Fn(&mut Lowerer<'_>, &Val, &[VarId], &E) -> Result<(), Error> + 's;

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
    Count(E),
}

fn delayed(len: E, ty: Ty, recipe: Gen, span: Span) -> Val {
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
pub(crate) fn dims_of(v: &Val, out: &mut Vec<E>) {
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
