//! Inlining the calls that elaboration keeps (`elaborate::elaborate_calls`):
//! a core-form module whose definitions call earlier ones → definitions
//! that are self-contained, as every route, the evaluator and the C
//! backend take them.
//!
//! A reference to a definition `f` (`Var f`, a name no local binds) is
//! `f`'s value: for a definition with parameters `fun (x, y) -> body`, for
//! one without, its body. A call `App(Var f, [a, b])` of a definition with
//! parameters becomes `let x = a in let y = b in body`, as elaboration used
//! to write it (docs/types.md): the copy's binders are renamed apart in the
//! definition it lands in, its size names are fresh for this copy (each
//! call has its own sizes), the `let`s carry `f`'s parameter types, and
//! its nodes keep `f`'s spans, so a later error points into `f`.
//!
//! Each copy is made from the callee's own body, which still holds calls,
//! and those calls are expanded in turn while copying: the work is the
//! size of the output, so the entry of a chain of n definitions each
//! calling the previous one costs n, not the n² that inlining every
//! definition into every later one costs. Only what the entry reaches is
//! copied ([`inline_entry`]); [`inline_all`] closes every definition (the
//! old contract of `elaborate`, quadratic on such a chain). The output is
//! compacted and typed by `infer`, and each `let` annotation is replaced
//! by the type inferred for it (the fresh size names of copies do not
//! survive).

use std::collections::HashMap;

use crate::error::Error;
use crate::fxhash::{FxHashMap, FxHashSet};
use crate::infer::{Scope, infer};
use crate::ir::{Def, Expr, ExprId, Module, Name, NameGen, Param, Pat, Size, Span, Ty};
use crate::stack;

/// The module holding `entry` alone, with every call it reaches inlined.
pub fn inline_entry(m: &Module, entry: &str) -> Result<Module, Error> {
    let Some(at) = m.defs.iter().position(|d| d.name.as_str() == entry) else {
        return Err(Error::Scope {
            span: Span::GENERATED,
            message: format!("there is no definition `{entry}`"),
        });
    };
    inline_defs(m, &[at])
}

/// Every definition of `m`, in order, each with every call inlined.
pub fn inline_all(m: &Module) -> Result<Module, Error> {
    let all: Vec<usize> = (0..m.defs.len()).collect();
    inline_defs(m, &all)
}

/// Whether a node of `m` may call a definition: a variable named like one
/// (a local of that name shadows it, so this may say yes when the exact
/// answer is no; inlining a module without calls only copies it).
pub fn may_call(m: &Module) -> bool {
    let names: FxHashSet<&Name> = m.defs.iter().map(|d| &d.name).collect();
    m.exprs
        .iter()
        .any(|e| matches!(e, Expr::Var(x) if names.contains(x)))
}

/// The definitions of `m` at positions `which`, closed, in a new module.
fn inline_defs(m: &Module, which: &[usize]) -> Result<Module, Error> {
    crate::infer::check_shape(m)?;
    // Every definition of a module without calls, a tree whose binders are
    // distinct in each definition: the copy below would rename no binder
    // and inline nothing, so it would be the module itself, compacted
    // (compaction orders nodes by the tree alone). The text-to-gradient
    // path's module is such (issue 16: the copy was 7% of it on a
    // 20,000-`let` chain). Inference then runs as on the copy.
    if which.len() == m.defs.len() && !may_call(m) && plain_tree(m) {
        let mut out = m.clone();
        out.compact();
        infer(&mut out)?;
        annotations_as_inferred(&mut out);
        return Ok(out);
    }
    let mut names = m.name_gen();
    crate::elaborate::reserve_all(&mut names, m);
    let mut out = Module::new(m.file.clone());
    let mut used = FxHashSet::default();
    let mut copier = Copier::new(m, &mut out, &mut names, &mut used, None);
    for &i in which {
        let def = &m.defs[i];
        copier.used.clear();
        let mut env = Scope::default();
        for p in &def.params {
            copier.used.insert(p.name.clone());
            env.push(p.name.clone(), p.name.clone());
        }
        let body = copier.copy(def.body, i, &mut env, &mut None)?;
        copier.to.defs.push(Def {
            name: def.name.clone(),
            name_span: def.name_span,
            params: def.params.clone(),
            ret: def.ret.clone(),
            body,
        });
    }
    out.compact();
    infer(&mut out)?;
    annotations_as_inferred(&mut out);
    Ok(out)
}

/// Whether `m`'s definitions are trees sharing no node, in each of which
/// every binder (parameter, `let` pattern, lambda parameter) has a name of
/// its own: what [`Copier::binder`] keeps as it is.
fn plain_tree(m: &Module) -> bool {
    let mut seen = vec![false; m.exprs.len()];
    let mut stack = Vec::new();
    for def in &m.defs {
        let mut names: FxHashSet<&Name> = FxHashSet::default();
        if !def.params.iter().all(|p| names.insert(&p.name)) {
            return false;
        }
        stack.push(def.body);
        while let Some(id) = stack.pop() {
            if std::mem::replace(&mut seen[id.index()], true) {
                return false;
            }
            let fresh = match m.expr(id) {
                Expr::Let {
                    pat: Pat::Var(x), ..
                } => names.insert(x),
                Expr::Let {
                    pat: Pat::Tuple(xs),
                    ..
                } => xs.iter().all(|x| names.insert(x)),
                Expr::Lambda { params, .. } => params.iter().all(|p| names.insert(&p.name)),
                _ => true,
            };
            if !fresh {
                return false;
            }
            m.expr(id).for_each_child(|c| stack.push(c));
        }
    }
    true
}

/// Replaces each `let` annotation by the type inferred for its value: the
/// size names of copies (`[n_10]`) do not survive into the output.
pub(crate) fn annotations_as_inferred(out: &mut Module) {
    for i in 0..out.exprs.len() {
        let value = match &out.exprs[i] {
            Expr::Let {
                ty: Some(_), value, ..
            } => *value,
            _ => continue,
        };
        let inferred = out.types[value.index()].clone();
        if let Expr::Let { ty, .. } = &mut out.exprs[i] {
            *ty = Some(inferred);
        }
    }
}

/// Size name in the callee → fresh size name in this copy; `None` while
/// copying a definition into its own place (its sizes are its own).
type Sizes = Option<HashMap<Name, Name>>;

/// A binder for `name` in the definition whose binders are `used`: the
/// name itself if it is still free there, else a fresh one.
pub(crate) fn binder(names: &mut NameGen, used: &mut FxHashSet<Name>, name: &Name) -> Name {
    let res = if used.contains(name) {
        names.fresh(name.as_str())
    } else {
        names.reserve(name.as_str());
        name.clone()
    };
    used.insert(res.clone());
    res
}

/// Copies definitions of one module into a definition being built in
/// another: the inliner's copy, and elaboration's of the prelude.
pub(crate) struct Copier<'a> {
    from: &'a Module,
    positions: FxHashMap<&'a Name, usize>,
    to: &'a mut Module,
    names: &'a mut NameGen,
    /// The binder names used in the definition being built.
    used: &'a mut FxHashSet<Name>,
    /// The span of every copied node (a prelude copy points at its call),
    /// or `None`: each keeps its own.
    at: Option<Span>,
}

impl<'a> Copier<'a> {
    pub(crate) fn new(
        from: &'a Module,
        to: &'a mut Module,
        names: &'a mut NameGen,
        used: &'a mut FxHashSet<Name>,
        at: Option<Span>,
    ) -> Copier<'a> {
        let positions = from
            .defs
            .iter()
            .enumerate()
            .map(|(i, d)| (&d.name, i))
            .collect();
        Copier {
            from,
            positions,
            to,
            names,
            used,
            at,
        }
    }

    fn binder(&mut self, name: &Name) -> Name {
        binder(self.names, self.used, name)
    }

    fn span_of(&self, id: ExprId) -> Span {
        self.at.unwrap_or(self.from.span(id))
    }

    /// The definition a name no local binds refers to, if it is one before
    /// definition `within` (the verifier's rule).
    fn callee(&self, x: &Name, within: usize) -> Option<usize> {
        self.positions.get(x).copied().filter(|&j| j < within)
    }

    /// A copy of node `id` of definition `within`'s body, its binders
    /// renamed through `env` and its sizes through `sizes`, with the calls
    /// it makes inlined.
    fn copy(
        &mut self,
        id: ExprId,
        within: usize,
        env: &mut Scope<Name>,
        sizes: &mut Sizes,
    ) -> Result<ExprId, Error> {
        stack::guard(|| self.copy_inner(id, within, env, sizes))
    }

    fn copy_inner(
        &mut self,
        id: ExprId,
        within: usize,
        env: &mut Scope<Name>,
        sizes: &mut Sizes,
    ) -> Result<ExprId, Error> {
        let span = self.span_of(id);
        let node = match self.from.expr(id) {
            Expr::Var(x) => match env.get(x) {
                Some(x2) => Expr::Var(x2.clone()),
                None => match self.callee(x, within) {
                    Some(f) => return self.reference(f, span),
                    None => Expr::Var(x.clone()),
                },
            },
            Expr::App { func, args } => {
                let call = match self.from.expr(*func) {
                    Expr::Var(x) if env.get(x).is_none() => self.callee(x, within),
                    _ => None,
                };
                match call.filter(|&f| !self.from.defs[f].params.is_empty()) {
                    Some(f) => {
                        let args = args
                            .iter()
                            .map(|&a| self.copy(a, within, env, sizes))
                            .collect::<Result<Vec<_>, _>>()?;
                        return self.call(f, args, span);
                    }
                    None => {
                        let f = self.copy(*func, within, env, sizes)?;
                        let args = args
                            .iter()
                            .map(|&a| self.copy(a, within, env, sizes))
                            .collect::<Result<Vec<_>, _>>()?;
                        Expr::App { func: f, args }
                    }
                }
            }
            Expr::Let {
                pat,
                ty,
                value,
                body,
            } => {
                let v = self.copy(*value, within, env, sizes)?;
                let names: Vec<Name> = match pat {
                    Pat::Var(x) => vec![x.clone()],
                    Pat::Tuple(xs) => xs.clone(),
                };
                let mut out = Vec::new();
                for x in &names {
                    let x2 = self.binder(x);
                    env.push(x.clone(), x2.clone());
                    out.push(x2);
                }
                let pat = match pat {
                    Pat::Var(_) => Pat::Var(out.remove(0)),
                    Pat::Tuple(_) => Pat::Tuple(out),
                };
                let ty = ty.as_ref().map(|t| self.rename_sizes(t, sizes));
                let b = self.copy(*body, within, env, sizes)?;
                names.iter().for_each(|x| env.pop(x));
                Expr::Let {
                    pat,
                    ty,
                    value: v,
                    body: b,
                }
            }
            Expr::Lambda { params, body } => {
                let mut new_params = Vec::new();
                for p in params {
                    let x2 = self.binder(&p.name);
                    env.push(p.name.clone(), x2.clone());
                    new_params.push(Param {
                        name: x2,
                        ty: p.ty.as_ref().map(|t| self.rename_sizes(t, sizes)),
                        span: self.at.unwrap_or(p.span),
                    });
                }
                let b = self.copy(*body, within, env, sizes)?;
                params.iter().for_each(|p| env.pop(&p.name));
                Expr::Lambda {
                    params: new_params,
                    body: b,
                }
            }
            other => {
                let other = other.clone();
                let mut children = Vec::new();
                for c in other.children() {
                    children.push(self.copy(c, within, env, sizes)?);
                }
                let mut it = children.into_iter();
                other.map_children(|_| it.next().expect("invariant: one new id per child"))
            }
        };
        Ok(self.to.add(node, span))
    }

    /// `let x1 = a1 in ... let xk = ak in body` for a call of definition
    /// `f` (of `from`) with the arguments `args` (nodes of `to`).
    pub(crate) fn call(
        &mut self,
        f: usize,
        args: Vec<ExprId>,
        span: Span,
    ) -> Result<ExprId, Error> {
        let from = self.from;
        let def = &from.defs[f];
        let mut sizes = Some(HashMap::new());
        let mut env = Scope::default();
        let mut lets = Vec::new();
        for (p, a) in def.params.iter().zip(args) {
            let x = self.binder(&p.name);
            env.push(p.name.clone(), x.clone());
            let ty = p.ty.as_ref().map(|t| self.rename_sizes(t, &mut sizes));
            lets.push((x, ty, a));
        }
        let mut body = self.copy(def.body, f, &mut env, &mut sizes)?;
        for (x, ty, value) in lets.into_iter().rev() {
            body = self.to.add(
                Expr::Let {
                    pat: Pat::Var(x),
                    ty,
                    value,
                    body,
                },
                span,
            );
        }
        Ok(body)
    }

    /// Definition `f`'s value (of `from`) where it is referred to: its body
    /// for a definition without parameters, else `fun (x, ...) -> body`.
    pub(crate) fn reference(&mut self, f: usize, span: Span) -> Result<ExprId, Error> {
        let from = self.from;
        let def = &from.defs[f];
        let mut sizes = Some(HashMap::new());
        let mut env = Scope::default();
        let mut params = Vec::new();
        for p in &def.params {
            let x = self.binder(&p.name);
            env.push(p.name.clone(), x.clone());
            params.push(Param {
                name: x,
                ty: p.ty.as_ref().map(|t| self.rename_sizes(t, &mut sizes)),
                span,
            });
        }
        let body = self.copy(def.body, f, &mut env, &mut sizes)?;
        if params.is_empty() {
            return Ok(body);
        }
        Ok(self.to.add(Expr::Lambda { params, body }, span))
    }

    /// The type with every size name replaced through `sizes` (a fresh
    /// name on first sight); unchanged when `sizes` is `None`.
    fn rename_sizes(&mut self, ty: &Ty, sizes: &mut Sizes) -> Ty {
        let Some(map) = sizes else {
            return ty.clone();
        };
        self.rename_in(ty, map)
    }

    fn rename_in(&mut self, ty: &Ty, sizes: &mut HashMap<Name, Name>) -> Ty {
        stack::guard(|| match ty {
            Ty::Real | Ty::Int | Ty::Bool => ty.clone(),
            Ty::Array(size, elem) => {
                let size = match size {
                    Size::Var(n, o) => {
                        let n2 = sizes
                            .entry(n.clone())
                            .or_insert_with(|| self.names.fresh(n.as_str()))
                            .clone();
                        Size::Var(n2, *o)
                    }
                    s => s.clone(),
                };
                Ty::array(size, self.rename_in(elem, sizes))
            }
            Ty::Tuple(items) => Ty::Tuple(items.iter().map(|i| self.rename_in(i, sizes)).collect()),
            Ty::Func(params, ret) => Ty::Func(
                params.iter().map(|p| self.rename_in(p, sizes)).collect(),
                Box::new(self.rename_in(ret, sizes)),
            ),
        })
    }
}
