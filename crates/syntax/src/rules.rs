//! Custom derivative rules: `with_rules body jvp vjp point`
//! (docs/derivatives.md, "Custom derivative rules").
//!
//! `def f (x : T) : U = e with jvp (x, dx) -> e1 with vjp (x, ct) -> e2`
//! elaborates to `with_rules (fun x -> e) (fun (x, dx) -> e1) (fun (x, ct)
//! -> e2) x`, and every call of `f` inlines that node. Its value is the
//! body's; every differentiating route reads the rules instead of the
//! body: forward mode the jvp rule, reverse mode (UNF and the direct
//! macro) the vjp rule. A rule not given is the unit value `()`.
//!
//! This module owns what every crate needs to know about the node: its
//! parts ([`Rules::of`]), the check that the three functions are closed
//! ([`check`]: a rule reading a variable bound outside it would silently
//! lose that variable's derivative, Futhark's documented pitfall), and
//! [`erase`], which replaces each node by its body once no route will
//! differentiate the program again (before the optimizer and the C
//! backend).

use crate::error::Error;
use crate::fxhash::FxHashSet;
use crate::infer::show_ty;
use crate::ir::{Expr, ExprId, Module, Name, Param, Pat, Prim};

/// The parts of one `with_rules` node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rules {
    /// `fun (x1, ..., xn) -> e`: the function the rules are for.
    pub body: ExprId,
    /// `fun (x1, ..., xn, dx1, ..., dxn) -> e1`, the tangent of the result.
    pub jvp: Option<ExprId>,
    /// `fun (x1, ..., xn, ct) -> e2`, the cotangent of the point (a tuple
    /// of one cotangent per parameter when n >= 2).
    pub vjp: Option<ExprId>,
    /// The argument: `x` when n = 1, the tuple `(x1, ..., xn)` otherwise.
    pub point: ExprId,
}

/// Which rule a route needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rule {
    /// Forward mode's.
    Jvp,
    /// Reverse mode's.
    Vjp,
}

impl Rule {
    /// `jvp` or `vjp`, as written after `with`.
    pub fn keyword(self) -> &'static str {
        match self {
            Rule::Jvp => "jvp",
            Rule::Vjp => "vjp",
        }
    }
}

impl Rules {
    /// The parts of `id` if it is a `with_rules` node.
    pub fn of(m: &Module, id: ExprId) -> Option<Rules> {
        match m.expr(id) {
            Expr::Prim {
                op: Prim::WithRules,
                args,
            } if args.len() == 4 => {
                let given = |r: ExprId| (!is_absent(m, r)).then_some(r);
                Some(Rules {
                    body: args[0],
                    jvp: given(args[1]),
                    vjp: given(args[2]),
                    point: args[3],
                })
            }
            _ => None,
        }
    }

    /// The rule a route needs, or the error naming it at `span` of the node.
    pub fn rule(&self, m: &Module, id: ExprId, which: Rule) -> Result<ExprId, Error> {
        let (want, other) = match which {
            Rule::Jvp => (self.jvp, "vjp"),
            Rule::Vjp => (self.vjp, "jvp"),
        };
        let mode = match which {
            Rule::Jvp => "forward mode",
            Rule::Vjp => "reverse mode",
        };
        want.ok_or_else(|| Error::Type {
            span: m.span(id),
            message: format!(
                "{mode} needs a `{}` rule: this function has only a `{other}` rule (add `with {} ...` to its definition)",
                which.keyword(),
                which.keyword()
            ),
        })
    }

    /// The parameters of the body: the function's.
    pub fn params<'m>(&self, m: &'m Module) -> &'m [Param] {
        match m.expr(self.body) {
            Expr::Lambda { params, .. } => params,
            _ => &[],
        }
    }

    /// The body of a lambda among the parts.
    pub fn lambda_body(m: &Module, lambda: ExprId) -> Option<ExprId> {
        match m.expr(lambda) {
            Expr::Lambda { body, .. } => Some(*body),
            _ => None,
        }
    }
}

/// Whether `id` is the `()` that stands for a rule not given.
fn is_absent(m: &Module, id: ExprId) -> bool {
    matches!(m.expr(id), Expr::Tuple(items) if items.is_empty())
}

/// Whether the module has a `with_rules` node anywhere.
pub fn any(m: &Module) -> bool {
    m.exprs.iter().any(|e| {
        matches!(
            e,
            Expr::Prim {
                op: Prim::WithRules,
                ..
            }
        )
    })
}

/// Checks every `with_rules` node among `roots`' subtrees (all of `m` when
/// `roots` is `None`): the body is a function of at least one parameter,
/// each rule a function or `()`, at least one rule given, and none of the
/// three reads a variable bound outside it. Core form (binders unique).
pub fn check(m: &Module, roots: Option<&[ExprId]>) -> Result<(), Error> {
    let ids: Vec<ExprId> = match roots {
        None => (0..m.exprs.len() as u32).map(ExprId).collect(),
        Some(roots) => subtree(m, roots),
    };
    for id in ids {
        let Some(r) = Rules::of(m, id) else {
            continue;
        };
        let span = m.span(id);
        let type_err = |message: String| Error::Type { span, message };
        match m.expr(r.body) {
            Expr::Lambda { params, .. } if !params.is_empty() => {}
            _ => {
                return Err(type_err(
                    "`with_rules` needs a function of at least one parameter first".into(),
                ));
            }
        }
        if let (Some(tp), Some(tu)) = (m.ty(r.point), m.ty(id))
            && !(tp.is_ground() && tu.is_ground())
        {
            return Err(type_err(format!(
                "derivative rules need parameters and a result of ground type (no functions), found `{}` to `{}`",
                show_ty(tp),
                show_ty(tu)
            )));
        }
        if r.jvp.is_none() && r.vjp.is_none() {
            return Err(type_err(
                "`with_rules` needs a `jvp` or a `vjp` rule (both are `()`)".into(),
            ));
        }
        for (what, f) in [
            ("body", Some(r.body)),
            ("jvp rule", r.jvp),
            ("vjp rule", r.vjp),
        ] {
            let Some(f) = f else { continue };
            if !matches!(m.expr(f), Expr::Lambda { .. }) {
                return Err(Error::Type {
                    span: m.span(f),
                    message: format!("the {what} of `with_rules` must be a function (`fun ...`)"),
                });
            }
            if let Some((x, at)) = first_free(m, f) {
                let message = if what == "body" {
                    format!(
                        "the body of a function with derivative rules may read only its parameters, not `{x}`: make `{x}` a parameter"
                    )
                } else {
                    format!(
                        "a {what} may read only its own parameters, not `{x}` (its derivative would be lost): make `{x}` a parameter of the function and of the rule"
                    )
                };
                return Err(Error::Scope {
                    span: m.span(at),
                    message,
                });
            }
        }
    }
    Ok(())
}

/// Every node under `roots`, in no particular order.
fn subtree(m: &Module, roots: &[ExprId]) -> Vec<ExprId> {
    let mut out = Vec::new();
    let mut stack = roots.to_vec();
    while let Some(id) = stack.pop() {
        out.push(id);
        m.expr(id).for_each_child(|c| stack.push(c));
    }
    out
}

/// The first variable (in program order) that `lambda` reads but does not
/// bind and that names no definition, with the node reading it. Exact in
/// core form, where every binder is unique in its definition.
fn first_free(m: &Module, lambda: ExprId) -> Option<(Name, ExprId)> {
    let mut bound: FxHashSet<&Name> = FxHashSet::default();
    let mut uses = Vec::new();
    for id in subtree(m, &[lambda]) {
        match m.expr(id) {
            Expr::Var(x) => uses.push((x, id)),
            Expr::Let { pat, .. } => match pat {
                Pat::Var(x) => {
                    bound.insert(x);
                }
                Pat::Tuple(xs) => bound.extend(xs),
            },
            Expr::Lambda { params, .. } => bound.extend(params.iter().map(|p| &p.name)),
            _ => {}
        }
    }
    uses.sort_by_key(|&(_, id)| id);
    // A call of an earlier definition (kept by elaboration) reads no
    // variable: the definition is a constant of the program.
    uses.into_iter()
        .find(|(x, _)| !bound.contains(x) && m.def(x.as_str()).is_none())
        .map(|(x, id)| (x.clone(), id))
}

/// Replaces every `with_rules body jvp vjp point` by `let (x1, ..., xn) =
/// point in e` (`body = fun (x1, ..., xn) -> e`): the value without the
/// rules. Run when no route will differentiate the program again; the
/// rules' nodes are dropped (the module is compacted) and every type stays.
pub fn erase(m: &mut Module) {
    if !any(m) {
        return;
    }
    for i in 0..m.exprs.len() {
        let id = ExprId(i as u32);
        let Some(r) = Rules::of(m, id) else { continue };
        let Expr::Lambda { params, body } = m.expr(r.body).clone() else {
            continue;
        };
        let pat = match params.as_slice() {
            [one] => Pat::Var(one.name.clone()),
            _ => Pat::Tuple(params.iter().map(|p| p.name.clone()).collect()),
        };
        m.exprs[i] = Expr::Let {
            pat,
            ty: None,
            value: r.point,
            body,
        };
    }
    m.compact();
}

/// A copy of a subtree, detached from its module: what a route writes
/// where it needs a rule (or the body) in its output.
#[derive(Debug, Clone)]
pub struct Detached {
    /// The nodes in post-order; children are indices into this list.
    nodes: Vec<(Expr, crate::ir::Span, Option<crate::ir::Ty>)>,
}

/// Copies the subtree of `src` at `root` with every binder renamed fresh
/// (from `names`) and every free variable `x` that `subst` maps renamed to
/// `subst[x]`: so the copy can be pasted next to other copies of the same
/// code and binders stay unique (core form).
pub fn detach(
    src: &Module,
    root: ExprId,
    names: &mut crate::ir::NameGen,
    subst: &crate::fxhash::FxHashMap<Name, Name>,
) -> Detached {
    let mut order = subtree(src, &[root]);
    order.sort();
    let mut ren = subst.clone();
    for &id in &order {
        match src.expr(id) {
            Expr::Let { pat, .. } => {
                let xs: Vec<&Name> = match pat {
                    Pat::Var(x) => vec![x],
                    Pat::Tuple(xs) => xs.iter().collect(),
                };
                for x in xs {
                    ren.insert(x.clone(), names.fresh(x.as_str()));
                }
            }
            Expr::Lambda { params, .. } => {
                for p in params {
                    ren.insert(p.name.clone(), names.fresh(p.name.as_str()));
                }
            }
            _ => {}
        }
    }
    let local: crate::fxhash::FxHashMap<ExprId, u32> = order
        .iter()
        .enumerate()
        .map(|(i, &id)| (id, i as u32))
        .collect();
    let r = |x: &Name| ren.get(x).cloned().unwrap_or_else(|| x.clone());
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
    /// Appends the copy to `dst` (its types too when `typed`: `dst` keeps
    /// a type per node as it is built) and returns the copy of the root.
    pub fn paste(self, dst: &mut Module, typed: bool) -> ExprId {
        let base = dst.exprs.len() as u32;
        let mut last = ExprId(base);
        for (e, span, ty) in self.nodes {
            let e = e.map_children(|c| ExprId(base + c.0));
            last = dst.add(e, span);
            if typed {
                dst.types
                    .push(ty.unwrap_or(crate::ir::Ty::Tuple(Vec::new())));
            }
        }
        last
    }
}
