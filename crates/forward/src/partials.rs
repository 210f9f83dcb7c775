//! D of the Target-only partials of scatter and the histograms (`gather`,
//! `gather_won`, `pick_dest`, `hist_winner_*`, `dhist_mul_*`;
//! `syntax::hist`), which reverse mode writes in a histogram's gradient:
//! with them forward mode runs over `grad_rev` of a program with a
//! histogram (a Hessian-vector product by forward over reverse). `scatter`
//! of reals goes the same way, by its rule `tangent_scatter`.
//!
//! Each one's tangent is a jvp rule written in the language, in
//! `crates/syntax/src/hist_rules.ad` (`syntax::hist::rules`: one
//! definition per primitive, its operands then their tangents in, the
//! result's tangent out), read once, and applied as the
//! jvp rule of a function with derivative rules is (`rules.rs`): `zip (op
//! x..) (rule x.. dx..)`, one run of the rule per direction in the
//! vectorised mode. The winners return `Int` arrays, which have no
//! tangent: D computes them on the primal operands.

use syntax::fxhash::FxHashMap;
use syntax::{ExprId, Module, Pat, Prim, Size, Ty};

use crate::build::{Atom, Builder, Res};
use crate::dual::{Macro, Rep};
use crate::rules::{slice, unslice};
use crate::shape;

impl Macro<'_> {
    /// D of `op args` for a partial of scatter or a histogram.
    pub(crate) fn partial(&mut self, op: Prim, args: &[ExprId], ty: &Ty) -> Res<ExprId> {
        let tys = args
            .iter()
            .map(|&a| self.cx.ty(a))
            .collect::<Res<Vec<Ty>>>()?;
        let mut duals = Vec::with_capacity(args.len());
        for &a in args {
            duals.push(self.apply(a)?);
        }
        let rep = self.rep.clone();
        let ty = ty.clone();
        let name = format!("tangent_{}", op.symbol());
        let rule = if rep.dual_ty(&ty) == ty {
            None
        } else {
            let m = syntax::hist::rules()
                .map_err(|e| self.cx.internal(format!("the partials' rules: {e}")))?;
            let def = m
                .def(&name)
                .ok_or_else(|| self.cx.internal(format!("no tangent rule `{name}`")))?;
            Some((
                m,
                def.params
                    .iter()
                    .map(|p| p.name.clone())
                    .collect::<Vec<_>>(),
                def.body,
            ))
        };
        bind_all(self.cx, duals, Vec::new(), &mut |cx, ds| {
            let mut xs = Vec::with_capacity(ds.len());
            for (d, t) in ds.iter().zip(&tys) {
                let e = cx.emit(d);
                xs.push(shape::primal(cx, &rep, t, e)?);
            }
            bind_all(cx, xs, Vec::new(), &mut |cx, xs| {
                let operands = xs.iter().map(|x| cx.emit(x)).collect();
                let primal = cx.prim(op, operands, ty.clone());
                let Some((m, params, body)) = &rule else {
                    // An Int array: no tangent, the dual is the primal.
                    return Ok(primal);
                };
                cx.bind("r", primal, |cx, r| {
                    let tangent = match &rep {
                        Rep::Scalar => {
                            let mut ins: Vec<ExprId> = xs.iter().map(|x| cx.emit(x)).collect();
                            for (d, t) in ds.iter().zip(&tys) {
                                let e = cx.emit(d);
                                ins.push(shape::tangent(cx, t, e)?);
                            }
                            inline_def(cx, m, params, *body, ins)?
                        }
                        Rep::Vector { zeros } => {
                            let z = cx.emit(zeros);
                            let k = cx.length(z);
                            let per = cx.build(k, Size::Dyn, |cx, c| {
                                let mut ins: Vec<ExprId> = xs.iter().map(|x| cx.emit(x)).collect();
                                for (d, t) in ds.iter().zip(&tys) {
                                    let e = cx.emit(d);
                                    let all = shape::tangent(cx, t, e)?;
                                    ins.push(slice(cx, t, all, &c)?);
                                }
                                inline_def(cx, m, params, *body, ins)
                            })?;
                            cx.bind("ts", per, |cx, ts| unslice(cx, &ty, &ts, &r))?
                        }
                    };
                    let re = cx.emit(&r);
                    shape::zip(cx, &ty, re, tangent)
                })
            })
        })
    }
}

/// Binds each of `values` in turn (`let` or an atom) and builds the scope
/// with all of them.
fn bind_all(
    cx: &mut Builder,
    mut values: Vec<ExprId>,
    mut bound: Vec<Atom>,
    scope: &mut dyn FnMut(&mut Builder, &[Atom]) -> Res<ExprId>,
) -> Res<ExprId> {
    if values.is_empty() {
        return scope(cx, &bound);
    }
    let first = values.remove(0);
    cx.bind("h", first, |cx, a| {
        bound.push(a);
        bind_all(cx, values, bound, scope)
    })
}

/// The body of a definition of `src` with its parameters bound to `args`:
/// `let p1' = a1 in ... in body'`, every binder fresh and every node
/// given the span of the node being differentiated.
fn inline_def(
    cx: &mut Builder,
    src: &Module,
    params: &[syntax::Name],
    body: ExprId,
    args: Vec<ExprId>,
) -> Res<ExprId> {
    let mut subst = FxHashMap::default();
    let mut binds = Vec::with_capacity(args.len());
    for (p, a) in params.iter().zip(args) {
        let y = cx.fresh(p.as_str());
        subst.insert(p.clone(), y.clone());
        binds.push((Pat::Var(y), a));
    }
    let base = cx.out.exprs.len();
    let b = cx.paste(src, body, &subst);
    for span in &mut cx.out.spans[base..] {
        *span = cx.span;
    }
    cx.wrap(binds, b)
}
