//! The table of partial derivatives, one scalar operation at a time:
//! gradients against central differences at points where the operation is
//! smooth, and the documented choices where it is not (docs/forward.md,
//! "The derivative table"). The Target-only derivative primitives that
//! reverse mode writes (`d1pow`, ...) are in the table too, so the programs
//! are compiled as Target text.

use crate::common;

use common::{central, compile_target, fd_close, inputs, reals, verified};
use syntax::{Fixity, Prim};

/// The gradient `(d/da, d/db)` (or `(d/da)`) of `expr` over `a`, `b`.
fn grad(
    expr: &str,
    a: f64,
    b: Option<f64>,
) -> (
    f64,
    Vec<f64>,
    Vec<(String, semantics::Value)>,
    syntax::Module,
) {
    let text = match b {
        Some(_) => format!("def f (a : R) (b : R) : R =\n  {expr}\n"),
        None => format!("def f (a : R) : R =\n  {expr}\n"),
    };
    let m = compile_target(&text);
    let g = forward::grad_program(&m, &m.defs[0], None).expect("grad");
    verified(&g);
    let (sa, sb) = (format!("{a}"), b.map(|b| format!("{b}")));
    let mut named = vec![("a", sa.as_str())];
    if let Some(sb) = &sb {
        named.push(("b", sb.as_str()));
    }
    let at = inputs(&m, None, &named);
    let out = reals(&semantics::eval_entry(&g, None, &at).expect("evaluates"));
    (out[0], out[1..].to_vec(), at, m)
}

/// Every real operation of the table (`syntax::derivatives::partials`),
/// written as an expression in a, b: its name, the expression, and whether
/// it is binary.
fn ops() -> Vec<(String, String, bool)> {
    Prim::ALL
        .iter()
        .filter(|p| syntax::derivatives::partials(**p).is_some())
        .map(|p| {
            let (sym, binary) = (p.symbol(), p.arity() == 2);
            let expr = match p.fixity() {
                Fixity::Infix(_) => format!("a {sym} b"),
                Fixity::Prefix => format!("{sym}a"),
                Fixity::Named if binary => format!("{sym} a b"),
                Fixity::Named => format!("{sym} a"),
            };
            let name = if *p == Prim::Neg { "neg" } else { sym };
            (name.to_string(), expr, binary)
        })
        .collect()
}

#[test]
fn every_scalar_primitive_outside_logic_and_arrays_is_covered() {
    // A primitive added to the IR that is not a comparison, logic, an
    // array builtin or a derivative construct must get a table entry and
    // a line here.
    for p in Prim::ALL {
        let other = matches!(
            p,
            Prim::Lt
                | Prim::Le
                | Prim::Gt
                | Prim::Ge
                | Prim::Eq
                | Prim::Ne
                | Prim::And
                | Prim::Or
                | Prim::Not
        ) || p.function_arg().is_some()
            || matches!(p, Prim::Shift1L | Prim::Shift1R | Prim::Length)
            // Array builtins with their own tests: scatter and the
            // histograms (fixtures hist_*, scatter_*; hist_add_rows:
            // hist_rows) and their partials,
            // and derivative rules (fixtures rules_*).
            || matches!(
                p,
                Prim::Scatter
                    | Prim::HistAdd
                    | Prim::HistMul
                    | Prim::HistMin
                    | Prim::HistMax
                    | Prim::HistAddRows
                    | Prim::WithRules
            )
            || syntax::hist::is_partial(*p)
            // Not differentiated: Int conversions and arithmetic, and
            // trigamma, the end of lgamma's chain (docs/derivatives.md).
            || matches!(
                syntax::derivatives::sig(*p),
                Some(
                    syntax::derivatives::Sig::IntToReal
                        | syntax::derivatives::Sig::RealToInt
                        | syntax::derivatives::Sig::Int
                )
            )
            || *p == Prim::Trigamma;
        let listed = ops()
            .iter()
            .any(|(name, _, _)| *name == p.symbol() || (*name == "neg" && *p == Prim::Neg));
        assert!(other || listed, "no test of the derivative of `{p}`");
        assert!(!(other && listed), "`{p}`");
    }
}

#[test]
fn smooth_points_agree_with_central_differences() {
    let points = [(0.7, 1.3), (1.9, -0.4), (0.2, 2.5), (3.0, 0.5)];
    for (name, expr, binary) in &ops() {
        for (a, b) in points {
            if *name == "max" || *name == "min" {
                // smooth away from the tie a = b; all points have a != b
                assert!(a != b);
            }
            let (_, ad, at, m) = grad(expr, a, binary.then_some(b));
            let da = central(&m, &at, "a")[0][0];
            assert!(
                fd_close(ad[0], da),
                "{name} d/da at ({a}, {b}): {} vs {da}",
                ad[0]
            );
            if *binary {
                let db = central(&m, &at, "b")[0][0];
                assert!(
                    fd_close(ad[1], db),
                    "{name} d/db at ({a}, {b}): {} vs {db}",
                    ad[1]
                );
            }
        }
    }
}

#[test]
fn chosen_derivatives_at_non_differentiable_points() {
    // abs at 0: -1 (`abs a` is `max a (-a)`, a tie goes to `-a`).
    assert_eq!(grad("abs a", 0.0, None).1, vec![-1.0]);
    assert_eq!(grad("max a (-a)", 0.0, None).1, vec![-1.0]);
    // The derivative primitives keep the conventions: d2pow is 0 where the
    // base is not positive, in both arguments; d1pow's partial in the
    // exponent is `pow a (b - 1) + b * d2pow a (b - 1)`, so `pow a (b - 1)`
    // alone there; dabs is constant.
    assert_eq!(grad("d2pow a b", -2.0, Some(3.0)).1, vec![0.0, 0.0]);
    assert_eq!(grad("d1pow a b", -2.0, Some(3.0)).1, vec![-12.0, 4.0]);
    assert_eq!(grad("dabs a", 0.0, None).1, vec![0.0]);
    // max and min on a tie: the derivative flows to the second argument,
    // as for `if a > b then a else b` and `if a < b then a else b`.
    assert_eq!(grad("max a b", 1.5, Some(1.5)).1, vec![0.0, 1.0]);
    assert_eq!(grad("min a b", 1.5, Some(1.5)).1, vec![0.0, 1.0]);
    // sqrt at 0: +inf, as IEEE says.
    let d = grad("sqrt a", 0.0, None).1[0];
    assert!(d.is_infinite() && d > 0.0, "{d}");
    // pow with a negative base and an integral exponent: the exponent's
    // partial is 0 there, so a constant exponent gives no NaN.
    let (v, g, _, _) = grad("pow a b", -2.0, Some(3.0));
    assert_eq!(v, -8.0);
    assert_eq!(g, vec![12.0, 0.0]);
    let (_, g, _, _) = grad("pow a 3", -2.0, None);
    assert_eq!(g, vec![12.0]);
    // pow at a zero base: d/da = b * 0^(b-1), d/db = 0.
    assert_eq!(grad("pow a b", 0.0, Some(2.0)).1, vec![0.0, 0.0]);
    // The conditional of relu: the branch the primal takes, at 0 the else.
    assert_eq!(grad("if a > 0 then a else 0", 0.0, None).1, vec![0.0]);
}
