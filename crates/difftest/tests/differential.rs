//! The differential property suite run in CI: a fixed-seed fuzzing run of
//! generated programs through every path (Source, Source UNF, Target UNF,
//! the UNF gradient program, optimized and not, the direct macro on its
//! fragment, forward mode, finite differences, the jvp/vjp dot product, a
//! few cases through the C backend), which must find no disagreement and
//! must reach every construct of the language and nesting depth 3. Long
//! runs go through `cargo xtask fuzz-diff`.

use difftest::{CONSTRUCTS, FuzzConfig, FuzzReport, fuzz_with};

/// The cases of the CI run (under a minute in the test profile).
const CASES: u64 = 1_200;

fn run(seed: u64) -> FuzzReport {
    let report = fuzz_with(
        &FuzzConfig {
            cases: CASES,
            seed,
            c_every: 300,
            keep_going: false,
        },
        |_, _| {},
    );
    assert!(report.failures.is_empty(), "{}", report.render());
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
    assert!(
        report.direct_cases * 4 >= report.passed,
        "{}",
        report.render()
    );
    assert!(report.dot_cases * 5 >= report.passed, "{}", report.render());
    assert!(report.c_cases >= 3, "{}", report.render());
    for construct in CONSTRUCTS {
        let n = report.count(construct);
        assert!(
            n >= 5,
            "`{construct}` occurs {n} times: {}",
            report.render()
        );
    }
    assert!(report.max_nao() >= 3, "{}", report.render());
}

#[test]
fn the_run_is_reproducible_from_its_seed() {
    let a = difftest::fuzz(40, 7, |_, _| {});
    let b = difftest::fuzz(40, 7, |_, _| {});
    assert_eq!(a.coverage, b.coverage);
    assert_eq!(a.nao, b.nao);
    let c = difftest::fuzz(40, 8, |_, _| {});
    assert_ne!(a.coverage, c.coverage);
}
