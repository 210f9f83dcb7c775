//! Elaboration: a surface-form module (straight out of the parser) → a
//! core-form module (ir.rs), typed.
//!
//! Name resolution, innermost first: a local binding (parameter, `let`,
//! lambda parameter) shadows everything; then the builtins (`sin`, `map`,
//! ..., `fst`, `snd`, `not`); then the definition being elaborated (an
//! error: there is no recursion); then the earlier definitions, the prelude
//! first (src/prelude.ad), which user definitions may shadow; then the
//! later definitions (an error again); else the name is unknown.
//!
//! What each surface construct becomes:
//! - a builtin applied to all its arguments → `Expr::Prim` (`fst e`/`snd e`
//!   → `Proj` 1/2); applied to too few or too many → an error; used as a
//!   value (`map sin A`) → eta-expanded, `fun x_1 -> sin x_1`;
//! - an operator section `(+)` → `fun (a_1, b_1) -> a_1 + b_1`, or the
//!   operator itself when the section is applied to all its arguments;
//! - a call `f a b` of an earlier user definition stays a call,
//!   `App(Var f, [a, b])`, and a use as a value (`map f A`) stays `Var f`:
//!   each definition is elaborated and typed once, and a call is typed by
//!   the callee's signature with fresh size names ([`elaborate_calls`];
//!   `crate::inline` inlines them where a route needs closed code);
//! - a call `f a b` of a prelude definition (or of any definition, in
//!   [`elaborate`]) → `let x = a in let y = b in body`, a copy of `f`'s
//!   elaborated and typed body whose binders are all renamed apart and
//!   whose size names are fresh (so each copy has its own sizes); the
//!   `let`s carry `f`'s parameter types; a definition without parameters
//!   is its body; a prelude definition used as a value → `fun (x, y) ->
//!   body`, the same copy under a lambda.
//!
//! Invariants of the output: core form (see ir.rs); it holds only the
//! user's definitions, in order, each calling only earlier ones (none, in
//! [`elaborate`]'s output); every binder is unique within its definition
//! (the user's name is kept where it does not clash, else a fresh
//! `name_N`); compacted; typed by `infer`.
//!
//! Each definition is type-checked as soon as it is elaborated, so the
//! copies inlined later carry its inferred types (literal forms, parameter
//! types) rather than being re-inferred at each call site: definitions are
//! monomorphic, up to their sizes.

use std::collections::{HashMap, HashSet};
use std::sync::OnceLock;

use crate::error::Error;
use crate::fxhash::FxHashSet;
use crate::infer::{self, Scope, Sigs, infer_def};
use crate::inline::Copier;
use crate::ir::{
    Def, Expr, ExprId, Module, Name, NameGen, Param, Pat, Prim, Size, SourceFile, Span, Ty,
};
use crate::parser::parse;
use crate::stack;

/// The text of the prelude (src/prelude.ad): `sum`, `prod`, `dot`,
/// `zeros_like`, `ones_like`.
pub const PRELUDE: &str = include_str!("prelude.ad");

/// The prelude, parsed once.
fn prelude() -> Result<&'static Module, Error> {
    static PARSED: OnceLock<Result<Module, Error>> = OnceLock::new();
    PARSED
        .get_or_init(|| {
            parse(SourceFile {
                name: "<prelude>".into(),
                text: PRELUDE.into(),
            })
        })
        .as_ref()
        .map_err(|e| Error::Syntax {
            span: Span::GENERATED,
            message: format!("internal error: the prelude does not parse: {e}"),
        })
}

/// Surface form → core form with every call inlined: each definition
/// self-contained (what a stage that takes a whole module of closed
/// definitions wants). [`elaborate_calls`] then `crate::inline::inline_all`;
/// a chain of n definitions each calling the previous one is n² nodes.
pub fn elaborate(m: &Module) -> Result<Module, Error> {
    crate::inline::inline_all(&elaborate_calls(m)?)
}

/// Surface form → core form keeping the calls of earlier user definitions
/// as calls (module doc): linear in the program, each definition
/// elaborated and typed once. What the driver loads; a route inlines the
/// entry it differentiates (`crate::inline::inline_entry`).
pub fn elaborate_calls(m: &Module) -> Result<Module, Error> {
    elaborate_with(m, prelude()?, false)
}

/// [`elaborate`] for a Target program written as text (a printed
/// gradient): the Target-only builtins (`d1pow`, ..., `Prim::is_target_only`)
/// are names too.
pub fn elaborate_target(m: &Module) -> Result<Module, Error> {
    crate::inline::inline_all(&elaborate_with(m, prelude()?, true)?)
}

/// Elaborates a surface-form module after `prelude` (another surface-form
/// module, whose definitions are in scope but not in the output: each call
/// of one is a copy of it); `target` resolves the Target-only builtins.
fn elaborate_with(m: &Module, prelude: &Module, target: bool) -> Result<Module, Error> {
    infer::check_shape(m)?;
    infer::check_shape(prelude)?;
    let mut names = m.name_gen();
    reserve_all(&mut names, prelude);
    reserve_all(&mut names, m);
    // The prelude is elaborated like a program of its own (its definitions
    // call each other), with the same names, so that its copies stay apart
    // from the user's names.
    let none = Module::default();
    let mut pre = Elab::new(prelude, names, &none, false, true);
    pre.defs(prelude)?;
    let prelude_core = pre.out;
    let mut el = Elab::new(m, pre.names, &prelude_core, target, false);
    el.defs(m)?;
    let mut out = el.out;
    // Each definition was typed as it was elaborated (`Elab::def`), and
    // inference reads no type it did not compute, so inferring the whole
    // output again would give the same types: compaction carries them.
    out.compact();
    crate::inline::annotations_as_inferred(&mut out);
    Ok(out)
}

/// Reserves every name of a module, including size names, in `names`.
pub(crate) fn reserve_all(names: &mut NameGen, m: &Module) {
    let mut sizes = Vec::new();
    for d in &m.defs {
        names.reserve(d.name.as_str());
        for p in &d.params {
            names.reserve(p.name.as_str());
            sizes.extend(p.ty.iter().cloned());
        }
        sizes.extend(d.ret.iter().cloned());
    }
    for e in &m.exprs {
        match e {
            Expr::Var(x) => names.reserve(x.as_str()),
            Expr::Let { pat, ty, .. } => {
                match pat {
                    Pat::Var(x) => names.reserve(x.as_str()),
                    Pat::Tuple(xs) => xs.iter().for_each(|x| names.reserve(x.as_str())),
                }
                sizes.extend(ty.iter().cloned());
            }
            Expr::Lambda { params, .. } => {
                for p in params {
                    names.reserve(p.name.as_str());
                    sizes.extend(p.ty.iter().cloned());
                }
            }
            _ => {}
        }
    }
    for ty in &sizes {
        for_each_size_name(ty, &mut |n| names.reserve(n.as_str()));
    }
}

fn for_each_size_name(ty: &Ty, f: &mut dyn FnMut(&Name)) {
    stack::guard(|| match ty {
        Ty::Real | Ty::Int | Ty::Bool => {}
        Ty::Array(size, elem) => {
            if let Size::Var(n, _) = size {
                f(n);
            }
            for_each_size_name(elem, f);
        }
        Ty::Tuple(items) => items.iter().for_each(|i| for_each_size_name(i, f)),
        Ty::Func(params, ret) => {
            params.iter().for_each(|p| for_each_size_name(p, f));
            for_each_size_name(ret, f);
        }
    })
}

/// Source name → output name.
type Env = Scope<Name>;

struct Elab<'p> {
    out: Module,
    names: NameGen,
    /// The prelude in core form, whose definitions every call copies.
    prelude: &'p Module,
    /// Whether this elaborates the prelude itself (its errors are internal).
    in_prelude: bool,
    /// The definitions in scope, by name.
    visible: HashMap<String, Callee>,
    /// The signatures of the user's definitions elaborated so far, which
    /// the calls kept in the output are typed by.
    sigs: Sigs,
    /// The binder names used in the current definition.
    used: FxHashSet<Name>,
    /// The source names in scope, and what they are called in the output.
    env: Env,
    /// Whether the Target-only builtins are names (`elaborate_target`).
    target: bool,
}

/// A definition a name refers to.
#[derive(Clone, Copy)]
enum Callee {
    /// Definition `i` of the prelude: copied at each use.
    Prelude(usize),
    /// Definition `i` of the output: called.
    User(usize),
}

/// The surface module a definition is read from, and what it may not call.
struct Src<'a> {
    m: &'a Module,
    def: &'a Def,
    /// Definitions after the current one, by name.
    later: &'a Later<'a>,
}

/// The definitions after the current one: every definition's position,
/// and the current one's (one map for the whole module, so that each
/// definition costs its own size, not the module's).
struct Later<'a> {
    positions: &'a HashMap<&'a str, usize>,
    after: usize,
}

impl Later<'_> {
    fn contains(&self, name: &str) -> bool {
        self.positions.get(name).is_some_and(|&j| j > self.after)
    }
}

fn scope_err(span: Span, message: String) -> Error {
    Error::Scope { span, message }
}

fn args_message(name: &str, want: usize, given: usize) -> String {
    format!(
        "`{name}` takes {want} argument{}, {given} given",
        if want == 1 { "" } else { "s" }
    )
}

impl<'p> Elab<'p> {
    fn new(
        m: &Module,
        names: NameGen,
        prelude: &'p Module,
        target: bool,
        in_prelude: bool,
    ) -> Elab<'p> {
        Elab {
            out: Module::new(m.file.clone()),
            names,
            prelude,
            in_prelude,
            visible: prelude
                .defs
                .iter()
                .enumerate()
                .map(|(i, d)| (d.name.as_str().to_owned(), Callee::Prelude(i)))
                .collect(),
            sigs: Sigs::default(),
            used: FxHashSet::default(),
            env: Env::default(),
            target,
        }
    }

    /// Elaborates every definition of `m` in order into `out`.
    fn defs(&mut self, m: &Module) -> Result<(), Error> {
        let positions: HashMap<&str, usize> = m
            .defs
            .iter()
            .enumerate()
            .map(|(i, d)| (d.name.as_str(), i))
            .collect();
        let mut defined: HashSet<&str> = HashSet::new();
        for (i, def) in m.defs.iter().enumerate() {
            if !defined.insert(def.name.as_str()) {
                return Err(Error::Scope {
                    span: def.name_span,
                    message: format!("`{}` is defined twice", def.name),
                });
            }
            let later = Later {
                positions: &positions,
                after: i,
            };
            let done = self.def(m, def, &later)?;
            let params: Vec<Ty> = done
                .params
                .iter()
                .map(|p| p.ty.clone().unwrap_or(Ty::Tuple(Vec::new())))
                .collect();
            let ret = done.ret.clone().unwrap_or(Ty::Tuple(Vec::new()));
            self.sigs.insert(&done.name, &params, &ret);
            self.visible.insert(
                done.name.as_str().to_owned(),
                Callee::User(self.out.defs.len()),
            );
            self.out.defs.push(done);
        }
        Ok(())
    }

    /// The builtin a free name stands for.
    fn builtin(&self, x: &Name) -> Option<Prim> {
        if self.target {
            Prim::from_target_name(x.as_str())
        } else {
            Prim::from_name(x.as_str())
        }
    }

    /// Elaborates and types one definition.
    fn def(&mut self, m: &Module, def: &Def, later: &Later) -> Result<Def, Error> {
        if self.builtin(&def.name).is_some() || matches!(def.name.as_str(), "fst" | "snd") {
            return Err(scope_err(
                def.name_span,
                format!("`{}` is a builtin and cannot be redefined", def.name),
            ));
        }
        self.used.clear();
        self.env = Env::default();
        let src = Src { m, def, later };
        let mut params = Vec::new();
        check_distinct(def.params.iter().map(|p| (&p.name, p.span)), "parameter")?;
        for p in &def.params {
            let x = self.binder(&p.name);
            self.env.push(p.name.clone(), x.clone());
            params.push(Param {
                name: x,
                ty: p.ty.clone(),
                span: p.span,
            });
        }
        let body = self.expr(&src, def.body)?;
        let mut out = Def {
            name: def.name.clone(),
            name_span: def.name_span,
            params,
            ret: def.ret.clone(),
            body,
        };
        infer_def(&mut self.out, &mut out, &self.sigs).map_err(|e| {
            if self.in_prelude {
                Error::Type {
                    span: Span::GENERATED,
                    message: format!("internal error in the prelude's `{}`: {e}", def.name),
                }
            } else {
                e
            }
        })?;
        crate::rules::check(&self.out, Some(&[out.body]))?;
        Ok(out)
    }

    /// A binder for `name` in the current definition: the name itself if
    /// it is still free there, else a fresh one.
    fn binder(&mut self, name: &Name) -> Name {
        crate::inline::binder(&mut self.names, &mut self.used, name)
    }

    /// A copier of prelude definitions into the current definition, every
    /// copied node at `span` (the use), so that an error inside points at
    /// the user's text.
    fn copier(&mut self, span: Span) -> Copier<'_> {
        Copier::new(
            self.prelude,
            &mut self.out,
            &mut self.names,
            &mut self.used,
            Some(span),
        )
    }

    /// The number of parameters of a definition in scope.
    fn arity(&self, callee: Callee) -> usize {
        match callee {
            Callee::Prelude(i) => self.prelude.defs[i].params.len(),
            Callee::User(i) => self.out.defs[i].params.len(),
        }
    }

    /// A binder that is fresh everywhere.
    fn fresh(&mut self, base: &str) -> Name {
        let x = self.names.fresh(base);
        self.used.insert(x.clone());
        x
    }

    fn add(&mut self, e: Expr, span: Span) -> ExprId {
        self.out.add(e, span)
    }

    fn expr(&mut self, src: &Src, id: ExprId) -> Result<ExprId, Error> {
        stack::guard(|| self.expr_inner(src, id))
    }

    fn exprs(&mut self, src: &Src, ids: &[ExprId]) -> Result<Vec<ExprId>, Error> {
        ids.iter().map(|&i| self.expr(src, i)).collect()
    }

    fn expr_inner(&mut self, src: &Src, id: ExprId) -> Result<ExprId, Error> {
        let span = src.m.span(id);
        let e = src.m.expr(id);
        match e {
            Expr::Var(x) => self.reference(src, x, span),
            Expr::Real(_) | Expr::Int(_) | Expr::Bool(_) | Expr::Reals(_) => {
                Ok(self.add(e.clone(), span))
            }
            Expr::Let {
                pat,
                ty,
                value,
                body,
            } => {
                let v = self.expr(src, *value)?;
                let names: Vec<&Name> = match pat {
                    Pat::Var(x) => vec![x],
                    Pat::Tuple(xs) => {
                        check_distinct(xs.iter().map(|x| (x, span)), "name in this pattern")?;
                        xs.iter().collect()
                    }
                };
                let mut out = Vec::new();
                for &x in &names {
                    let x2 = self.binder(x);
                    self.env.push(x.clone(), x2.clone());
                    out.push(x2);
                }
                let b = self.expr(src, *body)?;
                names.iter().for_each(|x| self.env.pop(x));
                let pat = match pat {
                    Pat::Var(_) => Pat::Var(out.remove(0)),
                    Pat::Tuple(_) => Pat::Tuple(out),
                };
                Ok(self.add(
                    Expr::Let {
                        pat,
                        ty: ty.clone(),
                        value: v,
                        body: b,
                    },
                    span,
                ))
            }
            Expr::Lambda { params, body } => {
                check_distinct(params.iter().map(|p| (&p.name, p.span)), "parameter")?;
                let mut out = Vec::new();
                for p in params {
                    let x = self.binder(&p.name);
                    self.env.push(p.name.clone(), x.clone());
                    out.push(Param {
                        name: x,
                        ty: p.ty.clone(),
                        span: p.span,
                    });
                }
                let b = self.expr(src, *body)?;
                params.iter().for_each(|p| self.env.pop(&p.name));
                Ok(self.add(
                    Expr::Lambda {
                        params: out,
                        body: b,
                    },
                    span,
                ))
            }
            Expr::App { func, args } => self.call(src, *func, args, span),
            Expr::Section(op) => Ok(self.section(*op, span)),
            Expr::Tuple(_)
            | Expr::Proj { .. }
            | Expr::If { .. }
            | Expr::Prim { .. }
            | Expr::Array(_)
            | Expr::Index { .. } => {
                let children = self.exprs(src, &e.children())?;
                let mut it = children.into_iter();
                let node = e.map_children(|_| it.next().expect("invariant: one new id per child"));
                Ok(self.add(node, span))
            }
        }
    }

    /// A name used as a value, not in call position.
    fn reference(&mut self, src: &Src, x: &Name, span: Span) -> Result<ExprId, Error> {
        if let Some(x2) = self.env.get(x) {
            return Ok(self.add(Expr::Var(x2.clone()), span));
        }
        if let Some(index) = projection(x.as_str()) {
            let p = self.fresh("p");
            let v = self.add(Expr::Var(p.clone()), span);
            let body = self.add(Expr::Proj { tuple: v, index }, span);
            return Ok(self.lambda(vec![(p, None)], body, span));
        }
        if let Some(op) = self.builtin(x) {
            // Eta-expanded: `fun (x_1, ..., x_k) -> op x_1 ... x_k`.
            let params: Vec<Name> = (0..op.arity()).map(|_| self.fresh("x")).collect();
            let args = params
                .iter()
                .map(|p| self.add(Expr::Var(p.clone()), span))
                .collect();
            let body = self.add(Expr::Prim { op, args }, span);
            return Ok(self.lambda(params.into_iter().map(|p| (p, None)).collect(), body, span));
        }
        match self.definition(src, x, span)? {
            Callee::User(i) => Ok(self.add(Expr::Var(self.out.defs[i].name.clone()), span)),
            Callee::Prelude(i) => self.copier(span).reference(i, span),
        }
    }

    fn lambda(&mut self, params: Vec<(Name, Option<Ty>)>, body: ExprId, span: Span) -> ExprId {
        let params = params
            .into_iter()
            .map(|(name, ty)| Param { name, ty, span })
            .collect();
        self.add(Expr::Lambda { params, body }, span)
    }

    /// The definition `x` refers to, or why there is none.
    fn definition(&mut self, src: &Src, x: &Name, span: Span) -> Result<Callee, Error> {
        if *x == src.def.name {
            return Err(scope_err(
                span,
                format!("recursion is not supported: `{x}` calls itself"),
            ));
        }
        if let Some(&callee) = self.visible.get(x.as_str()) {
            return Ok(callee);
        }
        if src.later.contains(x.as_str()) {
            return Err(scope_err(
                span,
                format!(
                    "recursion is not supported: `{}` calls `{x}`, which is defined later",
                    src.def.name
                ),
            ));
        }
        Err(scope_err(span, format!("unknown name `{x}`")))
    }

    /// `func args`.
    fn call(
        &mut self,
        src: &Src,
        func: ExprId,
        args: &[ExprId],
        span: Span,
    ) -> Result<ExprId, Error> {
        match src.m.expr(func) {
            Expr::Var(x) if self.env.get(x).is_none() => {
                if let Some(index) = projection(x.as_str()) {
                    if args.len() != 1 {
                        return Err(Error::Type {
                            span,
                            message: args_message(x.as_str(), 1, args.len()),
                        });
                    }
                    let t = self.expr(src, args[0])?;
                    return Ok(self.add(Expr::Proj { tuple: t, index }, span));
                }
                if x.as_str() == "reduce_by_index" {
                    return self.reduce_by_index(src, args, span);
                }
                if let Some(op) = self.builtin(x) {
                    if args.len() != op.arity() {
                        return Err(Error::Type {
                            span,
                            message: args_message(x.as_str(), op.arity(), args.len()),
                        });
                    }
                    let args = self.exprs(src, args)?;
                    return Ok(self.add(Expr::Prim { op, args }, span));
                }
                let fspan = src.m.span(func);
                let callee = self.definition(src, x, fspan)?;
                let arity = self.arity(callee);
                let args = self.exprs(src, args)?;
                if arity != 0 && arity != args.len() {
                    return Err(Error::Type {
                        span,
                        message: args_message(x.as_str(), arity, args.len()),
                    });
                }
                match callee {
                    Callee::User(i) => {
                        // A call kept as a call (module doc).
                        let f = self.add(Expr::Var(self.out.defs[i].name.clone()), fspan);
                        Ok(self.add(Expr::App { func: f, args }, span))
                    }
                    Callee::Prelude(i) if arity == 0 => {
                        let f = self.copier(fspan).reference(i, fspan)?;
                        Ok(self.add(Expr::App { func: f, args }, span))
                    }
                    Callee::Prelude(i) => self.copier(span).call(i, args, span),
                }
            }
            Expr::Section(op) if args.len() == op.arity() => {
                let args = self.exprs(src, args)?;
                Ok(self.add(Expr::Prim { op: *op, args }, span))
            }
            _ => {
                let f = self.expr(src, func)?;
                let args = self.exprs(src, args)?;
                Ok(self.add(Expr::App { func: f, args }, span))
            }
        }
    }

    /// `reduce_by_index dest op is vs` is the histogram of `op`
    /// (`hist_add dest is vs`, ...): the operator must be written as one of
    /// `(+)`, `(*)`, `min`, `max`, whose derivatives reverse mode knows in
    /// O(n + m) (docs/derivatives.md, "Scatter and histograms").
    fn reduce_by_index(&mut self, src: &Src, args: &[ExprId], span: Span) -> Result<ExprId, Error> {
        if args.len() != 4 {
            return Err(Error::Type {
                span,
                message: args_message("reduce_by_index", 4, args.len()),
            });
        }
        let op = match src.m.expr(args[1]) {
            Expr::Section(Prim::Add) => Some(Prim::HistAdd),
            Expr::Section(Prim::Mul) => Some(Prim::HistMul),
            Expr::Var(x) if self.env.get(x).is_none() && x.as_str() == "min" => Some(Prim::HistMin),
            Expr::Var(x) if self.env.get(x).is_none() && x.as_str() == "max" => Some(Prim::HistMax),
            _ => None,
        };
        let Some(op) = op else {
            return Err(Error::Type {
                span: src.m.span(args[1]),
                message: "the operator of `reduce_by_index` must be one of (+), (*), min and max \
                          (a general operator is not supported)"
                    .to_string(),
            });
        };
        let args = self.exprs(src, &[args[0], args[2], args[3]])?;
        Ok(self.add(Expr::Prim { op, args }, span))
    }

    /// `(op)` as a lambda.
    fn section(&mut self, op: Prim, span: Span) -> ExprId {
        let bases = ["a", "b", "c"];
        let params: Vec<Name> = (0..op.arity())
            .map(|i| self.fresh(bases.get(i).copied().unwrap_or("a")))
            .collect();
        let args = params
            .iter()
            .map(|p| self.add(Expr::Var(p.clone()), span))
            .collect();
        let body = self.add(Expr::Prim { op, args }, span);
        self.lambda(params.into_iter().map(|p| (p, None)).collect(), body, span)
    }
}

/// `fst` → 1, `snd` → 2.
fn projection(name: &str) -> Option<u32> {
    match name {
        "fst" => Some(1),
        "snd" => Some(2),
        _ => None,
    }
}

/// Refuses a parameter list or pattern that binds a name twice.
fn check_distinct<'a>(
    names: impl Iterator<Item = (&'a Name, Span)>,
    what: &str,
) -> Result<(), Error> {
    let mut seen = HashSet::new();
    for (n, span) in names {
        if !seen.insert(n) {
            return Err(scope_err(span, format!("{what} `{n}` appears twice")));
        }
    }
    Ok(())
}
