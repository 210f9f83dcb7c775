//! Expansion of the derivative constructs `diff`, `grad`, `jvp`, `vjp`,
//! `jacob` (language.md, "Differentiation inside the language"; dF~ Fig. 5).
//!
//! The definitions that contain a construct are rebuilt bottom-up, so the
//! arguments of a construct are expanded before it: innermost first. A
//! construct `c f x` then becomes ordinary code around `D f`, the macro
//! applied to the (already construct-free) function: nested constructs are
//! D applied twice, and never confuse perturbations (seeds/002,
//! Remark 182.17).
//!
//! Free variables of `f`: ground ones are constants of the differentiation
//! (zero tangent); function-typed ones are re-derived from the `let` that
//! binds them, which is why the rebuild records every function-typed `let`
//! in scope, and why a lambda applied directly to a function argument is
//! first turned into `let`s (`(fun (g) -> body) h` ≡ `let g = h in body`).

use std::collections::HashSet;

use syntax::{Def, Expr, ExprId, Module, Pat, Prim, Size, Span, Ty, stack};

use crate::build::{Atom, Builder, Res, show_ty};
use crate::dual::{Binding, Macro, Rep, Scope};
use crate::rev::{self, Reverse};
use crate::shape::{self, let_atom};
use crate::{Config, Error, Mode};

/// Expands every construct of `m`. When a construct's function uses a
/// function-typed variable whose definition is not known where the
/// construct is (a parameter of a lambda that is called elsewhere), the
/// module is first specialised to first order (`syntax::specialize`
/// inlines every function value, so the construct's function becomes a
/// lambda) and expanded again; if that is impossible too, the original
/// error stands.
pub(crate) fn expand_module(m: &Module, cfg: &Config, rev: Option<&dyn Reverse>) -> Res<Module> {
    match expand_once(m, cfg, rev) {
        Err(e @ Error::FunctionFreeVariable { .. }) => match syntax::specialize(m) {
            Ok(first_order) => expand_once(&first_order, cfg, rev),
            Err(_) => Err(e),
        },
        other => other,
    }
}

fn expand_once(m: &Module, cfg: &Config, rev: Option<&dyn Reverse>) -> Res<Module> {
    let has_construct = m
        .exprs
        .iter()
        .any(|e| matches!(e, Expr::Prim { op, .. } if op.is_derivative_construct()));
    if !has_construct {
        return Ok(m.clone());
    }
    if !m.is_typed() {
        return Err(Error::NotCore {
            span: Span::GENERATED,
            message: "the module has no types".to_string(),
        });
    }
    // A Source program stays one: reverse mode may differentiate it next.
    let mut cx = Builder::over(m.clone());
    cx.source_only = true;
    let mut ex = Expander {
        cx,
        scope: Scope::new(),
        cfg,
        rev,
    };
    for i in 0..m.defs.len() {
        if contains_construct(m, &m.defs[i]) {
            let body = ex.rebuild(m.defs[i].body)?;
            ex.cx.out.defs[i].body = body;
        }
    }
    let mut out = ex.cx.out;
    out.compact();
    crate::program::retype(&mut out)?;
    Ok(out)
}

/// Whether a definition's tree holds a derivative construct.
fn contains_construct(m: &Module, def: &Def) -> bool {
    let mut stack = vec![def.body];
    while let Some(id) = stack.pop() {
        let e = m.expr(id);
        if matches!(e, Expr::Prim { op, .. } if op.is_derivative_construct()) {
            return true;
        }
        e.for_each_child(|c| stack.push(c));
    }
    false
}

struct Expander<'a> {
    cx: Builder,
    scope: Scope,
    cfg: &'a Config,
    /// The driver's reverse mode, for `grad_rev` and `vjp_rev`.
    rev: Option<&'a dyn Reverse>,
}

impl Expander<'_> {
    /// The node rebuilt with its constructs expanded.
    fn rebuild(&mut self, id: ExprId) -> Res<ExprId> {
        stack::guard(|| {
            let span = self.cx.out.span(id);
            let res = self.rebuild_node(id, span);
            self.cx.span = span;
            res
        })
    }

    fn rebuild_node(&mut self, id: ExprId, span: Span) -> Res<ExprId> {
        let node = self.cx.node(id);
        let ty = self.cx.ty(id)?;
        match &node {
            Expr::Let {
                pat,
                ty: ann,
                value,
                body,
            } => {
                let value = self.rebuild(*value)?;
                if !self.cx.ty(value)?.is_ground() {
                    self.record(pat, value);
                }
                let body = self.rebuild(*body)?;
                self.cx.span = span;
                Ok(self.cx.add(
                    Expr::Let {
                        pat: pat.clone(),
                        ty: ann.clone(),
                        value,
                        body,
                    },
                    ty,
                ))
            }
            Expr::App { func, args } if self.is_lambda_of_functions(*func, args)? => {
                let Expr::Lambda { params, body } = self.cx.node(*func) else {
                    return Err(self.cx.internal("expected a lambda"));
                };
                let mut binds = Vec::with_capacity(args.len());
                for (p, &a) in params.iter().zip(args) {
                    let a = self.rebuild(a)?;
                    let pat = Pat::Var(p.name.clone());
                    if !self.cx.ty(a)?.is_ground() {
                        self.record(&pat, a);
                    }
                    binds.push((pat, a));
                }
                let body = self.rebuild(body)?;
                self.cx.span = span;
                self.cx.wrap(binds, body)
            }
            Expr::Prim { op, args } if op.is_derivative_construct() => {
                let args = args
                    .iter()
                    .map(|&a| self.rebuild(a))
                    .collect::<Res<Vec<_>>>()?;
                self.cx.span = span;
                self.construct(*op, &args)
            }
            _ => {
                let children = node
                    .children()
                    .into_iter()
                    .map(|c| self.rebuild(c))
                    .collect::<Res<Vec<_>>>()?;
                let mut it = children.into_iter();
                let rebuilt = node.map_children(|old| it.next().unwrap_or(old));
                self.cx.span = span;
                Ok(self.cx.add(rebuilt, ty))
            }
        }
    }

    /// Whether `func args` is a lambda applied directly to an argument of
    /// function type.
    fn is_lambda_of_functions(&self, func: ExprId, args: &[ExprId]) -> Res<bool> {
        if !matches!(self.cx.out.expr(func), Expr::Lambda { .. }) {
            return Ok(false);
        }
        for &a in args {
            if !self.cx.ty(a)?.is_ground() {
                return Ok(true);
            }
        }
        Ok(false)
    }

    fn record(&mut self, pat: &Pat, value: ExprId) {
        let names = match pat {
            Pat::Var(n) => vec![n.clone()],
            Pat::Tuple(ns) => ns.clone(),
        };
        for n in names {
            self.scope.insert(
                n,
                Binding {
                    pat: pat.clone(),
                    value,
                },
            );
        }
    }

    /// Binds `D f` (under `rep`) and builds `body` with it; the duals of
    /// `f`'s free variables are bound around both.
    fn with_dual_fn(
        &mut self,
        f: ExprId,
        rep: Rep,
        body: impl FnOnce(&mut Builder, Atom) -> Res<ExprId>,
    ) -> Res<ExprId> {
        let mut mac = Macro::new(
            &mut self.cx,
            rep,
            &self.scope,
            self.cfg.mutant_first_summand_only,
        );
        let fd = mac.apply(f)?;
        let pending = mac.take_pending();
        let inner = self.cx.bind("f_d", fd, body)?;
        self.cx.wrap(pending, inner)
    }

    /// The expansion of `op args`.
    fn construct(&mut self, op: Prim, args: &[ExprId]) -> Res<ExprId> {
        let span = self.cx.span;
        let f = args[0];
        let (params, u) = match self.cx.ty(f)? {
            Ty::Func(params, u) => (params, *u),
            other => {
                return Err(Error::Construct {
                    span,
                    message: format!(
                        "the first argument of `{op}` must be a function, not a value of type {}",
                        show_ty(&other)
                    ),
                });
            }
        };
        if matches!(op, Prim::GradRev | Prim::VjpRev) {
            return self.reverse_construct(op, args, &params, &u);
        }
        let arity = params.len();
        let t = if arity == 1 {
            params[0].clone()
        } else {
            Ty::Tuple(params)
        };
        for (ty, what) in [(&t, "the input"), (&u, "the result")] {
            if !ty.is_ground() {
                return Err(Error::UnsupportedType {
                    span,
                    what: format!("{what} of the function given to `{op}`"),
                    ty: show_ty(ty),
                });
            }
        }
        let mut outer = Vec::new();
        let x = let_atom(&mut self.cx, &mut outer, "x", args[1])?;
        let res = match op {
            Prim::Diff => {
                if t != Ty::Real {
                    return Err(Error::Construct {
                        span,
                        message: format!(
                            "`diff` differentiates functions of one real, not of {}; use `grad` or `jvp`",
                            show_ty(&t)
                        ),
                    });
                }
                self.with_dual_fn(f, Rep::Scalar, |cx, fd| {
                    let p = cx.emit(&x);
                    let one = cx.real(1.0);
                    let seeded = cx.tuple(vec![p, one])?;
                    let r = call(cx, &fd, seeded, arity)?;
                    shape::tangent(cx, &u, r)
                })?
            }
            Prim::Grad => {
                if u != Ty::Real {
                    return Err(Error::Construct {
                        span,
                        message: format!(
                            "`grad` needs a real-valued function, not one returning {}",
                            show_ty(&u)
                        ),
                    });
                }
                match self.cfg.mode {
                    Mode::Passes => self.with_dual_fn(f, Rep::Scalar, |cx, fd| {
                        shape::assemble(cx, &t, &x, &mut |cx, d| {
                            let r = call(cx, &fd, d, arity)?;
                            cx.proj(r, 2)
                        })
                    })?,
                    Mode::Vectorised => {
                        let zeros = self.zeros_for(&t, &x, &mut outer)?;
                        let rep = Rep::Vector {
                            zeros: zeros.clone(),
                        };
                        self.with_dual_fn(f, rep, |cx, fd| {
                            let s = shape::seed(cx, &t, &x, &Atom::Int(0), &zeros)?;
                            let r = call(cx, &fd, s, arity)?;
                            let tan = cx.proj(r, 2)?;
                            cx.bind("t", tan, |cx, ta| {
                                shape::gather(cx, &t, &x, &ta, &Atom::Int(0))
                            })
                        })?
                    }
                }
            }
            Prim::Jvp => {
                let dx = let_atom(&mut self.cx, &mut outer, "dx", args[2])?;
                self.with_dual_fn(f, Rep::Scalar, |cx, fd| {
                    let p = cx.emit(&x);
                    let dp = cx.emit(&dx);
                    let seeded = shape::zip(cx, &t, p, dp)?;
                    let r = call(cx, &fd, seeded, arity)?;
                    cx.bind("r", r, |cx, ra| {
                        let r1 = cx.emit(&ra);
                        let value = shape::primal(cx, &Rep::Scalar, &u, r1)?;
                        let r2 = cx.emit(&ra);
                        let tangent = shape::tangent(cx, &u, r2)?;
                        cx.tuple(vec![value, tangent])
                    })
                })?
            }
            Prim::Vjp => {
                let dy = let_atom(&mut self.cx, &mut outer, "dy", args[2])?;
                let fp = self.copy_primal(f, &mut outer)?;
                let xv = self.cx.emit(&x);
                let value = call(&mut self.cx, &fp, xv, arity)?;
                let grads = self.with_dual_fn(f, Rep::Scalar, |cx, fd| {
                    shape::assemble(cx, &t, &x, &mut |cx, d| {
                        let r = call(cx, &fd, d, arity)?;
                        let tan = shape::tangent(cx, &u, r)?;
                        let w = cx.emit(&dy);
                        shape::dot(cx, &u, w, tan)
                    })
                })?;
                self.cx.tuple(vec![value, grads])?
            }
            Prim::Jacob => match self.cfg.mode {
                Mode::Passes => {
                    let fp = self.copy_primal(f, &mut outer)?;
                    let xv = self.cx.emit(&x);
                    let value = call(&mut self.cx, &fp, xv, arity)?;
                    let v = let_atom(&mut self.cx, &mut outer, "y", value)?;
                    self.with_dual_fn(f, Rep::Scalar, |cx, fd| {
                        let cols = shape::assemble(cx, &t, &x, &mut |cx, d| {
                            let r = call(cx, &fd, d, arity)?;
                            shape::tangent(cx, &u, r)
                        })?;
                        cx.bind("cols", cols, |cx, cols| {
                            shape::transpose(cx, &u, &t, &v, &cols, &|_, e| Ok(e))
                        })
                    })?
                }
                Mode::Vectorised => {
                    let zeros = self.zeros_for(&t, &x, &mut outer)?;
                    let rep = Rep::Vector {
                        zeros: zeros.clone(),
                    };
                    self.with_dual_fn(f, rep, |cx, fd| {
                        let s = shape::seed(cx, &t, &x, &Atom::Int(0), &zeros)?;
                        let r = call(cx, &fd, s, arity)?;
                        shape::rebuild(cx, &u, r, &|cx, leaf| {
                            let tan = cx.proj(leaf, 2)?;
                            cx.bind("t", tan, |cx, ta| {
                                shape::gather(cx, &t, &x, &ta, &Atom::Int(0))
                            })
                        })
                    })?
                }
            },
            other => {
                return Err(self
                    .cx
                    .internal(format!("`{other}` is not a derivative construct")));
            }
        };
        self.cx.wrap(outer, res)
    }

    /// `grad_rev` and `vjp_rev`, by the driver's reverse mode (`rev.rs`).
    fn reverse_construct(
        &mut self,
        op: Prim,
        args: &[ExprId],
        params: &[Ty],
        u: &Ty,
    ) -> Res<ExprId> {
        let span = self.cx.span;
        for (i, ty) in params.iter().enumerate() {
            if !ty.is_ground() {
                return Err(Error::UnsupportedType {
                    span,
                    what: format!("parameter {} of the function given to `{op}`", i + 1),
                    ty: show_ty(ty),
                });
            }
        }
        if !u.is_ground() {
            return Err(Error::UnsupportedType {
                span,
                what: format!("the result of the function given to `{op}`"),
                ty: show_ty(u),
            });
        }
        if op == Prim::GradRev && *u != Ty::Real {
            return Err(Error::Construct {
                span,
                message: format!(
                    "`grad_rev` needs a real-valued function, not one returning {}; use `vjp_rev`",
                    show_ty(u)
                ),
            });
        }
        let site = rev::Site {
            cx: &mut self.cx,
            scope: &self.scope,
            rev: self.rev,
        };
        rev::expand(site, op, args, params, u)
    }

    /// `f` itself, for the primal call next to `D f`: bound to a variable
    /// when it is not one already. `D f` reads the same nodes and copies them
    /// with fresh binders, so the two do not share nodes or names.
    fn copy_primal(&mut self, f: ExprId, outer: &mut Vec<(Pat, ExprId)>) -> Res<Atom> {
        let_atom(&mut self.cx, outer, "f", f)
    }

    /// Binds `k`, the number of reals of `x : t`, and the shared zero
    /// tangent `build k (fun _ -> 0.0)` of the vectorised mode.
    fn zeros_for(&mut self, t: &Ty, x: &Atom, outer: &mut Vec<(Pat, ExprId)>) -> Res<Atom> {
        zeros_for(&mut self.cx, t, x, outer)
    }
}

/// Binds the shared zero tangent of length `count(t, x)`.
pub(crate) fn zeros_for(
    cx: &mut Builder,
    t: &Ty,
    x: &Atom,
    outer: &mut Vec<(Pat, ExprId)>,
) -> Res<Atom> {
    let k = shape::count(cx, t, x)?;
    let k = let_atom(cx, outer, "k", k)?;
    zeros_of(cx, &k, outer)
}

/// Binds `build k (fun _ -> 0.0)`.
pub(crate) fn zeros_of(cx: &mut Builder, k: &Atom, outer: &mut Vec<(Pat, ExprId)>) -> Res<Atom> {
    let n = cx.emit(k);
    let zeros = cx.build(n, Size::Dyn, |cx, _| Ok(cx.real(0.0)))?;
    let name = cx.fresh("zeros");
    outer.push((Pat::Var(name.clone()), zeros));
    Ok(Atom::Var(name, Ty::array(Size::Dyn, Ty::Real)))
}

/// `f arg` for a function of `arity` parameters; for more than one, `arg`
/// is the tuple of the arguments.
pub(crate) fn call(cx: &mut Builder, f: &Atom, arg: ExprId, arity: usize) -> Res<ExprId> {
    if arity == 1 {
        let func = cx.emit(f);
        return cx.app(func, vec![arg]);
    }
    cx.bind_tuple("a", arg, |cx, atoms| {
        let func = cx.emit(f);
        let args = atoms.iter().map(|a| cx.emit(a)).collect();
        cx.app(func, args)
    })
}

/// Every name bound or used in a module.
pub(crate) fn used_names(m: &Module) -> HashSet<String> {
    let mut used = HashSet::new();
    for def in &m.defs {
        used.insert(def.name.as_str().to_string());
        used.extend(def.params.iter().map(|p| p.name.as_str().to_string()));
    }
    for e in &m.exprs {
        match e {
            Expr::Var(n) => {
                used.insert(n.as_str().to_string());
            }
            Expr::Let { pat, .. } => match pat {
                Pat::Var(n) => {
                    used.insert(n.as_str().to_string());
                }
                Pat::Tuple(ns) => used.extend(ns.iter().map(|n| n.as_str().to_string())),
            },
            Expr::Lambda { params, .. } => {
                used.extend(params.iter().map(|p| p.name.as_str().to_string()))
            }
            _ => {}
        }
    }
    used
}
