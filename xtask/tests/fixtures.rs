//! Every fixture through the command line: `eval` prints its `-- value`
//! and `grad` prints its `-- grad` lines, by every route, compared with the
//! language's tolerance (rel 1e-9, abs 1e-12) after reading the printed
//! values back against the entry's types.

use crate::common;

use common::{fixtures, workspace, xtask};
use semantics::{Expectations, Value};
use syntax::{Module, SourceFile};

fn compile(case: &str) -> (Module, Expectations) {
    let path = format!("{case}/program.ad");
    let text = std::fs::read_to_string(workspace().join(&path)).expect("program.ad is readable");
    let m = syntax::compile(SourceFile {
        name: path,
        text: text.clone(),
    })
    .expect("fixtures compile");
    (m, Expectations::parse(&text))
}

fn close(printed: &str, expected: &Value, ty: &syntax::Ty) -> Result<(), String> {
    let got = semantics::parse_value(printed, ty)
        .map_err(|e| format!("cannot read `{printed}` back: {e}"))?;
    if got.approx_eq(expected, semantics::REL_TOL, semantics::ABS_TOL) {
        Ok(())
    } else {
        Err(format!("printed {got}, expected {expected}"))
    }
}

#[test]
fn eval_prints_every_fixture_value() {
    let mut failures = Vec::new();
    let mut checked = 0;
    for case in fixtures() {
        let (m, exp) = compile(&case);
        let entry = m.defs.last().expect("a fixture has a definition");
        let Some(expected) = exp.value(&m, entry) else {
            continue;
        };
        checked += 1;
        let expected = expected.expect("the -- value line reads");
        let run = xtask(&["eval", &format!("{case}/program.ad")]);
        if run.code != Some(0) {
            failures.push(format!("{case}: exit {:?}: {}", run.code, run.stderr));
            continue;
        }
        let ty = entry.ret.as_ref().expect("core form types the result");
        if let Err(e) = close(run.stdout.trim(), &expected, ty) {
            failures.push(format!("{case}: {e}"));
        }
    }
    assert!(checked >= 14, "only {checked} fixtures have a value line");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Runs `grad --via ROUTE` on every fixture with `-- grad` lines and
/// compares; returns the failures.
fn check_route(route: &str, skip: &[&str]) -> Vec<String> {
    check_route_with(route, &[], skip)
}

/// [`check_route`] with more arguments to `grad` (`--no-opt`).
fn check_route_with(route: &str, extra: &[&str], skip: &[&str]) -> Vec<String> {
    let mut failures = Vec::new();
    let mut checked = 0;
    for case in fixtures() {
        if skip.iter().any(|s| case.ends_with(s)) {
            continue;
        }
        let (m, exp) = compile(&case);
        if exp.grads.is_empty() {
            continue;
        }
        checked += 1;
        let entry = m.defs.last().expect("a fixture has a definition");
        let file = format!("{case}/program.ad");
        let mut args = vec!["grad", file.as_str(), "--via", route];
        args.extend_from_slice(extra);
        let run = xtask(&args);
        if run.code != Some(0) {
            failures.push(format!("{case}: exit {:?}: {}", run.code, run.stderr));
            continue;
        }
        let mut lines = run.stdout.lines();
        let value_line = lines.next().unwrap_or_default();
        if let (Some(v), Some(expected)) =
            (value_line.strip_prefix("value = "), exp.value(&m, entry))
        {
            let ty = entry.ret.as_ref().expect("typed");
            if let Err(e) = close(v, &expected.expect("value reads"), ty) {
                failures.push(format!("{case}: value: {e}"));
            }
        } else if !value_line.starts_with("value = ") {
            failures.push(format!("{case}: first line `{value_line}`"));
        }
        for p in &entry.params {
            let line = lines.next().unwrap_or_default();
            let Some(printed) = line.strip_prefix(&format!("grad {} = ", p.name)) else {
                failures.push(format!(
                    "{case}: expected `grad {} = ...`, got `{line}`",
                    p.name
                ));
                continue;
            };
            if let Some(expected) = exp.grad(entry, p.name.as_str()) {
                let ty = p.ty.as_ref().expect("typed");
                if let Err(e) = close(printed, &expected.expect("grad reads"), ty) {
                    failures.push(format!("{case}: grad {}: {e}", p.name));
                }
            }
        }
    }
    if checked + skip.len() < 12 {
        failures.push(format!("only {checked} fixtures were checked via {route}"));
    }
    failures
}

#[test]
fn grad_via_forward_prints_every_fixture_gradient() {
    let failures = check_route("forward", &[]);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn grad_via_unf_prints_every_fixture_gradient() {
    // The default route: every fixture, conditionals, folds and the
    // non-smooth operators included (seeds/000 Section 7, Appendix A).
    let failures = check_route("unf", &[]);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn grad_without_optimization_prints_every_fixture_gradient() {
    // The raw output of each reverse route, before partial evaluation.
    let mut failures = check_route_with("unf", &["--no-opt"], &[]);
    failures.extend(check_route_with(
        "direct",
        &["--no-opt"],
        &[
            "gmm",
            "fuzz_build_size",
            "fuzz_fold_in_init",
            "int_rounding",
            "hvp_rev",
            "vjp_rev_map",
        ],
    ));
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn entries_without_parameters_and_nested_derivatives_by_every_route() {
    // seeds/002 Example 182.15 has no parameter: the gradient program
    // returns the value alone and `grad` prints it with no `grad` line.
    // Exercise 182.3 is the constant 2, whose derivative is 0. Both go
    // through forward mode's expansion of `diff` first, then every route.
    let cases = [
        ("nested_diff_182_15", "value = 1\n"),
        ("second_derivative", "value = 2\ngrad x = 0\n"),
    ];
    let mut failures = Vec::new();
    for (case, want) in cases {
        let file = format!("fixtures/{case}/program.ad");
        for via in ["unf", "direct", "forward"] {
            for extra in [&[][..], &["--no-opt"], &["--backend", "c"]] {
                let mut args = vec!["grad", file.as_str(), "--via", via];
                args.extend_from_slice(extra);
                let run = xtask(&args);
                if run.code != Some(0) || run.stdout != want {
                    failures.push(format!(
                        "{args:?}: exit {:?}, printed\n{}{}",
                        run.code, run.stdout, run.stderr
                    ));
                }
            }
        }
        let run = xtask(&["check-grad", file.as_str()]);
        if run.code != Some(0) || !run.stdout.ends_with("all paths agree\n") {
            failures.push(format!(
                "check-grad {case}: exit {:?}\n{}{}",
                run.code, run.stdout, run.stderr
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn the_branch_not_taken_does_not_reach_the_gradient() {
    // `if x > 0 then log x else x * x` at x = -2: -4, not NaN, by default.
    let run = xtask(&["grad", "fixtures/log_or_square/program.ad"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert_eq!(run.stdout, "value = 4\ngrad x = -4\n");
}

#[test]
fn grad_via_direct_prints_every_first_order_fixture_gradient() {
    // The direct macro covers the paper's Fig. 5 language with Section 7's
    // free variables and conditionals and Fig. 16's foldl (docs/direct.md);
    // `build`, `ifold`, `length` and indexing (GMM, fuzz_build_size) go
    // through the UNF path.
    let failures = check_route(
        "direct",
        &[
            "gmm",
            "fuzz_build_size",
            "fuzz_fold_in_init",
            "int_rounding",
        ],
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn the_c_backend_prints_exactly_what_the_evaluator_prints() {
    let mut failures = Vec::new();
    let mut checked = 0;
    for case in fixtures() {
        let file = format!("{case}/program.ad");
        for command in ["eval", "grad"] {
            let reference = xtask(&[command, &file]);
            if reference.code != Some(0) {
                continue; // Refused by the route (see the other tests).
            }
            let c = xtask(&[command, &file, "--backend", "c"]);
            checked += 1;
            if c.code != Some(0) || c.stdout != reference.stdout {
                failures.push(format!(
                    "{case} {command}: evaluator printed\n{}C backend (exit {:?}) printed\n{}{}",
                    reference.stdout, c.code, c.stdout, c.stderr
                ));
            }
        }
    }
    assert!(checked >= 20, "only {checked} runs compared");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
