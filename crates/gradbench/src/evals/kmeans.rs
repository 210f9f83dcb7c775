//! `kmeans` (gradbench/gradbench evals/kmeans, cpp/gradbench/evals/kmeans.hpp):
//! input `{points, centroids}`; `cost` a number, `dir` the gradient with
//! respect to the centroids divided elementwise by the Hessian's diagonal,
//! shaped like the centroids. The Hessian is diagonal (each point's term
//! depends on its nearest centroid only), so its diagonal is the
//! Hessian-vector product with the all-ones vector: forward mode over the
//! reverse-mode gradient, inside the program (`kmeans_dir` in
//! gradbench/kmeans.ad: `jvp` of `grad_rev`), which also divides.

use super::{Eval, Function, call};
use crate::convert::{Input, Result, matrix, to_json};
use crate::engine::{Ask, Outcome};

fn input(i: &Input<'_>) -> Result<super::Call> {
    let points = i.field("points")?.matrix()?;
    let centroids = i.field("centroids")?.matrix()?;
    let d = |rows: &[Vec<f64>]| rows.first().map_or(0, Vec::len);
    if d(&points) != d(&centroids) {
        return Err(format!(
            "input: the points have {} coordinates but the centroids {}",
            d(&points),
            d(&centroids)
        ));
    }
    call(vec![
        ("points", matrix(&points)),
        ("centroids", matrix(&centroids)),
    ])
}

fn dir(_: &Input<'_>, out: &Outcome) -> Result<serde_json::Value> {
    to_json(&out.value)
}

pub fn eval() -> Eval {
    let (file, program) = super::program!("kmeans");
    Eval {
        module: "kmeans",
        file,
        program,
        functions: vec![
            super::value("cost", "kmeans", input),
            Function {
                name: "dir",
                variants: Ok(vec![("kmeans_dir", Ask::Value)]),
                input,
                output: dir,
            },
        ],
    }
}
