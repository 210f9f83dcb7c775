//! `ht` (gradbench/gradbench evals/ht, cpp/gradbench/evals/ht.hpp): input
//! `{theta, data: {model, correspondences, points}, us}`; the simple
//! variant when `us` is empty, the complicated one otherwise. `objective`
//! is the 3 residuals of each point, point after point; `jacobian` one row
//! per residual (in that order) of `2 + 26` columns for the complicated
//! variant (the point's two us first, as ADBench's manual Jacobian) or 26.

use semantics::Value;

use super::{Call, Eval, Function};
use crate::convert::{
    Input, Result, array_of, flat_reals, int_matrix, ints, matrix, reals, to_json, tuple_of,
};
use crate::engine::{Ask, Outcome};

fn input(i: &Input<'_>) -> Result<Call> {
    let theta = i.field("theta")?.reals()?;
    let data = i.field("data")?;
    let model = data.field("model")?;
    let us = i.field("us")?.matrix()?;
    let points = data.field("points")?.matrix()?;
    let correspondences = data.field("correspondences")?.ints()?;
    let model_args = vec![
        ("parents", ints(&model.field("parents")?.ints()?)),
        (
            "base_relatives",
            matrices(&model.field("base_relatives")?.matrices()?),
        ),
        (
            "inverse_base_absolutes",
            matrices(&model.field("inverse_base_absolutes")?.matrices()?),
        ),
        (
            "base_positions",
            matrix(&model.field("base_positions")?.matrix()?),
        ),
        ("weights", matrix(&model.field("weights")?.matrix()?)),
        (
            "is_mirrored",
            Value::Bool(model.field("is_mirrored")?.bool()?),
        ),
    ];
    let mut args = vec![("theta", reals(&theta))];
    let variant = if us.is_empty() {
        args.extend(model_args);
        0
    } else {
        args.push(("us", matrix(&us)));
        args.extend(model_args);
        args.push((
            "triangles",
            int_matrix(&model.field("triangles")?.int_matrix()?),
        ));
        1
    };
    args.push(("correspondences", ints(&correspondences)));
    args.push(("points", matrix(&points)));
    Ok(Call {
        variant,
        args: args.into_iter().map(|(n, v)| (n.to_string(), v)).collect(),
    })
}

fn matrices(ms: &[Vec<Vec<f64>>]) -> Value {
    Value::array(ms.iter().map(|m| matrix(m)).collect())
}

fn objective(_: &Input<'_>, out: &Outcome) -> Result<serde_json::Value> {
    to_json(&Value::reals(&flat_reals(&out.value)?))
}

/// GradBench's rows from the program's: theta's Jacobian has its rows
/// coordinate-major (every point's x, then y, then z: `flat3` in ht.ad).
fn jacobian(_: &Input<'_>, out: &Outcome) -> Result<serde_json::Value> {
    let (us_columns, theta_rows) = match out.value.as_tuple() {
        Some(_) => {
            let parts = tuple_of(&out.value, 3, "the Jacobian's result")?;
            let du0 = flat_reals(&parts[0])?;
            let du1 = flat_reals(&parts[1])?;
            (Some((du0, du1)), array_of(&parts[2], "the theta Jacobian")?)
        }
        None => (None, array_of(&out.value, "the theta Jacobian")?),
    };
    if theta_rows.len() % 3 != 0 {
        return Err(format!("the theta Jacobian has {} rows", theta_rows.len()));
    }
    let nc = theta_rows.len() / 3;
    let mut rows = Vec::with_capacity(3 * nc);
    for i in 0..nc {
        for j in 0..3 {
            let mut row = Vec::new();
            if let Some((du0, du1)) = &us_columns {
                let at = |d: &[f64]| {
                    d.get(3 * i + j)
                        .copied()
                        .ok_or("the us columns are shorter than the residuals")
                };
                row.push(at(du0)?);
                row.push(at(du1)?);
            }
            row.extend(flat_reals(&theta_rows[j * nc + i])?);
            rows.push(Value::reals(&row));
        }
    }
    to_json(&Value::array(rows))
}

pub fn eval() -> Eval {
    let (file, program) = super::program!("ht");
    Eval {
        module: "ht",
        file,
        program,
        functions: vec![
            Function {
                name: "objective",
                variants: Ok(vec![
                    ("ht_simple", Ask::Value),
                    ("ht_complicated", Ask::Value),
                ]),
                input,
                output: objective,
            },
            Function {
                name: "jacobian",
                variants: Ok(vec![
                    ("ht_simple_jacobian", Ask::Value),
                    ("ht_complicated_jacobian", Ask::Value),
                ]),
                input,
                output: jacobian,
            },
        ],
    }
}
