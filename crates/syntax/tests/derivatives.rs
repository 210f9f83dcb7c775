//! The table of primitives (`syntax::derivatives`): every arithmetic
//! primitive has its value and its partials, and the partials agree with
//! central finite differences of the value at random points of each
//! primitive's domain, and with the documented choices at kinks.

use proptest::prelude::*;
use syntax::Prim;
use syntax::derivatives::{self, Sig};

/// The arithmetic primitives: those with a typing class.
fn arithmetic() -> Vec<Prim> {
    Prim::ALL
        .iter()
        .copied()
        .filter(|&p| derivatives::sig(p).is_some())
        .collect()
}

/// The point of `op`'s domain that the unit numbers `u` pick, where `op`
/// is smooth, or `None` near a kink (a finite difference is a fair oracle
/// only away from them).
fn smooth_point(op: Prim, u: [f64; 2]) -> Option<Vec<f64>> {
    let at = |lo: f64, hi: f64, u: f64| lo + (hi - lo) * u;
    let x: Vec<f64> = (0..op.arity())
        .map(|i| match (op, i) {
            // Positive bases, moderate exponents.
            (Prim::Pow | Prim::D1Pow | Prim::D2Pow, 0) => at(0.2, 3.0, u[i]),
            (Prim::Pow | Prim::D1Pow | Prim::D2Pow, _) => at(-2.0, 2.5, u[i]),
            (Prim::Log | Prim::Sqrt, _) => at(0.1, 5.0, u[i]),
            (Prim::Tan | Prim::DTan, _) => at(-1.2, 1.2, u[i]),
            _ => at(-3.0, 3.0, u[i]),
        })
        .collect();
    let far_from_kinks = match op {
        Prim::Abs | Prim::DAbs => x[0].abs() > 1e-3,
        Prim::Max | Prim::Min => (x[0] - x[1]).abs() > 1e-3,
        Prim::Div | Prim::D2Div => x[1].abs() > 0.3,
        _ => true,
    };
    far_from_kinks.then_some(x)
}

#[test]
fn every_arithmetic_primitive_has_a_value_and_partials() {
    for op in arithmetic() {
        let ps = derivatives::partials(op).unwrap_or_else(|| panic!("`{op}` has no partials"));
        assert_eq!(ps.len(), op.arity(), "`{op}`: one partial per argument");
        let x = vec![0.5; op.arity()];
        assert!(derivatives::eval(op, &x).is_some(), "`{op}` has no value");
        assert!(derivatives::eval_partials(op, &x).is_some(), "`{op}`");
    }
    // Nothing else has any.
    for &op in Prim::ALL {
        if derivatives::sig(op).is_none() {
            assert!(derivatives::partials(op).is_none(), "`{op}`");
        }
    }
    // The Target-only derivative primitives are all in the table.
    for &op in Prim::ALL.iter().filter(|p| p.is_target_only()) {
        assert_eq!(derivatives::sig(op), Some(Sig::Real), "`{op}`");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn partials_agree_with_finite_differences(k in 0usize..64, u0 in 0.0..1.0f64, u1 in 0.0..1.0f64) {
        let ops = arithmetic();
        let op = ops[k % ops.len()];
        let Some(x) = smooth_point(op, [u0, u1]) else {
            return Ok(());
        };
        let got = derivatives::eval_partials(op, &x).expect("partials");
        for (i, &g) in got.iter().enumerate() {
            let h = 1e-6 * x[i].abs().max(1.0);
            let (mut lo, mut hi) = (x.clone(), x.clone());
            lo[i] -= h;
            hi[i] += h;
            let f = |p: &[f64]| derivatives::eval(op, p).expect("value");
            let fd = (f(&hi) - f(&lo)) / (2.0 * h);
            let tol = 1e-5 * (1.0 + fd.abs().max(g.abs()));
            prop_assert!(
                (g - fd).abs() <= tol,
                "∂{} `{}` at {:?}: table {}, finite difference {}",
                i + 1, op, x, g, fd
            );
        }
    }
}

#[test]
fn the_choices_at_kinks() {
    let d = |op: Prim, x: &[f64]| derivatives::eval_partials(op, x).expect("partials");
    // abs x = max x (-x): a tie goes to -x.
    assert_eq!(d(Prim::Abs, &[0.0]), [-1.0]);
    assert_eq!(d(Prim::Abs, &[f64::NAN]), [-1.0]);
    assert_eq!(d(Prim::Abs, &[1e-300]), [1.0]);
    // max and min: a tie sends the derivative to the second argument.
    assert_eq!(d(Prim::Max, &[2.0, 2.0]), [0.0, 1.0]);
    assert_eq!(d(Prim::Min, &[2.0, 2.0]), [0.0, 1.0]);
    // pow: the exponent's partial is 0 for a base <= 0, not NaN.
    assert_eq!(d(Prim::Pow, &[-2.0, 3.0]), [12.0, 0.0]);
    assert!(d(Prim::Pow, &[0.0, 0.0])[0].is_nan());
    // Poles: IEEE's infinities.
    assert_eq!(d(Prim::Sqrt, &[0.0]), [f64::INFINITY]);
    assert_eq!(d(Prim::Log, &[0.0]), [f64::INFINITY]);
    assert_eq!(
        d(Prim::Div, &[1.0, 0.0]),
        [f64::INFINITY, f64::NEG_INFINITY]
    );
}

#[test]
fn the_derivative_primitives_are_the_expansions_they_replace() {
    let pts = [-2.0, -0.5, 0.0, 0.3, 1.0, 2.5];
    let v = |op: Prim, x: &[f64]| derivatives::eval(op, x).expect("value");
    for &x in &pts {
        for &y in &pts {
            let d1 = v(Prim::D1Pow, &[x, y]);
            let want = y * x.powf(y - 1.0);
            assert!(d1 == want || (d1.is_nan() && want.is_nan()), "{x} {y}");
            let want = if x > 0.0 { x.ln() * x.powf(y) } else { 0.0 };
            assert_eq!(v(Prim::D2Pow, &[x, y]), want, "{x} {y}");
        }
        let t = x.tan();
        assert_eq!(v(Prim::DTan, &[x]), 1.0 + t * t);
        let t = x.tanh();
        assert_eq!(v(Prim::DTanh, &[x]), 1.0 - t * t);
    }
    assert_eq!(v(Prim::D2Div, &[3.0, 2.0]), -0.75);
    assert_eq!(derivatives::eval(Prim::Pow, &[2.0]), None);
    assert_eq!(derivatives::eval(Prim::Map, &[2.0]), None);
}

#[test]
fn the_result_is_read_only_where_a_partial_mentions_it() {
    for op in arithmetic() {
        let x = vec![0.7; op.arity()];
        let honest = derivatives::eval_partials(op, &x).expect("partials");
        // Evaluating every term with a wrong result changes nothing
        // unless the table says the result is used.
        let ps = derivatives::partials(op).expect("partials");
        let lied: Vec<f64> = ps
            .iter()
            .map(|p| match p {
                derivatives::Partial::One => 1.0,
                derivatives::Partial::MinusOne => -1.0,
                derivatives::Partial::Term(t) => derivatives::eval_term(t, &x, 1e9),
            })
            .collect();
        assert_eq!(
            honest != lied,
            derivatives::uses_result(op),
            "`{op}`: uses_result disagrees with its terms"
        );
    }
}
