//! `scatter`, the histograms and their Target-only partials as loops over
//! manifest buffers of scalars, computing what `syntax::hist` computes,
//! operation for operation (so the default configuration stays bit for
//! bit the evaluator's): the elements are visited in order, an index
//! outside `0 .. m` is skipped, a bin is the left fold of its elements.
//! A histogram's operator is the scalar primitive's own code
//! (`scalar_prim`: `ad_min`, the checked `Int` arithmetic).

use syntax::{Prim, Span, Ty, hist};

use crate::error::Error;
use crate::imp::{BinOp, Block, Expr as E, Scalar, Stmt};
use crate::layout::Kind;
use crate::lower::{Lowerer, SiteKind};
use crate::val::{Arr, Gen, Leaves, Manifest, Val};

/// A materialized array of scalars: its length, kind and pointer.
struct Buf {
    len: E,
    ptr: E,
}

impl Lowerer<'_> {
    /// `for j in 0 ..< n: let b = I[j]; if 0 <= b < m { step(j, b) }`:
    /// the pass of a histogram (or scatter) over its in-range indices,
    /// `isp` the index array `I`.
    fn each_in_range(
        &mut self,
        n: &E,
        isp: &E,
        m: &E,
        step: &mut dyn FnMut(&mut Self, &E, &E) -> Result<(), Error>,
    ) -> Result<(), Error> {
        self.for_loop(n, crate::arrays::Dir::Up, false, None, |cx, j| {
            let b = E::Var(cx.let_var(Kind::Int, E::load(isp.clone(), j.clone()), "b"));
            cx.w.open();
            let r = step(cx, j, &b);
            let then = cx.w.close();
            r?;
            cx.w.push(Stmt::If {
                cond: in_range(&b, m),
                then,
                els: Vec::new(),
            });
            Ok(())
        })
    }

    /// Compiles `op` (scatter, a histogram or one of their partials).
    pub(crate) fn hist(
        &mut self,
        op: Prim,
        vals: &[Val],
        ty: &Ty,
        span: Span,
    ) -> Result<Val, Error> {
        if op == Prim::Scatter {
            return self.scatter(vals, ty, span);
        }
        if op == Prim::HistAddRows {
            return self.hist_rows(vals, ty, span);
        }
        let Ty::Array(_, elem) = ty else {
            return Err(Error::core(
                span,
                format!("`{op}` whose type is not an array"),
            ));
        };
        let Some(kind) = Kind::of(elem) else {
            return Err(Error::unsupported(
                span,
                format!("`{op}` of arrays that are not of scalars"),
            ));
        };
        let histogram = matches!(
            op,
            Prim::HistAdd | Prim::HistMul | Prim::HistMin | Prim::HistMax
        );
        // A histogram's result starts as a copy of `dest`: a delayed
        // `dest` (reverse mode's `map (fun e -> e * d) E`, a map to zeros)
        // is written straight into the result's buffer, where the
        // evaluator computes it (first), instead of into a buffer of its
        // own copied by one more loop. Not a scan: its own loop writes
        // it out (`Lowerer::materialize`).
        let mut direct = None;
        if histogram
            && let Val::Array(Arr::Delayed(d)) = &vals[0]
            && !matches!(d.recipe, Gen::Scan { .. })
        {
            let out = self.alloc(kind, &d.len, span, Some(op));
            let leaves = Leaves::Scalar {
                kind,
                ptr: out.clone(),
            };
            self.write_into(d, &leaves)?;
            direct = Some(Buf {
                len: d.len.clone(),
                ptr: out,
            });
        }
        let mut bufs = Vec::with_capacity(vals.len());
        for (k, v) in vals.iter().enumerate() {
            match direct.take().filter(|_| k == 0) {
                Some(b) => bufs.push(b),
                None => bufs.push(self.buf(op, v, span)?),
            }
        }
        let d = &bufs[0];
        let m = d.len.clone();
        // The index array and the one that must have its length.
        let is = bufs.get(1).filter(|_| op != Prim::PickDest);
        let same = match op {
            Prim::Gather | Prim::WinnerScatter => None,
            Prim::PickDest => Some((&bufs[0], &bufs[1])),
            Prim::GatherWon => Some((&bufs[0], &bufs[2])),
            _ => Some((&bufs[1], &bufs[2])),
        };
        if let Some((a, b)) = same {
            self.same_len(op, &a.len, &b.len, span);
        }
        let out_len = match op {
            Prim::Gather | Prim::GatherWon | Prim::DHistMulVals => bufs[1].len.clone(),
            _ => m.clone(),
        };
        // Written already when `dest` was delayed (then `out_len` is `m`).
        let filled = histogram
            && matches!(&vals[0], Val::Array(Arr::Delayed(d)) if !matches!(d.recipe, Gen::Scan { .. }));
        let out = if filled {
            d.ptr.clone()
        } else {
            self.alloc(kind, &out_len, span, Some(op))
        };
        let (dp, n) = (
            d.ptr.clone(),
            is.map(|b| b.len.clone()).unwrap_or(E::I64(0)),
        );
        let isp = is.map(|b| b.ptr.clone()).unwrap_or(E::I64(0));
        let vp = bufs.get(2).map(|b| b.ptr.clone()).unwrap_or(E::I64(0));
        let (ld, bin) = (E::load, E::bin);
        // `for b: out[b] = init(b)`, then for each in-range element j of bin b: `step(j, b)`.
        let fill = |cx: &mut Self, init: &dyn Fn(&E) -> E| {
            cx.for_loop(&m, crate::arrays::Dir::Up, false, None, |cx, b| {
                cx.store_at(&out, b, init(b));
                Ok(())
            })
        };
        let each = |cx: &mut Self, step: &mut dyn FnMut(&mut Self, &E, &E) -> Result<(), Error>| {
            cx.each_in_range(&n, &isp, &m, step)
        };
        match op {
            Prim::HistAdd | Prim::HistMul | Prim::HistMin | Prim::HistMax => {
                let scalar = hist::operator(op).unwrap_or(op);
                if !filled {
                    fill(self, &|b| ld(dp.clone(), b.clone()))?;
                }
                each(self, &mut |cx, j, b| {
                    let args = [
                        Val::Scalar(kind, ld(out.clone(), b.clone())),
                        Val::Scalar(kind, ld(vp.clone(), j.clone())),
                    ];
                    let r = cx.scalar_prim(scalar, &args, span)?;
                    let Some((_, code)) = r.scalar() else {
                        return Err(Error::core(span, "a histogram operator that is not scalar"));
                    };
                    cx.store_at(&out, b, code.clone());
                    Ok(())
                })?;
            }
            Prim::WinnerScatter => {
                fill(self, &|_| E::I64(-1))?;
                each(self, &mut |cx, j, b| {
                    cx.store_at(&out, b, j.clone());
                    Ok(())
                })?;
            }
            Prim::WinnerMin | Prim::WinnerMax => {
                // The running extremum beside the winners (`hist::winner_select`).
                let cur = self.alloc(Kind::Real, &m, span, Some(op));
                let (cmp, f) = if op == Prim::WinnerMax {
                    (BinOp::Gt, "ad_max")
                } else {
                    (BinOp::Lt, "ad_min")
                };
                self.for_loop(&m, crate::arrays::Dir::Up, false, None, |cx, b| {
                    cx.store_at(&cur, b, ld(dp.clone(), b.clone()));
                    cx.store_at(&out, b, E::I64(-1));
                    Ok(())
                })?;
                each(self, &mut |cx, j, b| {
                    let (c, v) = (ld(cur.clone(), b.clone()), ld(vp.clone(), j.clone()));
                    cx.w.push(Stmt::If {
                        cond: not(bin(cmp, c.clone(), v.clone())),
                        then: vec![set_elem(&out, b, j.clone())],
                        els: Vec::new(),
                    });
                    let best = cx.math(f, vec![c, v]);
                    cx.store_at(&cur, b, best);
                    Ok(())
                })?;
            }
            Prim::Gather | Prim::GatherWon => {
                let wp = bufs.get(2).map(|b| b.ptr.clone()).unwrap_or(E::I64(0));
                let ip = bufs[1].ptr.clone();
                self.for_loop(&out_len, crate::arrays::Dir::Up, false, None, |cx, j| {
                    let b = E::Var(cx.let_var(Kind::Int, ld(ip.clone(), j.clone()), "b"));
                    let mut ok = in_range(&b, &m);
                    if op == Prim::GatherWon {
                        ok = bin(
                            BinOp::And,
                            ok,
                            bin(BinOp::Eq, ld(wp.clone(), b.clone()), j.clone()),
                        );
                    }
                    let v = E::Select(
                        Box::new(ok),
                        Box::new(ld(dp.clone(), b)),
                        Box::new(E::F64(0.0)),
                    );
                    cx.store_at(&out, j, v);
                    Ok(())
                })?;
            }
            Prim::PickDest => {
                let wp = bufs[1].ptr.clone();
                fill(self, &|b| {
                    E::Select(
                        Box::new(bin(BinOp::Eq, ld(wp.clone(), b.clone()), E::I64(-1))),
                        Box::new(ld(dp.clone(), b.clone())),
                        Box::new(E::F64(0.0)),
                    )
                })?;
            }
            Prim::DHistMulDest => {
                fill(self, &|_| E::F64(1.0))?;
                each(self, &mut |cx, j, b| {
                    let v = bin(
                        BinOp::Mul,
                        ld(out.clone(), b.clone()),
                        ld(vp.clone(), j.clone()),
                    );
                    cx.store_at(&out, b, v);
                    Ok(())
                })?;
            }
            Prim::DHistMulVals => {
                // Zeros counted and non-zero factors multiplied per bin
                // (`hist::dhist_mul_vals`), then one quotient per element.
                let zeros = self.alloc(Kind::Int, &m, span, Some(op));
                let nonzero = self.alloc(Kind::Real, &m, span, Some(op));
                self.for_loop(&m, crate::arrays::Dir::Up, false, None, |cx, b| {
                    let x = ld(dp.clone(), b.clone());
                    let zero = bin(BinOp::Eq, x.clone(), E::F64(0.0));
                    cx.store_at(&zeros, b, E::Cast(Scalar::I64, Box::new(zero.clone())));
                    let v = E::Select(Box::new(zero), Box::new(E::F64(1.0)), Box::new(x));
                    cx.store_at(&nonzero, b, v);
                    Ok(())
                })?;
                each(self, &mut |cx, j, b| {
                    let v = ld(vp.clone(), j.clone());
                    let (z, nz) = (ld(zeros.clone(), b.clone()), ld(nonzero.clone(), b.clone()));
                    cx.w.push(Stmt::If {
                        cond: bin(BinOp::Eq, v.clone(), E::F64(0.0)),
                        then: vec![set_elem(&zeros, b, bin(BinOp::Add, z, E::I64(1)))],
                        els: vec![set_elem(&nonzero, b, bin(BinOp::Mul, nz, v))],
                    });
                    Ok(())
                })?;
                self.for_loop(&n, crate::arrays::Dir::Up, false, None, |cx, j| {
                    let b = E::Var(cx.let_var(Kind::Int, ld(isp.clone(), j.clone()), "b"));
                    cx.store_at(&out, j, E::F64(0.0));
                    let v = ld(vp.clone(), j.clone());
                    let (z, nz) = (ld(zeros.clone(), b.clone()), ld(nonzero.clone(), b.clone()));
                    let one_zero: Block = vec![Stmt::If {
                        cond: bin(
                            BinOp::And,
                            bin(BinOp::Eq, z.clone(), E::I64(1)),
                            bin(BinOp::Eq, v.clone(), E::F64(0.0)),
                        ),
                        then: vec![set_elem(&out, j, nz.clone())],
                        els: Vec::new(),
                    }];
                    let per_bin = vec![Stmt::If {
                        cond: bin(BinOp::Eq, z, E::I64(0)),
                        then: vec![set_elem(&out, j, bin(BinOp::Div, nz, v))],
                        els: one_zero,
                    }];
                    cx.w.push(Stmt::If {
                        cond: in_range(&b, &m),
                        then: per_bin,
                        els: Vec::new(),
                    });
                    Ok(())
                })?;
            }
            _ => return Err(Error::core(span, format!("`{op}` is not a histogram"))),
        }
        Ok(Val::Array(Arr::Manifest(Manifest {
            len: out_len,
            elem: Leaves::Scalar { kind, ptr: out },
            owned: true,
        })))
    }

    /// `scatter dest is vs` of any elements made of scalars and tuples
    /// (the duals of forward mode are pairs): leaf by leaf, the copy of
    /// `dest`, then the writes in order.
    fn scatter(&mut self, vals: &[Val], ty: &Ty, span: Span) -> Result<Val, Error> {
        let op = Prim::Scatter;
        let Ty::Array(_, elem) = ty else {
            return Err(Error::core(span, "`scatter` whose type is not an array"));
        };
        let manifest = |cx: &mut Self, v: &Val| match cx.materialize_val(v.clone())? {
            Val::Array(Arr::Manifest(m)) => Ok(m),
            _ => Err(Error::core(
                span,
                "`scatter` of a value that is not an array",
            )),
        };
        let d = manifest(self, &vals[0])?;
        let is = self.buf(op, &vals[1], span)?;
        let v = manifest(self, &vals[2])?;
        self.same_len(op, &is.len, &v.len, span);
        let out = self.alloc_leaves(elem, &d.len, span, Some(op))?;
        let (mut dl, mut vl, mut ol) = (Vec::new(), Vec::new(), Vec::new());
        if !(scalar_leaves(&d.elem, &mut dl)
            && scalar_leaves(&v.elem, &mut vl)
            && scalar_leaves(&out, &mut ol))
        {
            return Err(Error::unsupported(span, "`scatter` of arrays of arrays"));
        }
        let m = d.len.clone();
        self.for_loop(&m, crate::arrays::Dir::Up, false, None, |cx, b| {
            for (o, x) in ol.iter().zip(&dl) {
                cx.store_at(o, b, E::load(x.clone(), b.clone()));
            }
            Ok(())
        })?;
        let isp = is.ptr.clone();
        self.for_loop(&is.len, crate::arrays::Dir::Up, false, None, |cx, j| {
            let b = E::Var(cx.let_var(Kind::Int, E::load(isp.clone(), j.clone()), "b"));
            let then = ol
                .iter()
                .zip(&vl)
                .map(|(o, x)| set_elem(o, &b, E::load(x.clone(), j.clone())))
                .collect();
            cx.w.push(Stmt::If {
                cond: in_range(&b, &m),
                then,
                els: Vec::new(),
            });
            Ok(())
        })?;
        Ok(Val::Array(Arr::Manifest(Manifest {
            len: d.len,
            elem: out,
            owned: true,
        })))
    }

    /// `hist_add_rows dest is vs` (dest rows of scalars, stored one after
    /// the other): the copy of `dest`, then for each in-range element, in
    /// order, its row added into its bin's row scalar by scalar with the
    /// scalar `+` (`syntax::hist::fold` with the evaluator's elementwise
    /// addition, so the same sums bit for bit). A row of another length
    /// than dest's rows fails where the evaluator does: at the first
    /// in-range element.
    fn hist_rows(&mut self, vals: &[Val], ty: &Ty, span: Span) -> Result<Val, Error> {
        let op = Prim::HistAddRows;
        let kind = match ty {
            Ty::Array(_, row) => match &**row {
                Ty::Array(_, e) => Kind::of(e),
                _ => None,
            },
            _ => None,
        };
        let Some(kind) = kind else {
            return Err(Error::core(
                span,
                "`hist_add_rows` whose type is not of rows of scalars",
            ));
        };
        let rows = |cx: &mut Self, v: &Val| match cx.materialize_val(v.clone())? {
            Val::Array(Arr::Manifest(Manifest {
                len,
                elem: Leaves::Array { len: k, elem },
                ..
            })) => match *elem {
                Leaves::Scalar { ptr, .. } => Ok((len, k, ptr)),
                _ => Err(Error::core(
                    span,
                    "`hist_add_rows` of rows that are not of scalars",
                )),
            },
            _ => Err(Error::core(
                span,
                "`hist_add_rows` of a value that is not rows",
            )),
        };
        let (m, kd, dp) = rows(self, &vals[0])?;
        let is = self.buf(op, &vals[1], span)?;
        // The values are read element by element, not materialized: a
        // delayed row (kmeans' `map (fun r -> map (fun p -> p.1) r) h`) is
        // computed where its bin is added to, and only for an in-range
        // bin (docs/codegen.md, "Errors": an element never read).
        let Val::Array(vs) = &vals[2] else {
            return Err(Error::core(
                span,
                "`hist_add_rows` of a value that is not rows",
            ));
        };
        let n = vs.len().clone();
        self.same_len(op, &is.len, &n, span);
        let total = E::bin(BinOp::Mul, m.clone(), kd.clone());
        let out = self.alloc(kind, &total, span, Some(op));
        self.for_loop(&total, crate::arrays::Dir::Up, false, None, |cx, q| {
            cx.store_at(&out, q, E::load(dp.clone(), q.clone()));
            Ok(())
        })?;
        self.each_in_range(&n, &is.ptr, &m, &mut |cx, j, b| {
            cx.add_row(vs, j, b, (&out, &kd, kind), span)
        })?;
        Ok(Val::Array(Arr::Manifest(Manifest {
            len: m,
            elem: Leaves::Array {
                len: kd,
                elem: Box::new(Leaves::Scalar { kind, ptr: out }),
            },
            owned: true,
        })))
    }

    /// `out[b] += vs[j]` row by row for `hist_add_rows` (`out` rows of
    /// `kd` scalars of `kind`): row j's length checked against `kd`, then
    /// its scalars added in order with the scalar `+`.
    fn add_row(
        &mut self,
        vs: &Arr,
        j: &E,
        b: &E,
        (out, kd, kind): (&E, &E, Kind),
        span: Span,
    ) -> Result<(), Error> {
        let op = Prim::HistAddRows;
        let Val::Array(row) = self.elem(vs, j)? else {
            return Err(Error::core(
                span,
                "`hist_add_rows` of rows that are not arrays",
            ));
        };
        self.same_len(op, kd, row.len(), span);
        let ob = E::bin(BinOp::Mul, b.clone(), kd.clone());
        self.for_loop(kd, crate::arrays::Dir::Up, false, None, |cx, c| {
            let x = cx.elem(&row, c)?;
            let Some((_, x)) = x.scalar() else {
                return Err(Error::core(
                    span,
                    "`hist_add_rows` of rows that are not of scalars",
                ));
            };
            let at = E::bin(BinOp::Add, ob.clone(), c.clone());
            let args = [
                Val::Scalar(kind, E::load(out.clone(), at.clone())),
                Val::Scalar(kind, x.clone()),
            ];
            let r = cx.scalar_prim(Prim::Add, &args, span)?;
            let Some((_, code)) = r.scalar() else {
                return Err(Error::core(span, "a histogram operator that is not scalar"));
            };
            cx.store_at(out, &at, code.clone());
            Ok(())
        })
    }

    /// The run-time check that two lengths agree, the evaluator's
    /// `SizeMismatch` otherwise.
    fn same_len(&mut self, op: Prim, a: &E, b: &E, span: Span) {
        self.fail_if(
            E::bin(BinOp::Ne, a.clone(), b.clone()),
            span,
            SiteKind::SizeMismatch(op),
            a.clone(),
            b.clone(),
        );
    }

    /// The operand `v` as a buffer of scalars in memory.
    fn buf(&mut self, op: Prim, v: &Val, span: Span) -> Result<Buf, Error> {
        match self.materialize_val(v.clone())? {
            Val::Array(Arr::Manifest(Manifest {
                len,
                elem: Leaves::Scalar { ptr, .. },
                ..
            })) => Ok(Buf { len, ptr }),
            _ => Err(Error::unsupported(
                span,
                format!("`{op}` of arrays that are not of scalars"),
            )),
        }
    }
}

/// `0 <= b && b < m`: bin `b` is one of the `m` bins.
fn in_range(b: &E, m: &E) -> E {
    E::bin(
        BinOp::And,
        E::bin(BinOp::Ge, b.clone(), E::I64(0)),
        E::bin(BinOp::Lt, b.clone(), m.clone()),
    )
}

/// `!c`.
fn not(c: E) -> E {
    E::Unary(crate::imp::UnOp::Not, Box::new(c))
}

/// `mem[i] := v` as a statement.
fn set_elem(mem: &E, i: &E, value: E) -> Stmt {
    Stmt::Set {
        place: crate::imp::Place::Elem {
            mem: mem.clone(),
            index: i.clone(),
        },
        value,
    }
}

/// The pointers of leaves made of scalars and tuples, in order; false when
/// an element is an array.
fn scalar_leaves(l: &Leaves, out: &mut Vec<E>) -> bool {
    match l {
        Leaves::Scalar { ptr, .. } => {
            out.push(ptr.clone());
            true
        }
        Leaves::Tuple(items) => items.iter().all(|i| scalar_leaves(i, out)),
        Leaves::Array { .. } => false,
    }
}
