//! The table of primitives (`syntax::derivatives`): every arithmetic
//! primitive has its value and its partials, and the partials agree with
//! central finite differences of the value at random points of each
//! primitive's domain, and with the documented choices at kinks.

use proptest::prelude::*;
use syntax::Prim;
use syntax::derivatives::{self, Sig};

/// The differentiable primitives: those of class `Real` or `Numeric`,
/// but `trigamma`, the documented end of `lgamma`'s chain.
fn arithmetic() -> Vec<Prim> {
    Prim::ALL
        .iter()
        .copied()
        .filter(|&p| {
            matches!(derivatives::sig(p), Some(Sig::Real | Sig::Numeric)) && p != Prim::Trigamma
        })
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
            (Prim::Log1p, _) => at(-0.9, 5.0, u[i]),
            // Away from the poles at 0, -1, ...: both sides of them.
            (Prim::Lgamma | Prim::Digamma, _) if u[i] < 0.2 => at(-2.8, -2.2, u[i] / 0.2),
            (Prim::Lgamma | Prim::Digamma, _) => at(0.2, 30.0, (u[i] - 0.2) / 0.8),
            (Prim::Tan | Prim::DTan, _) => at(-1.2, 1.2, u[i]),
            _ => at(-3.0, 3.0, u[i]),
        })
        .collect();
    let far_from_kinks = match op {
        Prim::Abs | Prim::DAbs => x[0].abs() > 1e-3,
        Prim::Max | Prim::Min => (x[0] - x[1]).abs() > 1e-3,
        Prim::Div | Prim::D2Div => x[1].abs() > 0.3,
        Prim::Sign => x[0].abs() > 1e-3,
        Prim::Atan2 | Prim::Hypot => x[0].hypot(x[1]) > 0.3,
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
        if !arithmetic().contains(&op) {
            assert!(derivatives::partials(op).is_none(), "`{op}`");
        }
    }
    // The Target-only derivative primitives are all in the table.
    for &op in Prim::ALL
        .iter()
        .filter(|p| p.is_target_only() && !syntax::hist::is_partial(**p))
    {
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

#[test]
fn the_new_functions_at_their_kinks_and_special_points() {
    let d = |op: Prim, x: &[f64]| derivatives::eval_partials(op, x).expect("partials");
    let v = |op: Prim, x: &[f64]| derivatives::eval(op, x).expect("value");
    // sign: 0 keeps its sign, NaN stays NaN; derivative 0 at 0 too.
    assert_eq!(v(Prim::Sign, &[-3.0]), -1.0);
    assert_eq!(v(Prim::Sign, &[0.0]).to_bits(), 0.0f64.to_bits());
    assert_eq!(v(Prim::Sign, &[-0.0]).to_bits(), (-0.0f64).to_bits());
    assert!(v(Prim::Sign, &[f64::NAN]).is_nan());
    assert_eq!(d(Prim::Sign, &[0.0]), [0.0]);
    // atan2 at the origin: 0 / 0.
    assert!(d(Prim::Atan2, &[0.0, 0.0]).iter().all(|p| p.is_nan()));
    assert_eq!(v(Prim::Atan2, &[1.0, 0.0]), std::f64::consts::FRAC_PI_2);
    // hypot at a Pythagorean triple, without overflow, and its
    // subgradient 0 at the origin.
    assert_eq!(v(Prim::Hypot, &[3.0, 4.0]), 5.0);
    assert_eq!(d(Prim::Hypot, &[3.0, -4.0]), [0.6, -0.8]);
    // No overflow where x² would be inf (libm: within an ulp).
    assert!((v(Prim::Hypot, &[3e200, 4e200]) / 5e200 - 1.0).abs() < 1e-15);
    assert_eq!(d(Prim::Hypot, &[0.0, 0.0]), [0.0, 0.0]);
    // sigmoid saturates without NaN; its derivative vanishes.
    assert_eq!(v(Prim::Sigmoid, &[-800.0]), 0.0);
    assert_eq!(v(Prim::Sigmoid, &[800.0]), 1.0);
    assert_eq!(d(Prim::Sigmoid, &[0.0]), [0.25]);
    // Known values of the gamma family.
    let euler = 0.577_215_664_901_532_9;
    assert!((v(Prim::Digamma, &[1.0]) + euler).abs() < 1e-15);
    assert!((v(Prim::Trigamma, &[1.0]) - std::f64::consts::PI.powi(2) / 6.0).abs() < 1e-15);
    assert!((v(Prim::Digamma, &[0.5]) + euler + 2.0 * 2f64.ln()).abs() < 1e-15);
    assert!((v(Prim::Lgamma, &[5.0]) - 24f64.ln()).abs() < 1e-14);
    assert!(v(Prim::Digamma, &[0.0]).is_nan());
    assert!(v(Prim::Digamma, &[-2.0]).is_nan());
    assert_eq!(v(Prim::Trigamma, &[-1.0]), f64::INFINITY);
    assert_eq!(v(Prim::Erf, &[0.0]), 0.0);
    assert_eq!(d(Prim::Erf, &[0.0]), [std::f64::consts::FRAC_2_SQRT_PI]);
    assert_eq!(d(Prim::Log1p, &[-1.0]), [f64::INFINITY]);
}

#[test]
fn integer_division_floors_and_mod_takes_the_divisor_sign() {
    use derivatives::{Undefined, eval_int};
    for a in -9i64..=9 {
        for b in (-4i64..=4).filter(|&b| b != 0) {
            let q = eval_int(Prim::Div, a, b).expect("div").expect("value");
            let r = eval_int(Prim::Mod, a, b).expect("mod").expect("value");
            assert_eq!(q, (a as f64 / b as f64).floor() as i64, "{a} / {b}");
            assert_eq!(a, b * q + r, "{a} {b}");
            assert!(r == 0 || (r < 0) == (b < 0), "mod {a} {b} = {r}");
            assert!(r.abs() < b.abs());
        }
        assert_eq!(
            eval_int(Prim::Div, a, 0),
            Some(Err(Undefined::DivisionByZero))
        );
        assert_eq!(
            eval_int(Prim::Mod, a, 0),
            Some(Err(Undefined::DivisionByZero))
        );
    }
    assert_eq!(
        eval_int(Prim::Div, i64::MIN, -1),
        Some(Err(Undefined::Overflow))
    );
    assert_eq!(eval_int(Prim::Mod, i64::MIN, -1), Some(Ok(0)));
    assert_eq!(eval_int(Prim::Div, i64::MIN, 1), Some(Ok(i64::MIN)));
    assert_eq!(eval_int(Prim::Add, 1, 1), None);
}

#[test]
fn rounding_to_int_and_back() {
    use derivatives::{Undefined, to_int, to_real};
    let i = |op: Prim, x: f64| to_int(op, x).expect("a rounding").expect("an Int");
    assert_eq!(
        [
            i(Prim::Floor, -2.5),
            i(Prim::Ceil, -2.5),
            i(Prim::Round, -2.5),
            i(Prim::Trunc, -2.5)
        ],
        [-3, -2, -3, -2]
    );
    assert_eq!(i(Prim::Round, 2.5), 3);
    assert_eq!(i(Prim::Round, 0.49999999999999994), 0);
    assert_eq!(i(Prim::Floor, -(2f64.powi(63))), i64::MIN);
    for bad in [f64::NAN, f64::INFINITY, 2f64.powi(63), -1e19] {
        assert_eq!(
            to_int(Prim::Floor, bad),
            Some(Err(Undefined::NotAnInt)),
            "{bad}"
        );
    }
    assert_eq!(to_real(-3), -3.0);
    assert_eq!(to_real(i64::MAX), 2f64.powi(63));
}

/// What construct expansion writes for a Target-only derivative primitive
/// (`derivatives::source_form`) computes exactly the primitive's value, and
/// mentions only Source primitives (so reverse mode can take it).
#[test]
fn the_source_forms_compute_the_derivative_primitives_bit_for_bit() {
    fn source_only(t: &derivatives::Term) -> bool {
        use derivatives::Term;
        match t {
            Term::Arg(_) | Term::Lit(_) => true,
            Term::Res => false,
            Term::App(op, args) => !op.is_target_only() && args.iter().all(source_only),
            Term::If {
                lhs, rhs, yes, no, ..
            } => [lhs, rhs, yes, no].iter().all(|t| source_only(t)),
        }
    }
    let pts = [
        -2.0,
        -0.5,
        -0.0,
        0.0,
        0.3,
        1.0,
        2.5,
        f64::NAN,
        f64::INFINITY,
    ];
    let mut covered = 0;
    for op in Prim::ALL
        .iter()
        .copied()
        .filter(|p| p.is_target_only() && !syntax::hist::is_partial(*p))
    {
        let Some(form) = derivatives::source_form(op) else {
            assert!(
                matches!(op, Prim::Digamma | Prim::Trigamma),
                "`{op}` has no Source form"
            );
            continue;
        };
        covered += 1;
        assert!(source_only(&form), "`{op}`'s form uses a Target primitive");
        for &x in &pts {
            for &y in &pts {
                let args = &[x, y][..op.arity()];
                let want = derivatives::eval(op, args).expect("value");
                let got = derivatives::eval_term(&form, args, f64::NAN);
                assert!(
                    got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan()),
                    "`{op}` at {args:?}: {got} against {want}"
                );
            }
        }
    }
    assert_eq!(covered, 6, "d1pow, d2pow, d2div, dtan, dtanh, dabs");
}

/// Reals drawn so that ties, zeros of both signs, NaN and infinities are
/// common.
fn special_real() -> impl Strategy<Value = f64> {
    prop_oneof![
        Just(0.0),
        Just(-0.0),
        Just(f64::NAN),
        Just(f64::INFINITY),
        Just(f64::NEG_INFINITY),
        (-3i32..3).prop_map(f64::from),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    /// `max` and `min` are associative and commutative bit for bit (so a
    /// reduction may run in lanes, `codegen::assoc`), NaN is their
    /// identity, and on operands that are not NaN and not both zero they
    /// are the larger and the smaller.
    #[test]
    fn max_and_min_are_associative_and_commutative(a in special_real(), b in special_real(), c in special_real()) {
        for op in [Prim::Max, Prim::Min] {
            let f = |x: f64, y: f64| derivatives::eval(op, &[x, y]).expect("value").to_bits();
            let g = |x: f64, y: f64| f64::from_bits(f(x, y));
            prop_assert_eq!(f(a, b), f(b, a), "{} {:?} {:?}", op, a, b);
            prop_assert_eq!(f(g(a, b), c), f(a, g(b, c)), "{} {:?} {:?} {:?}", op, a, b, c);
            prop_assert_eq!(f(a, f64::NAN), a.to_bits(), "{} {:?} NaN", op, a);
            let tie_of_zeros = a == 0.0 && b == 0.0;
            if !(a.is_nan() || b.is_nan() || tie_of_zeros) {
                let want = if op == Prim::Max { a.max(b) } else { a.min(b) };
                prop_assert_eq!(f(a, b), want.to_bits(), "{} {:?} {:?}", op, a, b);
            }
        }
    }
}

#[test]
fn max_of_zeros_is_plus_zero_and_min_minus_zero() {
    for (x, y) in [(0.0, -0.0), (-0.0, 0.0), (0.0, 0.0), (-0.0, -0.0)] {
        let max = derivatives::eval(Prim::Max, &[x, y]).expect("max");
        let min = derivatives::eval(Prim::Min, &[x, y]).expect("min");
        let both_negative = x.is_sign_negative() && y.is_sign_negative();
        let both_positive = x.is_sign_positive() && y.is_sign_positive();
        assert_eq!(max.is_sign_negative(), both_negative, "max {x:?} {y:?}");
        assert_eq!(min.is_sign_positive(), both_positive, "min {x:?} {y:?}");
    }
}
