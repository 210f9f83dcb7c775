//! What the tool asks of the compiler (`adrev`): one compiled program per
//! function variant, built once by `define` with the C backend, then
//! called on converted inputs and timed around the generated function
//! alone (`adrev::Compiled::time`).

use std::time::Duration;

use adrev::{Backend, Inputs, Ir, Kind, Program, Request, Timing, Wrt};
use semantics::Value;

/// What a function needs from its entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ask {
    /// The entry's value (derivatives the program takes itself, by
    /// `jacob`, `jvp` or `diff`, are forward mode inside it).
    Value,
    /// The entry's value, its `jacob` and `grad` expanded in forward mode's
    /// vectorised form (`forward::Mode::Vectorised`: all seeds in one pass,
    /// the primal and the partial derivatives computed once), where that
    /// was measured to be cheaper than one pass per seed
    /// (docs/performance.md, "GradBench evals").
    ValueVectorised,
    /// The gradient with respect to these parameters, by reverse mode
    /// (UNF, D_rho, UNF^-1, then the optimizer).
    Grad(&'static [&'static str]),
    /// The gradient with respect to this parameter by reverse mode, and
    /// the Hessian-vector product with the all-ones vector in that
    /// parameter: forward mode (a JVP) over the gradient program.
    GradAndHessianOnes(&'static str),
}

/// What one call computed.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    /// The entry's value.
    pub value: Value,
    /// The gradients by parameter name (`Ask::Grad`, `Ask::GradAndHessianOnes`).
    pub gradients: Vec<(String, Value)>,
    /// H 1 (`Ask::GradAndHessianOnes`).
    pub hessian_ones: Option<Value>,
}

impl Outcome {
    /// The gradient with respect to `name`.
    pub fn gradient(&self, name: &str) -> Option<&Value> {
        self.gradients
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v)
    }
}

/// How often to run: GradBench's `min_runs` and `min_seconds`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Runs {
    /// At least this many timed runs (at least 1).
    pub min_runs: usize,
    /// And at least this long in total.
    pub min_seconds: f64,
}

/// The C backend's configuration for every build unless the command line
/// lowers the optimisation level: the fast one (reassociated reductions,
/// vector math, -march=native; results within a few ulp of the
/// evaluator's), single-threaded. `start` reports it.
pub fn default_config() -> codegen::Config {
    codegen::Config {
        reassociate: true,
        vector_math: true,
        native: true,
        ..codegen::Config::default()
    }
}

/// One function variant, compiled.
#[derive(Debug)]
pub struct Compiled {
    compiled: adrev::Compiled,
    ask: Ask,
}

fn err(e: adrev::Error) -> String {
    e.message().to_string()
}

/// The program reduced to its definition `entry`, with the calls it makes
/// inlined (`syntax::inline_entry`): the C backend compiles every
/// definition of a module, and the `ht` module's four entries together
/// are 900 KB of C, which cc takes minutes over.
fn only(program: &Program, entry: &str) -> Result<Program, String> {
    let m = program.module().map_err(err)?;
    if m.def(entry).is_none() {
        return Err(format!("the program has no definition `{entry}`"));
    }
    let m = adrev::passes::inline(m, entry).map_err(err)?;
    Ok(Program::from_ir(Ir::Source(m)))
}

/// Compiles `ask` of `entry` in `program` with the C backend configured by `cfg`.
pub fn compile(
    program: &Program,
    entry: &str,
    ask: Ask,
    cfg: &codegen::Config,
) -> Result<Compiled, String> {
    let program = &only(program, entry)?;
    let c = Backend::C(cfg.clone());
    let compiled = match ask {
        Ask::Value => program.compile(&Request::new(Kind::Value).entry(entry).backend(c)),
        Ask::ValueVectorised => {
            let mut request = Request::new(Kind::Value).entry(entry).backend(c);
            request.forward.mode = forward::Mode::Vectorised;
            program.compile(&request)
        }
        Ask::Grad(wrt) => program.compile(
            &Request::new(Kind::Grad)
                .entry(entry)
                .wrt(Wrt::names(wrt.iter().copied()))
                .backend(c.clone()),
        ),
        Ask::GradAndHessianOnes(wrt) => {
            // The optimized gradient program `<entry>_grad`, then its JVP
            // (forward mode, docs/forward.md) compiled as a plain program:
            // `<entry>_grad_jvp (x.., dx..) = ((value, g), (dvalue, H dx))`.
            let grad = program
                .compile(&Request::new(Kind::Grad).entry(entry).wrt(Wrt::names([wrt])))
                .map_err(err)?;
            let module = grad
                .module()
                .ok_or("the gradient request built no program")?;
            let name = format!("{entry}_grad");
            let def = module
                .def(&name)
                .ok_or_else(|| format!("the gradient program has no `{name}`"))?;
            let jvp = forward::jvp(module, def).map_err(|e| e.to_string())?;
            Program::from_ir(Ir::Source(jvp)).compile(
                &Request::new(Kind::Value)
                    .entry(format!("{name}_jvp"))
                    .backend(c),
            )
        }
    }
    .map_err(err)?;
    Ok(Compiled { compiled, ask })
}

impl Compiled {
    /// Runs on `args` at least `runs.min_runs` times and `runs.min_seconds`
    /// long, after one untimed call; each run's nanoseconds, measured
    /// around the generated function alone.
    pub fn run(
        &self,
        args: Vec<(String, Value)>,
        runs: Runs,
    ) -> Result<(Outcome, Vec<u128>), String> {
        let mut inputs = Inputs::new();
        let tangents: Vec<Value> = match self.ask {
            // The JVP's tangent parameters follow the primal ones, in order.
            Ask::GradAndHessianOnes(wrt) => args
                .iter()
                .map(|(name, v)| filled(v, if name == wrt { 1.0 } else { 0.0 }))
                .collect(),
            _ => Vec::new(),
        };
        let n = args.len();
        for (name, v) in args {
            inputs = inputs.with(name, v);
        }
        let params = &self.compiled.entry().params;
        for (p, t) in params.iter().skip(n).zip(tangents) {
            inputs = inputs.with(p.name.to_string(), t);
        }
        let timing = Timing {
            runs: runs.min_runs.max(1),
            min_time: Duration::from_secs_f64(runs.min_seconds.max(0.0)),
        };
        let (out, times) = self.compiled.time(&inputs, timing).map_err(err)?;
        let outcome = match self.ask {
            Ask::Value | Ask::ValueVectorised | Ask::Grad(_) => Outcome {
                value: out.value,
                gradients: out.gradients,
                hessian_ones: None,
            },
            Ask::GradAndHessianOnes(wrt) => {
                // The JVP of `<entry>_grad`, which returns (value, gradient).
                let pair = |v: &Value, what: &str| -> Result<(Value, Value), String> {
                    match v.as_tuple() {
                        Some([a, b]) => Ok((a.clone(), b.clone())),
                        _ => Err(format!(
                            "the gradient program's {what} is {}, not a pair",
                            v.kind()
                        )),
                    }
                };
                let (primal, tangent) = pair(&out.value, "JVP")?;
                let (value, g) = pair(&primal, "value")?;
                let (_, hv) = pair(&tangent, "tangent")?;
                Outcome {
                    value,
                    gradients: vec![(wrt.to_string(), g)],
                    hessian_ones: Some(hv),
                }
            }
        };
        Ok((outcome, times.iter().map(Duration::as_nanos).collect()))
    }
}

/// `v` with every real replaced by `x` (integers and booleans kept).
fn filled(v: &Value, x: f64) -> Value {
    match v {
        Value::Real(_) => Value::Real(x),
        Value::Array(items) => Value::array(items.iter().map(|i| filled(i, x)).collect()),
        Value::Tuple(items) => Value::tuple(items.iter().map(|i| filled(i, x)).collect()),
        other => other.clone(),
    }
}
