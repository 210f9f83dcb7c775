//! `particle` and `saddle` (gradbench/gradbench evals/{particle,saddle}):
//! gradient descent whose objective itself takes a derivative. Their
//! `fr`, `rf` and `rr` variants need reverse mode inside the language
//! (a `vjp` or `grad` by reverse mode that a program can call), which
//! adrev does not have: its in-language derivatives are forward mode. The
//! `ff` variants need an unbounded `while` loop (descent until the step is
//! small), which the language does not have either. Each `evaluate` is
//! answered `success: false` with that reason.

use super::{Eval, Function, call};
use crate::convert::to_json;

const NEEDS_REVERSE: &str = "needs reverse mode inside the language (adrev's in-language \
     derivatives are forward mode only)";
const NEEDS_WHILE: &str = "needs a loop that runs until convergence (gradient descent to a \
     tolerance), which the language does not have yet";

fn unsupported(module: &'static str) -> Eval {
    Eval {
        module,
        file: "",
        program: "",
        functions: [
            ("ff", NEEDS_WHILE),
            ("fr", NEEDS_REVERSE),
            ("rf", NEEDS_REVERSE),
            ("rr", NEEDS_REVERSE),
        ]
        .into_iter()
        .map(|(name, why)| Function {
            name,
            variants: Err(why),
            input: |_| call(vec![]),
            output: |_, out| to_json(&out.value),
        })
        .collect(),
    }
}

pub fn particle() -> Eval {
    unsupported("particle")
}

pub fn saddle() -> Eval {
    unsupported("saddle")
}
