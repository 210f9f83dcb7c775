//! Specialisation: a higher-order program whose definitions have
//! first-order types → a first-order program, by inlining every function
//! value (seeds/002 Example 182.9: `(fun (f : R -> R) -> f (f x)) (fun y -> y * y)`
//! becomes `let y = x in let y' = y * y in y' * y'`).
//!
//! The pass is a small partial evaluator whose static values are closures
//! (a lambda of the input with the environment it was met in) and tuples
//! containing them; every other value is dynamic, i.e. residual code.
//! - `(fun x -> b) a` evaluates `a`, binds `x` to it (a `let` when `a` is
//!   dynamic, nothing when it is static) and continues into `b`;
//! - `let f = fun ... in e` binds `f` statically and emits no `let`;
//! - a closure in the function position of a builtin (`map`, `diff`, ...)
//!   is written back as a lambda with fresh binders.
//!
//! A `let` whose body is static (it evaluates to a closure) cannot stay
//! where it is; it *floats* out to the place where the closure is finally
//! used, which is sound because binders are unique within a definition and
//! the language is pure.
//!
//! A definition whose parameters or result are of function type (a
//! higher-order helper such as `def twice (g : R -> R) (x : R) = g (g x)`)
//! has no first-order form of its own: it lives on, specialised, in every
//! definition that calls it (the calls are inlined first: a module whose
//! definitions call each other, as `elaborate_calls` writes it, goes
//! through `crate::inline` before anything else), so
//! [`specialize`] leaves it out of its output rather than failing, and an
//! unused helper never blocks the rest of the program. Asked for by name
//! ([`specialize_def`]), such a definition is an error.
//!
//! What cannot be eliminated is an error (`Error::NotFirstOrder`): a
//! function chosen at run time by `if`, a function stored in an array, a
//! lambda parameter of function type in a written-back lambda, a function
//! in any other position where a value is needed.
//!
//! The output is renamed apart (binders unique within each definition),
//! compacted and typed (`infer`).

use std::rc::Rc;

use rpds::HashTrieMap;

use crate::error::Error;
use crate::infer::{infer, show_ty};
use crate::ir::{Def, Expr, ExprId, Module, Name, NameGen, Param, Pat, Span, Ty};
use crate::stack;

/// Specialises every definition of a typed core-form module with a
/// first-order signature to first order; the higher-order helpers are left
/// out (module doc).
pub fn specialize(m: &Module) -> Result<Module, Error> {
    if crate::inline::may_call(m) {
        return specialize_closed(&crate::inline::inline_all(m)?);
    }
    specialize_closed(m)
}

/// [`specialize`] of a module whose definitions are self-contained.
fn specialize_closed(m: &Module) -> Result<Module, Error> {
    let defs: Vec<&Def> = m
        .defs
        .iter()
        .filter(|d| higher_order_signature(d).is_none())
        .collect();
    specialize_defs(m, &defs)
}

/// A module holding definition `name` of `m` alone, specialised to first
/// order: what a route that differentiates `name` needs, whatever the other
/// definitions are (the calls `name` makes are inlined first). An
/// unknown name or a higher-order signature is an error.
pub fn specialize_def(m: &Module, name: &str) -> Result<Module, Error> {
    if m.def(name).is_some() && crate::inline::may_call(m) {
        return specialize_def_closed(&crate::inline::inline_entry(m, name)?, name);
    }
    specialize_def_closed(m, name)
}

/// [`specialize_def`] of a module whose definitions are self-contained.
fn specialize_def_closed(m: &Module, name: &str) -> Result<Module, Error> {
    let Some(def) = m.def(name) else {
        return Err(Error::Scope {
            span: Span::GENERATED,
            message: format!("there is no definition `{name}` to specialise"),
        });
    };
    if let Some(e) = higher_order_signature(def) {
        return Err(e);
    }
    specialize_defs(m, &[def])
}

fn specialize_defs(m: &Module, defs: &[&Def]) -> Result<Module, Error> {
    if !m.is_typed() {
        return Err(Error::Type {
            span: Span::GENERATED,
            message: "specialise needs a typed module; run type inference first".into(),
        });
    }
    let mut sp = Specializer {
        m,
        out: Module::new(m.file.clone()),
        names: m.name_gen(),
        used: Default::default(),
    };
    let mut out_defs = Vec::with_capacity(defs.len());
    for def in defs {
        out_defs.push(sp.def(def)?);
    }
    let mut out = sp.out;
    out.defs = out_defs;
    out.compact();
    infer(&mut out)?;
    Ok(out)
}

/// Why a definition has no first-order form of its own: its first
/// parameter or result of function type.
fn higher_order_signature(def: &Def) -> Option<Error> {
    for p in &def.params {
        if let Some(ty @ Ty::Func(..)) = &p.ty {
            return Some(not_fo(
                p.span,
                format!(
                    "cannot specialise: parameter `{}` is a function (`{}`); the definition must have first-order parameters",
                    p.name,
                    show_ty(ty)
                ),
            ));
        }
    }
    if let Some(ty @ Ty::Func(..)) = &def.ret {
        return Some(not_fo(
            def.name_span,
            format!(
                "cannot specialise: the result of `{}` is a function (`{}`)",
                def.name,
                show_ty(ty)
            ),
        ));
    }
    None
}

/// A closure: a lambda of the input and the environment it was met in.
struct Closure {
    lambda: ExprId,
    env: Env,
}

/// What a variable stands for.
#[derive(Clone)]
enum Bound {
    /// A dynamic value, under its name in the output.
    Var(Name),
    /// A function known at compile time.
    Clo(Rc<Closure>),
    /// A tuple with at least one static component.
    Tuple(Vec<Bound>),
}

type Env = HashTrieMap<Name, Bound>;

/// The value of an expression at specialisation time.
enum Sv {
    /// Residual code.
    Dyn(ExprId),
    Clo(Rc<Closure>),
    Tuple(Vec<Sv>),
}

/// A `let` floated out of an expression whose value is static.
struct Float {
    pat: Pat,
    ty: Option<Ty>,
    value: ExprId,
    span: Span,
}

/// The result of specialising an expression: lets to wrap around whatever
/// consumes it, and its value. A dynamic value never carries floats (they
/// are wrapped around it at once).
struct Out {
    floats: Vec<Float>,
    sv: Sv,
}

struct Specializer<'m> {
    m: &'m Module,
    out: Module,
    names: NameGen,
    /// The binder names used in the current definition.
    used: std::collections::HashSet<Name>,
}

fn not_fo(span: Span, message: impl Into<String>) -> Error {
    Error::NotFirstOrder {
        span,
        message: message.into(),
    }
}

impl Specializer<'_> {
    fn def(&mut self, def: &Def) -> Result<Def, Error> {
        self.used.clear();
        let mut env = Env::new();
        for p in &def.params {
            self.used.insert(p.name.clone());
            env = env.insert(p.name.clone(), Bound::Var(p.name.clone()));
        }
        let body = self.value(def.body, &env)?;
        Ok(Def {
            body,
            ..def.clone()
        })
    }

    /// A binder for `name`: the name itself if the definition does not use
    /// it yet, else a fresh one.
    fn binder(&mut self, name: &Name) -> Name {
        let res = if self.used.contains(name) {
            self.names.fresh(name.as_str())
        } else {
            name.clone()
        };
        self.used.insert(res.clone());
        res
    }

    fn add(&mut self, e: Expr, span: Span) -> ExprId {
        self.out.add(e, span)
    }

    /// Wraps `floats` around `body`, innermost last.
    fn wrap(&mut self, floats: Vec<Float>, mut body: ExprId) -> ExprId {
        for f in floats.into_iter().rev() {
            body = self.add(
                Expr::Let {
                    pat: f.pat,
                    ty: f.ty,
                    value: f.value,
                    body,
                },
                f.span,
            );
        }
        body
    }

    /// Specialises an expression in a position that needs a value.
    fn value(&mut self, id: ExprId, env: &Env) -> Result<ExprId, Error> {
        let out = self.expr(id, env)?;
        let v = self.residual(out.sv, self.m.span(id))?;
        Ok(self.wrap(out.floats, v))
    }

    /// Residual code for a value, which must not contain a function.
    fn residual(&mut self, sv: Sv, span: Span) -> Result<ExprId, Error> {
        stack::guard(|| match sv {
            Sv::Dyn(id) => Ok(id),
            Sv::Tuple(items) => {
                let items = items
                    .into_iter()
                    .map(|i| self.residual(i, span))
                    .collect::<Result<_, _>>()?;
                Ok(self.add(Expr::Tuple(items), span))
            }
            Sv::Clo(_) => Err(not_fo(
                span,
                "cannot specialise: a function value is used where only a first-order value can go",
            )),
        })
    }

    /// Binds the names of a pattern to a value: static parts go into the
    /// environment, dynamic parts into floated lets.
    fn bind(
        &mut self,
        env: &Env,
        name: &Name,
        ty: Option<&Ty>,
        sv: Sv,
        span: Span,
        floats: &mut Vec<Float>,
    ) -> Env {
        let b = self.bound(name, ty, sv, span, floats);
        env.insert(name.clone(), b)
    }

    fn bound(
        &mut self,
        name: &Name,
        ty: Option<&Ty>,
        sv: Sv,
        span: Span,
        floats: &mut Vec<Float>,
    ) -> Bound {
        stack::guard(|| match sv {
            Sv::Dyn(mut value) => {
                // `let x = (let y = v in w)` becomes `let y = v in let x = w`
                // (binders are unique, so nothing is captured).
                while let Expr::Let {
                    pat,
                    ty,
                    value: v,
                    body,
                } = self.out.expr(value)
                {
                    floats.push(Float {
                        pat: pat.clone(),
                        ty: ty.clone(),
                        value: *v,
                        span: self.out.span(value),
                    });
                    value = *body;
                }
                let x = self.binder(name);
                floats.push(Float {
                    pat: Pat::Var(x.clone()),
                    ty: ty.cloned(),
                    value,
                    span,
                });
                Bound::Var(x)
            }
            Sv::Clo(c) => Bound::Clo(c),
            Sv::Tuple(items) => Bound::Tuple(
                items
                    .into_iter()
                    .map(|i| self.bound(name, None, i, span, floats))
                    .collect(),
            ),
        })
    }

    /// The value of a variable's binding.
    fn use_bound(&mut self, b: &Bound, span: Span) -> Sv {
        stack::guard(|| match b {
            Bound::Var(x) => Sv::Dyn(self.add(Expr::Var(x.clone()), span)),
            Bound::Clo(c) => Sv::Clo(c.clone()),
            Bound::Tuple(items) => {
                Sv::Tuple(items.iter().map(|i| self.use_bound(i, span)).collect())
            }
        })
    }

    /// Writes a closure back as a lambda with fresh binders.
    fn lambda_of(&mut self, clo: &Closure) -> Result<ExprId, Error> {
        let Expr::Lambda { params, body } = self.m.expr(clo.lambda) else {
            unreachable!("invariant: closures are made from lambdas only")
        };
        let mut env = clo.env.clone();
        let mut new_params = Vec::new();
        for p in params {
            if let Some(ty @ Ty::Func(..)) = &p.ty {
                return Err(not_fo(
                    p.span,
                    format!(
                        "cannot specialise: parameter `{}` of this lambda is a function (`{}`), so the function it receives is only known at run time",
                        p.name,
                        show_ty(ty)
                    ),
                ));
            }
            let x = self.binder(&p.name);
            env = env.insert(p.name.clone(), Bound::Var(x.clone()));
            new_params.push(Param {
                name: x,
                ty: p.ty.clone(),
                span: p.span,
            });
        }
        let body = self.value(*body, &env)?;
        Ok(self.add(
            Expr::Lambda {
                params: new_params,
                body,
            },
            self.m.span(clo.lambda),
        ))
    }

    fn expr(&mut self, id: ExprId, env: &Env) -> Result<Out, Error> {
        stack::guard(|| {
            let mut out = self.expr_inner(id, env)?;
            if let Sv::Dyn(v) = out.sv
                && !out.floats.is_empty()
            {
                let floats = std::mem::take(&mut out.floats);
                out.sv = Sv::Dyn(self.wrap(floats, v));
            }
            Ok(out)
        })
    }

    fn expr_inner(&mut self, id: ExprId, env: &Env) -> Result<Out, Error> {
        let span = self.m.span(id);
        let dynamic = |sv: ExprId| Out {
            floats: Vec::new(),
            sv: Sv::Dyn(sv),
        };
        let e = self.m.expr(id);
        match e {
            Expr::Var(x) => match env.get(x) {
                Some(b) => {
                    let b = b.clone();
                    Ok(Out {
                        floats: Vec::new(),
                        sv: self.use_bound(&b, span),
                    })
                }
                None => Err(Error::Scope {
                    span,
                    message: format!("unknown variable `{x}`"),
                }),
            },
            Expr::Real(_) | Expr::Int(_) | Expr::Bool(_) | Expr::Reals(_) => {
                Ok(dynamic(self.add(e.clone(), span)))
            }
            Expr::Section(op) => Err(Error::Scope {
                span,
                message: format!(
                    "operator section `({op})` in core form; elaborate the module first"
                ),
            }),
            Expr::Lambda { .. } => Ok(Out {
                floats: Vec::new(),
                sv: Sv::Clo(Rc::new(Closure {
                    lambda: id,
                    env: env.clone(),
                })),
            }),
            Expr::Let {
                pat,
                ty,
                value,
                body,
            } => {
                let Out { mut floats, sv } = self.expr(*value, env)?;
                let inner = match (pat, sv) {
                    (Pat::Var(x), sv) => {
                        let ty = ty.as_ref().filter(|t| !matches!(t, Ty::Func(..)));
                        self.bind(env, x, ty, sv, span, &mut floats)
                    }
                    (Pat::Tuple(names), Sv::Tuple(items)) => {
                        let mut inner = env.clone();
                        for (x, it) in names.iter().zip(items) {
                            inner = self.bind(&inner, x, None, it, span, &mut floats);
                        }
                        inner
                    }
                    (Pat::Tuple(names), Sv::Dyn(v)) => {
                        let mut inner = env.clone();
                        let mut fresh = Vec::new();
                        for x in names {
                            let x2 = self.binder(x);
                            inner = inner.insert(x.clone(), Bound::Var(x2.clone()));
                            fresh.push(x2);
                        }
                        floats.push(Float {
                            pat: Pat::Tuple(fresh),
                            ty: ty.clone(),
                            value: v,
                            span,
                        });
                        inner
                    }
                    (Pat::Tuple(_), Sv::Clo(_)) => {
                        return Err(not_fo(span, "cannot destructure a function as a tuple"));
                    }
                };
                let body = self.expr(*body, &inner)?;
                floats.extend(body.floats);
                Ok(Out {
                    floats,
                    sv: body.sv,
                })
            }
            Expr::Tuple(items) => {
                let mut floats = Vec::new();
                let mut svs = Vec::new();
                for &i in items {
                    let o = self.expr(i, env)?;
                    floats.extend(o.floats);
                    svs.push(o.sv);
                }
                if svs.iter().all(|s| matches!(s, Sv::Dyn(_))) {
                    let ids = svs
                        .into_iter()
                        .map(|s| match s {
                            Sv::Dyn(i) => i,
                            _ => unreachable!("checked just above"),
                        })
                        .collect();
                    let t = self.add(Expr::Tuple(ids), span);
                    Ok(Out {
                        floats,
                        sv: Sv::Dyn(t),
                    })
                } else {
                    Ok(Out {
                        floats,
                        sv: Sv::Tuple(svs),
                    })
                }
            }
            Expr::Proj { tuple, index } => {
                let Out { floats, sv } = self.expr(*tuple, env)?;
                let sv = match sv {
                    Sv::Dyn(t) => Sv::Dyn(self.add(
                        Expr::Proj {
                            tuple: t,
                            index: *index,
                        },
                        span,
                    )),
                    Sv::Tuple(mut items) if (*index as usize) <= items.len() && *index >= 1 => {
                        items.swap_remove(*index as usize - 1)
                    }
                    _ => return Err(not_fo(span, "cannot project from a function")),
                };
                Ok(Out { floats, sv })
            }
            Expr::If {
                cond,
                then_branch,
                else_branch,
            } => {
                let c = self.value(*cond, env)?;
                let branch = |this: &mut Self, b: ExprId| -> Result<ExprId, Error> {
                    let o = this.expr(b, env)?;
                    match o.sv {
                        Sv::Dyn(v) => Ok(v),
                        _ => Err(not_fo(
                            span,
                            "cannot specialise: this `if` chooses a function at run time",
                        )),
                    }
                };
                let t = branch(self, *then_branch)?;
                let f = branch(self, *else_branch)?;
                Ok(dynamic(self.add(
                    Expr::If {
                        cond: c,
                        then_branch: t,
                        else_branch: f,
                    },
                    span,
                )))
            }
            Expr::App { func, args } => {
                let Out { mut floats, sv } = self.expr(*func, env)?;
                let clo = match sv {
                    Sv::Clo(c) => c,
                    _ => {
                        return Err(not_fo(
                            self.m.span(*func),
                            "cannot specialise: the function applied here is only known at run time",
                        ));
                    }
                };
                let Expr::Lambda { params, body } = self.m.expr(clo.lambda) else {
                    unreachable!("invariant: closures are made from lambdas only")
                };
                let mut inner = clo.env.clone();
                let mut arg_svs = Vec::new();
                for &a in args {
                    let o = self.expr(a, env)?;
                    floats.extend(o.floats);
                    arg_svs.push(o.sv);
                }
                for (p, sv) in params.iter().zip(arg_svs) {
                    let ty = p.ty.as_ref().filter(|t| !matches!(t, Ty::Func(..)));
                    inner = self.bind(&inner, &p.name, ty, sv, p.span, &mut floats);
                }
                let body = self.expr(*body, &inner)?;
                floats.extend(body.floats);
                Ok(Out {
                    floats,
                    sv: body.sv,
                })
            }
            Expr::Prim { op, args } => {
                let funs = op.function_args();
                let mut floats = Vec::new();
                let mut new_args = Vec::new();
                for (i, &a) in args.iter().enumerate() {
                    // The body and rules of `with_rules` are functions too.
                    let rule = *op == crate::ir::Prim::WithRules
                        && i < 3
                        && matches!(self.m.expr(a), Expr::Lambda { .. });
                    if funs.contains(&i) || rule {
                        let o = self.expr(a, env)?;
                        floats.extend(o.floats);
                        let f = match o.sv {
                            Sv::Dyn(f) => f,
                            Sv::Clo(c) => self.lambda_of(&c)?,
                            Sv::Tuple(_) => {
                                return Err(not_fo(self.m.span(a), "expected a function"));
                            }
                        };
                        new_args.push(f);
                    } else {
                        new_args.push(self.value(a, env)?);
                    }
                }
                let p = self.add(
                    Expr::Prim {
                        op: *op,
                        args: new_args,
                    },
                    span,
                );
                Ok(Out {
                    floats,
                    sv: Sv::Dyn(p),
                })
            }
            Expr::Array(items) => {
                let items = items
                    .iter()
                    .map(|&i| self.value(i, env))
                    .collect::<Result<_, _>>()?;
                Ok(dynamic(self.add(Expr::Array(items), span)))
            }
            Expr::Index { array, index } => {
                let a = self.value(*array, env)?;
                let i = self.value(*index, env)?;
                Ok(dynamic(self.add(Expr::Index { array: a, index: i }, span)))
            }
        }
    }
}
