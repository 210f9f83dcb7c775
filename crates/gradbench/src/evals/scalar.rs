//! The small cmpad-derived evals and `lse` (gradbench/gradbench
//! evals/{lse,llsq,ode}): a primal and its gradient, reverse mode.

use semantics::Value;

use super::{Call, Eval, call, gradient_of, value};
use crate::convert::{Input, Result, reals};

fn lse_input(i: &Input<'_>) -> Result<Call> {
    call(vec![("x", reals(&i.field("x")?.reals()?))])
}

/// `lse`: input `{x}`; `primal` a number, `gradient` an array like x.
pub fn lse() -> Eval {
    let (file, program) = super::program!("lse");
    Eval {
        module: "lse",
        file,
        program,
        functions: vec![
            value("primal", "lse", lse_input),
            gradient_of("gradient", "lse", &["x"], lse_input),
        ],
    }
}

fn llsq_input(i: &Input<'_>) -> Result<Call> {
    call(vec![
        ("x", reals(&i.field("x")?.reals()?)),
        ("n", Value::Int(i.field("n")?.int()?)),
    ])
}

/// `llsq`: input `{x, n}`; `primal` a number, `gradient` an array like x.
pub fn llsq() -> Eval {
    let (file, program) = super::program!("llsq");
    Eval {
        module: "llsq",
        file,
        program,
        functions: vec![
            value("primal", "llsq", llsq_input),
            gradient_of("gradient", "llsq", &["x"], llsq_input),
        ],
    }
}

fn ode_input(i: &Input<'_>) -> Result<Call> {
    call(vec![
        ("x", reals(&i.field("x")?.reals()?)),
        ("s", Value::Int(i.field("s")?.int()?)),
    ])
}

/// `ode`: input `{x, s}`; `primal` the final y, `gradient` the gradient of
/// its last element; both arrays like x.
pub fn ode() -> Eval {
    let (file, program) = super::program!("ode");
    Eval {
        module: "ode",
        file,
        program,
        functions: vec![
            value("primal", "ode", ode_input),
            gradient_of("gradient", "ode_last", &["x"], ode_input),
        ],
    }
}
