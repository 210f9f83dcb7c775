//! One run of an eval: the answers to its messages, in order. Nothing the
//! eval sends makes the tool stop: every bad message gets
//! `success: false` with an error saying what is wrong.

use std::collections::HashMap;
use std::time::Instant;

use serde_json::{Value as Json, json};

use crate::convert::Input;
use crate::engine::{self, Compiled, Runs};
use crate::evals::{self, Eval};
use crate::protocol::{self, Message};

/// A defined module: its eval and one compiled program per function
/// variant (`None` for a function this tool cannot compute).
struct Defined {
    eval: Eval,
    compiled: HashMap<&'static str, Result<Vec<Compiled>, String>>,
}

/// The state of one run: the C backend's configuration and the modules
/// defined so far.
pub struct Session {
    config: codegen::Config,
    defined: HashMap<String, Defined>,
}

impl Default for Session {
    fn default() -> Session {
        Session::new(engine::default_config())
    }
}

impl Session {
    /// A session before `start`, building with `config`.
    pub fn new(config: codegen::Config) -> Session {
        Session {
            config,
            defined: HashMap::new(),
        }
    }

    /// The answer to one line from the eval, as one line of JSON.
    pub fn answer(&mut self, line: &str) -> String {
        let response = match protocol::parse(line) {
            Ok((id, message)) => self.respond(&id, message),
            Err(bad) => protocol::bad_message_response(&bad),
        };
        response.to_string()
    }

    fn respond(&mut self, id: &Json, message: Message) -> Json {
        match message {
            Message::Start { .. } => protocol::start_response(id, start_config(&self.config)),
            Message::Define { module } => protocol::define_response(id, self.define(&module)),
            Message::Evaluate {
                module,
                function,
                input,
            } => protocol::evaluate_response(id, self.evaluate(&module, &function, &input)),
            Message::Analysis { .. } => protocol::analysis_response(id),
        }
    }

    /// Compiles every function of `module`; the nanoseconds it took.
    fn define(&mut self, module: &str) -> Result<u128, String> {
        let eval = evals::eval(module).ok_or_else(|| {
            format!(
                "unknown module `{module}` (adrev knows: {})",
                evals::MODULES.join(", ")
            )
        })?;
        let start = Instant::now();
        let program = if eval.program.is_empty() {
            None
        } else {
            Some(
                adrev::Program::from_text(eval.file, eval.program)
                    .map_err(|e| e.message().to_string())?,
            )
        };
        // Every variant of every function is its own program (one C file
        // and one cc each): compiled side by side, one thread per variant
        // (ht's four take the largest share of a define in cc).
        let jobs: Vec<(usize, &'static str, engine::Ask)> = eval
            .functions
            .iter()
            .enumerate()
            .filter_map(|(i, f)| f.variants.as_ref().ok().map(|v| (i, v)))
            .flat_map(|(i, v)| v.iter().map(move |(entry, ask)| (i, *entry, *ask)))
            .collect();
        let config = &self.config;
        // The results by function, in the order of its variants.
        let mut by_function: Vec<Vec<Result<Compiled, String>>> =
            eval.functions.iter().map(|_| Vec::new()).collect();
        if let Some(program) = &program {
            std::thread::scope(|s| {
                let handles: Vec<_> = jobs
                    .iter()
                    .map(|&(i, entry, ask)| {
                        (
                            i,
                            s.spawn(move || engine::compile(program, entry, ask, config)),
                        )
                    })
                    .collect();
                for (i, h) in handles {
                    let r = h.join().unwrap_or_else(|_| {
                        Err("internal error: compiling a function panicked".into())
                    });
                    by_function[i].push(r);
                }
            });
        }
        let mut compiled = HashMap::new();
        for (f, results) in eval.functions.iter().zip(by_function) {
            let built = match (&f.variants, &program) {
                (Ok(_), Some(_)) => results.into_iter().collect::<Result<Vec<_>, _>>(),
                (Err(why), _) => Err(format!("`{module}` function `{}` {why}", f.name)),
                (Ok(_), None) => Err(format!("`{module}` has no program")),
            };
            // A function that does not compile fails the define: GradBench
            // stops after a failed define, which is what the user must see.
            if let (Ok(_), Err(e)) = (&f.variants, &built) {
                return Err(format!("compiling `{module}` function `{}`: {e}", f.name));
            }
            compiled.insert(f.name, built);
        }
        let ns = start.elapsed().as_nanos();
        self.defined
            .insert(module.to_string(), Defined { eval, compiled });
        Ok(ns)
    }

    fn evaluate(
        &self,
        module: &str,
        function: &str,
        input: &Json,
    ) -> Result<(Json, Vec<u128>), String> {
        let defined = self
            .defined
            .get(module)
            .ok_or_else(|| format!("module `{module}` is not defined (send `define` first)"))?;
        let f = defined.eval.function(function).ok_or_else(|| {
            format!(
                "module `{module}` has no function `{function}` (its functions: {})",
                defined.eval.function_names()
            )
        })?;
        let compiled = match defined.compiled.get(f.name) {
            Some(Ok(c)) => c,
            Some(Err(e)) => return Err(e.clone()),
            None => return Err(format!("`{module}` function `{function}` was not compiled")),
        };
        let (runs, call) = read_input(f, input)?;
        let program = compiled
            .get(call.variant)
            .ok_or("the input chose a variant that was not compiled")?;
        let (outcome, times) = program.run(call.args, runs)?;
        let output = (f.output)(&Input::root(input), &outcome)?;
        Ok((output, times))
    }
}

/// The input of an `evaluate` message of `f`, read as the session reads
/// it before running anything: how often to run, and the call (the
/// variant and the program's arguments, converted from GradBench's JSON).
/// The fuzz target of the protocol (`fuzzing::gradbench_protocol`) reads
/// every message through this, with no program compiled or run.
pub fn read_input(f: &evals::Function, input: &Json) -> Result<(Runs, evals::Call), String> {
    let root = Input::root(input);
    let runs = runs(&root)?;
    let call = (f.input)(&root)?;
    Ok((runs, call))
}

/// `min_runs` and `min_seconds` (GradBench's `Runs`); absent (as for
/// `hello`) they are one run and no minimum time.
fn runs(input: &Input<'_>) -> Result<Runs, String> {
    let min_runs = if input.has("min_runs") {
        let n = input.field("min_runs")?.int()?;
        usize::try_from(n)
            .ok()
            .filter(|&n| (1..=1_000_000).contains(&n))
            .ok_or_else(|| {
                format!("input.min_runs must be a positive integer up to 10^6, not {n}")
            })?
    } else {
        1
    };
    let min_seconds = if input.has("min_seconds") {
        let s = input.field("min_seconds")?.real()?;
        if !(0.0..=3600.0).contains(&s) {
            return Err(format!(
                "input.min_seconds must be between 0 and 3600, not {s}"
            ));
        }
        s
    } else {
        0.0
    };
    Ok(Runs {
        min_runs,
        min_seconds,
    })
}

/// The tool's configuration as `start` reports it: the C backend's
/// options and the compiler flags they give.
fn start_config(cfg: &codegen::Config) -> Json {
    json!({
        "backend": "c",
        "parallel": cfg.parallel,
        "reassociate": cfg.reassociate,
        "vector_math": cfg.vector_math,
        "native": cfg.native,
        "opt_level": format!("{:?}", cfg.opt_level),
        "cc": cfg.cc,
        "flags": cfg.flags(),
        "reverse_mode": "UNF, D_rho, UNF^-1, optimized",
    })
}
