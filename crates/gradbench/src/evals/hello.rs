//! `hello` (gradbench/gradbench evals/hello): `square` x^2 and `double`,
//! its gradient. The input and output are bare numbers, with no
//! `min_runs` / `min_seconds`.

use super::{Eval, Function, call, gradient};
use crate::convert::{real_of, to_json};
use crate::engine::Ask;

pub fn eval() -> Eval {
    let (file, program) = super::program!("hello");
    Eval {
        module: "hello",
        file,
        program,
        functions: vec![
            Function {
                name: "square",
                variants: Ok(vec![("square", Ask::Value)]),
                input: |i| call(vec![("x", semantics::Value::Real(i.real()?))]),
                output: |_, out| {
                    to_json(&semantics::Value::Real(real_of(&out.value, "the value")?))
                },
            },
            Function {
                name: "double",
                variants: Ok(vec![("square", Ask::Grad(&["x"]))]),
                input: |i| call(vec![("x", semantics::Value::Real(i.real()?))]),
                output: |_, out| to_json(gradient(out, "x")?),
            },
        ],
    }
}
