//! The small cmpad-derived evals and `lse` (gradbench/gradbench
//! evals/{lse,llsq,ode,det}): a primal and its gradient, reverse mode.

use semantics::Value;

use super::{Eval, Function, call, gradient};
use crate::convert::{reals, to_json};
use crate::engine::Ask;

/// `lse`: input `{x}`; `primal` a number, `gradient` an array like x.
pub fn lse() -> Eval {
    let (file, program) = super::program!("lse");
    Eval {
        module: "lse",
        file,
        program,
        functions: vec![
            Function {
                name: "primal",
                variants: Ok(vec![("lse", Ask::Value)]),
                input: |i| call(vec![("x", reals(&i.field("x")?.reals()?))]),
                output: |_, out| to_json(&out.value),
            },
            Function {
                name: "gradient",
                variants: Ok(vec![("lse", Ask::Grad(&["x"]))]),
                input: |i| call(vec![("x", reals(&i.field("x")?.reals()?))]),
                output: |_, out| to_json(gradient(out, "x")?),
            },
        ],
    }
}

fn llsq_input(i: &crate::convert::Input<'_>) -> crate::convert::Result<super::Call> {
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
            Function {
                name: "primal",
                variants: Ok(vec![("llsq", Ask::Value)]),
                input: llsq_input,
                output: |_, out| to_json(&out.value),
            },
            Function {
                name: "gradient",
                variants: Ok(vec![("llsq", Ask::Grad(&["x"]))]),
                input: llsq_input,
                output: |_, out| to_json(gradient(out, "x")?),
            },
        ],
    }
}

fn ode_input(i: &crate::convert::Input<'_>) -> crate::convert::Result<super::Call> {
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
            Function {
                name: "primal",
                variants: Ok(vec![("ode", Ask::Value)]),
                input: ode_input,
                output: |_, out| to_json(&out.value),
            },
            Function {
                name: "gradient",
                variants: Ok(vec![("ode_last", Ask::Grad(&["x"]))]),
                input: ode_input,
                output: |_, out| to_json(gradient(out, "x")?),
            },
        ],
    }
}

const DET_MISSING: &str = "det is not implemented in adrev yet: expansion by minors is recursive, \
     and its non-recursive form (a sum over all ell! permutations) needs integer division to \
     enumerate them, which the language is only getting now";

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
