//! Reverse mode inside the language: the expansion of `grad_rev f x` and
//! `vjp_rev f x dy` (docs/forward.md, "Reverse mode inside the language").
//!
//! Forward mode expands these too, innermost first like every construct,
//! but the derivative comes from the reverse-mode pipeline (UNF, D_rho,
//! UNF^-1, partial evaluation), which this crate does not own: the driver
//! hands it in as a [`Reverse`]. At a construct, with `f` already free of
//! constructs:
//!
//! 1. `f` is *closed* into a definition `rev_N (x_1 : T_1) ... (ct : U)?
//!    (v_1 : V_1) ... : R` whose body is `f x_1 ...` (for `vjp_rev`,
//!    `<f x, ct>`): its ground free variables become parameters and its
//!    function-typed free variables are re-bound from the `let` in scope
//!    that defines them, as for forward mode's duals;
//! 2. the driver's reverse mode gives `rev_N_grad`, with respect to the
//!    `x_i` only: the other parameters are constants of this
//!    differentiation, so an outer derivative never sees its perturbation
//!    confused with this one (the parameters are named, not tagged);
//! 3. that definition's body is copied in place of the construct, with
//!    fresh binders, its parameters replaced by the construct's arguments
//!    and the free variables (which are in scope there), and every
//!    Target-only derivative primitive written as the Source code it
//!    stands for, so the result is a Source program again that an outer
//!    forward D, an outer reverse mode or a route can take.

use std::collections::HashMap;

use syntax::{Def, Expr, ExprId, Module, Name, Param, Pat, Prim, Ty, stack};

use crate::build::{Atom, Builder, Res, show_ty};
use crate::dual::Scope;
use crate::expand::call;
use crate::shape::{self, let_atom};
use crate::{Error, table};

/// Reverse mode, as the driver runs it for `grad_rev` and `vjp_rev`.
pub trait Reverse {
    /// The gradient program of definition `entry` of `m` (a module holding
    /// that definition alone, real-valued, possibly higher order on the
    /// surface) with respect to the parameters `wrt`: a module with a
    /// definition `<entry>_grad` with the entry's parameters returning the
    /// gradients alone, `g_1` for one parameter and `(g_1, ..., g_k)` for
    /// more (the value dropped, so that partial evaluation removed what
    /// only it needed), first order. Its errors carry the span in `m`'s
    /// text.
    fn gradient(&self, m: &Module, entry: &str, wrt: &[String]) -> Result<Module, Error>;
}

/// What a construct's expansion needs from the expander.
pub(crate) struct Site<'a> {
    pub(crate) cx: &'a mut Builder,
    pub(crate) scope: &'a Scope,
    pub(crate) rev: Option<&'a dyn Reverse>,
}

/// The expansion of `op args` (`grad_rev` or `vjp_rev`) for a function of
/// parameter types `params` and result type `u`, all ground.
pub(crate) fn expand(
    site: Site<'_>,
    op: Prim,
    args: &[ExprId],
    params: &[Ty],
    u: &Ty,
) -> Res<ExprId> {
    let span = site.cx.span;
    let Some(rev) = site.rev else {
        return Err(Error::Construct {
            span,
            message: format!(
                "`{op}` needs reverse mode, which the driver supplies: expand with `forward::expand_with_reverse` (the `adrev` library does)"
            ),
        });
    };
    let cx = site.cx;
    let arity = params.len();
    let mut outer = Vec::new();
    let x = let_atom(cx, &mut outer, "x", args[1])?;
    let dy = match op {
        Prim::VjpRev => Some(let_atom(cx, &mut outer, "dy", args[2])?),
        _ => None,
    };
    let f = args[0];
    // The primal value of `vjp_rev`, next to the pullback.
    let value = match op {
        Prim::VjpRev => {
            let fp = let_atom(cx, &mut outer, "f", f)?;
            let xv = cx.emit(&x);
            Some(call(cx, &fp, xv, arity)?)
        }
        _ => None,
    };
    let closed = close(cx, site.scope, f, params, u, dy.is_some())?;
    let name = closed.def.name.to_string();
    let wrt: Vec<String> = closed.def.params[..arity]
        .iter()
        .map(|p| p.name.to_string())
        .collect();
    let n_params = closed.def.params.len();
    let module = closed_module(cx, closed.def)?;
    let g = rev.gradient(&module, &name, &wrt)?;
    let gdef = g
        .def(&format!("{name}_grad"))
        .or(g.defs.last())
        .ok_or_else(|| cx.internal("reverse mode gave no gradient definition"))?
        .clone();
    if gdef.params.len() != n_params {
        return Err(cx.internal(format!(
            "the gradient of `{name}` has {} parameters, not {n_params}",
            gdef.params.len()
        )));
    }
    let res = bind_args(cx, &x, arity, |cx, xs| {
        let mut actual: Vec<Atom> = xs.to_vec();
        actual.extend(dy.iter().cloned());
        actual.extend(closed.args.iter().cloned());
        let grads = splice(cx, &g, &gdef, &actual)?;
        cx.span = span;
        Ok(grads)
    })?;
    let res = match value {
        Some(v) => cx.tuple(vec![v, res])?,
        None => res,
    };
    cx.wrap(outer, res)
}

/// `scope` with the components of `x` (a tuple when `arity > 1`) as atoms.
fn bind_args(
    cx: &mut Builder,
    x: &Atom,
    arity: usize,
    scope: impl FnOnce(&mut Builder, &[Atom]) -> Res<ExprId>,
) -> Res<ExprId> {
    if arity == 1 {
        return scope(cx, std::slice::from_ref(x));
    }
    let xv = cx.emit(x);
    cx.bind_tuple("x", xv, |cx, atoms| scope(cx, &atoms))
}

/// The function closed into a definition, and what its parameters after
/// the differentiated ones (and `ct`) are bound to at the construct.
struct Closed {
    def: Def,
    /// The free variables, in the order of the parameters after the
    /// differentiated ones (and `ct`).
    args: Vec<Atom>,
}

/// The definition `rev_N (x_1 : T_1) ... (ct : U)? (v_1 : V_1) ... : R`
/// with body `f x_1 ...` or `<f x, ct>`, built in the arena outside every
/// definition. Function-typed free variables are re-bound inside it from
/// their `let`s (those values' free variables in turn), ground ones become
/// parameters.
fn close(
    cx: &mut Builder,
    scope: &Scope,
    f: ExprId,
    params: &[Ty],
    u: &Ty,
    pullback: bool,
) -> Res<Closed> {
    let span = cx.span;
    let mut def_params: Vec<(Name, Ty)> =
        params.iter().map(|t| (cx.fresh("x"), t.clone())).collect();
    let xs: Vec<Atom> = def_params
        .iter()
        .map(|(n, t)| Atom::Var(n.clone(), t.clone()))
        .collect();
    let fa = Atom::Var(cx.fresh("f"), cx.ty(f)?);
    let call_f = {
        let arg = if xs.len() == 1 {
            cx.emit(&xs[0])
        } else {
            let items = xs.iter().map(|a| cx.emit(a)).collect();
            cx.tuple(items)?
        };
        call(cx, &fa, arg, xs.len())?
    };
    let body = if pullback {
        let ct = cx.fresh("ct");
        def_params.push((ct.clone(), u.clone()));
        let ctv = cx.var(&ct, u.clone());
        shape::dot(cx, u, call_f, ctv)?
    } else {
        call_f
    };
    let Atom::Var(fname, _) = &fa else {
        return Err(cx.internal("the closed function is not a variable"));
    };
    let body = cx.let_(Pat::Var(fname.clone()), f, body)?;
    // Function-typed free variables, re-bound in dependency order.
    let mut lets: Vec<(Pat, ExprId)> = Vec::new();
    let mut seen: HashMap<ExprId, ()> = HashMap::new();
    let mut ground: Vec<Atom> = Vec::new();
    let own: Vec<Name> = def_params.iter().map(|(n, _)| n.clone()).collect();
    collect(cx, scope, body, &own, &mut lets, &mut seen, &mut ground)?;
    let body = cx.wrap(lets, body)?;
    for a in &ground {
        if let Atom::Var(n, t) = a {
            def_params.push((n.clone(), t.clone()));
        }
    }
    let def = Def {
        name: cx.fresh("rev"),
        name_span: span,
        params: def_params
            .into_iter()
            .map(|(name, ty)| Param {
                name,
                ty: Some(ty),
                span,
            })
            .collect(),
        ret: Some(Ty::Real),
        body,
    };
    Ok(Closed { def, args: ground })
}

/// The free variables of `e` (other than `own` and those already seen):
/// ground ones into `ground`, function-typed ones resolved through `scope`
/// into `lets`, after the bindings their values need.
fn collect(
    cx: &Builder,
    scope: &Scope,
    e: ExprId,
    own: &[Name],
    lets: &mut Vec<(Pat, ExprId)>,
    seen: &mut HashMap<ExprId, ()>,
    ground: &mut Vec<Atom>,
) -> Res<()> {
    stack::guard(|| {
        for (name, use_) in syntax::free_vars(&cx.out, e) {
            if own.contains(&name)
                || ground
                    .iter()
                    .any(|a| matches!(a, Atom::Var(n, _) if *n == name))
            {
                continue;
            }
            let ty = cx.ty(use_)?;
            if ty.is_ground() {
                ground.push(Atom::Var(name, ty));
                continue;
            }
            let Some(b) = scope.get(&name) else {
                return Err(Error::FunctionFreeVariable {
                    span: cx.out.span(use_),
                    name: name.to_string(),
                });
            };
            if seen.insert(b.value, ()).is_some() {
                continue;
            }
            collect(cx, scope, b.value, own, lets, seen, ground)?;
            lets.push((b.pat.clone(), b.value));
        }
        Ok(())
    })
}

/// A module holding `def` alone: a copy of the arena, compacted to the
/// nodes `def` reaches, typed again.
fn closed_module(cx: &Builder, def: Def) -> Res<Module> {
    let mut m = cx.out.clone();
    m.defs = vec![def];
    m.compact();
    crate::program::retype(&mut m)?;
    Ok(m)
}

/// The body of `def` (a definition of `g`) copied into the arena with
/// fresh binders, its parameters replaced by `args`.
fn splice(cx: &mut Builder, g: &Module, def: &Def, args: &[Atom]) -> Res<ExprId> {
    let mut copy = Copy {
        g,
        env: HashMap::new(),
    };
    for (p, a) in def.params.iter().zip(args) {
        copy.env.insert(p.name.clone(), a.clone());
    }
    copy.expr(cx, def.body)
}

struct Copy<'g> {
    g: &'g Module,
    /// A name of `g` → what it is in the arena.
    env: HashMap<Name, Atom>,
}

impl Copy<'_> {
    fn rename(&mut self, cx: &mut Builder, n: &Name, ty: Ty) -> Name {
        let fresh = cx.fresh(n.as_str());
        self.env.insert(n.clone(), Atom::Var(fresh.clone(), ty));
        fresh
    }

    fn ty(&self, id: ExprId) -> Res<Ty> {
        self.g.ty(id).cloned().ok_or_else(|| Error::Internal {
            span: self.g.span(id),
            message: "the gradient program is not typed".to_string(),
        })
    }

    fn expr(&mut self, cx: &mut Builder, id: ExprId) -> Res<ExprId> {
        stack::guard(|| {
            cx.span = self.g.span(id);
            let ty = self.ty(id)?;
            let node = self.g.expr(id).clone();
            match node {
                Expr::Var(n) => match self.env.get(&n) {
                    Some(a) => Ok(cx.emit(&a.clone())),
                    None => Ok(cx.var(&n, ty)),
                },
                Expr::Let {
                    pat,
                    ty: ann,
                    value,
                    body,
                } => {
                    let value = self.expr(cx, value)?;
                    let vty = cx.ty(value)?;
                    let pat = match pat {
                        Pat::Var(n) => Pat::Var(self.rename(cx, &n, vty)),
                        Pat::Tuple(ns) => {
                            let tys = match vty {
                                Ty::Tuple(ts) if ts.len() == ns.len() => ts,
                                other => {
                                    return Err(cx.internal(format!(
                                        "a tuple pattern binds a value of type {}",
                                        show_ty(&other)
                                    )));
                                }
                            };
                            Pat::Tuple(
                                ns.iter()
                                    .zip(tys)
                                    .map(|(n, t)| self.rename(cx, n, t))
                                    .collect(),
                            )
                        }
                    };
                    let body = self.expr(cx, body)?;
                    cx.span = self.g.span(id);
                    Ok(cx.add(
                        Expr::Let {
                            pat,
                            ty: ann,
                            value,
                            body,
                        },
                        ty,
                    ))
                }
                Expr::Lambda { params, body } => {
                    let params: Vec<Param> = params
                        .iter()
                        .map(|p| Param {
                            name: self.rename(cx, &p.name, p.ty.clone().unwrap_or(Ty::Real)),
                            ty: p.ty.clone(),
                            span: p.span,
                        })
                        .collect();
                    let body = self.expr(cx, body)?;
                    cx.span = self.g.span(id);
                    Ok(cx.add(Expr::Lambda { params, body }, ty))
                }
                // The partials of scatter and the histograms are array
                // primitives every route takes as they are (crate::hist).
                Expr::Prim { op, args } if op.is_target_only() && !syntax::hist::is_partial(op) => {
                    let args = args
                        .iter()
                        .map(|&a| self.expr(cx, a))
                        .collect::<Res<Vec<_>>>()?;
                    cx.span = self.g.span(id);
                    source_form(cx, op, args)
                }
                other => {
                    let children = other
                        .children()
                        .into_iter()
                        .map(|c| self.expr(cx, c))
                        .collect::<Res<Vec<_>>>()?;
                    let mut it = children.into_iter();
                    let rebuilt = other.map_children(|old| it.next().unwrap_or(old));
                    cx.span = self.g.span(id);
                    Ok(cx.add(rebuilt, ty))
                }
            }
        })
    }
}

/// `op args` for a Target-only derivative primitive, written as the Source
/// code it stands for (its arguments bound once). `digamma` and `trigamma`
/// have no Source form and stay as they are, as in forward mode's own
/// expansion (`crate::table`): the evaluator and forward mode take them, an
/// outer reverse mode refuses them by name.
fn source_form(cx: &mut Builder, op: Prim, args: Vec<ExprId>) -> Res<ExprId> {
    let mut binds = Vec::new();
    let mut atoms = Vec::with_capacity(args.len());
    for a in args {
        atoms.push(let_atom(cx, &mut binds, "a", a)?);
    }
    let body = match table::source_form(cx, op, &atoms)? {
        Some(form) => form,
        None => {
            let xs = atoms.iter().map(|a| cx.emit(a)).collect();
            cx.prim_r(op, xs)
        }
    };
    cx.wrap(binds, body)
}
