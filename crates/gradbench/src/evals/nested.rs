//! `particle` and `saddle` (gradbench/gradbench evals/{particle,saddle}):
//! gradient descent whose objective itself takes a derivative. `ff` takes
//! both by forward mode inside the language (`gradbench/nested.ad`,
//! which holds both). `fr`, `rf` and `rr` need reverse mode inside the
//! language (a gradient by reverse mode that a program can call), which
//! adrev does not have: its in-language derivatives are forward mode. Each
//! of those is answered `success: false` with that reason.

use semantics::Value;

use super::{Call, Eval, Function, call};
use crate::convert::{Input, Result, reals, to_json};

const NEEDS_REVERSE: &str = "needs reverse mode inside the language (adrev's in-language \
     derivatives are forward mode only)";

fn with_ff(
    module: &'static str,
    (file, program): (&'static str, &'static str),
    entry: &'static str,
    input: fn(&Input<'_>) -> Result<Call>,
) -> Eval {
    let mut functions = vec![super::value("ff", entry, input)];
    functions.extend(["fr", "rf", "rr"].into_iter().map(|name| Function {
        name,
        variants: Err(NEEDS_REVERSE),
        input,
        output: |_, out| to_json(&out.value),
    }));
    Eval {
        module,
        file,
        program,
        functions,
    }
}

/// `particle`: input `{w}`, the starting control; output the final w.
pub fn particle() -> Eval {
    with_ff("particle", super::program!("nested"), "particle_ff", |i| {
        call(vec![("w", Value::Real(i.field("w")?.real()?))])
    })
}

/// `saddle`: input `{start: [2]}`; output the argmin and the argmax, four numbers.
pub fn saddle() -> Eval {
    with_ff("saddle", super::program!("nested"), "saddle_ff", |i| {
        let start = i.field("start")?.reals()?;
        if start.len() != 2 {
            return Err(format!(
                "input.start must have 2 elements, not {}",
                start.len()
            ));
        }
        call(vec![("start", reals(&start))])
    })
}
