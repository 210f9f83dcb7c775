//! The differential property suite run in CI: a fixed-seed fuzzing run of
//! generated programs through every path (Source, Source UNF, UNF
//! gradient, direct gradient, forward gradient, finite differences, the
//! jvp/vjp dot product), which must find no disagreement and must reach
//! every construct of the language and nesting depth 3. Long runs go
//! through `cargo xtask fuzz-diff`.

use difftest::{FuzzReport, fuzz};

/// The cases of the CI run (about 10 s in the test profile).
const CASES: u64 = 1_200;

fn run(seed: u64) -> FuzzReport {
    let report = fuzz(CASES, seed, |_, _| {});
    assert!(report.failure.is_none(), "{}", report.render());
    report
}

#[test]
fn every_path_agrees_on_generated_programs() {
    let seed = std::env::var("DIFFTEST_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x5eed);
    let report = run(seed);
    assert_eq!(report.cases, CASES);
    assert!(
        report.passed * 100 >= CASES * 95,
        "too few cases ran: {}",
        report.render()
    );
    assert!(report.unf_cases * 2 >= report.passed, "{}", report.render());
    assert!(report.dot_cases * 5 >= report.passed, "{}", report.render());
    for construct in [
        "const",
        "var",
        "let",
        "let-tuple",
        "tuple",
        "proj",
        "neg",
        "sin",
        "cos",
        "tan",
        "exp",
        "log",
        "sqrt",
        "tanh",
        "abs",
        "+",
        "-",
        "*",
        "/",
        "pow",
        "max",
        "min",
        "map",
        "map2",
        "reduce",
    ] {
        let n = report.coverage.get(construct).copied().unwrap_or(0);
        assert!(
            n >= 50,
            "`{construct}` occurs {n} times: {}",
            report.render()
        );
    }
    assert!(report.max_nao() >= 3, "{}", report.render());
}

#[test]
fn the_run_is_reproducible_from_its_seed() {
    let a = fuzz(40, 7, |_, _| {});
    let b = fuzz(40, 7, |_, _| {});
    assert_eq!(a.coverage, b.coverage);
    assert_eq!(a.nao, b.nao);
    let c = fuzz(40, 8, |_, _| {});
    assert_ne!(a.coverage, c.coverage);
}
