//! The passes of Figure 1 as a list, run by one loop that verifies between
//! them by the request's policy (the shape of Cranelift's
//! `Context::compile` and its `verify_if`). Every route, every command and
//! every caller builds its derivative program here, so verification,
//! specialisation and error mapping happen in this one place.

use crate::diag::{self, Error, Result};
use crate::request::Verify;
use syntax::{Def, Module};

/// A program between two passes. (Moved once per pass: boxing the larger
/// variants would only add an allocation per pass.)
#[allow(clippy::large_enum_variant)]
pub enum Flow {
    /// A Source module (core form).
    Source(Module),
    /// A Source UNF module, with its verifier's tables when it has been
    /// checked (D_rho needs them and then does not check it again).
    SourceUnf(unf::Module, Option<unf::Checked>),
    /// A Target UNF module, with its verifier's tables when it has been
    /// checked (UNF^-1 needs them and then does not check it again).
    TargetUnf(unf::Module, Option<unf::Checked>),
    /// A Target module.
    Target(Module),
}

impl Flow {
    fn name(&self) -> &'static str {
        match self {
            Flow::Source(_) => syntax::SOURCE_IR,
            Flow::SourceUnf(..) => unf::SOURCE_UNF_IR,
            Flow::TargetUnf(..) => unf::TARGET_UNF_IR,
            Flow::Target(_) => syntax::TARGET_IR,
        }
    }

    /// The term-language module at the end of a pass list.
    pub fn into_module(self) -> Result<Module> {
        match self {
            Flow::Source(m) | Flow::Target(m) => Ok(m),
            other => Err(Error::internal(format!(
                "a pass list ended on a `{}` module, not a term-language one",
                other.name()
            ))),
        }
    }
}

/// One pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pass {
    /// Source → Source (or Target → Target): the entry alone, with every
    /// call of an earlier definition it reaches inlined
    /// (`syntax::inline_entry`): elaboration keeps calls, every later pass
    /// takes self-contained definitions.
    Inline,
    /// Source → Source (or Target → Target): the derivative constructs
    /// (`diff`, `grad`, `jvp`, `vjp`, `jacob`) expanded by forward mode.
    Expand,
    /// Source → Source: specialised to first order ([`first_order`]).
    FirstOrder,
    /// Source → Source UNF (Fig. 9).
    Lower,
    /// Source UNF → Target UNF (Fig. 8).
    Reverse,
    /// Target UNF → Target (Fig. 10).
    Raise,
    /// Source → Target by the direct macro (Fig. 5).
    Direct,
    /// Source → Target: the gradient by forward mode (one pass per direction).
    ForwardGrad,
    /// Source → Target: the JVP program (`<entry>_jvp`).
    Jvp,
    /// Source → Target: the forward Jacobian (vectorised seeds).
    ForwardJacobian,
    /// Source → Target: gradient and Hessian, forward over forward.
    Hessian,
    /// Target → Target: partial evaluation and the rules of Fig. 12.
    Optimize,
}

impl Pass {
    /// The pass's name in messages.
    pub fn name(self) -> &'static str {
        match self {
            Pass::Inline => "inline",
            Pass::Expand => "forward (expand)",
            Pass::FirstOrder => "specialize",
            Pass::Lower => "unf",
            Pass::Reverse => "reverse",
            Pass::Raise => "unf-inverse",
            Pass::Direct => "reverse-direct",
            Pass::ForwardGrad => "forward",
            Pass::Jvp => "forward (jvp)",
            Pass::ForwardJacobian => "forward (jacobian)",
            Pass::Hessian => "forward (hessian)",
            Pass::Optimize => "optimize",
        }
    }

    /// Whether the pass's output is a stage boundary (verified under
    /// [`Verify::Boundaries`]): the IR files of `pipeline --dump` and each
    /// route's output.
    fn is_boundary(self) -> bool {
        !matches!(self, Pass::Inline | Pass::Expand | Pass::FirstOrder)
    }
}

/// What the passes need to know besides the program.
#[derive(Debug, Clone)]
pub struct Context {
    /// The entry definition's name.
    pub entry: String,
    /// The parameters to differentiate (`None`: all), already checked.
    pub wrt: Option<Vec<String>>,
    /// When to verify.
    pub verify: Verify,
    /// The forward macro's options for [`Pass::ForwardGrad`] and for the
    /// derivative constructs [`Pass::Expand`] expands.
    pub forward: forward::Config,
    /// How [`Pass::Raise`] writes the loops' transposed Jacobians.
    pub checkpoint: unf::Checkpoint,
}

impl Context {
    /// The context of `entry`, every parameter, verified after every pass.
    pub fn new(entry: impl Into<String>) -> Context {
        Context {
            entry: entry.into(),
            wrt: None,
            verify: Verify::EveryPass,
            forward: forward::Config::default(),
            checkpoint: unf::Checkpoint::Off,
        }
    }
}

/// Runs `passes` in order on `input`, verifying after each one by
/// `cx.verify`.
pub fn run(passes: &[Pass], input: Flow, cx: &Context) -> Result<Flow> {
    run_with(passes, input, cx, run_one)
}

/// [`run`] with the step that runs one pass given: `run_one`, or in the
/// unit tests a pass that breaks its output on purpose, to show the policy
/// catching it (no such hook in the public API).
fn run_with(
    passes: &[Pass],
    input: Flow,
    cx: &Context,
    mut step: impl FnMut(Pass, Flow, &Context) -> Result<Flow>,
) -> Result<Flow> {
    let mut flow = input;
    // Once expansion has run, the Source flowing on may hold reverse mode's
    // Target-only primitives (below): every later Source pass is held to
    // the rules of every module, as expansion is.
    let mut expanded = false;
    for &pass in passes {
        flow = step(pass, flow, cx)?;
        expanded |= pass == Pass::Expand;
        let wanted = match cx.verify {
            Verify::EveryPass => true,
            Verify::Boundaries => pass.is_boundary(),
            Verify::Off => false,
        };
        if wanted {
            flow = verify_if(pass, flow, expanded)?;
        }
    }
    Ok(flow)
}

/// The passes that take a Source program to its reverse-mode gradient
/// program by `route`, optimized or not.
pub fn gradient_passes(route: crate::Route, optimize: bool) -> Vec<Pass> {
    let mut out = match route {
        crate::Route::Unf => vec![Pass::FirstOrder, Pass::Lower, Pass::Reverse, Pass::Raise],
        crate::Route::Direct => vec![Pass::FirstOrder, Pass::Direct],
        crate::Route::Forward => vec![Pass::ForwardGrad],
    };
    if optimize {
        out.push(Pass::Optimize);
    }
    out
}

/// Verifies a pass's output (`expanded`: expansion ran before or in it);
/// a failure is an internal error naming the pass.
fn verify_if(pass: Pass, flow: Flow, expanded: bool) -> Result<Flow> {
    match flow {
        // Expansion splices in what `grad_rev`/`vjp_rev` computed by reverse
        // mode, which may hold its Target-only primitives (a histogram's
        // `gather`, the adjoint of a read inside a loop): the routes after
        // it take those, so it and the passes after it are held to the
        // rules of every module only.
        Flow::Source(m) if expanded => verified(pass.name(), m, false).map(Flow::Source),
        Flow::Source(m) => verified(pass.name(), m, true).map(Flow::Source),
        Flow::Target(m) => verified(pass.name(), m, false).map(Flow::Target),
        Flow::SourceUnf(m, Some(c)) => Ok(Flow::SourceUnf(m, Some(c))),
        Flow::SourceUnf(m, None) => {
            let checked = unf::check(&m).map_err(|es| unf_failure(pass, &m, &es))?;
            Ok(Flow::SourceUnf(m, Some(checked)))
        }
        Flow::TargetUnf(m, Some(c)) => Ok(Flow::TargetUnf(m, Some(c))),
        Flow::TargetUnf(m, None) => {
            let checked = unf::check(&m).map_err(|es| unf_failure(pass, &m, &es))?;
            Ok(Flow::TargetUnf(m, Some(checked)))
        }
    }
}

fn unf_failure(pass: Pass, m: &unf::Module, errors: &[unf::VerifyError]) -> Error {
    let mut out = format!(
        "after pass `{}`, the {} output fails its verifier:\n",
        pass.name(),
        m.kind.ir_name()
    );
    for e in errors.iter().take(5) {
        out.push_str(&format!("  {e}\n"));
    }
    Error::Internal(out)
}

/// Checks a pass's output with the verifier of the term IR (with no Target
/// primitive when it is a Source module).
pub fn verified(pass: &str, m: Module, source: bool) -> Result<Module> {
    let checked = if source {
        syntax::verify_source(&m)
    } else {
        syntax::verify(&m)
    };
    match checked {
        Ok(()) => Ok(m),
        Err(errors) => {
            let mut out = format!("after pass `{pass}`, the output fails the verifier:\n");
            for e in errors.iter().take(5) {
                out.push_str(&format!("  {e}\n"));
            }
            Err(Error::Internal(out))
        }
    }
}

fn entry_of<'m>(m: &'m Module, name: &str) -> Result<&'m Def> {
    m.def(name).ok_or_else(|| {
        Error::internal(format!(
            "the module handed to a pass has no definition `{name}`"
        ))
    })
}

fn expect_source(pass: Pass, flow: Flow) -> Result<Module> {
    match flow {
        Flow::Source(m) => Ok(m),
        other => Err(Error::internal(format!(
            "pass `{}` was handed a `{}` module",
            pass.name(),
            other.name()
        ))),
    }
}

fn run_one(pass: Pass, flow: Flow, cx: &Context) -> Result<Flow> {
    let wrt = cx.wrt.as_deref();
    match pass {
        Pass::Inline => match flow {
            Flow::Target(m) => inline(&m, &cx.entry).map(Flow::Target),
            other => inline(&expect_source(pass, other)?, &cx.entry).map(Flow::Source),
        },
        Pass::Expand => match flow {
            Flow::Target(m) => expand_with(&m, &cx.forward).map(Flow::Target),
            other => expand_with(&expect_source(pass, other)?, &cx.forward).map(Flow::Source),
        },
        Pass::FirstOrder => {
            let m = expect_source(pass, flow)?;
            first_order(m, &cx.entry).map(Flow::Source)
        }
        Pass::Lower => {
            let m = expect_source(pass, flow)?;
            let def = entry_of(&m, &cx.entry)?;
            // `lower` verifies its output; its check is handed on to D_rho.
            let (out, checked) = unf::lower_checked(&m, def).map_err(|e| unf_error(&m.file, &e))?;
            Ok(Flow::SourceUnf(out, Some(checked)))
        }
        Pass::Reverse => {
            let (m, checked) = match flow {
                Flow::SourceUnf(m, c) => (m, c),
                other => {
                    return Err(Error::internal(format!(
                        "pass `reverse` was handed a `{}` module",
                        other.name()
                    )));
                }
            };
            let rcfg = reverse::Config {
                wrt: wrt.map(<[String]>::to_vec),
            };
            let checked = match checked {
                Some(c) => c,
                None => unf::check(&m).map_err(|errors| {
                    reverse_error(
                        &m.source.file,
                        &reverse::Error::Unf {
                            source: unf::invalid(&m, errors),
                        },
                    )
                })?,
            };
            // D_rho verifies its output; its check is handed on to UNF^-1.
            reverse::reverse_checked_both(&m, checked, &rcfg)
                .map(|(out, c)| Flow::TargetUnf(out, Some(c)))
                .map_err(|e| reverse_error(&m.source.file, &e))
        }
        Pass::Raise => match flow {
            Flow::TargetUnf(m, checked) => match checked {
                Some(c) => unf::raise_checked_with(&m, c, cx.checkpoint),
                None => unf::raise_with(&m, cx.checkpoint),
            }
            .map(Flow::Target)
            .map_err(|e| unf_error(&m.source.file, &e)),
            other => Err(Error::internal(format!(
                "pass `unf-inverse` was handed a `{}` module",
                other.name()
            ))),
        },
        Pass::Direct => {
            let m = expect_source(pass, flow)?;
            let def = entry_of(&m, &cx.entry)?;
            let rcfg = reverse::Config {
                wrt: wrt.map(<[String]>::to_vec),
            };
            reverse::reverse_direct(&m, def, &rcfg)
                .map(Flow::Target)
                .map_err(|e| reverse_error(&m.file, &e))
        }
        Pass::ForwardGrad | Pass::Jvp | Pass::ForwardJacobian | Pass::Hessian => {
            let m = expect_source(pass, flow)?;
            let def = entry_of(&m, &cx.entry)?;
            let vectorised = forward::Config {
                mode: forward::Mode::Vectorised,
                ..forward::Config::default()
            };
            let out = match pass {
                Pass::ForwardGrad => forward::grad_program_with(&m, def, wrt, &cx.forward),
                Pass::Jvp => forward::jvp(&m, def),
                Pass::ForwardJacobian => forward::jacobian_program(&m, def, wrt, &vectorised),
                _ => forward::hessian_program(&m, def, wrt, &forward::Config::default()),
            };
            out.map(Flow::Target)
                .map_err(|e| forward_error(&m.file, &e))
        }
        Pass::Optimize => {
            let m = match flow {
                Flow::Target(m) | Flow::Source(m) => m,
                other => {
                    return Err(Error::internal(format!(
                        "pass `optimize` was handed a `{}` module",
                        other.name()
                    )));
                }
            };
            optimize(m).map(Flow::Target)
        }
    }
}

/// The entry `entry` of `m` alone, every call it reaches inlined (the
/// error, a program whose inlined entry does not type, at its position).
pub fn inline(m: &Module, entry: &str) -> Result<Module> {
    entry_of(m, entry)?;
    syntax::inline_entry(m, entry).map_err(|e| diag::at(&m.file, e.span(), &e.to_string()))
}

/// Expands the derivative constructs by forward mode when there are any
/// (the module is returned as it is otherwise); `grad_rev` and `vjp_rev`
/// by the reverse-mode pipeline, which this crate hands to forward mode
/// (`inlang.rs`).
pub fn expand(m: &Module) -> Result<Module> {
    expand_with(m, &forward::Config::default())
}

/// [`expand`] with the forward macro's options: `cfg.mode` decides how
/// `grad` and `jacob` push their seeds (one pass per input real, or all
/// in one vectorised pass).
pub fn expand_with(m: &Module, cfg: &forward::Config) -> Result<Module> {
    if !has_derivative_constructs(m) {
        return Ok(m.clone());
    }
    forward::expand_with_reverse(m, cfg, &crate::inlang::InLanguage)
        .map_err(|e| forward_error(&m.file, &e))
}

/// Whether the module contains `diff`, `grad`, `jvp`, `vjp`, `jacob`,
/// `grad_rev` or `vjp_rev`.
pub fn has_derivative_constructs(m: &Module) -> bool {
    m.exprs
        .iter()
        .any(|e| matches!(e, syntax::Expr::Prim { op, .. } if op.is_derivative_construct()))
}

/// The one specialisation to first order every route and caller goes
/// through: `m` itself when its entry is first order, else the entry alone
/// specialised to first order by inlining (a program higher order only on
/// the surface, seeds/002 Example 182.9; the other definitions, higher-order
/// helpers included, do not matter). If that does not make the entry first
/// order, the error is the first-order check's, at the construct.
pub fn first_order(m: Module, entry: &str) -> Result<Module> {
    entry_of(&m, entry)?;
    let file = m.file.clone();
    first_order_module(m, entry).map_err(|e| diag::at(&file, e.span(), &e.to_string()))
}

/// [`first_order`] with the first-order check's error unrendered (reverse
/// mode inside the language, `inlang.rs`, returns it to forward mode).
pub(crate) fn first_order_module(m: Module, entry: &str) -> Result<Module, syntax::Error> {
    let Some(def) = m.def(entry) else {
        return Err(syntax::Error::Scope {
            span: syntax::Span::GENERATED,
            message: format!("there is no definition `{entry}`"),
        });
    };
    let Err(original) = syntax::check_first_order(&m, def) else {
        return Ok(m);
    };
    syntax::specialize_def(&m, entry)
        .ok()
        .filter(|s| {
            s.def(entry)
                .is_some_and(|d| syntax::check_first_order(s, d).is_ok())
        })
        .ok_or(original)
}

/// Target → Target by partial evaluation and the rules of Fig. 12, with
/// the optimizer's own verifier off: [`run`] verifies by the policy.
pub fn optimize(m: Module) -> Result<Module> {
    let file = m.file.clone();
    let cfg = optimize::Config {
        verify: false,
        ..optimize::Config::default()
    };
    optimize::optimize_owned(m, &cfg).map_err(|e| {
        let internal = matches!(e, optimize::Error::Internal { .. });
        diag::pass_error(&file, e.span(), &e.to_string(), internal)
    })
}

/// An error of the UNF passes as a diagnostic.
pub fn unf_error(file: &syntax::SourceFile, e: &unf::Error) -> Error {
    diag::at(file, e.span(), &e.to_string())
}

/// An error of reverse mode as a diagnostic (its verifier failing on its
/// own output is internal).
pub fn reverse_error(file: &syntax::SourceFile, e: &reverse::Error) -> Error {
    let internal = matches!(e, reverse::Error::Internal { .. });
    diag::pass_error(file, e.span(), &e.to_string(), internal)
}

/// An error of forward mode as a diagnostic.
pub fn forward_error(file: &syntax::SourceFile, e: &forward::Error) -> Error {
    let internal = matches!(
        e,
        forward::Error::Internal { .. } | forward::Error::Reverse { internal: true, .. }
    );
    diag::pass_error(file, e.span(), &e.to_string(), internal)
}

#[cfg(test)]
mod tests;
