//! What a caller asks for: one [`Request`] value names the entry, the
//! parameters to differentiate ([`Wrt`]), the derivative ([`Kind`]), the
//! route of Figure 1 ([`Route`]), whether to optimize, how much to verify
//! ([`Verify`]) and where the result runs ([`Backend`]).

use crate::diag::{Error, Result};
use syntax::Def;

/// The parameters a derivative is taken with respect to: the one type for
/// `--wrt a,b`, the Python package's `wrt=` and the crates' `Option<&[String]>`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Wrt {
    /// Every parameter of the entry, in order.
    #[default]
    All,
    /// These parameters, by name, in this order (each once).
    Names(Vec<String>),
}

impl Wrt {
    /// These parameters, by name.
    pub fn names<S: Into<String>>(names: impl IntoIterator<Item = S>) -> Wrt {
        Wrt::Names(names.into_iter().map(Into::into).collect())
    }

    /// A comma-separated list as `--wrt a,b` takes it; `None` is [`Wrt::All`].
    pub fn parse(list: Option<&str>) -> Result<Wrt> {
        let Some(list) = list else {
            return Ok(Wrt::All);
        };
        let names: Vec<String> = list
            .split(',')
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .collect();
        if names.is_empty() {
            return Err(Error::user("--wrt needs at least one parameter name"));
        }
        Ok(Wrt::Names(names))
    }

    /// The 0-based positions of the parameters in `entry`, checked: every
    /// name is a parameter, none is named twice, the list is not empty.
    pub fn positions(&self, entry: &Def) -> Result<Vec<usize>> {
        match self {
            Wrt::All => Ok((0..entry.params.len()).collect()),
            Wrt::Names(names) => {
                if names.is_empty() {
                    return Err(Error::user(
                        "the derivative is asked with respect to no parameter",
                    ));
                }
                let mut out = Vec::with_capacity(names.len());
                for n in names {
                    let i = entry
                        .params
                        .iter()
                        .position(|p| p.name.as_str() == n)
                        .ok_or_else(|| no_such_param(entry, n))?;
                    if out.contains(&i) {
                        return Err(Error::user(format!("`{n}` is named twice in --wrt")));
                    }
                    out.push(i);
                }
                Ok(out)
            }
        }
    }

    /// The names of the parameters, checked as by [`Wrt::positions`].
    pub fn resolve(&self, entry: &Def) -> Result<Vec<String>> {
        Ok(self
            .positions(entry)?
            .into_iter()
            .map(|i| entry.params[i].name.to_string())
            .collect())
    }

    /// The form the stage crates and [`crate::passes::Context`] take
    /// (`None`: all parameters), checked.
    pub fn for_crates(&self, entry: &Def) -> Result<Option<Vec<String>>> {
        match self {
            Wrt::All => Ok(None),
            Wrt::Names(_) => self.resolve(entry).map(Some),
        }
    }
}

/// The error for a name that is not a parameter of `entry`.
pub(crate) fn no_such_param(entry: &Def, name: &str) -> Error {
    let known: Vec<_> = entry
        .params
        .iter()
        .map(|p| format!("`{}`", p.name))
        .collect();
    Error::user(format!(
        "`{}` has no parameter `{name}` (its parameters: {})",
        entry.name,
        if known.is_empty() {
            "none".to_string()
        } else {
            known.join(", ")
        }
    ))
}

/// How a Jacobian is computed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum JacobianMode {
    /// One forward pass per input direction, vectorised (jacfwd).
    Forward,
    /// One reverse pass (a VJP) per output component (jacrev).
    Reverse,
    /// Forward when the differentiated inputs have at most as many reals as
    /// the output, reverse otherwise, decided at call time from the actual
    /// sizes; [`crate::Outputs::jacobian_mode`] says which ran.
    #[default]
    Auto,
}

impl JacobianMode {
    /// `forward`, `reverse` or `auto`.
    pub fn name(self) -> &'static str {
        match self {
            JacobianMode::Forward => "forward",
            JacobianMode::Reverse => "reverse",
            JacobianMode::Auto => "auto",
        }
    }
}

/// The derivative asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// The entry's value.
    Value,
    /// The gradient of a real-valued entry, one per `wrt` parameter (the
    /// value comes along: the gradient program computes it anyway).
    Grad,
    /// The value and the gradient.
    ValueAndGrad,
    /// The vector-Jacobian product with a cotangent shaped like the result,
    /// given at call time ([`crate::Inputs::cotangent`]), by reverse mode
    /// along the request's [`Route`]; with the value.
    Vjp,
    /// The Jacobian-vector product with one tangent per parameter given at
    /// call time ([`crate::Inputs::tangent`]), by forward mode; with the value.
    Jvp,
    /// The Jacobian, one block per `wrt` parameter; with the value.
    Jacobian {
        /// Forward, reverse, or chosen by sizes.
        mode: JacobianMode,
    },
    /// The gradient and the Hessian of a real-valued entry (forward over
    /// forward), one block per pair of `wrt` parameters; with the value.
    Hessian,
}

impl Kind {
    /// The command name: `value`, `grad`, `value-and-grad`, `vjp`, `jvp`,
    /// `jacobian`, `hessian`.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Value => "value",
            Kind::Grad => "grad",
            Kind::ValueAndGrad => "value-and-grad",
            Kind::Vjp => "vjp",
            Kind::Jvp => "jvp",
            Kind::Jacobian { .. } => "jacobian",
            Kind::Hessian => "hessian",
        }
    }
}

/// Which construction of Figure 1 builds a reverse-mode derivative (a
/// gradient, a VJP, a reverse Jacobian). Kinds that are forward mode by
/// nature (JVP, forward Jacobian, Hessian) do not use it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Route {
    /// UNF (Fig. 9), D_rho (Fig. 8), UNF^-1 (Fig. 10).
    #[default]
    Unf,
    /// The direct reverse macro of Fig. 5.
    Direct,
    /// Forward mode, one pass per input direction (seeds/002, dF~).
    Forward,
}

impl Route {
    /// `unf`, `direct` or `forward`.
    pub fn name(self) -> &'static str {
        match self {
            Route::Unf => "unf",
            Route::Direct => "direct",
            Route::Forward => "forward",
        }
    }
}

/// When the verifiers run on what a pass produced (Cranelift's
/// `verify_if`), applied in one place: [`crate::passes`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Verify {
    /// After every pass, the ones inside a stage (expansion, specialisation)
    /// included.
    EveryPass,
    /// After each pass whose output is a stage boundary (the files of
    /// `pipeline --dump`: Source UNF, Target UNF, Target, optimized Target)
    /// and after each route's output.
    #[default]
    Boundaries,
    /// Never (what the passes need computed from a verifier, the UNF
    /// tables for D_rho, is still computed).
    Off,
}

/// Where the compiled program runs.
#[derive(Debug, Clone, Default, PartialEq)]
pub enum Backend {
    /// The reference evaluator (`semantics`).
    #[default]
    Eval,
    /// Generated C built with the system compiler (`codegen`), with its options.
    C(codegen::Config),
}

/// One request: everything [`crate::Program::compile`] needs.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    /// The entry definition (`None`: the last).
    pub entry: Option<String>,
    /// The parameters to differentiate.
    pub wrt: Wrt,
    /// What to compute.
    pub kind: Kind,
    /// The reverse-mode route.
    pub route: Route,
    /// Partial evaluation and the rules of Fig. 12 on every derivative
    /// program (on by default; the value program is run as written).
    pub optimize: bool,
    /// When to verify.
    pub verify: Verify,
    /// Where to run.
    pub backend: Backend,
    /// The forward macro's options where the request uses forward mode
    /// (`Route::Forward` gradients and the program's own `grad` and
    /// `jacob`: one pass per direction or vectorised seeds; the mutant of
    /// Exercise 182.8 that the differential tests use to show a
    /// disagreement being reported).
    pub forward: forward::Config,
    /// How reverse mode (the UNF route) writes the backward pass of a loop:
    /// every state stored, or √n checkpoints (the same gradient in O(√n)
    /// memory; docs/derivatives.md, "Checkpointing").
    pub checkpoint: unf::Checkpoint,
}

impl Request {
    /// A request for `kind` of the last definition, every parameter, the
    /// UNF route, optimized, verified at stage boundaries, on the evaluator.
    pub fn new(kind: Kind) -> Request {
        Request {
            entry: None,
            wrt: Wrt::All,
            kind,
            route: Route::Unf,
            optimize: true,
            verify: Verify::Boundaries,
            backend: Backend::Eval,
            forward: forward::Config::default(),
            checkpoint: unf::Checkpoint::Off,
        }
    }

    /// The same request for another entry.
    pub fn entry(mut self, name: impl Into<String>) -> Request {
        self.entry = Some(name.into());
        self
    }

    /// The same request with respect to other parameters.
    pub fn wrt(mut self, wrt: Wrt) -> Request {
        self.wrt = wrt;
        self
    }

    /// The same request by another route.
    pub fn route(mut self, route: Route) -> Request {
        self.route = route;
        self
    }

    /// The same request with the optimizer on or off.
    pub fn optimize(mut self, on: bool) -> Request {
        self.optimize = on;
        self
    }

    /// The same request with another verification policy.
    pub fn verify(mut self, verify: Verify) -> Request {
        self.verify = verify;
        self
    }

    /// The same request on another backend.
    pub fn backend(mut self, backend: Backend) -> Request {
        self.backend = backend;
        self
    }

    /// The same request with loops checkpointed by `scheme`.
    pub fn checkpoint(mut self, scheme: unf::Checkpoint) -> Request {
        self.checkpoint = scheme;
        self
    }
}
