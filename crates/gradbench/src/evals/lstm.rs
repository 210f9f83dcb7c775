//! `lstm` (gradbench/gradbench evals/lstm, cpp/gradbench/evals/lstm.hpp):
//! input `{main_params, extra_params, state, sequence}`, each a matrix;
//! `objective` a number, `jacobian` the gradient with respect to
//! main_params and then extra_params, each flattened row after row, in
//! one array.

use super::{Eval, Function, call, gradient};
use crate::convert::{Input, Result, flat_reals, matrix, to_json};
use crate::engine::Ask;

fn input(i: &Input<'_>) -> Result<super::Call> {
    let main = i.field("main_params")?.matrix()?;
    let extra = i.field("extra_params")?.matrix()?;
    let state = i.field("state")?.matrix()?;
    let sequence = i.field("sequence")?.matrix()?;
    if main.len() % 2 != 0 || main.is_empty() || extra.len() != 3 || state.len() != main.len() {
        return Err(format!(
            "input: main_params has {} rows (two per layer), extra_params {} (three), state {} \
             (two per layer)",
            main.len(),
            extra.len(),
            state.len()
        ));
    }
    if sequence.len() < 2 {
        return Err("input.sequence needs at least two characters".into());
    }
    call(vec![
        ("main_params", matrix(&main)),
        ("extra_params", matrix(&extra)),
        ("state", matrix(&state)),
        ("sequence", matrix(&sequence)),
    ])
}

pub fn eval() -> Eval {
    let (file, program) = super::program!("lstm");
    Eval {
        module: "lstm",
        file,
        program,
        functions: vec![
            super::value("objective", "lstm", input),
            Function {
                name: "jacobian",
                variants: Ok(vec![("lstm", Ask::Grad(&["main_params", "extra_params"]))]),
                input,
                output: |_, out| {
                    let mut all = flat_reals(gradient(out, "main_params")?)?;
                    all.extend(flat_reals(gradient(out, "extra_params")?)?);
                    to_json(&semantics::Value::reals(&all))
                },
            },
        ],
    }
}
