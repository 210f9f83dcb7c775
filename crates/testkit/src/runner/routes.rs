//! Every route on every backend through the library's one API
//! (`adrev::Program::compile`): the same named gradients as the UNF route
//! on the evaluator and the fixture's `-- grad` lines; a route the options
//! say refuses the program refuses it with a user error, on every backend.

use super::Env;
use crate::fixture::Fixture;
use crate::options::{Backend, Route};
use crate::values::close;
use adrev::{Kind, Outputs, Program, Request};

fn grad(p: &Program, route: Route, backend: &adrev::Backend) -> adrev::Result<Outputs> {
    let req = Request::new(Kind::ValueAndGrad)
        .route(route.adrev())
        .backend(backend.clone());
    p.compile(&req)?.call(&p.default_inputs())
}

/// The backend of the tests: the evaluator, or C at -O0 (the same bits as
/// -O3, several times faster to build).
pub fn backend(b: Backend) -> adrev::Backend {
    match b {
        Backend::Eval => adrev::Backend::Eval,
        Backend::C => adrev::Backend::C(codegen::Config {
            opt_level: codegen::OptLevel::O0,
            ..codegen::Config::default()
        }),
    }
}

fn check(f: &Fixture, route: Route, b: Backend) {
    let name = &f.name;
    let p = Program::load(f.path("program.ad")).unwrap_or_else(|e| panic!("{}", e.message()));
    let got = grad(&p, route, &backend(b));
    if let Some(because) = f.options.refusal(route) {
        match got {
            Err(e) if !e.is_internal() && e.message().contains(because) => return,
            other => panic!(
                "{name}: {} should refuse for {because}, got {other:?}",
                route.name()
            ),
        }
    }
    let got = got.unwrap_or_else(|e| panic!("{name}: {}", e.message()));
    let reference = grad(&p, Route::Unf, &adrev::Backend::Eval)
        .unwrap_or_else(|e| panic!("{name}: the UNF route: {}", e.message()));
    let tol = f.options.tolerance;
    let mut failures = Vec::new();
    if let Err(e) = close(&got.value, &reference.value, 1e-9) {
        failures.push(format!("value: {e}"));
    }
    let names = |o: &Outputs| {
        o.gradients
            .iter()
            .map(|(n, _)| n.clone())
            .collect::<Vec<_>>()
    };
    if names(&got) != names(&reference) {
        failures.push(format!(
            "gradients {:?} vs {:?}",
            names(&got),
            names(&reference)
        ));
    }
    let exp = f.expectations();
    let def = p.entry(None).expect("an entry");
    for (n, g) in &got.gradients {
        let want = reference.gradient(n).expect("the same names");
        if let Err(e) = close(g, want, tol) {
            failures.push(format!("grad {n}: {e}"));
        }
        if let Some(Ok(expected)) = exp.grad(def, n)
            && let Err(e) = close(g, &expected, tol)
        {
            failures.push(format!("grad {n} vs the fixture's -- grad: {e}"));
        }
    }
    assert!(failures.is_empty(), "{name}:\n{}", failures.join("\n"));
}

pub fn unf_eval(f: &Fixture, _: &Env) {
    check(f, Route::Unf, Backend::Eval)
}
pub fn unf_c(f: &Fixture, _: &Env) {
    check(f, Route::Unf, Backend::C)
}
pub fn direct_eval(f: &Fixture, _: &Env) {
    check(f, Route::Direct, Backend::Eval)
}
pub fn direct_c(f: &Fixture, _: &Env) {
    check(f, Route::Direct, Backend::C)
}
pub fn forward_eval(f: &Fixture, _: &Env) {
    check(f, Route::Forward, Backend::Eval)
}
pub fn forward_c(f: &Fixture, _: &Env) {
    check(f, Route::Forward, Backend::C)
}
