//! `ba` (gradbench/gradbench evals/ba, cpp/gradbench/evals/ba.hpp): input
//! `{n, m, p, cam, x, w, feat}`: one camera, point, weight and feature,
//! replicated to n cameras, m points and p observations, observation i
//! seeing point i mod m from camera i mod n (ADBench's convention). The
//! replication is done here, once, before the timed runs: the program
//! gets all n cameras, m points and p observations.
//!
//! Outputs are GradBench's compressed forms. `objective`:
//! `{"reproj_error": {"elements": [e0, e1], "repeated": p},
//!   "w_err": {"element": w0, "repeated": p}}`. `jacobian`: the CSR
//! matrix of 2p + p rows (the reprojection errors, then the weight
//! errors) and 11n + 3m + p columns, given as its first 30 entries (the
//! first observation's two rows) and its last one, for each of `rows`,
//! `cols` and `vals`.

use semantics::Value;
use serde_json::json;

use super::{Eval, Function, call};
use crate::convert::{Input, Result, array_of, flat_reals, matrix, reals, to_json, tuple_of};
use crate::engine::{Ask, Outcome};

const NCAM: usize = 11;
/// Nonzeros in one reprojection row: camera, point, weight.
const ROW: usize = NCAM + 3 + 1;

struct Sizes {
    n: usize,
    m: usize,
    p: usize,
}

fn sizes(i: &Input<'_>) -> Result<Sizes> {
    let size = |name: &str| -> Result<usize> {
        let v = i.field(name)?.int()?;
        usize::try_from(v)
            .ok()
            .filter(|&v| v > 0)
            .ok_or_else(|| format!("input.{name} must be a positive integer, not {v}"))
    };
    Ok(Sizes {
        n: size("n")?,
        m: size("m")?,
        p: size("p")?,
    })
}

fn input(i: &Input<'_>) -> Result<super::Call> {
    let Sizes { n, m, p } = sizes(i)?;
    let fixed = |name: &str, len: usize| -> Result<Vec<f64>> {
        let v = i.field(name)?.reals()?;
        if v.len() != len {
            return Err(format!(
                "input.{name} must have {len} elements, not {}",
                v.len()
            ));
        }
        Ok(v)
    };
    let cam = fixed("cam", NCAM)?;
    let x = fixed("x", 3)?;
    let feat = fixed("feat", 2)?;
    let w = i.field("w")?.real()?;
    let obs: Vec<Vec<i64>> = (0..p)
        .map(|k| vec![(k % n) as i64, (k % m) as i64])
        .collect();
    let (cams, pts): (Vec<i64>, Vec<i64>) = obs.iter().map(|o| (o[0], o[1])).unzip();
    call(vec![
        ("cams", matrix(&vec![cam; n])),
        ("xs", matrix(&vec![x; m])),
        ("w", reals(&vec![w; p])),
        ("cam", crate::convert::ints(&cams)),
        ("pt", crate::convert::ints(&pts)),
        ("feats", matrix(&vec![feat; p])),
    ])
}

fn objective(i: &Input<'_>, out: &Outcome) -> Result<serde_json::Value> {
    let p = sizes(i)?.p;
    let parts = tuple_of(&out.value, 2, "the objective's result")?;
    let reproj = array_of(&parts[0], "the reprojection errors")?;
    let w_err = array_of(&parts[1], "the weight errors")?;
    let first = reproj.first().ok_or("no observation")?;
    Ok(json!({
        "reproj_error": {"elements": to_json(first)?, "repeated": p},
        "w_err": {"element": to_json(w_err.first().ok_or("no observation")?)?, "repeated": p},
    }))
}

fn jacobian(i: &Input<'_>, out: &Outcome) -> Result<serde_json::Value> {
    let Sizes { n, m, p } = sizes(i)?;
    let parts = tuple_of(&out.value, 2, "the Jacobian's result")?;
    let blocks = array_of(&parts[0], "the Jacobian blocks")?;
    let w_d = array_of(&parts[1], "the weight derivatives")?;
    let first = flat_reals(blocks.first().ok_or("no observation")?)?;
    if first.len() != 2 * ROW {
        return Err(format!(
            "a Jacobian block has {} reals, not {}",
            first.len(),
            2 * ROW
        ));
    }
    let last_w = flat_reals(w_d.last().ok_or("no observation")?)?;
    // CSR row starts: 15 entries per reprojection row, then 1 per weight row.
    let row_start = |r: usize| {
        if r <= 2 * p {
            ROW * r
        } else {
            2 * p * ROW + (r - 2 * p)
        }
    };
    let nrows = 3 * p;
    let mut rows: Vec<usize> = (0..(2 * ROW).min(nrows + 1)).map(row_start).collect();
    rows.push(row_start(nrows));
    // The first observation sees camera 0 and point 0, with weight 0.
    let one_row: Vec<usize> = (0..NCAM)
        .chain((0..3).map(|c| NCAM * n + c))
        .chain(std::iter::once(NCAM * n + 3 * m))
        .collect();
    let mut cols: Vec<usize> = one_row.iter().chain(&one_row).copied().collect();
    cols.push(NCAM * n + 3 * m + p - 1);
    let mut vals = first;
    vals.extend(last_w);
    Ok(json!({"rows": rows, "cols": cols, "vals": to_json(&Value::reals(&vals))?}))
}

pub fn eval() -> Eval {
    let (file, program) = super::program!("ba");
    Eval {
        module: "ba",
        file,
        program,
        functions: vec![
            Function {
                name: "objective",
                variants: Ok(vec![("ba_objective", Ask::Value)]),
                input,
                output: objective,
            },
            Function {
                name: "jacobian",
                // Reverse mode inside the program: two sweeps per
                // observation, measured 2.2x cheaper than all 15 tangents
                // in one vectorised forward pass (docs/gradbench.md, "ba").
                variants: Ok(vec![("ba_jacobian", Ask::Value)]),
                input,
                output: jacobian,
            },
        ],
    }
}
