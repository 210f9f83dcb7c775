//! Negative fixtures: `fixtures/err/<stage>/<case>/` holds a bad input (a
//! program, a RON file or a data file such as an `.npy` input), the
//! command line that feeds it (`cmd`, with `{dir}` standing for the case's
//! directory), and the rendered diagnostic it must produce (`expected.err`).
//! Every case must exit with status 1 — never a panic, never success — and
//! print exactly the blessed diagnostic (`cargo xtask bless` rewrites them).

use crate::common;

use common::{workspace, xtask};
use std::path::PathBuf;

fn cases() -> Vec<PathBuf> {
    let mut out = Vec::new();
    let root = workspace().join("fixtures/err");
    for stage in std::fs::read_dir(&root)
        .expect("fixtures/err exists")
        .filter_map(|e| e.ok())
    {
        for case in std::fs::read_dir(stage.path())
            .expect("a stage directory")
            .filter_map(|e| e.ok())
        {
            if case.path().join("cmd").is_file() {
                out.push(case.path());
            }
        }
    }
    out.sort();
    out
}

#[test]
fn every_bad_input_gives_its_diagnostic_and_exit_status_1() {
    let cases = cases();
    assert!(cases.len() >= 20, "only {} negative fixtures", cases.len());
    let mut failures = Vec::new();
    for dir in cases {
        let rel = dir
            .strip_prefix(workspace())
            .expect("under the workspace")
            .to_string_lossy()
            .replace('\\', "/");
        let cmd = std::fs::read_to_string(dir.join("cmd")).expect("cmd is readable");
        let args: Vec<String> = cmd
            .split_whitespace()
            .map(|a| a.replace("{dir}", &rel))
            .collect();
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let run = xtask(&args);
        if run.code != Some(1) {
            failures.push(format!(
                "{rel}: exit status {:?}, expected 1\n{}",
                run.code, run.stderr
            ));
            continue;
        }
        if !run.stdout.is_empty() {
            failures.push(format!("{rel}: printed to stdout: {}", run.stdout));
        }
        if run.stderr.contains("panicked") || run.stderr.trim().is_empty() {
            failures.push(format!("{rel}: no proper diagnostic: {}", run.stderr));
        }
        expect_test::expect_file![dir.join("expected.err")].assert_eq(&run.stderr);
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// A pass whose output fails its verifier is a bug of the compiler: exit
/// status 2, `internal error:` and the pass's name, where a program the
/// same command refuses is the user's error, status 1. The break is the
/// hidden, test-only `reverse-direct --break-output` (the library's half
/// is crates/adrev/src/passes/tests.rs).
#[test]
fn a_pass_failing_its_verifier_exits_2_and_a_refused_program_exits_1() {
    let out = std::env::temp_dir().join(format!("adrev-{}-broken.ron", std::process::id()));
    let out = out.to_str().expect("utf-8 path");
    let command = |program: &str, broken: bool| {
        let mut args = vec!["reverse-direct", program, "-o", out];
        if broken {
            args.push("--break-output");
        }
        xtask(&args)
    };
    let good = command("fixtures/sin_exp/program.ad", false);
    assert_eq!(good.code, Some(0), "{}", good.stderr);

    let broken = command("fixtures/sin_exp/program.ad", true);
    assert_eq!(broken.code, Some(2), "{}{}", broken.stdout, broken.stderr);
    assert!(
        broken.stderr.starts_with(
            "internal error: after pass `reverse-direct`, the output fails the verifier"
        ),
        "{}",
        broken.stderr
    );

    // The direct macro does not take `build` (docs/direct.md): refused
    // before anything is broken, the user's error.
    let refused = command("fixtures/fuzz_build_size/program.ad", true);
    assert_eq!(
        refused.code,
        Some(1),
        "{}{}",
        refused.stdout,
        refused.stderr
    );
    assert!(
        !refused.stderr.contains("internal error") && refused.stderr.contains("program.ad:"),
        "{}",
        refused.stderr
    );
    let _ = std::fs::remove_file(out);
}

/// A mistyped command, flag or value is the user's error (status 1, with
/// clap's message), never status 2, which says the compiler has a bug;
/// `--help` is no error at all.
#[test]
fn usage_errors_exit_1_and_help_exits_0() {
    for args in [
        &["grad", "--bogus", "fixtures/prod/program.ad"][..],
        &["no-such-command"],
        &["grad", "fixtures/prod/program.ad", "--via", "sideways"],
        &["grad"],
    ] {
        let run = xtask(args);
        assert_eq!(run.code, Some(1), "{args:?}: {}", run.stderr);
        assert!(run.stderr.starts_with("error:"), "{args:?}: {}", run.stderr);
    }
    let help = xtask(&["grad", "--help"]);
    assert_eq!(help.code, Some(0), "{}", help.stderr);
    assert!(help.stdout.contains("Usage:"), "{}", help.stdout);
}
