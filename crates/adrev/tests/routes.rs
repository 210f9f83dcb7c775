//! Every route × backend through the one API on every fixture
//! (fixtures/*/program.ad): the same named gradients as the UNF route on
//! the evaluator, and the fixture's `-- grad` lines where it has them. A
//! route that refuses a fixture (the direct macro on `build`, `length`,
//! indexing and `Int` values, docs/direct.md) must refuse it with a user
//! error, on every backend alike.

use crate::common::{close, workspace};
use adrev::{Backend, Kind, Outputs, Program, Request, Route};
use semantics::Expectations;

/// The fixtures the direct macro does not take (hvp_rev: the shifts of the
/// J^T reduce that reverse mode inside the language spliced in;
/// vjp_rev_map: indexing).
const DIRECT_REFUSES: [&str; 6] = [
    "gmm",
    "fuzz_build_size",
    "fuzz_fold_in_init",
    "int_rounding",
    "hvp_rev",
    "vjp_rev_map",
];

fn fixtures() -> Vec<(String, Program, String)> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(workspace().join("fixtures")).expect("fixtures") {
        let dir = e.expect("an entry").path();
        let file = dir.join("program.ad");
        if !file.is_file() {
            continue;
        }
        let name = dir.file_name().map(|s| s.to_string_lossy().into_owned());
        let text = std::fs::read_to_string(&file).expect("readable");
        let program = Program::load(&file).unwrap_or_else(|e| panic!("{}", e.message()));
        out.push((name.unwrap_or_default(), program, text));
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    assert!(out.len() >= 30, "only {} fixtures", out.len());
    out
}

fn grad(p: &Program, route: Route, backend: Backend) -> adrev::Result<Outputs> {
    let req = Request::new(Kind::ValueAndGrad)
        .route(route)
        .backend(backend);
    p.compile(&req)?.call(&p.default_inputs())
}

/// The C build of the tests: -O0, which computes the same bits as -O3 and
/// builds several times faster.
fn c() -> Backend {
    Backend::C(codegen::Config {
        opt_level: codegen::OptLevel::O0,
        ..codegen::Config::default()
    })
}

fn check_route(route: Route, backend: Backend) {
    let mut failures = Vec::new();
    let mut checked = 0;
    for (name, p, text) in fixtures() {
        let reference = grad(&p, Route::Unf, Backend::Eval)
            .unwrap_or_else(|e| panic!("{name}: the UNF route: {}", e.message()));
        let got = grad(&p, route, backend.clone());
        if route == Route::Direct && DIRECT_REFUSES.contains(&name.as_str()) {
            match got {
                Err(e) if !e.is_internal() => continue,
                other => failures.push(format!("{name}: direct should refuse, got {other:?}")),
            }
            continue;
        }
        let got = match got {
            Ok(o) => o,
            Err(e) => {
                failures.push(format!("{name}: {}", e.message()));
                continue;
            }
        };
        checked += 1;
        if let Err(e) = close(&got.value, &reference.value, 1e-9) {
            failures.push(format!("{name}: value: {e}"));
        }
        let names = |o: &Outputs| {
            o.gradients
                .iter()
                .map(|(n, _)| n.clone())
                .collect::<Vec<_>>()
        };
        if names(&got) != names(&reference) {
            failures.push(format!(
                "{name}: gradients {:?} vs {:?}",
                names(&got),
                names(&reference)
            ));
        }
        let exp = Expectations::parse(&text);
        let def = p.entry(None).expect("an entry");
        for (n, g) in &got.gradients {
            let want = reference.gradient(n).expect("the same names");
            if let Err(e) = close(g, want, 1e-8) {
                failures.push(format!("{name}: grad {n}: {e}"));
            }
            if let Some(Ok(expected)) = exp.grad(def, n)
                && let Err(e) = close(g, &expected, 1e-8)
            {
                failures.push(format!("{name}: grad {n} vs the fixture's -- grad: {e}"));
            }
        }
    }
    assert!(checked >= 28, "only {checked} fixtures checked");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn the_unf_route_on_both_backends() {
    check_route(Route::Unf, Backend::Eval);
    check_route(Route::Unf, c());
}

#[test]
fn the_direct_route_on_both_backends() {
    check_route(Route::Direct, Backend::Eval);
    check_route(Route::Direct, c());
}

#[test]
fn the_forward_route_on_both_backends() {
    check_route(Route::Forward, Backend::Eval);
    check_route(Route::Forward, c());
}
