//! `gmm` (gradbench/gradbench evals/gmm, cpp/gradbench/evals/gmm.hpp):
//! input `{d, k, n, x, m, gamma, mu, q, l, alpha}`; `objective` a number,
//! `jacobian` the gradient as `{alpha, mu, q, l}` shaped like the inputs.

use semantics::Value;
use serde_json::json;

use super::{Eval, Function, call, gradient};
use crate::convert::{Input, Result, matrix, reals, to_json};
use crate::engine::Ask;

fn input(i: &Input<'_>) -> Result<super::Call> {
    let x = i.field("x")?.matrix()?;
    let mu = i.field("mu")?.matrix()?;
    let q = i.field("q")?.matrix()?;
    let l = i.field("l")?.matrix()?;
    let alpha = i.field("alpha")?.reals()?;
    // d, k and n are the arrays' sizes: checked, not used.
    let (d, k, n) = (
        i.field("d")?.int()?,
        i.field("k")?.int()?,
        i.field("n")?.int()?,
    );
    let dims = |rows: &[Vec<f64>]| rows.first().map_or(0, Vec::len) as i64;
    if x.len() as i64 != n || mu.len() as i64 != k || alpha.len() as i64 != k || dims(&mu) != d {
        return Err(format!(
            "input: x is {}x{}, mu {}x{} and alpha has {} elements, but n = {n}, k = {k}, d = {d}",
            x.len(),
            dims(&x),
            mu.len(),
            dims(&mu),
            alpha.len()
        ));
    }
    call(vec![
        ("alpha", reals(&alpha)),
        ("mu", matrix(&mu)),
        ("q", matrix(&q)),
        ("l", matrix(&l)),
        ("x", matrix(&x)),
        ("gamma", Value::Real(i.field("gamma")?.real()?)),
        ("m", Value::Int(i.field("m")?.int()?)),
    ])
}

pub fn eval() -> Eval {
    let (file, program) = super::program!("gmm");
    Eval {
        module: "gmm",
        file,
        program,
        functions: vec![
            super::value("objective", "gmm", input),
            Function {
                name: "jacobian",
                variants: Ok(vec![("gmm", Ask::Grad(&["alpha", "mu", "q", "l"]))]),
                input,
                output: |_, out| {
                    Ok(json!({
                        "alpha": to_json(gradient(out, "alpha")?)?,
                        "mu": to_json(gradient(out, "mu")?)?,
                        "q": to_json(gradient(out, "q")?)?,
                        "l": to_json(gradient(out, "l")?)?,
                    }))
                },
            },
        ],
    }
}
