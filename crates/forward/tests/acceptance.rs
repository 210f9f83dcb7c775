//! The acceptance tests of Exercise 182.8 (seeds/002), and its mutation
//! test: the macro D on `x1 * x2 + x1`, on the higher-order term of
//! Example 182.9, D applied twice to `x * x`, and Example 182.15 written
//! with `diff` twice.

use crate::common;

use common::{close, compile, reals, run, verified};
use forward::Config;
use syntax::Module;

const EX_182_8: &str = "def t (x1 : R) (x2 : R) : R =\n  x1 * x2 + x1\n";

/// The pair `(value, tangent)` of `D t` at `a` with `seed`, through the
/// whole-program `jvp` built under `cfg`.
fn dual_pair(m: &Module, cfg: &Config, a: &[(&str, &str)], seed: &[(&str, &str)]) -> (f64, f64) {
    let entry = m.defs.last().expect("one definition").clone();
    let out = forward::jvp_with(m, &entry, cfg).expect("jvp builds");
    verified(&out);
    let mut inputs = a.to_vec();
    inputs.extend_from_slice(seed);
    let v = reals(&run(&out, None, &inputs));
    assert_eq!(v.len(), 2, "a pair of reals");
    (v[0], v[1])
}

/// Exercise 182.8's first acceptance test under `cfg`: whether both seeds
/// give the pairs the exercise states.
fn first_test(cfg: &Config) -> [bool; 2] {
    let m = compile(EX_182_8);
    let a = [("x1", "3"), ("x2", "5")];
    let (v1, t1) = dual_pair(&m, cfg, &a, &[("dx1", "1"), ("dx2", "0")]);
    let (v2, t2) = dual_pair(&m, cfg, &a, &[("dx1", "0"), ("dx2", "1")]);
    [
        close(v1, 18.0) && close(t1, 6.0),
        close(v2, 18.0) && close(t2, 3.0),
    ]
}

#[test]
fn x1_times_x2_plus_x1_at_3_5() {
    assert_eq!(first_test(&Config::default()), [true, true]);
}

#[test]
fn mutant_keeping_only_the_first_summand_fails_seed_0_1() {
    let mutant = Config {
        mutant_first_summand_only: true,
        ..Config::default()
    };
    let [_, seed_0_1] = first_test(&mutant);
    assert!(
        !seed_0_1,
        "the mutant must fail the (0, 1) seed of the acceptance test"
    );
    // What it computes instead: the tangent of x1 * x2 keeps x2 * dx1 only,
    // and that of (.) + x1 keeps the first summand only, so seed (0, 1)
    // yields tangent 0.
    let m = compile(EX_182_8);
    let (v, t) = dual_pair(
        &m,
        &mutant,
        &[("x1", "3"), ("x2", "5")],
        &[("dx1", "0"), ("dx2", "1")],
    );
    assert!(close(v, 18.0));
    assert!(close(t, 0.0), "mutant tangent {t}");
}

#[test]
fn higher_order_term_of_example_182_9_at_2() {
    let m =
        compile("def t (x : R) : R =\n  (fun (f : R -> R) -> f (f x)) (fun (y : R) -> y * y)\n");
    let (v, t) = dual_pair(&m, &Config::default(), &[("x", "2")], &[("dx", "1")]);
    assert!(close(v, 16.0) && close(t, 32.0), "got ({v}, {t})");
}

#[test]
fn d_of_d_of_x_times_x_has_second_order_component_2() {
    let m = compile("def t (x : R) : R =\n  x * x\n");
    let entry = m.defs[0].clone();
    // D t : (x, dx) -> (x * x, 2 x dx).
    let d1 = forward::jvp(&m, &entry).expect("D t");
    verified(&d1);
    // D (D t) : (x, dx, d(x), d(dx)) -> ((v, t), (dv, dt)).
    let d2 = forward::jvp(&d1, &d1.defs[0].clone()).expect("D (D t)");
    verified(&d2);
    let params: Vec<String> = d2.defs[0]
        .params
        .iter()
        .map(|p| p.name.to_string())
        .collect();
    assert_eq!(params.len(), 4, "{params:?}");
    for a in [-3.5, -1.0, 0.0, 0.25, 2.0, 7.0, 1e3] {
        let a = format!("{a}");
        // The value example 182.2 prescribes for a second derivative: both
        // perturbations of x are 1, the perturbation of dx is 0.
        let inputs = [
            (params[0].as_str(), a.as_str()),
            (params[1].as_str(), "1"),
            (params[2].as_str(), "1"),
            (params[3].as_str(), "0"),
        ];
        let v = reals(&run(&d2, None, &inputs));
        // ((x^2, 2x), (2x, 2)): the second-order component is the last.
        assert_eq!(v.len(), 4);
        let x: f64 = a.parse().expect("a number");
        assert!(close(v[0], x * x) && close(v[1], 2.0 * x) && close(v[2], 2.0 * x));
        assert!(close(v[3], 2.0), "second-order component {} at {a}", v[3]);
    }
}

/// The fixture program of a case, from the repository.
fn fixture(case: &str) -> String {
    let path = format!(
        "{}/../../fixtures/{case}/program.ad",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

#[test]
fn example_182_15_with_diff_twice_is_1_not_2() {
    let m = compile(&fixture("nested_diff_182_15"));
    let out = forward::expand(&m).expect("expands");
    verified(&out);
    let v = reals(&run(&out, None, &[]));
    assert_eq!(v.len(), 1);
    assert!(close(v[0], 1.0), "got {}", v[0]);
}

#[test]
fn second_derivative_fixture_is_2_at_every_point_tried() {
    let m = compile(&fixture("second_derivative"));
    let out = forward::expand(&m).expect("expands");
    verified(&out);
    for x in ["7", "-2.5", "0", "1e-3", "40"] {
        let v = reals(&run(&out, None, &[("x", x)]));
        assert!(close(v[0], 2.0), "at {x}: {}", v[0]);
    }
}
