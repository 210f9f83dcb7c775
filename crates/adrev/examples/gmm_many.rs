//! Compile the gradient of GMM (fixtures/gmm, ADBench's objective) once
//! and call it on 1,000 new inputs: the points `x` move, the model stays.
//!
//! `cargo run -p adrev --example gmm_many` (add `-- c` for the C backend).
//! The test `example_gmm_many_runs` runs [`run`] with a few calls, so this
//! code runs in CI.

use adrev::{Backend, Kind, Program, Request, Wrt};
use semantics::Value;

/// The program's path in the workspace.
pub const GMM: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../fixtures/gmm/program.ad");

/// Compiles GMM's value and gradient with respect to the model
/// (`alphas`, `means`, `icf`) once, then calls it `calls` times with the
/// single point `x` moved a little each time; returns each call's value
/// and the gradient of `alphas`.
pub fn run(calls: usize, backend: Backend) -> adrev::Result<Vec<(f64, Value)>> {
    let program = Program::load(GMM)?;
    let request = Request::new(Kind::ValueAndGrad)
        .wrt(Wrt::names(["alphas", "means", "icf"]))
        .backend(backend);
    let compiled = program.compile(&request)?;
    // The other inputs are the `-- at` lines of the file.
    let base = program.default_inputs();
    let mut out = Vec::with_capacity(calls);
    for i in 0..calls {
        let t = i as f64 / calls.max(1) as f64;
        let x = Value::array(vec![Value::reals(&[1.175171 + t, 2.029160 - t])]);
        let inputs = base.clone().without("x").with("x", x);
        let result = compiled.call(&inputs)?;
        let value = result.value.as_real().unwrap_or(f64::NAN);
        let grad = result
            .gradient("alphas")
            .cloned()
            .unwrap_or_else(Value::unit);
        out.push((value, grad));
    }
    Ok(out)
}

#[allow(dead_code)] // The test module includes this file for `run` only.
fn main() {
    let backend = match std::env::args().nth(1).as_deref() {
        Some("c") => Backend::C(codegen::Config::default()),
        _ => Backend::Eval,
    };
    let start = std::time::Instant::now();
    match run(1000, backend) {
        Ok(results) => {
            let (v0, g0) = &results[0];
            let (v1, g1) = &results[results.len() - 1];
            println!("{} calls in {:.2?}", results.len(), start.elapsed());
            println!("first: value = {v0}, grad alphas = {g0}");
            println!("last:  value = {v1}, grad alphas = {g1}");
        }
        Err(e) => {
            eprint!("{}", e.message());
            std::process::exit(if e.is_internal() { 2 } else { 1 });
        }
    }
}
