//! Custom derivative rules on the command line (docs/derivatives.md,
//! "Custom derivative rules"): `check-grad` agrees on correct rules and
//! names a wrong one; a route without the rule it needs, and a rule
//! reading a variable it does not bind, are errors at their place.

use crate::common;

use common::xtask;

/// Writes `text` to a fresh file under the target directory.
fn program(name: &str, text: &str) -> String {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("rules");
    std::fs::create_dir_all(&dir).expect("a temporary directory");
    let path = dir.join(name);
    std::fs::write(&path, text).expect("write the program");
    path.to_string_lossy().into_owned()
}

#[test]
fn check_grad_agrees_with_correct_rules() {
    let run = xtask(&[
        "check-grad",
        "fixtures/rules_logsumexp/program.ad",
        "--nearby",
        "1",
    ]);
    assert_eq!(run.code, Some(0), "{}{}", run.stdout, run.stderr);
    assert!(run.stdout.ends_with("all paths agree\n"), "{}", run.stdout);
}

#[test]
fn check_grad_names_a_rule_that_is_not_the_bodys_derivative() {
    // The straight-through estimator's rules say 1 where rounding's
    // derivative is 0: every AD path agrees with the others (they all use
    // the rules) and finite differences of the body disagree.
    let run = xtask(&[
        "check-grad",
        "fixtures/rules_ste/program.ad",
        "--nearby",
        "0",
    ]);
    assert_eq!(run.code, Some(1), "{}{}", run.stdout, run.stderr);
    assert!(
        run.stdout.contains(difftest::check::WRONG_RULE),
        "{}",
        run.stdout
    );
    assert!(!run.stdout.contains("forward vs unf"), "{}", run.stdout);
    // A deliberately wrong vjp rule (2x where the body's derivative is
    // 3x^2): reverse mode disagrees with forward mode and with the body.
    let wrong = program(
        "wrong_vjp.ad",
        "def cube (x : R) : R = x * x * x\n  with jvp (x, dx) -> 3 * x * x * dx\n  with vjp (x, ct) -> 2 * x * ct\ndef f (y : R) : R = cube y\n",
    );
    let run = xtask(&["check-grad", &wrong, "--at", "y=2", "--nearby", "0"]);
    assert_eq!(run.code, Some(1), "{}{}", run.stdout, run.stderr);
    assert!(
        run.stdout.contains(difftest::check::WRONG_RULE),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("DISAGREE: forward vs unf"),
        "{}",
        run.stdout
    );
}

#[test]
fn a_route_without_its_rule_is_refused_naming_the_rule() {
    let vjp_only = program(
        "vjp_only.ad",
        "def g (x : R) : R = x * x\n  with vjp (x, ct) -> 2 * x * ct\ndef f (y : R) : R = g y\n",
    );
    let run = xtask(&["grad", &vjp_only, "--at", "y=3"]);
    assert_eq!(run.code, Some(0), "{}{}", run.stdout, run.stderr);
    assert!(run.stdout.contains("grad y = 6"), "{}", run.stdout);
    let run = xtask(&["grad", &vjp_only, "--at", "y=3", "--via", "forward"]);
    assert_eq!(run.code, Some(1), "{}{}", run.stdout, run.stderr);
    assert!(
        run.stderr.contains("forward mode needs a `jvp` rule"),
        "{}",
        run.stderr
    );
    let jvp_only = program(
        "jvp_only.ad",
        "def g (x : R) : R = x * x\n  with jvp (x, dx) -> 2 * x * dx\ndef f (y : R) : R = g y\n",
    );
    for via in ["unf", "direct"] {
        let run = xtask(&["grad", &jvp_only, "--at", "y=3", "--via", via]);
        assert_eq!(run.code, Some(1), "{via}: {}{}", run.stdout, run.stderr);
        assert!(
            run.stderr.contains("reverse mode needs a `vjp` rule"),
            "{via}: {}",
            run.stderr
        );
    }
    // Evaluation ignores the rules.
    let run = xtask(&["eval", &jvp_only, "--at", "y=3"]);
    assert_eq!(run.code, Some(0), "{}{}", run.stdout, run.stderr);
    assert_eq!(run.stdout.trim(), "9");
}

#[test]
fn a_rule_capturing_a_variable_is_an_error_at_the_variable() {
    let captures = program(
        "captures.ad",
        "def f (x : R) : R = sin x\n  with jvp (y, dy) -> cos x * dy\n",
    );
    let run = xtask(&["grad", &captures, "--at", "x=1"]);
    assert_eq!(run.code, Some(1), "{}{}", run.stdout, run.stderr);
    assert!(
        run.stderr
            .contains("may read only its own parameters, not `x`"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains(":2:27"), "{}", run.stderr);
}
