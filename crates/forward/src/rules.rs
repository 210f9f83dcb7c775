//! D of `with_rules body jvp vjp point` (docs/derivatives.md, "Custom
//! derivative rules"): the jvp rule, never the body, gives the tangent.
//!
//! ```text
//! D (with_rules f j v p) = let dp = D p in let x = primal dp in let dx = tangent dp in
//!                          zip (with_rules f j v x) (j x dx)
//! ```
//!
//! The primal keeps the node (with fresh copies of its functions), so a
//! second application of D (a second derivative, a Hessian) uses the rule
//! again for it, and differentiates the rule's own code `j x dx` where the
//! first one wrote it: JAX's `custom_jvp` does the same. With k directions
//! at once (`Rep::Vector`) the rule runs once per direction,
//! `build k (fun i -> j x dx[i])`, and the k tangents are laid out as the
//! vectorised tangent of the result.

use syntax::fxhash::FxHashMap;
use syntax::rules::{Rule, Rules};
use syntax::{Expr, ExprId, Pat, Prim, Size, Ty, stack};

use crate::Error;
use crate::build::{Atom, Builder, Res};
use crate::dual::{Macro, Rep};
use crate::shape;

impl Macro<'_> {
    /// `D e` for a `with_rules` node `e`.
    pub(crate) fn with_rules(&mut self, e: ExprId, rep: Rep) -> Res<ExprId> {
        let r =
            Rules::of(&self.cx.out, e).ok_or_else(|| self.cx.internal("not a with_rules node"))?;
        let jvp = r
            .rule(&self.cx.out, e, Rule::Jvp)
            .map_err(|err| Error::Construct {
                span: err.span(),
                message: err.to_string(),
            })?;
        let pty = self.cx.ty(r.point)?;
        let uty = self.cx.ty(e)?;
        let n = r.params(&self.cx.out).len();
        let dp = self.apply(r.point)?;
        let cx = &mut *self.cx;
        cx.bind("p", dp, |cx, dp| {
            let d = cx.emit(&dp);
            let x = shape::primal(cx, &rep, &pty, d)?;
            cx.bind("x", x, |cx, x| {
                let d = cx.emit(&dp);
                let dx = shape::tangent(cx, &pty, d)?;
                cx.bind("dx", dx, |cx, dx| {
                    let mut parts = vec![copy(cx, r.body)];
                    for rule in [r.jvp, r.vjp] {
                        parts.push(match rule {
                            Some(f) => copy(cx, f),
                            None => cx.add(Expr::Tuple(Vec::new()), Ty::Tuple(Vec::new())),
                        });
                    }
                    parts.push(cx.emit(&x));
                    let primal = cx.prim(Prim::WithRules, parts, uty.clone());
                    let tangent = match &rep {
                        Rep::Scalar => {
                            let mut args = components(cx, &x, n)?;
                            args.extend(components(cx, &dx, n)?);
                            inline(cx, jvp, args)?
                        }
                        Rep::Vector { zeros } => {
                            // One run of the rule per direction, then the
                            // k tangents laid out as the result's.
                            return cx.bind("r", primal, |cx, p| {
                                let z = cx.emit(zeros);
                                let k = cx.length(z);
                                let per = cx.build(k, Size::Dyn, |cx, i| {
                                    let mut args = components(cx, &x, n)?;
                                    let tys = component_tys(&pty, n);
                                    for (d, ty) in components(cx, &dx, n)?.into_iter().zip(&tys) {
                                        args.push(slice(cx, ty, d, &i)?);
                                    }
                                    inline(cx, jvp, args)
                                })?;
                                let t = cx.bind("ts", per, |cx, ts| unslice(cx, &uty, &ts, &p))?;
                                let pe = cx.emit(&p);
                                shape::zip(cx, &uty, pe, t)
                            });
                        }
                    };
                    shape::zip(cx, &uty, primal, tangent)
                })
            })
        })
    }
}

/// A fresh copy of a closed function of the node (binders renamed).
fn copy(cx: &mut Builder, f: ExprId) -> ExprId {
    cx.copy(f)
}

/// `fun (y1, ..., yk) -> b` applied to `args`, inlined: `let y1' = a1 in
/// ... in b'` with every binder of the copy fresh (a first-order program
/// stays first-order, which reverse mode needs after `expand`).
fn inline(cx: &mut Builder, f: ExprId, args: Vec<ExprId>) -> Res<ExprId> {
    let Expr::Lambda { params, body } = cx.node(f) else {
        return Err(cx.internal("a rule that is not a lambda"));
    };
    if params.len() != args.len() {
        return Err(cx.internal("a rule applied to the wrong number of arguments"));
    }
    let mut subst = FxHashMap::default();
    let mut binds = Vec::with_capacity(args.len());
    for (p, a) in params.iter().zip(args) {
        let y = cx.fresh(p.name.as_str());
        subst.insert(p.name.clone(), y.clone());
        binds.push((Pat::Var(y), a));
    }
    let b = cx.copy_renamed(body, &subst);
    cx.wrap(binds, b)
}

/// The n parameters' values held by `point`: itself when n = 1, else its
/// components.
fn components(cx: &mut Builder, point: &Atom, n: usize) -> Res<Vec<ExprId>> {
    if n == 1 {
        return Ok(vec![cx.emit(point)]);
    }
    (1..=n as u32)
        .map(|i| {
            let p = cx.emit(point);
            cx.proj(p, i)
        })
        .collect()
}

/// The types of the n parameters, from the point's.
fn component_tys(pty: &Ty, n: usize) -> Vec<Ty> {
    match pty {
        Ty::Tuple(items) if n > 1 => items.clone(),
        _ => vec![pty.clone()],
    }
}

/// Direction `i` of a vectorised tangent `d` of a value of type `ty`: the
/// one-direction tangent (`[k]R` becomes `R`).
pub(crate) fn slice(cx: &mut Builder, ty: &Ty, d: ExprId, i: &Atom) -> Res<ExprId> {
    stack::guard(|| match ty {
        Ty::Real => {
            let i = cx.emit(i);
            cx.index(d, i)
        }
        Ty::Int | Ty::Bool => Ok(d),
        Ty::Tuple(items) => cx.bind_tuple("d", d, |cx, atoms| {
            let mut out = Vec::with_capacity(items.len());
            for (t, a) in items.iter().zip(&atoms) {
                let v = cx.emit(a);
                out.push(slice(cx, t, v, i)?);
            }
            cx.tuple(out)
        }),
        Ty::Array(_, elem) => cx.map(d, "d", |cx, a| {
            let v = cx.emit(&a);
            slice(cx, elem, v, i)
        }),
        Ty::Func(..) => Err(cx.internal("the tangent of a function")),
    })
}

/// The vectorised tangent of a value of type `ty` (primal `p`) from its k
/// one-direction tangents `ts : [k]ty`: the inverse of [`slice`].
pub(crate) fn unslice(cx: &mut Builder, ty: &Ty, ts: &Atom, p: &Atom) -> Res<ExprId> {
    stack::guard(|| match ty {
        Ty::Real => Ok(cx.emit(ts)),
        Ty::Int => Ok(cx.int(0)),
        Ty::Bool => Ok(cx.add(Expr::Bool(false), Ty::Bool)),
        Ty::Tuple(items) => {
            let mut out = Vec::with_capacity(items.len());
            for (j, t) in items.iter().enumerate() {
                let all = cx.emit(ts);
                let part = cx.map(all, "t", |cx, a| {
                    let v = cx.emit(&a);
                    cx.proj(v, j as u32 + 1)
                })?;
                let pj = cx.emit(p);
                let pj = cx.proj(pj, j as u32 + 1)?;
                let v = cx.bind("ts", part, |cx, part| {
                    cx.bind("p", pj, |cx, pj| unslice(cx, t, &part, &pj))
                })?;
                out.push(v);
            }
            cx.tuple(out)
        }
        Ty::Array(size, elem) => {
            let pa = cx.emit(p);
            let len = cx.length(pa);
            cx.build(len, size.clone(), |cx, i| {
                let all = cx.emit(ts);
                let column = cx.map(all, "t", |cx, a| {
                    let v = cx.emit(&a);
                    let i = cx.emit(&i);
                    cx.index(v, i)
                })?;
                let pa = cx.emit(p);
                let ie = cx.emit(&i);
                let pi = cx.index(pa, ie)?;
                cx.bind("ts", column, |cx, column| {
                    cx.bind("p", pi, |cx, pi| unslice(cx, elem, &column, &pi))
                })
            })
        }
        Ty::Func(..) => Err(cx.internal("the tangent of a function")),
    })
}
