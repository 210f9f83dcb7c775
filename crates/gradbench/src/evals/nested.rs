//! `particle` and `saddle` (gradbench/gradbench evals/{particle,saddle}):
//! gradient descent whose objective itself takes a derivative. Each of the
//! four variants is its own entry of `gradbench/nested.ad`: `ff`, `fr`,
//! `rf`, `rr` say which mode takes the outer derivative (the argmin's
//! gradient) and which the inner one, forward mode being the language's
//! `grad` and reverse mode its `grad_rev` (docs/forward.md, "Reverse mode
//! inside the language").

use semantics::Value;

use super::{Call, Eval, call};
use crate::convert::{Input, Result, reals};

/// The four variants, each answered with its entry's value.
fn variants(
    module: &'static str,
    (file, program): (&'static str, &'static str),
    entries: [(&'static str, &'static str); 4],
    input: fn(&Input<'_>) -> Result<Call>,
) -> Eval {
    Eval {
        module,
        file,
        program,
        functions: entries
            .into_iter()
            .map(|(name, entry)| super::value(name, entry, input))
            .collect(),
    }
}

/// `particle`: input `{w}`, the starting control; output the final w.
pub fn particle() -> Eval {
    variants(
        "particle",
        super::program!("nested"),
        [
            ("ff", "particle_ff"),
            ("fr", "particle_fr"),
            ("rf", "particle_rf"),
            ("rr", "particle_rr"),
        ],
        |i| call(vec![("w", Value::Real(i.field("w")?.real()?))]),
    )
}

/// `saddle`: input `{start: [2]}`; output the argmin and the argmax, four numbers.
pub fn saddle() -> Eval {
    variants(
        "saddle",
        super::program!("nested"),
        [
            ("ff", "saddle_ff"),
            ("fr", "saddle_fr"),
            ("rf", "saddle_rf"),
            ("rr", "saddle_rr"),
        ],
        |i| {
            let start = i.field("start")?.reals()?;
            if start.len() != 2 {
                return Err(format!(
                    "input.start must have 2 elements, not {}",
                    start.len()
                ));
            }
            call(vec![("start", reals(&start))])
        },
    )
}
