//! Activity against the gradients themselves: a parameter reported
//! structurally zero (for every input, or at the inputs) has a gradient of
//! exact zeros, computed by reverse mode; one whose gradient has a nonzero
//! component is reported active. The fixtures' reports are snapshots
//! (`61.activity.txt`, bless with `cargo xtask bless`).

use crate::common::{compile, gradient, leaf_reals};
use inspect::activity::{self, Cut, Status};

fn zero(s: &Status) -> bool {
    !matches!(s, Status::Active)
}

/// Checks a report against the gradient at `args`; returns the failures.
fn agrees(m: &syntax::Module, report: &activity::Report, args: &[semantics::Value]) -> Vec<String> {
    let grads = gradient(m, args);
    let mut out = Vec::new();
    for e in &report.entries {
        let g = leaf_reals(&grads[e.origin.param + 1], &e.origin.path);
        let nonzero = g.iter().any(|x| *x != 0.0);
        let at = e.at_inputs.as_ref().unwrap_or(&e.status);
        if (zero(&e.status) || zero(at)) && nonzero {
            out.push(format!(
                "{}: reported {:?} / {:?} but its gradient is {g:?}",
                e.name, e.status, at
            ));
        }
    }
    out
}

fn report_of(text: &str, at: &[semantics::Value]) -> (syntax::Module, activity::Report) {
    let m = compile(text);
    let def = m.defs.last().expect("a definition").clone();
    let r = activity::analyze_at(&m, &def, at).expect("the program runs");
    let failures = agrees(&m, &r, at);
    assert!(failures.is_empty(), "{text}: {}", failures.join("\n"));
    (m, r)
}

fn cut(r: &activity::Report, name: &str) -> Option<Cut> {
    let e = r.entries.iter().find(|e| e.name == name)?;
    match e.status {
        Status::Zero(w) => Some(w.cut),
        _ => None,
    }
}

fn real(x: f64) -> semantics::Value {
    semantics::Value::Real(x)
}

#[test]
fn the_reasons_name_what_cuts_the_derivative() {
    let (_, r) = report_of(
        "def f (x : R) (y : R) : R =\n  if x > 0 then y else 2 * y",
        &[real(1.0), real(3.0)],
    );
    assert_eq!(cut(&r, "x"), Some(Cut::Compared), "{r}");
    assert_eq!(cut(&r, "y"), None, "{r}");
    let (_, r) = report_of(
        "def f (A : [n]R) (x : R) : R =\n  sum (build (length A) (fun i -> x))",
        &[semantics::Value::reals(&[1.0, 2.0]), real(3.0)],
    );
    assert_eq!(cut(&r, "A"), Some(Cut::Length), "{r}");
    let (_, r) = report_of(
        "def f (A : [n]R) (x : R) : R =\n  sum (map (fun a -> x * x) A)",
        &[semantics::Value::reals(&[1.0, 2.0]), real(3.0)],
    );
    assert_eq!(cut(&r, "A"), Some(Cut::Shape), "{r}");
    let (_, r) = report_of(
        "def f (A : [n]R) (B : [n]R) : R =\n  A[length (map (fun b -> b) B) - 1]",
        &[
            semantics::Value::reals(&[1.0, 2.0]),
            semantics::Value::reals(&[5.0, 6.0]),
        ],
    );
    assert!(
        matches!(cut(&r, "B"), Some(Cut::Length | Cut::Index)),
        "{r}"
    );
    assert_eq!(cut(&r, "A"), None, "{r}");
}

#[test]
fn at_the_inputs_an_untaken_branch_is_named() {
    let (m, r) = report_of(
        "def f (x : R) (y : R) : R =\n  if x > 0 then y else x * x",
        &[real(-1.0), real(3.0)],
    );
    let y = r.entries.iter().find(|e| e.name == "y").expect("y");
    assert_eq!(y.status, Status::Active);
    let Some(Status::Zero(w)) = y.at_inputs else {
        panic!("y should be zero at x = -1:\n{r}")
    };
    assert_eq!(w.cut, Cut::UntakenBranch);
    assert!(matches!(m.expr(w.node), syntax::Expr::If { .. }));
    assert!(
        r.to_string()
            .contains("at 2:3 `if x > 0 then y else x * x`"),
        "{r}"
    );
    // At x = 1 the same branch is taken and y is active.
    let (_, r) = report_of(
        "def f (x : R) (y : R) : R =\n  if x > 0 then y else x * x",
        &[real(1.0), real(3.0)],
    );
    let y = r.entries.iter().find(|e| e.name == "y").expect("y");
    assert_eq!(y.at_inputs, Some(Status::Active), "{r}");
}
