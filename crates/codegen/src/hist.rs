//! `scatter`, the histograms and their Target-only partials as loops over
//! manifest buffers of scalars, computing what `syntax::hist` computes,
//! operation for operation (so the default configuration stays bit for
//! bit the evaluator's): the elements are visited in order, an index
//! outside `0 .. m` is skipped, a bin is the left fold of its elements.
//! A histogram's operator is the scalar primitive's own code
//! (`scalar_prim`: `fmin`, the checked `Int` arithmetic).

use syntax::{Prim, Span, Ty, hist};

use crate::error::Error;
use crate::layout::Kind;
use crate::lower::{Lowerer, SiteKind};
use crate::val::{Arr, Leaves, Manifest, Val};

/// A materialized array of scalars: its length, kind and pointer.
struct Buf {
    len: String,
    ptr: String,
}

impl Lowerer<'_> {
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
        let bufs = vals
            .iter()
            .map(|v| self.buf(op, v, span))
            .collect::<Result<Vec<_>, _>>()?;
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
        let out = self.alloc(kind, &out_len, span, Some(op));
        let (dp, n) = (d.ptr.clone(), is.map(|b| b.len.clone()).unwrap_or_default());
        let isp = is.map(|b| b.ptr.clone()).unwrap_or_default();
        let vp = bufs.get(2).map(|b| b.ptr.clone()).unwrap_or_default();
        // `for b: out[b] = init(b)`, then for each in-range element j of bin b: `step(j, b)`.
        let fill = |cx: &mut Self, init: &dyn Fn(&str) -> String| {
            cx.for_loop(&m, crate::arrays::Dir::Up, false, None, |cx, b| {
                cx.w.line(format!("{out}[{b}] = {};", init(b)));
                Ok(())
            })
        };
        let each =
            |cx: &mut Self, step: &mut dyn FnMut(&mut Self, &str, &str) -> Result<(), Error>| {
                cx.for_loop(&n, crate::arrays::Dir::Up, false, None, |cx, j| {
                    let b = cx.fresh("b");
                    cx.w.line(format!("const int64_t {b} = {isp}[{j}];"));
                    cx.w.open(format!("if ({b} >= 0 && {b} < {m})"));
                    step(cx, j, &b)?;
                    cx.w.close();
                    Ok(())
                })
            };
        match op {
            Prim::HistAdd | Prim::HistMul | Prim::HistMin | Prim::HistMax => {
                let scalar = hist::operator(op).unwrap_or(op);
                fill(self, &|b| format!("{dp}[{b}]"))?;
                each(self, &mut |cx, j, b| {
                    let args = [
                        Val::Scalar(kind, format!("{out}[{b}]")),
                        Val::Scalar(kind, format!("{vp}[{j}]")),
                    ];
                    let r = cx.scalar_prim(scalar, &args, span)?;
                    let Some((_, code)) = r.scalar() else {
                        return Err(Error::core(span, "a histogram operator that is not scalar"));
                    };
                    cx.w.line(format!("{out}[{b}] = {code};"));
                    Ok(())
                })?;
            }
            Prim::WinnerScatter => {
                fill(self, &|_| "-1".to_string())?;
                each(self, &mut |cx, j, b| {
                    cx.w.line(format!("{out}[{b}] = {j};"));
                    Ok(())
                })?;
            }
            Prim::WinnerMin | Prim::WinnerMax => {
                // The running extremum beside the winners (`hist::winner_select`).
                let cur = self.alloc(Kind::Real, &m, span, Some(op));
                let (cmp, f) = if op == Prim::WinnerMax {
                    (">", "fmax")
                } else {
                    ("<", "fmin")
                };
                self.for_loop(&m, crate::arrays::Dir::Up, false, None, |cx, b| {
                    cx.w.line(format!("{cur}[{b}] = {dp}[{b}];"));
                    cx.w.line(format!("{out}[{b}] = -1;"));
                    Ok(())
                })?;
                each(self, &mut |cx, j, b| {
                    // Blocks, not `if (c) x = y;` on one line: the loop
                    // fusion reads a line's first name as what it writes.
                    cx.w.open(format!("if (!({cur}[{b}] {cmp} {vp}[{j}]))"));
                    cx.w.line(format!("{out}[{b}] = {j};"));
                    cx.w.close();
                    cx.w.line(format!("{cur}[{b}] = {f}({cur}[{b}], {vp}[{j}]);"));
                    Ok(())
                })?;
            }
            Prim::Gather | Prim::GatherWon => {
                let wp = bufs.get(2).map(|b| b.ptr.clone()).unwrap_or_default();
                let won = |j: &str, b: &str| {
                    if op == Prim::GatherWon {
                        format!(" && {wp}[{b}] == {j}")
                    } else {
                        String::new()
                    }
                };
                let ip = bufs[1].ptr.clone();
                self.for_loop(&out_len, crate::arrays::Dir::Up, false, None, |cx, j| {
                    let b = cx.fresh("b");
                    cx.w.line(format!("const int64_t {b} = {ip}[{j}];"));
                    cx.w.line(format!(
                        "{out}[{j}] = ({b} >= 0 && {b} < {m}{}) ? {dp}[{b}] : 0.0;",
                        won(j, &b)
                    ));
                    Ok(())
                })?;
            }
            Prim::PickDest => {
                let wp = bufs[1].ptr.clone();
                fill(self, &|b| format!("{wp}[{b}] == -1 ? {dp}[{b}] : 0.0"))?;
            }
            Prim::DHistMulDest => {
                fill(self, &|_| "1.0".to_string())?;
                each(self, &mut |cx, j, b| {
                    cx.w.line(format!("{out}[{b}] = {out}[{b}] * {vp}[{j}];"));
                    Ok(())
                })?;
            }
            Prim::DHistMulVals => {
                // Zeros counted and non-zero factors multiplied per bin
                // (`hist::dhist_mul_vals`), then one quotient per element.
                let zeros = self.alloc(Kind::Int, &m, span, Some(op));
                let nonzero = self.alloc(Kind::Real, &m, span, Some(op));
                self.for_loop(&m, crate::arrays::Dir::Up, false, None, |cx, b| {
                    cx.w.line(format!("{zeros}[{b}] = {dp}[{b}] == 0.0;"));
                    cx.w.line(format!(
                        "{nonzero}[{b}] = {dp}[{b}] == 0.0 ? 1.0 : {dp}[{b}];"
                    ));
                    Ok(())
                })?;
                each(self, &mut |cx, j, b| {
                    cx.w.open(format!("if ({vp}[{j}] == 0.0)"));
                    cx.w.line(format!("{zeros}[{b}] = {zeros}[{b}] + 1;"));
                    cx.w.reopen("else");
                    cx.w.line(format!("{nonzero}[{b}] = {nonzero}[{b}] * {vp}[{j}];"));
                    cx.w.close();
                    Ok(())
                })?;
                self.for_loop(&n, crate::arrays::Dir::Up, false, None, |cx, j| {
                    let b = cx.fresh("b");
                    cx.w.line(format!("const int64_t {b} = {isp}[{j}];"));
                    cx.w.line(format!("{out}[{j}] = 0.0;"));
                    cx.w.open(format!("if ({b} >= 0 && {b} < {m})"));
                    cx.w.open(format!("if ({zeros}[{b}] == 0)"));
                    cx.w.line(format!("{out}[{j}] = {nonzero}[{b}] / {vp}[{j}];"));
                    cx.w.reopen(&format!("else if ({zeros}[{b}] == 1 && {vp}[{j}] == 0.0)"));
                    cx.w.line(format!("{out}[{j}] = {nonzero}[{b}];"));
                    cx.w.close();
                    cx.w.close();
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
                cx.w.line(format!("{o}[{b}] = {x}[{b}];"));
            }
            Ok(())
        })?;
        let isp = is.ptr.clone();
        self.for_loop(&is.len, crate::arrays::Dir::Up, false, None, |cx, j| {
            let b = cx.fresh("b");
            cx.w.line(format!("const int64_t {b} = {isp}[{j}];"));
            cx.w.open(format!("if ({b} >= 0 && {b} < {m})"));
            for (o, x) in ol.iter().zip(&vl) {
                cx.w.line(format!("{o}[{b}] = {x}[{j}];"));
            }
            cx.w.close();
            Ok(())
        })?;
        Ok(Val::Array(Arr::Manifest(Manifest {
            len: d.len,
            elem: out,
            owned: true,
        })))
    }

    /// The run-time check that two lengths agree, the evaluator's
    /// `SizeMismatch` otherwise.
    fn same_len(&mut self, op: Prim, a: &str, b: &str, span: Span) {
        self.fail_if(
            &format!("{a} != {b}"),
            span,
            SiteKind::SizeMismatch(op),
            a,
            b,
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

/// The pointers of leaves made of scalars and tuples, in order; false when
/// an element is an array.
fn scalar_leaves(l: &Leaves, out: &mut Vec<String>) -> bool {
    match l {
        Leaves::Scalar { ptr, .. } => {
            out.push(ptr.clone());
            true
        }
        Leaves::Tuple(items) => items.iter().all(|i| scalar_leaves(i, out)),
        Leaves::Array { .. } => false,
    }
}
