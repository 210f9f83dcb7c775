//! Type inference on a core-form module.
//!
//! [`infer`] fills `Module::types` (parallel to the arena), every
//! `Param::ty` (definition and lambda parameters) and every `Def::ret`, and
//! rewrites the `Int` literals whose type turned out to be `R` into `Real`.
//! It is used by `elaborate` and again by every transformation pass after it
//! builds a new program.
//!
//! The rules are in docs/types.md. In short: unification over type and size
//! variables (`table.rs`), monomorphic within a definition (there is no
//! let-polymorphism), numeric literals are `R` unless the context demands
//! `Int`, and a size that cannot be decided statically is left to the
//! run-time checks.
//!
//! Each definition is inferred on its own, against the signatures of the
//! definitions before it ([`Sigs`]): a variable that no local binds and
//! that names an earlier definition (a call kept by elaboration,
//! docs/types.md) has that definition's type, a function of its parameter
//! types to its result type (its result type when it has no parameters),
//! with every size name of the signature instantiated fresh at each use,
//! so each call has its own sizes. Size names in a definition's parameter
//! and result annotations are *rigid* (the definition's own size
//! variables); other size names (in `let` and lambda annotations) are
//! flexible and stand for one unknown size per name within the definition;
//! `_` is a fresh unknown.
//!
//! Invariants of the output: `types.len() == exprs.len()`; nodes no
//! definition reaches get the unit type; every type is fully resolved (no
//! type is left unknown, sizes that are unknown are `Size::Dyn`). The first
//! error stops inference and leaves the module unchanged.

mod prims;
mod rules;
mod table;

use crate::fxhash::FxHashMap;

use crate::error::Error;
use crate::ir::{Def, Expr, ExprId, Module, Name, Pat, Prim, Size, Span, Ty};
use crate::stack;
use table::{Clash, Class, Ctor, SizeTerm, SizeVal, Tables, TyVar};

/// Infers the types of every definition of a core-form module.
pub fn infer(m: &mut Module) -> Result<(), Error> {
    check_shape(m)?;
    // Every definition is solved before any is written back, so that an
    // error leaves the module unchanged without a copy of it; each sees
    // the signatures solved before it.
    let mut sigs = Sigs::default();
    let mut solutions = Vec::with_capacity(m.defs.len());
    for def in &m.defs {
        let solution = solve(m, def, &sigs)?;
        sigs.insert(&def.name, &solution.params, &solution.ret);
        solutions.push(solution);
    }
    m.types = vec![Ty::Tuple(Vec::new()); m.exprs.len()];
    let mut defs = std::mem::take(&mut m.defs);
    for (def, solution) in defs.iter_mut().zip(solutions) {
        apply(m, def, solution);
    }
    m.defs = defs;
    Ok(())
}

/// Infers one definition, which need not be one of `m.defs` (elaboration
/// infers the prelude's definitions, which never reach the output), against
/// the signatures `sigs` of the definitions it may call. Fills the types of
/// the nodes it reaches, its parameters and result type.
pub(crate) fn infer_def(m: &mut Module, def: &mut Def, sigs: &Sigs) -> Result<(), Error> {
    if m.types.len() != m.exprs.len() {
        m.types.resize(m.exprs.len(), Ty::Tuple(Vec::new()));
    }
    let solution = solve(m, def, sigs)?;
    apply(m, def, solution);
    Ok(())
}

/// Writes a definition's solution into the module (whose `types` are as
/// long as its arena) and the definition.
fn apply(m: &mut Module, def: &mut Def, solution: Solution) {
    for (id, ty) in solution.types {
        if ty == Ty::Real
            && let Expr::Int(k) = m.exprs[id.index()]
        {
            m.exprs[id.index()] = Expr::Real(k as f64);
        }
        m.types[id.index()] = ty;
    }
    for (id, idx, ty) in solution.lambda_params {
        if let Expr::Lambda { params, .. } = &mut m.exprs[id.index()] {
            params[idx].ty = Some(ty);
        }
    }
    for (p, ty) in def.params.iter_mut().zip(solution.params) {
        p.ty = Some(ty);
    }
    def.ret = Some(solution.ret);
}

/// Refuses a module whose ids do not point backward (everything below
/// indexes the arena by them).
pub(crate) fn check_shape(m: &Module) -> Result<(), Error> {
    let malformed = |message: String| Error::Type {
        span: Span::GENERATED,
        message,
    };
    if m.spans.len() != m.exprs.len() {
        return Err(malformed(format!(
            "malformed module: {} spans for {} nodes",
            m.spans.len(),
            m.exprs.len()
        )));
    }
    for (i, e) in m.exprs.iter().enumerate() {
        let mut bad = None;
        e.for_each_child(|c| {
            if c.index() >= i {
                bad = Some(c);
            }
        });
        if let Some(c) = bad {
            return Err(malformed(format!(
                "malformed module: node e{i} refers to {c}, which is not before it"
            )));
        }
    }
    for d in &m.defs {
        if d.body.index() >= m.exprs.len() {
            return Err(malformed(format!(
                "malformed module: the body of `{}` is {}, out of range",
                d.name, d.body
            )));
        }
    }
    Ok(())
}

/// The types of a definition once inference is done.
pub(crate) struct Solution {
    pub(crate) types: Vec<(ExprId, Ty)>,
    pub(crate) lambda_params: Vec<(ExprId, usize, Ty)>,
    pub(crate) params: Vec<Ty>,
    pub(crate) ret: Ty,
}

/// What inference finds for one definition of `m`, without changing `m`:
/// the type of every node it reaches, of every lambda parameter, of the
/// parameters and of the result (the verifier compares them with the
/// stored ones rather than inferring on a copy of the module).
pub(crate) fn solve(m: &Module, def: &Def, sigs: &Sigs) -> Result<Solution, Error> {
    Cx::new(m, def, sigs).run()
}

/// The signatures of the definitions a definition may call (those before
/// it), as the type a reference to each has: `(T1, ..., Tk) -> T`, or `T`
/// for a definition without parameters.
#[derive(Debug, Default)]
pub(crate) struct Sigs {
    map: FxHashMap<Name, Ty>,
}

impl Sigs {
    /// Adds (or replaces) the signature of `name`.
    pub(crate) fn insert(&mut self, name: &Name, params: &[Ty], ret: &Ty) {
        let ty = if params.is_empty() {
            ret.clone()
        } else {
            Ty::Func(params.to_vec(), Box::new(ret.clone()))
        };
        self.map.insert(name.clone(), ty);
    }

    /// The type of a reference to `name`, if it is a definition.
    pub(crate) fn get(&self, name: &Name) -> Option<&Ty> {
        self.map.get(name)
    }
}

/// A lexical environment: every name maps to the stack of its bindings,
/// innermost last. The walks that use it enter and leave scopes in tree
/// order, so a binding is pushed when its scope is entered and popped when
/// it is left (cheaper than a persistent map on long `let` chains).
pub(crate) struct Scope<V> {
    map: FxHashMap<Name, Vec<V>>,
}

impl<V> Default for Scope<V> {
    fn default() -> Scope<V> {
        Scope {
            map: FxHashMap::default(),
        }
    }
}

impl<V> Scope<V> {
    /// The innermost binding of `name`.
    pub(crate) fn get(&self, name: &Name) -> Option<&V> {
        self.map.get(name).and_then(|vs| vs.last())
    }

    /// Enters the scope of a binding.
    pub(crate) fn push(&mut self, name: Name, v: V) {
        self.map.entry(name).or_default().push(v);
    }

    /// Leaves the scope of the innermost binding of `name`.
    pub(crate) fn pop(&mut self, name: &Name) {
        if let Some(vs) = self.map.get_mut(name) {
            vs.pop();
        }
    }
}

/// A projection from a tuple whose type was unknown when it was met.
struct PendingProj {
    tuple: TyVar,
    index: u32,
    result: TyVar,
    span: Span,
}

/// The inference of one definition.
struct Cx<'m> {
    m: &'m Module,
    def: &'m Def,
    /// The definitions this one may call.
    sigs: &'m Sigs,
    t: Tables,
    /// The type variable of every node reached.
    expr_ty: Vec<(ExprId, TyVar)>,
    /// Every binder in order met: name, type, where to point when it
    /// cannot be inferred; lambda parameters also carry their place.
    binders: Vec<Binder>,
    pending: Vec<PendingProj>,
    /// `grad` (or `grad_rev`) arguments that must be of ground type.
    ground: Vec<(TyVar, Span, Prim)>,
    /// Size names: rigid (from the signature) or flexible, one variable each.
    size_names: FxHashMap<Name, SizeTerm>,
    /// The variables in scope.
    env: Scope<TyVar>,
}

struct Binder {
    name: Name,
    ty: TyVar,
    span: Span,
    /// `Some((lambda, index))` for a lambda parameter.
    lambda: Option<(ExprId, usize)>,
}

impl<'m> Cx<'m> {
    fn new(m: &'m Module, def: &'m Def, sigs: &'m Sigs) -> Cx<'m> {
        Cx {
            m,
            def,
            sigs,
            t: Tables::default(),
            expr_ty: Vec::new(),
            binders: Vec::new(),
            pending: Vec::new(),
            ground: Vec::new(),
            size_names: FxHashMap::default(),
            env: Scope::default(),
        }
    }

    fn run(&mut self) -> Result<Solution, Error> {
        let def = self.def;
        // The signature's size names are rigid.
        let mut rigid = Vec::new();
        for ty in def
            .params
            .iter()
            .filter_map(|p| p.ty.as_ref())
            .chain(&def.ret)
        {
            collect_size_names(ty, &mut rigid);
        }
        for name in rigid {
            let idx = self.t.rigid.len() as u32;
            self.t.rigid.push(name.clone());
            let term = self.t.known_size(SizeVal::Rigid(idx, 0));
            self.size_names.insert(name, term);
        }
        let mut param_vars = Vec::new();
        for p in &def.params {
            let v = match &p.ty {
                Some(ty) => self.annotation(ty, p.span),
                None => self.t.fresh(p.span, Class::Any),
            };
            self.binders.push(Binder {
                name: p.name.clone(),
                ty: v,
                span: p.span,
                lambda: None,
            });
            param_vars.push(v);
            self.env.push(p.name.clone(), v);
        }
        let body = self.expr(def.body)?;
        if let Some(ret) = &def.ret {
            let want = self.annotation(ret, def.name_span);
            self.expect(want, body, self.m.span(def.body))?;
        }
        self.finish()?;
        self.solution(&param_vars, body)
    }

    /// Resolves pending projections, defaults numeric unknowns to `R`, and
    /// checks the deferred conditions.
    fn finish(&mut self) -> Result<(), Error> {
        self.drain_pending()?;
        let n = self.t.n_vars();
        let real = self.t.known(Ctor::Real);
        for i in 0..n {
            let v = Tables::var(i);
            if let table::TyVal::Unknown { class, span } = self.t.probe(v)
                && class != Class::Any
            {
                self.t.unify(v, real).map_err(|_| Error::Type {
                    span,
                    message: "internal error: cannot default a number to `R`".into(),
                })?;
            }
        }
        self.drain_pending()?;
        if let Some(p) = self.pending.first() {
            return Err(Error::Type {
                span: p.span,
                message: format!(
                    "cannot infer the type of the tuple in `.{}`; annotate it",
                    p.index
                ),
            });
        }
        self.check_ground()
    }

    /// Checks the points of `grad` whose type is known by now.
    fn check_ground(&mut self) -> Result<(), Error> {
        for (v, span, op) in std::mem::take(&mut self.ground) {
            match self.t.resolve(v) {
                Ok(ty) if !ty.is_ground() => {
                    return Err(Error::Type {
                        span,
                        message: format!(
                            "`{op}` needs a point of ground type, found `{}`",
                            show_ty(&ty)
                        ),
                    });
                }
                Ok(_) => {}
                Err(_) => self.ground.push((v, span, op)),
            }
        }
        Ok(())
    }

    fn drain_pending(&mut self) -> Result<(), Error> {
        loop {
            let mut progress = false;
            for p in std::mem::take(&mut self.pending) {
                if self.t.ctor(p.tuple).is_some() {
                    let item = self.project(p.tuple, p.index, p.span)?;
                    self.expect(p.result, item, p.span)?;
                    progress = true;
                } else {
                    self.pending.push(p);
                }
            }
            if !progress {
                return Ok(());
            }
        }
    }

    fn solution(&mut self, param_vars: &[TyVar], body: TyVar) -> Result<Solution, Error> {
        let cannot = |what: String, span: Span| Error::Type {
            span,
            message: format!("cannot infer the type of {what}; annotate it"),
        };
        let mut params = Vec::new();
        let mut lambda_params = Vec::new();
        for b in std::mem::take(&mut self.binders) {
            let ty = self
                .t
                .resolve(b.ty)
                .map_err(|_| cannot(format!("`{}`", b.name), b.span))?;
            match b.lambda {
                Some((id, idx)) => lambda_params.push((id, idx, ty)),
                None if params.len() < param_vars.len() => params.push(ty),
                None => {}
            }
        }
        let ret = self.t.resolve(body).map_err(|span| {
            cannot(
                format!("the result of `{}`", self.def.name),
                if span.is_generated() {
                    self.def.name_span
                } else {
                    span
                },
            )
        })?;
        let mut types = Vec::with_capacity(self.expr_ty.len());
        let mut done = FxHashMap::default();
        for (id, v) in std::mem::take(&mut self.expr_ty) {
            let ty = self
                .t
                .resolve_shared(v, &mut done)
                .map_err(|span| cannot("this expression".into(), span.to(self.m.span(id))))?;
            types.push((id, Ty::clone(&ty)));
        }
        Ok(Solution {
            types,
            lambda_params,
            params,
            ret,
        })
    }

    /// A type annotation as a type variable.
    fn annotation(&mut self, ty: &Ty, span: Span) -> TyVar {
        stack::guard(|| match ty {
            Ty::Real => self.t.known(Ctor::Real),
            Ty::Int => self.t.known(Ctor::Int),
            Ty::Bool => self.t.known(Ctor::Bool),
            Ty::Array(size, elem) => {
                let s = self.size_ann(size, span);
                let e = self.annotation(elem, span);
                self.t.known(Ctor::Array(s, e))
            }
            Ty::Tuple(items) => {
                let items = items.iter().map(|i| self.annotation(i, span)).collect();
                self.t.known(Ctor::Tuple(items))
            }
            Ty::Func(params, ret) => {
                let params = params.iter().map(|p| self.annotation(p, span)).collect();
                let ret = self.annotation(ret, span);
                self.t.known(Ctor::Func(params, ret))
            }
        })
    }

    /// A definition's signature at one use: its size names (rigid in the
    /// definition) stand for fresh unknowns of this use alone.
    fn instantiate(&mut self, sig: &Ty, span: Span) -> TyVar {
        let own = std::mem::take(&mut self.size_names);
        let v = self.annotation(sig, span);
        self.size_names = own;
        v
    }

    fn size_ann(&mut self, size: &Size, span: Span) -> SizeTerm {
        match size {
            Size::Lit(k) => self.t.known_size(SizeVal::Lit(*k as i64)),
            Size::Dyn => self.t.fresh_size(span),
            Size::Var(name, offset) => {
                let base = match self.size_names.get(name) {
                    Some(&t) => t,
                    None => {
                        let t = self.t.fresh_size(span);
                        self.size_names.insert(name.clone(), t);
                        t
                    }
                };
                SizeTerm {
                    var: base.var,
                    offset: base.offset + offset,
                }
            }
        }
    }

    /// `found` must be `expected`; the message names both, at `span`.
    fn expect(&mut self, expected: TyVar, found: TyVar, span: Span) -> Result<(), Error> {
        match self.t.unify(expected, found) {
            Ok(()) => Ok(()),
            Err(clash) => Err(self.clash(clash, expected, found, span)),
        }
    }

    fn clash(&mut self, clash: Clash, expected: TyVar, found: TyVar, span: Span) -> Error {
        let (e, f) = (self.t.show(expected), self.t.show(found));
        let message = match clash {
            Clash::Class {
                class,
                expected_side: true,
            } if e == "_" => format!("expected {}, found `{f}`", class.describe()),
            Clash::Class {
                class,
                expected_side: false,
            } if f == "_" => format!("expected `{e}`, found {}", class.describe()),
            Clash::Infinite => format!("expected `{e}`, found `{f}`, which would contain itself"),
            _ => format!("expected `{e}`, found `{f}`"),
        };
        Error::Type { span, message }
    }

    /// The elements of an array type (binding an unknown to an array).
    fn array_of(&mut self, v: TyVar, span: Span) -> Result<(SizeTerm, TyVar), Error> {
        match self.t.ctor(v) {
            Some(Ctor::Array(s, e)) => Ok((s, e)),
            Some(_) => Err(Error::Type {
                span,
                message: format!("expected an array, found `{}`", self.t.show(v)),
            }),
            None => {
                let s = self.t.fresh_size(span);
                let e = self.t.fresh(span, Class::Any);
                let clash = self.t.bind(v, Ctor::Array(s, e));
                self.bound(clash, v, span, "an array")?;
                Ok((s, e))
            }
        }
    }

    /// The parameter and result types of a function of `n` arguments.
    fn func_of(&mut self, v: TyVar, n: usize, span: Span) -> Result<(Vec<TyVar>, TyVar), Error> {
        let plural = |n: usize| if n == 1 { "" } else { "s" };
        match self.t.ctor(v) {
            Some(Ctor::Func(params, ret)) if params.len() == n => Ok((params, ret)),
            Some(Ctor::Func(params, _)) => Err(Error::Type {
                span,
                message: format!(
                    "expected a function of {n} argument{}, found `{}`, which takes {}",
                    plural(n),
                    self.t.show(v),
                    params.len()
                ),
            }),
            Some(_) => Err(Error::Type {
                span,
                message: format!("expected a function, found `{}`", self.t.show(v)),
            }),
            None => {
                let params: Vec<TyVar> = (0..n).map(|_| self.t.fresh(span, Class::Any)).collect();
                let ret = self.t.fresh(span, Class::Any);
                let clash = self.t.bind(v, Ctor::Func(params.clone(), ret));
                self.bound(clash, v, span, "a function")?;
                Ok((params, ret))
            }
        }
    }

    /// Reports the failure to bind an unknown to a shape.
    fn bound(
        &mut self,
        res: Result<(), Clash>,
        v: TyVar,
        span: Span,
        what: &str,
    ) -> Result<(), Error> {
        match res {
            Ok(()) => Ok(()),
            Err(Clash::Class { class, .. }) => Err(Error::Type {
                span,
                message: format!("expected {}, found {what}", class.describe()),
            }),
            Err(_) => Err(Error::Type {
                span,
                message: format!("expected {what}, found `{}`", self.t.show(v)),
            }),
        }
    }

    /// Component `index` (1-based) of a tuple whose type is known.
    fn project(&mut self, tuple: TyVar, index: u32, span: Span) -> Result<TyVar, Error> {
        match self.t.ctor(tuple) {
            Some(Ctor::Tuple(items)) if index >= 1 && (index as usize) <= items.len() => {
                Ok(items[index as usize - 1])
            }
            Some(Ctor::Tuple(_)) => Err(Error::Type {
                span,
                message: format!(
                    "tuple index {index} out of range for `{}`",
                    self.t.show(tuple)
                ),
            }),
            _ => Err(Error::Type {
                span,
                message: format!("expected a tuple, found `{}`", self.t.show(tuple)),
            }),
        }
    }

    fn bind_name(&mut self, name: &Name, ty: TyVar, span: Span) {
        self.binders.push(Binder {
            name: name.clone(),
            ty,
            span,
            lambda: None,
        });
        self.env.push(name.clone(), ty);
    }

    fn expr(&mut self, id: ExprId) -> Result<TyVar, Error> {
        stack::guard(|| {
            let v = self.expr_inner(id, None)?;
            self.expr_ty.push((id, v));
            Ok(v)
        })
    }

    /// Infers a function argument, telling a lambda its parameter types
    /// first (so that its body is checked knowing them).
    fn expr_fun(&mut self, id: ExprId, params: &[TyVar]) -> Result<TyVar, Error> {
        stack::guard(|| {
            let v = self.expr_inner(id, Some(params))?;
            self.expr_ty.push((id, v));
            Ok(v)
        })
    }

    fn expr_inner(
        &mut self,
        id: ExprId,
        expected_params: Option<&[TyVar]>,
    ) -> Result<TyVar, Error> {
        let span = self.m.span(id);
        match self.m.expr(id) {
            Expr::Var(name) => match self.env.get(name) {
                Some(&v) => Ok(v),
                None => match self.sigs.get(name) {
                    Some(sig) => Ok(self.instantiate(sig, span)),
                    None => Err(Error::Scope {
                        span,
                        message: format!("unknown variable `{name}`"),
                    }),
                },
            },
            Expr::Real(_) => Ok(self.t.known(Ctor::Real)),
            Expr::Int(_) => Ok(self.t.fresh(span, Class::Num)),
            Expr::Bool(_) => Ok(self.t.known(Ctor::Bool)),
            Expr::Reals(literal) => {
                let mut t = self.t.known(Ctor::Real);
                for &n in literal.shape.iter().rev() {
                    let size = self.t.known_size(SizeVal::Lit(n as i64));
                    t = self.t.known(Ctor::Array(size, t));
                }
                Ok(t)
            }
            Expr::Let {
                pat,
                ty,
                value,
                body,
            } => {
                let (value, body) = (*value, *body);
                let tv = self.expr(value)?;
                if let Some(ann) = ty {
                    let want = self.annotation(ann, span);
                    self.expect(want, tv, self.m.span(value))?;
                }
                match pat {
                    Pat::Var(x) => self.bind_name(x, tv, span),
                    Pat::Tuple(names) => {
                        let items: Vec<TyVar> = names
                            .iter()
                            .map(|_| self.t.fresh(span, Class::Any))
                            .collect();
                        match self.t.ctor(tv) {
                            Some(Ctor::Tuple(have)) if have.len() == names.len() => {}
                            Some(_) => {
                                return Err(Error::Type {
                                    span: self.m.span(value),
                                    message: format!(
                                        "expected a tuple of {} components, found `{}`",
                                        names.len(),
                                        self.t.show(tv)
                                    ),
                                });
                            }
                            None => {}
                        }
                        let want = self.t.known(Ctor::Tuple(items.clone()));
                        self.expect(want, tv, self.m.span(value))?;
                        for (x, it) in names.iter().zip(items) {
                            self.bind_name(x, it, span);
                        }
                    }
                }
                let res = self.expr(body)?;
                match pat {
                    Pat::Var(x) => self.env.pop(x),
                    Pat::Tuple(names) => names.iter().for_each(|x| self.env.pop(x)),
                }
                Ok(res)
            }
            Expr::Tuple(items) => {
                let items = items
                    .iter()
                    .map(|&i| self.expr(i))
                    .collect::<Result<_, _>>()?;
                Ok(self.t.known(Ctor::Tuple(items)))
            }
            Expr::Proj { tuple, index } => {
                let tt = self.expr(*tuple)?;
                if self.t.ctor(tt).is_some() {
                    self.project(tt, *index, span)
                } else {
                    let result = self.t.fresh(span, Class::Any);
                    self.pending.push(PendingProj {
                        tuple: tt,
                        index: *index,
                        result,
                        span,
                    });
                    Ok(result)
                }
            }
            Expr::If {
                cond,
                then_branch,
                else_branch,
            } => {
                let tc = self.expr(*cond)?;
                let b = self.t.known(Ctor::Bool);
                self.expect(b, tc, self.m.span(*cond))?;
                let tt = self.expr(*then_branch)?;
                let te = self.expr(*else_branch)?;
                self.expect(tt, te, self.m.span(*else_branch))?;
                Ok(tt)
            }
            Expr::Lambda { params, body } => {
                let mut vars = Vec::new();
                for (i, p) in params.iter().enumerate() {
                    let v = match &p.ty {
                        Some(ty) => self.annotation(ty, p.span),
                        None => self.t.fresh(p.span, Class::Any),
                    };
                    if let Some(want) = expected_params.and_then(|e| e.get(i))
                        && expected_params.map(<[_]>::len) == Some(params.len())
                    {
                        self.expect(*want, v, p.span)?;
                    }
                    self.binders.push(Binder {
                        name: p.name.clone(),
                        ty: v,
                        span: p.span,
                        lambda: Some((id, i)),
                    });
                    self.env.push(p.name.clone(), v);
                    vars.push(v);
                }
                let tb = self.expr(*body)?;
                params.iter().for_each(|p| self.env.pop(&p.name));
                Ok(self.t.known(Ctor::Func(vars, tb)))
            }
            Expr::App { func, args } => {
                let tf = self.expr(*func)?;
                let targs = args
                    .iter()
                    .map(|&a| self.expr(a))
                    .collect::<Result<Vec<_>, _>>()?;
                let (params, ret) = match self.t.ctor(tf) {
                    Some(Ctor::Func(params, _)) if params.len() != args.len() => {
                        return Err(Error::Type {
                            span,
                            message: format!(
                                "this function takes {} argument{}, {} given",
                                params.len(),
                                if params.len() == 1 { "" } else { "s" },
                                args.len()
                            ),
                        });
                    }
                    _ => self.func_of(tf, args.len(), self.m.span(*func))?,
                };
                for ((&a, ta), want) in args.iter().zip(targs).zip(params) {
                    self.expect(want, ta, self.m.span(a))?;
                }
                Ok(ret)
            }
            Expr::Prim { op, args } => self.prim(*op, args, span),
            Expr::Section(op) => Err(Error::Scope {
                span,
                message: format!(
                    "operator section `({op})` in core form; elaborate the module first"
                ),
            }),
            Expr::Array(items) => {
                // The first item's type is the element type: binding a
                // fresh variable to it would run the occurs check over the
                // whole type, d² for a nested literal of depth d.
                let (elem, rest) = match items.split_first() {
                    Some((&first, rest)) => (self.expr(first)?, rest),
                    None => (self.t.fresh(span, Class::Any), &items[..]),
                };
                for &i in rest {
                    let ti = self.expr(i)?;
                    self.expect(elem, ti, self.m.span(i))?;
                }
                let size = self.t.known_size(SizeVal::Lit(items.len() as i64));
                Ok(self.t.known(Ctor::Array(size, elem)))
            }
            Expr::Index { array, index } => {
                let ta = self.expr(*array)?;
                let (_, elem) = self.array_of(ta, self.m.span(*array))?;
                let ti = self.expr(*index)?;
                let int = self.t.known(Ctor::Int);
                self.expect(int, ti, self.m.span(*index))?;
                Ok(elem)
            }
        }
    }
}

/// Adds the size names of a type to `out`, first occurrence first.
fn collect_size_names(ty: &Ty, out: &mut Vec<Name>) {
    stack::guard(|| match ty {
        Ty::Real | Ty::Int | Ty::Bool => {}
        Ty::Array(size, elem) => {
            if let Size::Var(n, _) = size
                && !out.contains(n)
            {
                out.push(n.clone());
            }
            collect_size_names(elem, out);
        }
        Ty::Tuple(items) => items.iter().for_each(|i| collect_size_names(i, out)),
        Ty::Func(params, ret) => {
            params.iter().for_each(|p| collect_size_names(p, out));
            collect_size_names(ret, out);
        }
    })
}

/// A size as written: `3`, `n`, `n+1`, `n-1`, `_`.
pub(crate) fn show_size(size: &Size) -> String {
    match size {
        Size::Lit(k) => k.to_string(),
        Size::Var(n, 0) => n.to_string(),
        Size::Var(n, o) if *o > 0 => format!("{n}+{o}"),
        Size::Var(n, o) => format!("{n}-{}", o.unsigned_abs()),
        Size::Dyn => "_".into(),
    }
}

/// A type as written in programs, for messages.
pub(crate) fn show_ty(ty: &Ty) -> String {
    crate::print::ty(ty)
}
