//! The traversals of the term IR that every stage shares: the free
//! variables of an expression (UNF's contexts of function bodies, the
//! residuals of `inspect`, the closures `forward` builds for reverse mode
//! inside the language, the direct macro's free variables of a body), and
//! the copy of a subtree with fresh binders (inlining a derivative rule,
//! the direct macro's copies of Source code, the loops `bound_whiles`
//! writes). One definition each, so a new binding construct is taught to
//! them once.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::rc::Rc;

use crate::fxhash::FxHashMap;
use crate::ir::{Expr, ExprId, Module, Name, NameGen, Pat, Span, Ty};
use crate::stack::guard;

/// The names a pattern binds.
pub fn pat_names(pat: &Pat) -> Vec<&Name> {
    match pat {
        Pat::Var(x) => vec![x],
        Pat::Tuple(xs) => xs.iter().collect(),
    }
}

/// The names a binder node binds for its body: a `let`'s pattern, a
/// lambda's parameters; none for every other node.
pub fn binders(e: &Expr) -> Vec<&Name> {
    match e {
        Expr::Let { pat, .. } => pat_names(pat),
        Expr::Lambda { params, .. } => params.iter().map(|p| &p.name).collect(),
        _ => Vec::new(),
    }
}

/// The variables free in `e`, each with its first use (in the order the
/// tree is read, operands first), whose type and span stand for the
/// variable's.
pub fn free_vars(m: &Module, e: ExprId) -> BTreeMap<Name, ExprId> {
    walk(m, e).out
}

fn walk(m: &Module, e: ExprId) -> Walk<'_> {
    let mut walk = Walk {
        m,
        bound: HashMap::new(),
        out: BTreeMap::new(),
        order: Vec::new(),
    };
    walk.expr(e);
    walk
}

/// The names free in `e`.
pub fn free_names(m: &Module, e: ExprId) -> BTreeSet<Name> {
    free_vars(m, e).into_keys().collect()
}

/// The names free in `e` in the order of their first use (the order the
/// tree is read, operands first): the order in which a closure built from
/// `e` takes them as parameters.
pub fn free_in_order(m: &Module, e: ExprId) -> Vec<Name> {
    walk(m, e).order
}

struct Walk<'m> {
    m: &'m Module,
    /// How many binders in scope bind each name (a name may be bound in
    /// nested scopes of a surface-form module).
    bound: HashMap<Name, usize>,
    out: BTreeMap<Name, ExprId>,
    /// The keys of `out` in the order they were found.
    order: Vec<Name>,
}

impl Walk<'_> {
    fn expr(&mut self, e: ExprId) {
        guard(|| match self.m.expr(e) {
            Expr::Var(x) => {
                if self.bound.get(x).copied().unwrap_or(0) == 0 && !self.out.contains_key(x) {
                    self.out.insert(x.clone(), e);
                    self.order.push(x.clone());
                }
            }
            Expr::Let { value, body, .. } => {
                self.expr(*value);
                self.under(e, *body);
            }
            Expr::Lambda { body, .. } => self.under(e, *body),
            other => other.for_each_child(|c| self.expr(c)),
        })
    }

    /// `body` with the names the binder `e` binds in scope.
    fn under(&mut self, e: ExprId, body: ExprId) {
        let names: Vec<Name> = binders(self.m.expr(e)).into_iter().cloned().collect();
        for n in &names {
            *self.bound.entry(n.clone()).or_insert(0) += 1;
        }
        self.expr(body);
        for n in &names {
            if let Some(c) = self.bound.get_mut(n) {
                *c -= 1;
            }
        }
    }
}

/// The free variables of the nodes of one module, memoised: a pass that
/// asks for those of a node and then of nodes inside it (the branches of
/// an `if`/`else if` chain, functions nested in functions) walks each
/// subtree once, not once per enclosing question.
#[derive(Default)]
pub struct FreeMemo {
    seen: HashMap<ExprId, Rc<BTreeSet<Name>>>,
}

impl FreeMemo {
    /// The names free in `e` of `m` (always the same module).
    pub fn get(&mut self, m: &Module, e: ExprId) -> Rc<BTreeSet<Name>> {
        guard(|| {
            if let Some(f) = self.seen.get(&e) {
                return f.clone();
            }
            let mut out = BTreeSet::new();
            let expr = m.expr(e);
            match expr {
                Expr::Var(x) => {
                    out.insert(x.clone());
                }
                Expr::Let { value, body, .. } => {
                    out.extend(self.get(m, *value).iter().cloned());
                    let bound = binders(expr);
                    let inner = self.get(m, *body);
                    out.extend(inner.iter().filter(|x| !bound.contains(x)).cloned());
                }
                Expr::Lambda { body, .. } => {
                    let bound = binders(expr);
                    let inner = self.get(m, *body);
                    out.extend(inner.iter().filter(|x| !bound.contains(x)).cloned());
                }
                other => {
                    for c in other.children() {
                        out.extend(self.get(m, c).iter().cloned());
                    }
                }
            }
            let out = Rc::new(out);
            self.seen.insert(e, out.clone());
            out
        })
    }
}

/// A copy of a subtree, detached from its module: what a route writes
/// where it needs a rule (or the body) in its output.
#[derive(Debug, Clone)]
pub struct Detached {
    /// The nodes in post-order; children are indices into this list.
    nodes: Vec<(Expr, Span, Option<Ty>)>,
}

/// Copies the subtree of `src` at `root` with every binder renamed fresh
/// (from `names`) and every free variable `x` that `subst` maps renamed to
/// `subst[x]`: so the copy can be pasted next to other copies of the same
/// code and binders stay unique (core form).
pub fn detach(
    src: &Module,
    root: ExprId,
    names: &mut NameGen,
    subst: &FxHashMap<Name, Name>,
) -> Detached {
    detach_with(src, root, names, |x| subst.get(x).cloned())
}

/// The nodes of the subtree at `root`, children before parents: by id
/// when the subtree is stored in post-order (the usual case, and the
/// order a copy is best read in), else in the order of a depth-first walk
/// (a pass that rewrote a node in place may leave a child after its
/// parent).
fn post_order(src: &Module, root: ExprId) -> Vec<ExprId> {
    let mut order = Vec::new();
    let mut stack = vec![root];
    let mut ordered = true;
    while let Some(id) = stack.pop() {
        order.push(id);
        src.expr(id).for_each_child(|c| {
            ordered &= c < id;
            stack.push(c);
        });
    }
    if ordered {
        order.sort();
        return order;
    }
    order.clear();
    let mut stack = vec![(root, false)];
    while let Some((id, expanded)) = stack.pop() {
        if expanded {
            order.push(id);
            continue;
        }
        stack.push((id, true));
        let children = src.expr(id).children();
        stack.extend(children.into_iter().rev().map(|c| (c, false)));
    }
    order
}

/// [`detach`] with the free variables renamed by a function (`None`: the
/// name stays), for a caller whose renaming is not a hash map.
pub fn detach_with(
    src: &Module,
    root: ExprId,
    names: &mut NameGen,
    subst: impl Fn(&Name) -> Option<Name>,
) -> Detached {
    let order = post_order(src, root);
    let mut ren: FxHashMap<Name, Name> = FxHashMap::default();
    for &id in &order {
        for x in binders(src.expr(id)) {
            ren.insert(x.clone(), names.fresh(x.as_str()));
        }
    }
    let local: FxHashMap<ExprId, u32> = order
        .iter()
        .enumerate()
        .map(|(i, &id)| (id, i as u32))
        .collect();
    let r = |x: &Name| {
        ren.get(x)
            .cloned()
            .or_else(|| subst(x))
            .unwrap_or_else(|| x.clone())
    };
    let nodes = order
        .iter()
        .map(|&id| {
            let mut e = src.expr(id).map_children(|c| ExprId(local[&c]));
            match &mut e {
                Expr::Var(x) => *x = r(x),
                Expr::Let { pat, .. } => match pat {
                    Pat::Var(x) => *x = r(x),
                    Pat::Tuple(xs) => xs.iter_mut().for_each(|x| *x = r(x)),
                },
                Expr::Lambda { params, .. } => {
                    params.iter_mut().for_each(|p| p.name = r(&p.name));
                }
                _ => {}
            }
            (e, src.span(id), src.ty(id).cloned())
        })
        .collect();
    Detached { nodes }
}

impl Detached {
    /// The copy without the written annotations (a `let`'s type, a
    /// lambda's parameter types): for an output that is typed afterwards
    /// by inference, where the copied sizes would not be in scope.
    pub fn unannotated(mut self) -> Detached {
        for (e, _, _) in &mut self.nodes {
            match e {
                Expr::Let { ty, .. } => *ty = None,
                Expr::Lambda { params, .. } => params.iter_mut().for_each(|p| p.ty = None),
                _ => {}
            }
        }
        self
    }

    /// Appends the copy to `dst` (its types too when `typed`: `dst` keeps
    /// a type per node as it is built) and returns the copy of the root.
    pub fn paste(self, dst: &mut Module, typed: bool) -> ExprId {
        let base = dst.exprs.len() as u32;
        let mut last = ExprId(base);
        for (e, span, ty) in self.nodes {
            let e = e.map_children(|c| ExprId(base + c.0));
            last = dst.add(e, span);
            if typed {
                dst.types.push(ty.unwrap_or(Ty::Tuple(Vec::new())));
            }
        }
        last
    }
}
