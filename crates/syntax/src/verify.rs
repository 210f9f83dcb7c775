//! The verifier of the term IR: run on the input and the output of every
//! stage. A failure on a stage's output is a compiler bug.
//!
//! Checklist, in the order checked (a failed step stops the later ones when
//! they would index out of range or give only consequential errors):
//!
//! 1. Tables: `spans` and `types` have one entry per node; the module has
//!    at least one definition.
//! 2. Ids: every child id is in range and smaller than its parent's id (the
//!    arena is in post-order); every definition's body is in range.
//! 3. Tree: every node has exactly one parent, except definition bodies,
//!    which have none and belong to one definition each; so no node is
//!    shared and none is unreachable.
//! 4. Core form, node by node: no operator `Section`; every `Prim` has
//!    `Prim::arity` arguments; tuple expressions have 0 or at least 2
//!    components and tuple patterns at least 2 names; projections are
//!    1-based and, when the stored type of the tuple is a tuple, in range.
//! 5. Scopes, per definition: every parameter has a type and the
//!    definition a result type; every binder (definition parameter, lambda
//!    parameter, `let` name) is unique within its definition; no two
//!    definitions share a name; no variable is free except the name of an
//!    earlier definition (a call kept by elaboration, docs/types.md). A
//!    free variable named like a builtin is reported as an unresolved
//!    builtin, one named like the definition itself or a later one as a
//!    reference that is not to an earlier definition.
//! 6. Types: inference (run on the module, which it only reads, each
//!    definition against the stored signatures of the earlier ones)
//!    succeeds and reproduces the module exactly, as `infer` on a copy would:
//!    the same stored type for every node, the same parameter and result
//!    types, the same literals (an `Int` literal of type `R` would have been
//!    rewritten to `Real`).
//! 7. Derivative rules (`crate::rules::check`): every `with_rules` node has
//!    a function body, rules that are functions or `()`, at least one rule,
//!    ground types, and reads no variable bound outside its functions.

use std::collections::BTreeMap;
use std::fmt;

use crate::fxhash::{FxHashMap, FxHashSet};
use crate::infer::{Sigs, check_shape, show_ty, solve};
use crate::ir::{Expr, ExprId, Module, Name, Param, Pat, Prim, Span, Ty};
use crate::ty_eq::SharedEq;

/// One violated invariant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerifyError {
    /// The node it is about, if any.
    pub at: Option<ExprId>,
    /// Where in the program text (`Span::GENERATED` if nowhere).
    pub span: Span,
    /// What is wrong, lowercase, no trailing period.
    pub message: String,
}

impl fmt::Display for VerifyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.at {
            Some(id) => write!(f, "{id}: {}", self.message),
            None => f.write_str(&self.message),
        }
    }
}

impl std::error::Error for VerifyError {}

/// [`verify`] for a module that claims to be a Source program: also no
/// Target-only primitive (`Prim::is_target_only`, the derivative
/// primitives reverse mode writes).
pub fn verify_source(m: &Module) -> Result<(), Vec<VerifyError>> {
    let mut errors = verify(m).err().unwrap_or_default();
    for (i, e) in m.exprs.iter().enumerate() {
        if let Expr::Prim { op, .. } = e
            && op.is_target_only()
        {
            errors.push(VerifyError {
                at: Some(ExprId(i as u32)),
                span: m.spans.get(i).copied().unwrap_or(Span::GENERATED),
                message: format!("`{op}` is a Target primitive, not one of Source"),
            });
        }
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}

/// Checks every invariant of a core-form module (see the module doc).
pub fn verify(m: &Module) -> Result<(), Vec<VerifyError>> {
    let mut v = Verifier {
        m,
        positions: FxHashMap::default(),
        errors: Vec::new(),
    };
    v.run();
    if v.errors.is_empty() {
        Ok(())
    } else {
        Err(v.errors)
    }
}

struct Verifier<'m> {
    m: &'m Module,
    /// Every definition's position, by name (the first, if a name is
    /// defined twice, which is an error).
    positions: FxHashMap<&'m Name, usize>,
    errors: Vec<VerifyError>,
}

impl<'m> Verifier<'m> {
    fn error(&mut self, at: Option<ExprId>, message: String) {
        let span = at
            .and_then(|id| self.m.spans.get(id.index()).copied())
            .unwrap_or(Span::GENERATED);
        self.errors.push(VerifyError { at, span, message });
    }

    fn run(&mut self) {
        if !self.tables() || !self.ids() {
            return;
        }
        self.tree();
        self.nodes();
        for (i, d) in self.m.defs.iter().enumerate() {
            if self.positions.contains_key(&d.name) {
                self.error(None, format!("`{}` is defined twice", d.name));
            } else {
                self.positions.insert(&d.name, i);
            }
        }
        for i in 0..self.m.defs.len() {
            self.scopes(i);
        }
        if self.errors.is_empty() {
            self.types();
        }
        if self.errors.is_empty()
            && let Err(e) = crate::rules::check(self.m, None)
        {
            self.errors.push(VerifyError {
                at: None,
                span: e.span(),
                message: e.to_string(),
            });
        }
    }

    /// Step 1.
    fn tables(&mut self) -> bool {
        let m = self.m;
        let n = m.exprs.len();
        if m.defs.is_empty() {
            self.error(None, "the module has no definitions".into());
        }
        if m.spans.len() != n {
            self.error(
                None,
                format!("the span table has {} entries for {n} nodes", m.spans.len()),
            );
        }
        if m.types.len() != n {
            self.error(
                None,
                format!("the type table has {} entries for {n} nodes", m.types.len()),
            );
        }
        self.errors.is_empty()
    }

    /// Step 2.
    fn ids(&mut self) -> bool {
        let m = self.m;
        let before = self.errors.len();
        for (i, e) in m.exprs.iter().enumerate() {
            for c in e.children() {
                if c.index() >= i {
                    let what = if c.index() >= m.exprs.len() {
                        "out of range"
                    } else {
                        "not before its parent"
                    };
                    self.error(Some(ExprId(i as u32)), format!("child {c} is {what}"));
                }
            }
        }
        for d in &m.defs {
            if d.body.index() >= m.exprs.len() {
                self.error(
                    None,
                    format!("the body {} of `{}` is out of range", d.body, d.name),
                );
            }
        }
        self.errors.len() == before
    }

    /// Step 3.
    fn tree(&mut self) {
        let m = self.m;
        // Count first, without a list per node; the lists of parents are
        // built only to report an error.
        let mut count: Vec<u32> = vec![0; m.exprs.len()];
        for e in &m.exprs {
            e.for_each_child(|c| count[c.index()] += 1);
        }
        let mut is_body = vec![false; m.exprs.len()];
        let mut ok = true;
        for d in &m.defs {
            ok &= !std::mem::replace(&mut is_body[d.body.index()], true);
        }
        ok &= count
            .iter()
            .zip(&is_body)
            .all(|(&n, &body)| n == u32::from(!body));
        if ok {
            return;
        }
        let mut parents: Vec<Vec<ExprId>> = vec![Vec::new(); m.exprs.len()];
        for (i, e) in m.exprs.iter().enumerate() {
            e.for_each_child(|c| parents[c.index()].push(ExprId(i as u32)));
        }
        let mut roots: Vec<Option<&Name>> = vec![None; m.exprs.len()];
        for d in &m.defs {
            let b = d.body.index();
            if let Some(other) = roots[b] {
                self.error(
                    Some(d.body),
                    format!("the body of `{}` is also the body of `{other}`", d.name),
                );
            }
            roots[b] = Some(&d.name);
        }
        for (i, ps) in parents.iter().enumerate() {
            let id = ExprId(i as u32);
            match (roots[i], ps.len()) {
                (Some(_), 0) | (None, 1) => {}
                (Some(name), _) => self.error(
                    Some(id),
                    format!("the body of `{name}` is also a child of {}", list(ps)),
                ),
                (None, 0) => self.error(Some(id), "the node is unreachable".into()),
                (None, _) => self.error(Some(id), format!("the node has parents {}", list(ps))),
            }
        }
    }

    /// Step 4.
    fn nodes(&mut self) {
        let m = self.m;
        for (i, e) in m.exprs.iter().enumerate() {
            let id = Some(ExprId(i as u32));
            match e {
                Expr::Section(op) => {
                    self.error(id, format!("operator section `({op})` in core form"));
                }
                Expr::Prim { op, args } if args.len() != op.arity() => self.error(
                    id,
                    format!("`{op}` takes {} arguments, has {}", op.arity(), args.len()),
                ),
                Expr::Tuple(items) if items.len() == 1 => {
                    self.error(id, "a tuple of one component".into());
                }
                Expr::Let {
                    pat: Pat::Tuple(names),
                    ..
                } if names.len() < 2 => {
                    self.error(id, "a tuple pattern of fewer than 2 names".into());
                }
                // An index past the tuple's end is the type step's to find:
                // judged here by the tuple's stored type, a corrupted stored
                // type would be blamed on the projection, and the type step,
                // which finds it at the tuple, would not run.
                Expr::Proj { index: 0, .. } => {
                    self.error(id, "projection index 0 (indices are 1-based)".into());
                }
                Expr::Reals(literal) if !literal.is_well_formed() => self.error(
                    id,
                    format!(
                        "a literal of shape {:?} holding {} numbers",
                        literal.shape,
                        literal.data.len()
                    ),
                ),
                Expr::Reals(literal) if !literal.data.iter().all(|x| x.is_finite()) => {
                    self.error(id, "a literal holding a number that is not finite".into());
                }
                _ => {}
            }
        }
    }

    /// Step 5, for definition `d`.
    fn scopes(&mut self, d: usize) {
        let m = self.m;
        let def = &m.defs[d];
        let mut bound: FxHashSet<&'m Name> = FxHashSet::default();
        let mut dup = |this: &mut Self, name: &'m Name, at: Option<ExprId>| {
            if !bound.insert(name) {
                this.error(at, format!("`{name}` is bound twice in `{}`", def.name));
            }
        };
        for p in &def.params {
            dup(self, &p.name, None);
            if p.ty.is_none() {
                self.error(
                    None,
                    format!("parameter `{}` of `{}` has no type", p.name, def.name),
                );
            }
        }
        if def.ret.is_none() {
            self.error(None, format!("`{}` has no result type", def.name));
        }
        // Walk the tree with a count of the names in scope; iterative, as
        // programs may be deeper than the stack.
        #[derive(Clone, Copy)]
        enum Names<'a> {
            Pat(&'a [Name]),
            Params(&'a [Param]),
        }
        impl<'a> Names<'a> {
            fn for_each(self, mut f: impl FnMut(&'a Name)) {
                match self {
                    Names::Pat(xs) => xs.iter().for_each(f),
                    Names::Params(ps) => ps.iter().for_each(|p| f(&p.name)),
                }
            }
        }
        enum Step<'a> {
            Visit(ExprId),
            Bind(Names<'a>),
            Unbind(Names<'a>),
        }
        let mut in_scope: FxHashMap<&Name, usize> = FxHashMap::default();
        for p in &def.params {
            *in_scope.entry(&p.name).or_default() += 1;
        }
        let mut work = vec![Step::Visit(def.body)];
        while let Some(step) = work.pop() {
            let id = match step {
                Step::Visit(id) => id,
                Step::Bind(names) => {
                    names.for_each(|x| *in_scope.entry(x).or_default() += 1);
                    continue;
                }
                Step::Unbind(names) => {
                    names.for_each(|x| {
                        if let Some(c) = in_scope.get_mut(x) {
                            *c -= 1;
                        }
                    });
                    continue;
                }
            };
            let at = Some(id);
            match m.expr(id) {
                Expr::Var(x) => {
                    if in_scope.get(x).copied().unwrap_or(0) == 0 {
                        let callee = self.positions.get(x).copied();
                        if callee.is_some_and(|j| j < d) {
                            continue;
                        }
                        let message = if Prim::from_target_name(x.as_str()).is_some()
                            || matches!(x.as_str(), "fst" | "snd")
                        {
                            format!("unresolved builtin `{x}` in core form")
                        } else if callee.is_some() {
                            format!(
                                "reference to the definition `{x}` in `{}`, which is not before it",
                                def.name
                            )
                        } else {
                            format!("free variable `{x}`")
                        };
                        self.error(at, message);
                    }
                }
                Expr::Let {
                    pat, value, body, ..
                } => {
                    let names = Names::Pat(match pat {
                        Pat::Var(x) => std::slice::from_ref(x),
                        Pat::Tuple(xs) => xs,
                    });
                    names.for_each(|x| dup(self, x, at));
                    // The value outside the scope of the names, the body inside.
                    work.push(Step::Unbind(names));
                    work.push(Step::Visit(*body));
                    work.push(Step::Bind(names));
                    work.push(Step::Visit(*value));
                }
                Expr::Lambda { params, body } => {
                    let names = Names::Params(params);
                    for p in params {
                        dup(self, &p.name, at);
                        if p.ty.is_none() {
                            self.error(at, format!("lambda parameter `{}` has no type", p.name));
                        }
                    }
                    work.push(Step::Unbind(names));
                    work.push(Step::Visit(*body));
                    work.push(Step::Bind(names));
                }
                e => {
                    let first = work.len();
                    e.for_each_child(|c| work.push(Step::Visit(c)));
                    work[first..].reverse();
                }
            }
        }
    }

    /// Step 6. Inference runs on the module itself (it only reads it) and
    /// its findings are compared with what is stored: the same as
    /// inferring a copy and comparing the copies, without the copies.
    fn types(&mut self) {
        let m = self.m;
        let fail = |this: &mut Self, e: crate::error::Error| {
            this.errors.push(VerifyError {
                at: None,
                span: e.span(),
                message: format!("type inference fails: {e}"),
            });
        };
        if let Err(e) = check_shape(m) {
            return fail(self, e);
        }
        // What inference gives: a type per node (the placeholder `()` for a
        // node no definition reaches, as `infer` leaves it), the nodes it
        // rewrites (an `Int` literal of type `R`, lambda parameters), and
        // each definition's signature.
        let mut inferred: Vec<Ty> = vec![Ty::Tuple(Vec::new()); m.exprs.len()];
        let mut rewritten: BTreeMap<ExprId, Expr> = BTreeMap::new();
        let mut sigs = Vec::with_capacity(m.defs.len());
        let mut earlier = Sigs::default();
        for def in &m.defs {
            let solution = match solve(m, def, &earlier) {
                Ok(s) => s,
                Err(e) => return fail(self, e),
            };
            for (id, ty) in solution.types {
                if ty == Ty::Real
                    && let Expr::Int(k) = m.exprs[id.index()]
                {
                    rewritten.insert(id, Expr::Real(k as f64));
                }
                inferred[id.index()] = ty;
            }
            for (id, idx, ty) in solution.lambda_params {
                let e = rewritten
                    .entry(id)
                    .or_insert_with(|| m.exprs[id.index()].clone());
                if let Expr::Lambda { params, .. } = e {
                    params[idx].ty = Some(ty);
                }
            }
            if let (Some(params), Some(ret)) = (
                def.params
                    .iter()
                    .map(|p| p.ty.clone())
                    .collect::<Option<Vec<_>>>(),
                &def.ret,
            ) {
                earlier.insert(&def.name, &params, ret);
            }
            sigs.push((solution.params, solution.ret));
        }
        // The stored types and the inferred ones share nothing but are
        // shared within each: compared with a memo, not by `!=`, which
        // walks each whole (d² for a nested literal, crate::ty_eq).
        let mut same = SharedEq::new();
        for (i, (stored, inferred)) in m.types.iter().zip(&inferred).enumerate() {
            if !same.eq(stored, inferred) {
                self.error(
                    Some(ExprId(i as u32)),
                    format!(
                        "stored type `{}` but inference gives `{}`",
                        show_ty(stored),
                        show_ty(inferred)
                    ),
                );
            }
        }
        for (id, f) in &rewritten {
            let e = &m.exprs[id.index()];
            if e != f {
                self.error(
                    Some(*id),
                    format!("the node should read {f:?} after type inference, not {e:?}"),
                );
            }
        }
        for (d, (params, ret)) in m.defs.iter().zip(sigs) {
            for (p, ty) in d.params.iter().zip(params) {
                let ty = Some(ty);
                if p.ty != ty {
                    self.error(
                        None,
                        format!(
                            "parameter `{}` of `{}` has type {} but inference gives {}",
                            p.name,
                            d.name,
                            opt_ty(&p.ty),
                            opt_ty(&ty)
                        ),
                    );
                }
            }
            let ret = Some(ret);
            if d.ret != ret {
                self.error(
                    None,
                    format!(
                        "`{}` has result type {} but inference gives {}",
                        d.name,
                        opt_ty(&d.ret),
                        opt_ty(&ret)
                    ),
                );
            }
        }
    }
}

fn opt_ty(ty: &Option<Ty>) -> String {
    match ty {
        Some(t) => format!("`{}`", show_ty(t)),
        None => "none".into(),
    }
}

fn list(ids: &[ExprId]) -> String {
    ids.iter()
        .map(ExprId::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}
