//! D of the histograms of reals (docs/forward.md, "Scatter and
//! histograms"). `scatter` commutes with D (the last write wins for primal
//! and tangent alike), written as two scatters, of the primals and of the
//! tangents (`tangent_scatter` of `syntax::hist::rules`), so that reverse
//! mode over forward mode meets scatters of reals. A histogram's tangent at
//! bin b is
//!
//! ```text
//! ∂dest[b] · ddest[b] + Σ_{j : is[j] = b} ∂vs[j] · dvs[j]
//! ```
//!
//! with the partials of `syntax::hist`: for `hist_min` and `hist_max` it
//! is the tangent of the one element the derivative chooses (the winner,
//! `hist_winner_min`), for `hist_add` the histogram of the tangents, for
//! `hist_mul` the histogram of the tangents weighted by `dhist_mul_dest` and
//! `dhist_mul_vals`. O(n + m) like the primal (per tangent direction).

use syntax::{ExprId, Prim, Size, Ty};

use crate::build::{Atom, Builder, Res};
use crate::dual::{Macro, Rep};
use crate::shape;

impl Macro<'_> {
    /// D of `op dest is vs` for a histogram of reals; `None` for anything
    /// else (which commutes with D).
    pub(crate) fn hist(&mut self, op: Prim, args: &[ExprId], ty: &Ty) -> Res<Option<ExprId>> {
        // The partials of the histograms' reverse derivative (what
        // `grad_rev` of a histogram splices in): their own rules.
        if syntax::hist::is_partial(op) {
            return self.partial(op, args, ty).map(Some);
        }
        let Ty::Array(m, elem) = ty else {
            return Ok(None);
        };
        // `scatter` of reals scatters the primals and the tangents apart
        // (its rule `tangent_scatter`), so the result holds arrays of
        // reals that reverse mode takes (reverse over forward), not a
        // scatter of dual pairs. One direction at a time only: the
        // vectorised tangents (whole-program `jacob`, never under reverse
        // mode) keep the scatter of pairs, whose sizes need no rule.
        if op == Prim::Scatter && **elem == Ty::Real && matches!(self.rep, Rep::Scalar) {
            return self.partial(op, args, ty).map(Some);
        }
        // `hist_add_rows` of reals is linear: its rule
        // `tangent_hist_add_rows`, the histogram of the tangent rows (in
        // every representation: the rule runs once per direction). Of
        // integers it commutes with D.
        if op == Prim::HistAddRows {
            if matches!(&**elem, Ty::Array(_, e) if **e == Ty::Real) {
                return self.partial(op, args, ty).map(Some);
            }
            return Ok(None);
        }
        if !matches!(
            op,
            Prim::HistAdd | Prim::HistMul | Prim::HistMin | Prim::HistMax
        ) || **elem != Ty::Real
        {
            return Ok(None);
        }
        let selects = matches!(op, Prim::HistMin | Prim::HistMax);
        let rep = self.rep.clone();
        let (m, ty) = (m.clone(), ty.clone());
        let vty = self.cx.ty(args[2])?;
        let dd = self.apply(args[0])?;
        let is = self.apply(args[1])?;
        let dv = self.apply(args[2])?;
        let out = self.cx.bind("hd", dd, |cx, dd| {
            cx.bind("hi", is, |cx, is| {
                cx.bind("hv", dv, |cx, dv| {
                    let e = cx.emit(&dd);
                    let d0 = shape::primal(cx, &rep, &ty, e)?;
                    cx.bind("h", d0, |cx, d0| {
                        let e = cx.emit(&dv);
                        let v0 = shape::primal(cx, &rep, &vty, e)?;
                        cx.bind("h", v0, |cx, v0| {
                            let trio = [d0, is, v0];
                            let ops = |cx: &mut Builder, t: &[Atom; 3]| {
                                t.iter().map(|a| cx.emit(a)).collect()
                            };
                            let args = ops(cx, &trio);
                            let r = cx.prim(op, args, ty.clone());
                            cx.bind("r", r, |cx, r| {
                                if selects {
                                    let w = if op == Prim::HistMax {
                                        Prim::WinnerMax
                                    } else {
                                        Prim::WinnerMin
                                    };
                                    let args = ops(cx, &trio);
                                    let wty = Ty::array(m.clone(), Ty::Int);
                                    let w = cx.prim(w, args, wty);
                                    cx.bind("w", w, |cx, w| {
                                        chosen(cx, &m, &trio[0], &r, &w, &dd, &dv)
                                    })
                                } else {
                                    summed(cx, &rep, op, (&m, &ty, &vty), &trio, &r, &dd, &dv)
                                }
                            })
                        })
                    })
                })
            })
        })?;
        Ok(Some(out))
    }
}

/// `build m (fun b -> (r[b], if w[b] < 0 then dd[b].2 else dv[w[b]].2))`.
fn chosen(
    cx: &mut Builder,
    m: &Size,
    d0: &Atom,
    r: &Atom,
    w: &Atom,
    dd: &Atom,
    dv: &Atom,
) -> Res<ExprId> {
    let d0 = cx.emit(d0);
    let n = cx.length(d0);
    cx.build(n, m.clone(), |cx, b| {
        let (re, be) = (cx.emit(r), cx.emit(&b));
        let rb = cx.index(re, be)?;
        let (we, be) = (cx.emit(w), cx.emit(&b));
        let k = cx.index(we, be)?;
        cx.bind("k", k, |cx, k| {
            let (ke, zero) = (cx.emit(&k), cx.int(0));
            let cond = cx.prim(Prim::Lt, vec![ke, zero], Ty::Bool);
            let (de, be) = (cx.emit(dd), cx.emit(&b));
            let from_dest = cx.index(de, be)?;
            let from_dest = cx.proj(from_dest, 2)?;
            let (ve, ke) = (cx.emit(dv), cx.emit(&k));
            let from_elem = cx.index(ve, ke)?;
            let from_elem = cx.proj(from_elem, 2)?;
            let t = cx.if_(cond, from_dest, from_elem)?;
            cx.tuple(vec![rb, t])
        })
    })
}

/// The tangents of `dest` and of `vs` weighted by their partials and
/// summed per bin with `hist_add`, zipped with the primal result `r`. With
/// k directions at once (`Rep::Vector`) one histogram per direction,
/// O(k (n + m)), transposed into the duals.
#[allow(clippy::too_many_arguments)]
fn summed(
    cx: &mut Builder,
    rep: &Rep,
    op: Prim,
    (m, ty, vty): (&Size, &Ty, &Ty),
    ops: &[Atom; 3],
    r: &Atom,
    dd: &Atom,
    dv: &Atom,
) -> Res<ExprId> {
    let partial = |cx: &mut Builder, p: Prim, pty: &Ty| {
        let args = ops.iter().map(|a| cx.emit(a)).collect();
        cx.prim(p, args, pty.clone())
    };
    if op == Prim::HistMul {
        let pd = partial(cx, Prim::DHistMulDest, ty);
        return cx.bind("pd", pd, |cx, pd| {
            let pv = partial(cx, Prim::DHistMulVals, vty);
            cx.bind("pv", pv, |cx, pv| {
                tangents(
                    cx,
                    rep,
                    m,
                    ty,
                    &ops[1],
                    r,
                    [(dd, Some(&pd)), (dv, Some(&pv))],
                )
            })
        });
    }
    tangents(cx, rep, m, ty, &ops[1], r, [(dd, None), (dv, None)])
}

/// The duals `(r[b], Σ weight · tangent)` for the two weighted operands.
fn tangents(
    cx: &mut Builder,
    rep: &Rep,
    m: &Size,
    ty: &Ty,
    is: &Atom,
    r: &Atom,
    parts: [(&Atom, Option<&Atom>); 2],
) -> Res<ExprId> {
    // `hist_add td is tv`, the tangents of direction `c` (or the only one).
    let hist = |cx: &mut Builder, c: Option<&Atom>| -> Res<ExprId> {
        let mut sides = Vec::with_capacity(2);
        for (duals, weight) in parts {
            let de = cx.emit(duals);
            let pick = |cx: &mut Builder, x: &Atom| -> Res<ExprId> {
                let xe = cx.emit(x);
                let t = cx.proj(xe, 2)?;
                match c {
                    None => Ok(t),
                    Some(c) => {
                        let ce = cx.emit(c);
                        cx.index(t, ce)
                    }
                }
            };
            sides.push(match weight {
                None => cx.map(de, "x", |cx, x| pick(cx, &x))?,
                Some(w) => {
                    let we = cx.emit(w);
                    cx.map2(we, de, |cx, w, x| {
                        let t = pick(cx, &x)?;
                        let we = cx.emit(&w);
                        Ok(cx.mul_r(we, t))
                    })?
                }
            });
        }
        let ie = cx.emit(is);
        sides.insert(1, ie);
        Ok(cx.prim(Prim::HistAdd, sides, ty.clone()))
    };
    match rep {
        Rep::Scalar => {
            let t = hist(cx, None)?;
            let re = cx.emit(r);
            cx.map2(re, t, |cx, a, b| {
                let (ae, be) = (cx.emit(&a), cx.emit(&b));
                cx.tuple(vec![ae, be])
            })
        }
        Rep::Vector { zeros } => {
            let ze = cx.emit(zeros);
            let k = cx.length(ze);
            let per = cx.build(k, Size::Dyn, |cx, c| hist(cx, Some(&c)))?;
            cx.bind("th", per, |cx, per| {
                let re = cx.emit(r);
                let n = cx.length(re);
                cx.build(n, m.clone(), |cx, b| {
                    let (re, be) = (cx.emit(r), cx.emit(&b));
                    let rb = cx.index(re, be)?;
                    let ze = cx.emit(zeros);
                    let k = cx.length(ze);
                    let t = cx.build(k, Size::Dyn, |cx, c| {
                        let (pe, ce) = (cx.emit(&per), cx.emit(&c));
                        let row = cx.index(pe, ce)?;
                        let be = cx.emit(&b);
                        cx.index(row, be)
                    })?;
                    cx.tuple(vec![rb, t])
                })
            })
        }
    }
}
