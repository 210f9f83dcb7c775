//! `cargo xtask bench hist`: the gradient of scatter and the histograms
//! (`reduce_by_index` with `+`, `*`, `min`) of n elements into m = n/4
//! bins, at doubling n: the cost the evaluator counts (Fig. 11,
//! `semantics::cost`) and the time of one call of the generated C. Both
//! grow linearly, O(n + m), as the primal's do: each transposed Jacobian
//! is a gather or an elementwise product, never a dense one-hot array per
//! element. The same for a gather written with indexing, `sum (map (fun
//! i -> A[i] * A[i]) is)`, whose reads' transposes are scattered once,
//! a gather of rows `M[i]`, and reads inside two nested loops
//! (docs/derivatives.md, section 4). Nothing is asserted (docs/cost.md,
//! "Scatter and histograms").

use std::time::Duration;

use crate::diag::CliError;
use adrev::{Backend, Inputs, Kind, Program, Request, Timing};
use semantics::Value;

const PROGRAM: &str = "def h (d : [m]R) (is : [n]Int) (v : [n]R) : R =
  sum (reduce_by_index d (+) is v) + sum (reduce_by_index d (*) is v)
    + sum (reduce_by_index d min is v) + sum (scatter d is v)
";

/// The inputs at size n: indices spread over the bins (some out of
/// range), values near 1 so the products stay finite.
fn inputs(n: usize) -> Inputs<'static> {
    let m = (n / 4).max(1);
    let d = (0..m)
        .map(|b| Value::Real(1.0 + (b % 7) as f64 / 64.0))
        .collect();
    let is = (0..n)
        .map(|j| Value::Int(((j * 7919) % (m + 2)) as i64 - 1))
        .collect();
    let v = (0..n)
        .map(|j| Value::Real(1.0 + ((j * 37) % 100) as f64 / 1e4))
        .collect();
    Inputs::from_values([
        ("d", Value::array(d)),
        ("is", Value::array(is)),
        ("v", Value::array(v)),
    ])
}

fn fail(e: impl std::fmt::Display) -> CliError {
    CliError::Internal(format!("bench hist: {e}\n"))
}

/// A gather written with indexing: each read's transpose is a pair,
/// scattered once after the loop (docs/derivatives.md, section 4).
const GATHER: &str = "def g (A : [m]R) (is : [n]Int) : R =
  sum (map (fun i -> A[i] * A[i]) is)
";

/// Its inputs at size n = m: indices spread over A.
fn gather_inputs(n: usize) -> Inputs<'static> {
    let a = (0..n)
        .map(|j| Value::Real(1.0 + (j % 7) as f64 / 8.0))
        .collect();
    let is = (0..n).map(|j| Value::Int(((j * 37) % n) as i64)).collect();
    Inputs::from_values([("A", Value::array(a)), ("is", Value::array(is))])
}

/// A gather of rows: each read's transpose is a pair (i, row cotangent),
/// scattered column by column after the loop (docs/derivatives.md,
/// section 4).
const ROWS: &str = "def r (M : [m][k]R) (v : [k]R) (is : [n]Int) : R =
  sum (map (fun i -> sum (map2 (*) M[i] v)) is)
";

/// Its inputs at n = m rows of 4.
fn rows_inputs(n: usize) -> Inputs<'static> {
    let m = (0..n)
        .map(|j| Value::reals(&[1.0 + (j % 7) as f64 / 8.0, 0.5, -0.25, (j % 3) as f64]))
        .collect();
    let v = Value::reals(&[1.0, 2.0, 3.0, 4.0]);
    let is = (0..n).map(|j| Value::Int(((j * 37) % n) as i64)).collect();
    Inputs::from_values([("M", Value::array(m)), ("v", v), ("is", Value::array(is))])
}

/// Reads inside two nested loops: the inner loop's pairs go through the
/// outer loop's per-element pass and are scattered once after it.
const NESTED: &str = "def s (A : [m]R) (B : [n]R) (js : [k]Int) : R =
  sum (map (fun b -> sum (map (fun j -> A[j] * b) js)) B)
";

/// Its inputs at n = m, 4 inner reads per outer element.
fn nested_inputs(n: usize) -> Inputs<'static> {
    let a = (0..n)
        .map(|j| Value::Real(1.0 + (j % 7) as f64 / 8.0))
        .collect();
    let b = (0..n)
        .map(|j| Value::Real(0.5 + (j % 5) as f64 / 16.0))
        .collect();
    let js = (0..4).map(|j| Value::Int(((j * 37) % n) as i64)).collect();
    Inputs::from_values([
        ("A", Value::array(a)),
        ("B", Value::array(b)),
        ("js", Value::array(js)),
    ])
}

/// `cargo xtask bench hist`.
pub fn hist(quick: bool) -> Result<(), CliError> {
    let sizes: &[usize] = if quick {
        &[1000, 2000]
    } else {
        &[25_000, 50_000, 100_000, 200_000]
    };
    println!(
        "The gradient of `sum (reduce_by_index d (+) is v) + sum (... (*) ...) + sum (... min ...) \
         + sum (scatter d is v)` at n elements into n/4 bins: the cost counted by the evaluator \
         (Fig. 11) and the least time of one call of the generated C. Ratios are to the \
         previous size (linear: 2).\n"
    );
    doubling(PROGRAM, "h", sizes, quick, inputs)?;
    println!(
        "\nThe gradient of `sum (map (fun i -> A[i] * A[i]) is)`, a gather written with \
         indexing, at n = m: each read's transpose is a pair (i, z), scattered into A's \
         gradient with one `hist_add` after the map (linear: 2).\n"
    );
    doubling(GATHER, "g", sizes, quick, gather_inputs)?;
    println!(
        "\nThe gradient of `sum (map (fun i -> sum (map2 (*) M[i] v)) is)`, a gather of rows, \
         at n = m rows of 4: each read's transpose is a pair (i, row), scattered column by \
         column after the map (linear: 2).\n"
    );
    doubling(ROWS, "r", sizes, quick, rows_inputs)?;
    println!(
        "\nThe gradient of `sum (map (fun b -> sum (map (fun j -> A[j] * b) js)) B)`, reads in \
         two nested loops, at n = m and 4 reads per outer element: the inner map's pairs go \
         through the outer map and are scattered once after it (linear: 2).\n"
    );
    doubling(NESTED, "s", sizes, quick, nested_inputs)
}

/// One table: the gradient of `entry` of `text` at each size.
fn doubling(
    text: &str,
    entry: &str,
    sizes: &[usize],
    quick: bool,
    inputs: fn(usize) -> Inputs<'static>,
) -> Result<(), CliError> {
    let program = Program::from_text("bench.ad", text).map_err(fail)?;
    let eval = program
        .compile(&Request::new(Kind::ValueAndGrad))
        .map_err(fail)?;
    let c = program
        .compile(&Request::new(Kind::ValueAndGrad).backend(Backend::C(Default::default())))
        .map_err(fail)?;
    let g = eval.module().ok_or_else(|| fail("no gradient program"))?;
    let name = format!("{entry}_grad");
    let gdef = g.def(&name).ok_or_else(|| fail(format!("no `{name}`")))?;
    println!("| n | cost of the gradient | cost × | C ms | C × |");
    println!("|---:|---:|---:|---:|---:|");
    let mut prev: Option<(u64, f64)> = None;
    for &n in sizes {
        let ins = inputs(n);
        let args: Vec<Value> = ins
            .resolve(eval.entry())
            .map_err(fail)?
            .into_iter()
            .map(|(_, v)| v)
            .collect();
        let (_, cost) = semantics::cost::dynamic_cost(g, gdef, &args).map_err(fail)?;
        let timing = Timing {
            runs: if quick { 3 } else { 10 },
            min_time: Duration::ZERO,
        };
        let (_, times) = c.time(&ins, timing).map_err(fail)?;
        let ms = times.iter().min().map_or(0.0, |t| t.as_secs_f64() * 1e3);
        let total = cost.total();
        let (rc, rt) = match prev {
            Some((pc, pt)) => (
                format!("{:.2}", total as f64 / pc as f64),
                crate::bench::time_ratio(ms, pt),
            ),
            None => (String::new(), String::new()),
        };
        println!("| {n} | {total} | {rc} | {ms:.3} | {rt} |");
        prev = Some((total, ms));
    }
    Ok(())
}
