//! Reverse mode for the constructs `grad_rev` and `vjp_rev` inside a
//! program: the [`forward::Reverse`] that [`crate::passes::expand`] hands
//! to forward mode's expansion. `forward` owns the expansion loop (the
//! constructs nest with `diff`, `grad`, ... innermost first) but may not
//! depend on the reverse-mode pipeline; this driver owns both, so it
//! supplies the pipeline: the closed function specialised to first order
//! ([`crate::passes::first_order_module`]), UNF, D_rho with respect to the
//! function's parameters, UNF^-1 and the optimizer, each stage's own
//! verifier on, the result checked by the Target verifier.
//! docs/forward.md, "Reverse mode inside the language".

use syntax::{Expr, ExprId, Module, Pat, Span, Ty};

/// The reverse-mode pipeline (UNF route, optimized) as forward mode's
/// expansion calls it.
pub struct InLanguage;

/// A stage's error as forward mode's.
fn refused(span: Span, message: impl ToString, internal: bool) -> forward::Error {
    forward::Error::Reverse {
        span,
        message: message.to_string(),
        internal,
    }
}

/// Makes the gradient definition return its gradients only (`g_1` for
/// k = 1, else `(g_1, ..., g_k)`): the construct has no use for the value,
/// and without it partial evaluation removes what only the value needed
/// (the primal `reduce` whose J^T is scans, say), which an outer
/// derivative would otherwise differentiate for nothing.
fn gradients_only(m: &mut Module, k: usize) -> Result<(), String> {
    let last = m
        .defs
        .len()
        .checked_sub(1)
        .ok_or("no gradient definition")?;
    let body = m.defs[last].body;
    let Some(Ty::Tuple(tys)) = m.ty(body).cloned() else {
        return Err("the gradient is not a tuple".to_string());
    };
    if tys.len() != k + 1 {
        return Err(format!(
            "the gradient has {} components, not {}",
            tys.len(),
            k + 1
        ));
    }
    let span = m.span(body);
    let out = if k == 1 {
        push(
            m,
            Expr::Proj {
                tuple: body,
                index: 2,
            },
            span,
            tys[1].clone(),
        )
    } else {
        // Each projection reads the tuple: bind it once.
        let name = m.name_gen().fresh("g");
        let mut items = Vec::with_capacity(k);
        for i in 1..=k {
            let v = push(m, Expr::Var(name.clone()), span, Ty::Tuple(tys.clone()));
            let index = u32::try_from(i + 1).map_err(|e| e.to_string())?;
            items.push(push(
                m,
                Expr::Proj { tuple: v, index },
                span,
                tys[i].clone(),
            ));
        }
        let grads = Ty::Tuple(tys[1..].to_vec());
        let tuple = push(m, Expr::Tuple(items), span, grads.clone());
        let value = Expr::Let {
            pat: Pat::Var(name),
            ty: None,
            value: body,
            body: tuple,
        };
        push(m, value, span, grads)
    };
    m.defs[last].ret = m.ty(out).cloned();
    m.defs[last].body = out;
    m.compact();
    Ok(())
}

/// Appends a typed node.
fn push(m: &mut Module, e: Expr, span: Span, ty: Ty) -> ExprId {
    let id = m.add(e, span);
    m.types.push(ty);
    id
}

impl forward::Reverse for InLanguage {
    fn gradient(&self, m: &Module, entry: &str, wrt: &[String]) -> Result<Module, forward::Error> {
        let fo = crate::passes::first_order_module(m.clone(), entry)
            .map_err(|e| refused(e.span(), &e, false))?;
        let def = fo
            .def(entry)
            .ok_or_else(|| refused(Span::GENERATED, format!("no definition `{entry}`"), true))?;
        let lowered = unf::lower(&fo, def).map_err(|e| refused(e.span(), &e, false))?;
        let cfg = reverse::Config {
            wrt: Some(wrt.to_vec()),
        };
        let target = reverse::reverse(&lowered, &cfg).map_err(|e| {
            let internal = matches!(e, reverse::Error::Internal { .. });
            refused(e.span(), &e, internal)
        })?;
        let mut raised = unf::raise(&target).map_err(|e| refused(e.span(), &e, false))?;
        gradients_only(&mut raised, wrt.len())
            .map_err(|message| refused(Span::GENERATED, message, true))?;
        // An outer derivative differentiates the spliced gradient again:
        // the functions with derivative rules stay (the primal part of
        // each, raised as the node itself), so that it uses their rules.
        let cfg = optimize::Config {
            keep_rules: true,
            ..optimize::Config::default()
        };
        let opt = optimize::optimize_owned(raised, &cfg).map_err(|e| {
            let internal = matches!(e, optimize::Error::Internal { .. });
            refused(e.span(), &e, internal)
        })?;
        syntax::verify(&opt).map_err(|errors| {
            let first = errors.first().map(ToString::to_string).unwrap_or_default();
            refused(
                Span::GENERATED,
                format!("the gradient of `{entry}` fails the verifier: {first}"),
                true,
            )
        })?;
        Ok(opt)
    }
}
