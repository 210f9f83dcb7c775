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
    /// `jacob`, `jvp` or `diff`, are forward mode inside it; `grad_rev`
    /// reverse mode), expanded and then optimized.
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
}

/// What one call computed.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    /// The entry's value.
    pub value: Value,
    /// The gradients by parameter name (`Ask::Grad`).
    pub gradients: Vec<(String, Value)>,
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
        Ask::Value => optimized_value(program, entry, forward::Mode::default(), c),
        Ask::ValueVectorised => optimized_value(program, entry, forward::Mode::Vectorised, c),
        Ask::Grad(wrt) => program.compile(
            &Request::new(Kind::Grad)
                .entry(entry)
                .wrt(Wrt::names(wrt.iter().copied()))
                .backend(c),
        ),
    }
    .map_err(err)?;
    Ok(Compiled { compiled })
}

/// The entry's value with its derivative constructs expanded by forward
/// mode in `mode`, then optimized (the constants' zero tangents and the
/// seeds' literal ones simplified away, docs/optimize.md, note [structural
/// maps]), compiled for `c`.
fn optimized_value(
    program: &Program,
    entry: &str,
    mode: forward::Mode,
    c: Backend,
) -> adrev::Result<adrev::Compiled> {
    let m = value_program(program, entry, mode)?;
    Program::from_ir(Ir::Target(m)).compile(&Request::new(Kind::Value).entry(entry).backend(c))
}

fn value_program(
    program: &Program,
    entry: &str,
    mode: forward::Mode,
) -> adrev::Result<syntax::Module> {
    let mut cx = adrev::passes::Context::new(entry);
    cx.forward.mode = mode;
    let m = program.module()?.clone();
    let flow = adrev::passes::run(
        &[
            adrev::passes::Pass::Inline,
            adrev::passes::Pass::Expand,
            adrev::passes::Pass::Optimize,
        ],
        adrev::passes::Flow::Source(m),
        &cx,
    )?;
    flow.into_module()
}

/// The program [`compile`] builds for a value ask (`Ask::Value` or
/// `Ask::ValueVectorised`), without building it: what the C backend
/// prints for `define` (its size is cc's time, docs/gradbench.md).
pub fn value_module(program: &Program, entry: &str, ask: Ask) -> Result<syntax::Module, String> {
    let mode = match ask {
        Ask::Value => forward::Mode::default(),
        Ask::ValueVectorised => forward::Mode::Vectorised,
        Ask::Grad(_) => return Err("a gradient ask is compiled by reverse mode".to_string()),
    };
    value_program(&only(program, entry)?, entry, mode).map_err(err)
}

impl Compiled {
    /// The program that runs (for inspection: `crates/bench/examples/gbtime.rs`).
    pub fn module(&self) -> Option<&syntax::Module> {
        self.compiled.module()
    }

    /// Runs on `args` at least `runs.min_runs` times and `runs.min_seconds`
    /// long, after one untimed call; each run's nanoseconds, measured
    /// around the generated function alone.
    pub fn run(
        &self,
        args: Vec<(String, Value)>,
        runs: Runs,
    ) -> Result<(Outcome, Vec<u128>), String> {
        let mut inputs = Inputs::new();
        for (name, v) in args {
            inputs = inputs.with(name, v);
        }
        let timing = Timing {
            runs: runs.min_runs.max(1),
            min_time: Duration::from_secs_f64(runs.min_seconds.max(0.0)),
        };
        let (out, times) = self.compiled.time(&inputs, timing).map_err(err)?;
        let outcome = Outcome {
            value: out.value,
            gradients: out.gradients,
        };
        Ok((outcome, times.iter().map(Duration::as_nanos).collect()))
    }
}
