//! The higher-order programs of issue 20 ("specialisation that always
//! works") through every command, route and backend: a helper that takes a
//! function (`ho_twice`), a helper that differentiates the function it is
//! given (`ho_diff_helper`), an unused higher-order helper next to an entry
//! that needs specialising (`ho_unused_helper`), and a derivative construct
//! over `pow` and `abs` followed by reverse mode (`diff_pow_abs`).
//!
//! Oracles: the `-- value` and `-- grad` comments (worked out by hand in each
//! fixture), every route against every other and the C backend against the
//! evaluator (the same printed text), `jvp` along 1 against the gradient,
//! and the Hessian against central differences of the printed gradient.

use crate::common::{Run, xtask};

const CASES: [&str; 4] = [
    "ho_twice",
    "ho_diff_helper",
    "ho_unused_helper",
    "diff_pow_abs",
];

fn ok(args: &[&str]) -> Result<String, String> {
    let run: Run = xtask(args);
    if run.code == Some(0) {
        Ok(run.stdout)
    } else {
        Err(format!("{args:?}: exit {:?}\n{}", run.code, run.stderr))
    }
}

/// The number after `prefix` on the line that starts with it.
fn number(out: &str, prefix: &str) -> Result<f64, String> {
    out.lines()
        .find_map(|l| l.strip_prefix(prefix))
        .ok_or_else(|| format!("no `{prefix}` line in\n{out}"))?
        .trim()
        .parse()
        .map_err(|e| format!("`{prefix}` in\n{out}: {e}"))
}

/// The `-- at x = V` input of a fixture.
fn at(case: &str) -> f64 {
    let text = std::fs::read_to_string(
        crate::common::workspace().join(format!("fixtures/{case}/program.ad")),
    )
    .expect("the fixture exists");
    text.lines()
        .find_map(|l| l.strip_prefix("-- at x = "))
        .and_then(|v| v.trim().parse().ok())
        .expect("an `-- at x = V` line")
}

fn close(a: f64, b: f64, rel: f64) -> bool {
    (a - b).abs() <= rel * (1.0 + a.abs().max(b.abs()))
}

fn check(case: &str) -> Result<(), String> {
    let file = format!("fixtures/{case}/program.ad");
    let file = file.as_str();
    let reference = ok(&["grad", file])?;
    for via in ["unf", "direct", "forward"] {
        for extra in [&[][..], &["--no-opt"], &["--backend", "c"]] {
            let mut args = vec!["grad", file, "--via", via];
            args.extend_from_slice(extra);
            let out = ok(&args)?;
            let (v, g) = (number(&out, "value = ")?, number(&out, "grad x = ")?);
            let (rv, rg) = (
                number(&reference, "value = ")?,
                number(&reference, "grad x = ")?,
            );
            if !close(v, rv, 1e-12) || !close(g, rg, 1e-12) {
                return Err(format!(
                    "{args:?} printed\n{out}the default route\n{reference}"
                ));
            }
        }
    }
    let value = number(&reference, "value = ")?;
    let grad = number(&reference, "grad x = ")?;
    for extra in [&[][..], &["--backend", "c"]] {
        let mut args = vec!["eval", file];
        args.extend_from_slice(extra);
        let out = ok(&args)?;
        let v: f64 = out.trim().parse().map_err(|e| format!("{args:?}: {e}"))?;
        if !close(v, value, 1e-12) {
            return Err(format!("{args:?} printed {v}, grad printed value {value}"));
        }
    }
    let jvp = ok(&["jvp", file, "--tangent", "x=1"])?;
    if !close(number(&jvp, "tangent = ")?, grad, 1e-12) {
        return Err(format!(
            "jvp along 1 printed\n{jvp}but the gradient is {grad}"
        ));
    }
    let hessian = ok(&["hessian", file])?;
    let h = number(&hessian, "hessian x x = ")?;
    let x = at(case);
    let step = 1e-5 * x.abs().max(1.0);
    let grad_at = |x: f64| -> Result<f64, String> {
        let at = format!("x={x:?}");
        number(&ok(&["grad", file, "--at", &at])?, "grad x = ")
    };
    let fd = (grad_at(x + step)? - grad_at(x - step)?) / (2.0 * step);
    if !close(h, fd, 1e-6) {
        return Err(format!(
            "hessian printed\n{hessian}central differences give {fd}"
        ));
    }
    Ok(())
}

#[test]
fn higher_order_helpers_go_through_every_route_and_backend() {
    let failures: Vec<String> = CASES.iter().filter_map(|c| check(c).err()).collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn a_helper_that_cannot_be_specialised_does_not_block_another_entry() {
    // `pick` chooses a function at run time, so it has no first-order form;
    // reverse mode differentiates `f` regardless, and refuses `pick` itself
    // with the first-order check's message, at the application.
    let file = crate::common::write_program(
        "higher-order-pick.ad",
        "def pick (b : Bool) (x : R) : R = (if b then fun (y : R) -> y else fun (y : R) -> 2 * y) x\n\
         def f (x : R) : R = let h = fun y -> y * exp y in h x\n",
    );
    let file = file.as_str();
    for via in ["unf", "direct"] {
        let out =
            ok(&["grad", file, "--at", "x=0.5", "--via", via]).unwrap_or_else(|e| panic!("{e}"));
        assert!(out.starts_with("value = 0.8243606353500641\n"), "{out}");
    }
    let run = xtask(&[
        "grad", file, "--entry", "pick", "--at", "b=true", "--at", "x=1",
    ]);
    assert_eq!(run.code, Some(1), "{}{}", run.stdout, run.stderr);
    assert!(
        run.stderr
            .contains("a function application is not first-order"),
        "{}",
        run.stderr
    );
}
