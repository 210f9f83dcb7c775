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
/// bind and that names no definition, with the node reading it. A call of
/// an earlier definition (kept by elaboration) reads no variable: the
/// definition is a constant of the program.
fn first_free(m: &Module, lambda: ExprId) -> Option<(Name, ExprId)> {
    crate::visit::free_vars(m, lambda)
        .into_iter()
        .filter(|(x, _)| m.def(x.as_str()).is_none())
        .min_by_key(|&(_, id)| id)
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
