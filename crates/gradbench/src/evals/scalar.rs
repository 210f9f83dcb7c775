//! The small cmpad-derived evals and `lse` (gradbench/gradbench
//! evals/{lse,llsq,ode,det}): a primal and its gradient, reverse mode.

use semantics::Value;

use super::{Call, Eval, Function, call, gradient_of, value};
use crate::convert::{Input, Result, reals, to_json};

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

const DET_MISSING: &str = "det is not implemented in adrev yet: expansion by minors is \
     recursive, which the language is not; its non-recursive form sums over all ell! \
     permutations (40 million at ell = 11), each reading ell entries of A, and reverse mode \
     transposes each read into a scatter over all of A (docs/derivatives.md), so it needs \
     another formulation first";

/// `det`: not answered yet (the define succeeds, each evaluate says why).
pub fn det() -> Eval {
    Eval {
        module: "det",
        file: "",
        program: "",
        functions: ["primal", "gradient"]
            .into_iter()
            .map(|name| Function {
                name,
                variants: Err(DET_MISSING),
                input: |_| call(vec![]),
                output: |_, out| to_json(&out.value),
            })
            .collect(),
    }
}
