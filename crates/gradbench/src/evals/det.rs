//! `det` (gradbench/gradbench evals/det, cpp/gradbench/evals/det.hpp):
//! input `{A, ell}` with A the ell x ell matrix flat in row-major order;
//! `primal` its determinant, `gradient` the determinant's gradient with
//! respect to A by reverse mode, flat in row-major order like A. The
//! program (gradbench/det.ad) takes the matrix as rows: the tool splits A
//! once, before the timed runs, and flattens the gradient after them.

use serde_json::Value as Json;

use super::{Call, Eval, Function, call, gradient};
use crate::convert::{Input, Result, flat_reals, matrix, to_json};
use crate::engine::{Ask, Outcome};

fn input(i: &Input<'_>) -> Result<Call> {
    let a = i.field("A")?.reals()?;
    let ell = i.field("ell")?.int()?;
    let ell = usize::try_from(ell)
        .map_err(|_| format!("input.ell must be a non-negative integer, not {ell}"))?;
    if ell.checked_mul(ell) != Some(a.len()) {
        return Err(format!(
            "input.A has {} elements, but an ell x ell matrix with ell = {ell} has {}",
            a.len(),
            ell.saturating_mul(ell)
        ));
    }
    let rows: Vec<Vec<f64>> = a.chunks(ell.max(1)).map(<[f64]>::to_vec).collect();
    call(vec![("A", matrix(&rows))])
}

fn flat_gradient(_: &Input<'_>, out: &Outcome) -> Result<Json> {
    let g = flat_reals(gradient(out, "A")?)?;
    to_json(&semantics::Value::reals(&g))
}

pub fn eval() -> Eval {
    let (file, program) = super::program!("det");
    Eval {
        module: "det",
        file,
        program,
        functions: vec![
            super::value("primal", "det", input),
            Function {
                name: "gradient",
                variants: Ok(vec![("det", Ask::Grad(&["A"]))]),
                input,
                output: flat_gradient,
            },
        ],
    }
}
