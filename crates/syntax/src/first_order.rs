//! The first-order check: is a definition in the Source subset that reverse
//! mode accepts?
//!
//! That subset is seeds/000 Figure 2 with what Section 7 and Appendix A add
//! (conditionals, `foldl`, `map`, the scans and shifts, free variables in
//! the function argument of `reduce`, general arrays): a first-order
//! language whose only function values are the lambdas written as the
//! function argument of an array builtin. Precisely:
//! - the definition's parameters and result are of ground type;
//! - there is no application `f a`;
//! - every lambda is the function argument of `map`, `map2`, `reduce`,
//!   `foldl`, `scanl`, `scanr`, `build`, `ifold`, `while` or `trips` (the
//!   last two take two: a condition and a body), and its parameters and
//!   body are of ground type;
//!   (or the body or a rule of `with_rules`, `crate::rules`)
//! - there is no derivative construct (`diff`, `grad`, ...; forward mode
//!   expands them);
//! - there is no Target-only primitive (`d1pow`, ...: `Prim::is_target_only`).
//!
//! Everything else follows: no variable can then be of function type. The
//! module must be typed (it has passed `verify`).

use crate::error::Error;
use crate::infer::show_ty;
use crate::ir::{Def, Expr, ExprId, Module, Prim, Span, Ty};

/// The array builtins whose function argument may be a lambda in Source.
const ARRAY_BUILTINS: &str = "map, map2, reduce, foldl, scanl, scanr, build, ifold, while or trips";

/// Checks that `def` (a definition of `m`) is first-order (module doc).
pub fn check_first_order(m: &Module, def: &Def) -> Result<(), Error> {
    let not_fo = |span: Span, message: String| Error::NotFirstOrder { span, message };
    if !m.is_typed() {
        return Err(Error::Type {
            span: def.name_span,
            message: format!("`{}` is not typed; run type inference first", def.name),
        });
    }
    for p in &def.params {
        match &p.ty {
            Some(ty) if ty.is_ground() => {}
            ty => {
                return Err(not_fo(
                    p.span,
                    format!(
                        "parameter `{}` {} is not first-order: reverse mode needs parameters of ground type",
                        p.name,
                        describe(ty.as_ref())
                    ),
                ));
            }
        }
    }
    match &def.ret {
        Some(ty) if ty.is_ground() => {}
        ty => {
            return Err(not_fo(
                def.name_span,
                format!(
                    "the result of `{}` {} is not first-order: reverse mode needs a result of ground type",
                    def.name,
                    describe(ty.as_ref())
                ),
            ));
        }
    }
    // The nodes of the definition, and which lambdas sit where Source allows.
    let mut nodes = Vec::new();
    let mut allowed: std::collections::HashSet<ExprId> = std::collections::HashSet::new();
    let mut stack = vec![def.body];
    while let Some(id) = stack.pop() {
        nodes.push(id);
        let e = m.expr(id);
        if let Expr::Prim { op, args } = e
            && is_array_builtin(*op)
        {
            allowed.extend(
                op.function_args()
                    .iter()
                    .filter_map(|&i| args.get(i).copied()),
            );
        }
        // The body and rules of `with_rules` (crate::rules).
        if let Some(r) = crate::rules::Rules::of(m, id) {
            allowed.extend([Some(r.body), r.jvp, r.vjp].into_iter().flatten());
        }
        e.for_each_child(|c| stack.push(c));
    }
    // Report the first offence in program order, derivative constructs and
    // applications first (they explain the lambdas they take).
    nodes.sort();
    if let Some(&id) = nodes
        .iter()
        .find(|&&id| matches!(m.expr(id), Expr::Prim { op, .. } if op.is_derivative_construct()))
    {
        let op = match m.expr(id) {
            Expr::Prim { op, .. } => *op,
            _ => Prim::Diff,
        };
        return Err(not_fo(
            m.span(id),
            format!(
                "`{op}` is not first-order: reverse mode needs derivative constructs expanded first (forward mode)"
            ),
        ));
    }
    // The partials of scatter and the histograms come from an inner
    // `grad_rev`; reverse mode differentiates them by their rules
    // (`crate::hist::rules`), so only the scalar ones are refused.
    if let Some(&id) = nodes.iter().find(|&&id| {
        matches!(m.expr(id), Expr::Prim { op, .. } if op.is_target_only() && !crate::hist::is_partial(*op))
    }) {
        let op = match m.expr(id) {
            Expr::Prim { op, .. } => *op,
            _ => Prim::D1Pow,
        };
        // `digamma` and `trigamma` come from an inner derivative of
        // `lgamma` (they have no Source form): say so.
        let message = if matches!(op, Prim::Digamma | Prim::Trigamma) {
            format!(
                "`{op}` is a Target primitive: reverse mode takes Source programs (an inner derivative of `lgamma` wrote it, and reverse mode has no derivative for it: differentiate that derivative by forward mode, `grad` or `jvp`, instead)"
            )
        } else {
            format!("`{op}` is a Target primitive: reverse mode takes Source programs")
        };
        return Err(not_fo(m.span(id), message));
    }
    if let Some(&id) = nodes
        .iter()
        .find(|&&id| matches!(m.expr(id), Expr::App { .. }))
    {
        return Err(not_fo(
            m.span(id),
            "a function application is not first-order: reverse mode needs every function inlined (`specialize`)".into(),
        ));
    }
    for id in nodes {
        let span = m.span(id);
        if let Expr::Lambda { params, body } = m.expr(id) {
            if !allowed.contains(&id) {
                return Err(not_fo(
                    span,
                    format!(
                        "a function value is not first-order: reverse mode needs lambdas only as the function argument of {ARRAY_BUILTINS}"
                    ),
                ));
            }
            for p in params {
                if !p.ty.as_ref().is_some_and(Ty::is_ground) {
                    return Err(not_fo(
                        p.span,
                        format!(
                            "parameter `{}` {} is not first-order: reverse mode needs lambda parameters of ground type",
                            p.name,
                            describe(p.ty.as_ref())
                        ),
                    ));
                }
            }
            if !node_ty(m, *body).is_some_and(Ty::is_ground) {
                return Err(not_fo(
                    m.span(*body),
                    format!(
                        "a lambda body {} is not first-order: reverse mode needs a result of ground type",
                        describe(node_ty(m, *body))
                    ),
                ));
            }
        }
    }
    Ok(())
}

fn is_array_builtin(op: Prim) -> bool {
    matches!(
        op,
        Prim::Map
            | Prim::Map2
            | Prim::Reduce
            | Prim::Foldl
            | Prim::Scanl
            | Prim::Scanr
            | Prim::Build
            | Prim::Ifold
            | Prim::While
            | Prim::Trips
    )
}

fn node_ty(m: &Module, id: ExprId) -> Option<&Ty> {
    m.ty(id)
}

fn describe(ty: Option<&Ty>) -> String {
    match ty {
        Some(ty) => format!("of type `{}`", show_ty(ty)),
        None => "of unknown type".into(),
    }
}
