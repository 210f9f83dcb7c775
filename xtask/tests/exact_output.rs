//! Two fixtures whose printed output is known exactly: an entry without
//! parameters and a nested derivative, by every route, optimized or not,
//! on both backends; and the branch not taken of `log_or_square`. (Every
//! fixture's printed values are checked by the fixture runner, `cli::*`.)

use crate::common::xtask;

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
fn a_selection_over_no_elements_gives_the_initial_value_the_cotangent() {
    // With no centroids the nearest distance is the initial value inf and
    // the farthest 35: the winner index is -1, and the guarded transpose
    // of the map (unf's picked.rs) must read no centroid and give an empty
    // gradient, on both backends, optimized or not.
    let file = "fixtures/select_nearest/program.ad";
    let mut failures = Vec::new();
    for extra in [&[][..], &["--no-opt"], &["--backend", "c"]] {
        let mut args = vec!["grad", file, "--at", "P=[[0, 0], [1, 2]]", "--at", "C=[]"];
        args.extend_from_slice(extra);
        let run = xtask(&args);
        let want = "value = inf\ngrad P = [[0, 0], [0, 0]]\ngrad C = []\n";
        if run.code != Some(0) || run.stdout != want {
            failures.push(format!(
                "{args:?}: exit {:?}, printed\n{}{}",
                run.code, run.stdout, run.stderr
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
