//! `cargo xtask check-grad`: every gradient path in one table, exit 0
//! when they agree and 1 when two AD paths disagree (shown with the
//! hidden test-only flag that swaps in the broken forward macro of
//! Exercise 182.8).

use crate::common;

use common::xtask;

#[test]
fn every_path_agrees_on_a_fixture_and_the_command_exits_0() {
    let run = xtask(&["check-grad", "fixtures/log_or_square/program.ad"]);
    assert_eq!(run.code, Some(0), "{}{}", run.stdout, run.stderr);
    for path in [
        "unf ",
        "unf-noopt",
        "direct ",
        "forward ",
        "forward-vec",
        "fd ",
    ] {
        assert!(run.stdout.contains(path), "{path}: {}", run.stdout);
    }
    assert!(run.stdout.contains("nearby point 3"), "{}", run.stdout);
    assert!(run.stdout.ends_with("all paths agree\n"), "{}", run.stdout);
}

#[test]
fn a_path_that_refuses_the_program_is_no_disagreement() {
    // The direct macro does not take `build` and `length`
    // (docs/direct.md): listed as refused, and the command still exits 0.
    let run = xtask(&["check-grad", "fixtures/fuzz_build_size/program.ad"]);
    assert_eq!(run.code, Some(0), "{}{}", run.stdout, run.stderr);
    assert!(run.stdout.contains("direct refused"), "{}", run.stdout);
    assert!(run.stdout.ends_with("all paths agree\n"), "{}", run.stdout);
}

#[test]
fn the_c_backend_is_one_more_path() {
    let run = xtask(&[
        "check-grad",
        "fixtures/sin_exp/program.ad",
        "--c",
        "--nearby",
        "1",
    ]);
    assert_eq!(run.code, Some(0), "{}{}", run.stdout, run.stderr);
    assert!(run.stdout.contains("\n  c "), "{}", run.stdout);
}

#[test]
fn disagreeing_ad_paths_exit_1() {
    let run = xtask(&[
        "check-grad",
        "fixtures/pair_chain/program.ad",
        "--nearby",
        "0",
        "--mutant-forward",
    ]);
    assert_eq!(run.code, Some(1), "{}{}", run.stdout, run.stderr);
    assert!(
        run.stdout.contains("DISAGREE: forward vs unf"),
        "{}",
        run.stdout
    );
    assert!(run.stderr.contains("disagree"), "{}", run.stderr);
}
