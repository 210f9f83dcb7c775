//! `triangle-bound`: a sum of a triangular matrix's row against a vector
//! visits the row's nonzero prefix only. The rule fires on the four ways
//! of writing the lower triangle's condition (`<`, `<=`, `>`, `>=`, either
//! branch the zero), through a `let`, a tuple and a map's elements (the
//! way GMM's matrix reaches its use), and not when the "zero" branch is
//! `-0` or another value, nor on the upper triangle. Where it fires the
//! values are the program's bit for bit on finite inputs (signed zeros
//! among them), checked with the evaluator on random arrays.

use crate::common;

use optimize::{Config, RuleName, RuleSet, optimize_report};
use proptest::prelude::*;
use proptest::test_runner::{Config as RunnerConfig, TestCaseError};
use semantics::Value;
use syntax::Module;

use common::{compile, eval, verified};

/// How often the rule fired on `text` (every rule on), the optimized
/// module and the original.
fn run(text: &str, rules: RuleSet) -> (usize, Module, Module) {
    let m = compile(text);
    let cfg = Config {
        rules,
        ..Config::default()
    };
    let (out, report) = optimize_report(&m, &cfg).expect("the optimizer runs");
    verified(&out, "the optimized program");
    let n = report
        .fired
        .get(&RuleName::TriangleBound)
        .copied()
        .unwrap_or(0);
    (n, out, m)
}

/// `sum_j y_j (T_j . x)` for the triangle `T` of condition `cond` (with
/// `then` / `else` branches), `i` the column and `j` the row.
fn program(cond: &str, then: &str, other: &str) -> String {
    format!(
        "def f (a : [n]R) (x : [n]R) : R =\n  \
         let t = build (length a) (fun j -> build (length a) (fun i -> if {cond} then {then} else {other})) in\n  \
         sum (map2 (fun (r, y) -> y * sum (map2 (*) r x)) t x)\n"
    )
}

const E: &str = "a[i] * a[j] + 1";

/// GMM's shape: the triangle is a component of a tuple per element of a
/// map, read through a projection in another map.
const NESTED: &str = "def f (a : [k][n]R) (x : [n]R) : [k]R =\n  \
    let comps = map (fun v -> (sum v, build (length v) (fun j -> build (length v) (fun i -> if i < j then v[i] - v[j] else 0)))) a in\n  \
    map (fun c -> c.1 * sum (map2 (fun (r, y) -> y + sum (map2 (*) x r)) c.2 x)) comps\n";

fn triangles() -> Vec<String> {
    vec![
        program("i < j", E, "0"),
        program("i <= j", E, "0"),
        program("j > i", E, "0"),
        program("i >= j", "0", E),
        program("j <= i", "0", E),
    ]
}

#[test]
fn fires_on_every_form_of_the_lower_triangle() {
    for text in triangles() {
        let (n, _, _) = run(&text, RuleSet::all());
        assert_eq!(n, 1, "{text}");
    }
    let (n, _, _) = run(NESTED, RuleSet::all());
    assert_eq!(n, 1, "{NESTED}");
}

#[test]
fn does_not_fire_without_a_positive_zero_below() {
    for text in [
        program("i < j", E, "(-0.0)"),
        program("i < j", E, "1"),
        program("i > j", E, "0"),
        program("i == j", E, "0"),
    ] {
        let (n, _, _) = run(&text, RuleSet::all());
        assert_eq!(n, 0, "{text}");
    }
}

#[test]
fn switched_off_it_does_not_fire() {
    let (n, _, _) = run(
        &program("i < j", E, "0"),
        RuleSet::all().without(RuleName::TriangleBound),
    );
    assert_eq!(n, 0);
}

fn array(n: usize) -> impl Strategy<Value = Vec<f64>> {
    prop::collection::vec(
        prop_oneof![Just(0.0), Just(-0.0), -3.0f64..3.0, -1e300f64..1e300],
        n,
    )
}

fn exact(before: &Module, after: &Module, inputs: &[(String, Value)]) -> Result<(), TestCaseError> {
    let want = eval(before, inputs).map_err(|e| TestCaseError::fail(e.to_string()))?;
    let got = eval(after, inputs).map_err(|e| TestCaseError::fail(e.to_string()))?;
    prop_assert!(
        format!("{want:?}") == format!("{got:?}"),
        "the value changed from {want:?} to {got:?}:\n{}",
        syntax::print::module(after)
    );
    Ok(())
}

proptest! {
    #![proptest_config(RunnerConfig { cases: 64, failure_persistence: None, ..RunnerConfig::default() })]

    #[test]
    fn values_unchanged_on_finite_inputs((a, x) in (0usize..7).prop_flat_map(|n| (array(n), array(n)))) {
        let inputs = vec![("a".to_string(), Value::reals(&a)), ("x".to_string(), Value::reals(&x))];
        for text in triangles() {
            let (_, out, m) = run(&text, RuleSet::all());
            exact(&m, &out, &inputs)?;
        }
    }
}
