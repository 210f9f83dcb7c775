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

use syntax::{Module, Span};

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
        let raised = unf::raise(&target).map_err(|e| refused(e.span(), &e, false))?;
        let opt = optimize::optimize_owned(raised, &optimize::Config::default()).map_err(|e| {
            let internal = matches!(e, optimize::Error::Internal { .. });
            refused(e.span(), &e, internal)
        })?;
        syntax::verify(&opt).map_err(|errors| {
            let first = errors
                .first()
                .map(ToString::to_string)
                .unwrap_or_default();
            refused(
                Span::GENERATED,
                format!("the gradient of `{entry}` fails the verifier: {first}"),
                true,
            )
        })?;
        Ok(opt)
    }
}
