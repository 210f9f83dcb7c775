//! The NaN hazards lint against the gradients: where it says "unsafe",
//! reverse mode gives NaN at a point where the value is finite; where it
//! says "safe", the gradient stays finite at the singular points of the
//! untaken side. The fixtures' reports are snapshots (`62.nan-hazards.txt`).

use crate::common::{self, compile, gradient, reals};
use inspect::hazards::{self, Place};
use semantics::Value;

fn lint(text: &str) -> (syntax::Module, hazards::Report) {
    let m = compile(text);
    let def = m.defs.last().expect("a definition").clone();
    let r = hazards::lint(&m, &def);
    (m, r)
}

fn finite(vs: &[Value]) -> bool {
    vs.iter().flat_map(reals).all(f64::is_finite)
}

#[test]
fn untaken_branch_is_flagged_safe_and_relu_prod_sum_dot_not_at_all() {
    let dir = common::workspace().join("fixtures");
    let m = common::source(&dir.join("untaken_branch"));
    let r = hazards::lint(&m, m.defs.last().expect("a definition"));
    let ops: Vec<&str> = r
        .findings
        .iter()
        .map(|f| match m.expr(f.op) {
            syntax::Expr::Prim { op, .. } => op.symbol(),
            _ => "?",
        })
        .collect();
    assert_eq!(ops, ["sqrt", "log"], "{r}");
    assert!(r.findings.iter().all(|f| f.safe()), "{r}");
    // The fixture's own gradient at x = -1 and x = 0 (the untaken side's
    // singular points) is finite: -2 and 0.
    for case in [
        "relu_abs",
        "relu_at_zero",
        "relu_max",
        "relu_sum",
        "prod",
        "sum",
        "dot",
    ] {
        let m = common::source(&dir.join(case));
        let r = hazards::lint(&m, m.defs.last().expect("a definition"));
        assert!(r.findings.is_empty(), "{case}: {r}");
    }
}

/// `(program, singular input, place)`: the lint says unsafe, and reverse
/// mode indeed gives NaN where the value is finite.
const UNSAFE: &[(&str, f64, &str)] = &[
    ("def f (x : R) : R =\n  max (log x) 0", 0.0, "max"),
    ("def f (x : R) : R =\n  min 0 (sqrt x + 1) - 1", 0.0, "max"),
    (
        "def f (x : R) : R =\n  let l = log x in\n  if x > 0 then l else 0",
        0.0,
        "before",
    ),
    ("def f (x : R) : R =\n  max (pow x 0.5) 1", 0.0, "max"),
    ("def f (x : R) : R =\n  min (1 / x) 0 + x", 0.0, "max"),
];

#[test]
fn unsafe_findings_are_nan_in_reverse_mode() {
    for (text, x, place) in UNSAFE {
        let (m, r) = lint(text);
        assert!(!r.findings.is_empty(), "{text}: no finding");
        assert!(r.findings.iter().all(|f| !f.safe()), "{text}: {r}");
        let expected = |p: &Place| match p {
            Place::UnderMaxMin(_) => *place == "max",
            Place::BeforeIf(_) => *place == "before",
            Place::InBranch(_) => false,
        };
        assert!(r.findings.iter().all(|f| expected(&f.place)), "{text}: {r}");
        let out = gradient(&m, &[Value::Real(*x)]);
        let value = reals(&out[0]);
        let grad = reals(&out[1]);
        assert!(
            value.iter().all(|v| v.is_finite()),
            "{text}: value {value:?}"
        );
        assert!(
            grad.iter().any(|g| g.is_nan()),
            "{text}: gradient {grad:?} is not NaN"
        );
        assert!(r.to_string().contains("UNSAFE"), "{r}");
    }
    // Under a fold: `max` of square roots, one of them at 0. The fold's
    // function is not a bare `max` of its parameters, so reverse mode
    // takes the general fold and the losing root's adjoint is 0 · inf.
    let (m, r) = lint(
        "def f (A : [n]R) : R =\n  reduce (fun (a, b) -> max a (b * 1)) 0 (map (fun x -> sqrt x) A)",
    );
    assert!(matches!(r.findings.as_slice(), [f] if !f.safe()), "{r}");
    let out = gradient(&m, &[Value::reals(&[0.0, 4.0])]);
    assert!(reals(&out[1])[0].is_nan(), "{:?}", reals(&out[1]));
    // A bare `max` reduction over the map selects its winner and runs the
    // map's adjoint at the winner only (unf's select.rs and picked.rs):
    // the gradient is finite. The lint, which does not tell the elements
    // of an array apart, still flags it: a conservative finding.
    let (m, r) = lint(
        "def f (A : [n]R) : R =\n  reduce (fun (a, b) -> max a b) 0 (map (fun x -> sqrt x) A)",
    );
    assert!(matches!(r.findings.as_slice(), [f] if !f.safe()), "{r}");
    let out = gradient(&m, &[Value::reals(&[0.0, 4.0])]);
    assert_eq!(reals(&out[1]), vec![0.0, 0.25]);
}

/// Programs whose singular operation is safe (inside the branch taken),
/// or where the untaken side still gets an adjoint: the gradient is
/// finite at every singular point listed.
const SAFE: &[(&str, &[f64], usize)] = &[
    (
        "def f (x : R) : R =\n  if x > 0 then sqrt x * log x else 0",
        &[0.0, -1.0],
        2,
    ),
    (
        "def f (x : R) : R =\n  if x > 0 then log x else if x < -1 then sqrt (0 - x) else x",
        &[0.0, -0.5],
        2,
    ),
    (
        "def f (x : R) : R =\n  let l = log (x * x + 1) in\n  if x > 0 then l else 2 * l",
        &[0.0],
        0,
    ),
    (
        "def f (x : R) : R =\n  max (x / 2) (pow x 2) + pow x 3",
        &[0.0],
        0,
    ),
];

#[test]
fn safe_findings_stay_finite_in_reverse_mode() {
    for (text, points, n) in SAFE {
        let (m, r) = lint(text);
        assert_eq!(r.findings.len(), *n, "{text}: {r}");
        assert!(r.findings.iter().all(|f| f.safe()), "{text}: {r}");
        for x in *points {
            let out = gradient(&m, &[Value::Real(*x)]);
            assert!(
                finite(&out),
                "{text} at {x}: {:?}",
                out.iter().flat_map(reals).collect::<Vec<_>>()
            );
        }
    }
}
