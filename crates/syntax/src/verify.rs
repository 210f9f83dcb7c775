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
//!    parameter, `let` name) is unique within its definition; no variable
//!    is free. A free variable named like a builtin is reported as an
//!    unresolved builtin, one named like a definition as a reference to a
//!    definition (core form inlines them).
//! 6. Types: `infer` on a clone succeeds and reproduces the module exactly:
//!    the same stored type for every node, the same parameter and result
//!    types, the same literals (an `Int` literal of type `R` would have been
//!    rewritten to `Real`).

use std::collections::{HashMap, HashSet};
use std::fmt;

use crate::infer::{infer, show_ty};
use crate::ir::{Expr, ExprId, Module, Name, Pat, Prim, Span, Ty};

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
        for i in 0..self.m.defs.len() {
            self.scopes(i);
        }
        if self.errors.is_empty() {
            self.types();
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
                Expr::Proj { tuple, index } => {
                    let stored = m.types.get(tuple.index());
                    match stored {
                        _ if *index == 0 => {
                            self.error(id, "projection index 0 (indices are 1-based)".into());
                        }
                        Some(ty @ Ty::Tuple(items)) if *index as usize > items.len() => {
                            self.error(
                                id,
                                format!("tuple index {index} out of range for `{}`", show_ty(ty)),
                            );
                        }
                        _ => {}
                    }
                }
                _ => {}
            }
        }
    }

    /// Step 5, for definition `d`.
    fn scopes(&mut self, d: usize) {
        let m = self.m;
        let def = &m.defs[d];
        let mut bound: HashSet<&'m Name> = HashSet::new();
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
        enum Step<'a> {
            Visit(ExprId),
            Bind(Vec<&'a Name>),
            Unbind(Vec<&'a Name>),
        }
        let mut in_scope: HashMap<&Name, usize> = HashMap::new();
        for p in &def.params {
            *in_scope.entry(&p.name).or_default() += 1;
        }
        let mut work = vec![Step::Visit(def.body)];
        while let Some(step) = work.pop() {
            let id = match step {
                Step::Visit(id) => id,
                Step::Bind(names) => {
                    for x in names {
                        *in_scope.entry(x).or_default() += 1;
                    }
                    continue;
                }
                Step::Unbind(names) => {
                    for x in names {
                        if let Some(c) = in_scope.get_mut(x) {
                            *c -= 1;
                        }
                    }
                    continue;
                }
            };
            let at = Some(id);
            match m.expr(id) {
                Expr::Var(x) => {
                    if in_scope.get(x).copied().unwrap_or(0) == 0 {
                        let message = if Prim::from_target_name(x.as_str()).is_some()
                            || matches!(x.as_str(), "fst" | "snd")
                        {
                            format!("unresolved builtin `{x}` in core form")
                        } else if m.def(x.as_str()).is_some() {
                            format!("reference to the definition `{x}` in core form")
                        } else {
                            format!("free variable `{x}`")
                        };
                        self.error(at, message);
                    }
                }
                Expr::Let {
                    pat, value, body, ..
                } => {
                    let names: Vec<&Name> = match pat {
                        Pat::Var(x) => vec![x],
                        Pat::Tuple(xs) => xs.iter().collect(),
                    };
                    for x in &names {
                        dup(self, x, at);
                    }
                    // The value outside the scope of the names, the body inside.
                    work.push(Step::Unbind(names.clone()));
                    work.push(Step::Visit(*body));
                    work.push(Step::Bind(names));
                    work.push(Step::Visit(*value));
                }
                Expr::Lambda { params, body } => {
                    let names: Vec<&Name> = params.iter().map(|p| &p.name).collect();
                    for p in params {
                        dup(self, &p.name, at);
                        if p.ty.is_none() {
                            self.error(at, format!("lambda parameter `{}` has no type", p.name));
                        }
                    }
                    work.push(Step::Unbind(names.clone()));
                    work.push(Step::Visit(*body));
                    work.push(Step::Bind(names));
                }
                e => {
                    for c in e.children().into_iter().rev() {
                        work.push(Step::Visit(c));
                    }
                }
            }
        }
    }

    /// Step 6.
    fn types(&mut self) {
        let m = self.m;
        let mut again = m.clone();
        if let Err(e) = infer(&mut again) {
            self.errors.push(VerifyError {
                at: None,
                span: e.span(),
                message: format!("type inference fails: {e}"),
            });
            return;
        }
        for (i, (stored, inferred)) in m.types.iter().zip(&again.types).enumerate() {
            if stored != inferred {
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
        for (i, (e, f)) in m.exprs.iter().zip(&again.exprs).enumerate() {
            if e != f {
                self.error(
                    Some(ExprId(i as u32)),
                    format!("the node should read {f:?} after type inference, not {e:?}"),
                );
            }
        }
        for (d, d2) in m.defs.iter().zip(&again.defs) {
            for (p, p2) in d.params.iter().zip(&d2.params) {
                if p.ty != p2.ty {
                    self.error(
                        None,
                        format!(
                            "parameter `{}` of `{}` has type {} but inference gives {}",
                            p.name,
                            d.name,
                            opt_ty(&p.ty),
                            opt_ty(&p2.ty)
                        ),
                    );
                }
            }
            if d.ret != d2.ret {
                self.error(
                    None,
                    format!(
                        "`{}` has result type {} but inference gives {}",
                        d.name,
                        opt_ty(&d.ret),
                        opt_ty(&d2.ret)
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
