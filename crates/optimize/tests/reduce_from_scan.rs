//! `reduce-from-scan`: a fold whose value a prefix scan of the same array
//! computes is read from the scan. The rule fires on the pattern (with
//! `reduce` and with `foldl`, with functions equal up to the names of
//! their binders, in the gradient of `prod` from reverse mode), not when
//! the function, the start or the array differs, nor for `scanr`, nor
//! when the fold runs under a lambda or in a branch that the scan is
//! outside of. Where it fires, the values are the program's bit for bit
//! (the fold and the scan make the same calls in the same order),
//! checked with the evaluator on random arrays, the empty one included.

use crate::common;

use optimize::{Config, RuleName, optimize_report};
use proptest::prelude::*;
use proptest::test_runner::{Config as RunnerConfig, TestCaseError};
use semantics::Value;
use syntax::{Module, Prim};

use common::{compile, count_prims, eval, gradient, verified};

/// How often `reduce-from-scan` fired on `text`, the optimized module,
/// and the original module.
fn run(text: &str) -> (usize, Module, Module) {
    let m = compile(text);
    let (out, report) = optimize_report(&m, &Config::default()).expect("the optimizer runs");
    verified(&out, "the optimized program");
    let n = report
        .fired
        .get(&RuleName::ReduceFromScan)
        .copied()
        .unwrap_or(0);
    (n, out, m)
}

/// Whether the two modules' entries give exactly the same value (reals
/// compared with no tolerance) at every input of `inputs`.
fn exact(before: &Module, after: &Module, inputs: &[(String, Value)]) -> Result<(), TestCaseError> {
    let want = eval(before, inputs).map_err(|e| TestCaseError::fail(e.to_string()))?;
    let got = eval(after, inputs).map_err(|e| TestCaseError::fail(e.to_string()))?;
    prop_assert!(
        want.approx_eq(&got, 0.0, 0.0),
        "the value changed from {want:?} to {got:?}:\n{}",
        syntax::print::module(after)
    );
    Ok(())
}

const PROD: &str = "def f (A : [n]R) : (R, [n+1]R) =\n  (reduce (*) 1 A, scanl (*) 1 A)\n";

const FOLDL: &str = "def f (A : [n]R) : (R, [n]R) =\n  \
    let r = foldl (fun (a : R, x : R) -> a * 0.5 + sin x) 2 A in\n  \
    let s = shift1R (scanl (fun (b : R, y : R) -> b * 0.5 + sin y) 2 A) in\n  \
    (r, map (fun (t : R) -> t * r) s)\n";

const PAIRS: &str = "def f (A : [n]R) : (R, [n]R) =\n  \
    let p = foldl (fun (a : (R, R), x : R) -> (a.1 + x, a.2 * x)) (0, 1) A in\n  \
    let s = scanl (fun (b : (R, R), y : R) -> (b.1 + y, b.2 * y)) (0, 1) A in\n  \
    (p.1 * p.2, map (fun (t : (R, R)) -> t.1 - t.2) (shift1L s))\n";

/// Over a zip written out at each loop (reverse mode's forward sweep
/// beside the primal's fold, as in lstm's gradient): the arrays are equal
/// up to the names of their binders, not one variable.
const ZIPPED: &str = "def f (A : [n]R) (B : [n]R) : (R, [n]R) =\n  \
    let p = foldl (fun (a : R, x : (R, R)) -> a * x.1 + x.2) 1 (map2 (fun (u : R, v : R) -> (u, v)) A B) in\n  \
    let s = scanl (fun (b : R, y : (R, R)) -> b * y.1 + y.2) 1 (map2 (fun (u2 : R, v2 : R) -> (u2, v2)) A B) in\n  \
    (p, map (fun (t : R) -> t * p) (shift1L s))\n";

/// An `ifold` beside a `scanl` over its counters (reverse mode's forward
/// sweep of an `ifold`, det's elimination): `ifold f z n` is `foldl f z`
/// over `build n (fun i -> i)`, whether that array is named or written
/// out.
const IFOLD: &str = "def f (A : [n]R) : (R, [n+1]R) =\n  \
    let ids = build (length A) (fun (i : Int) -> i) in\n  \
    let r = ifold (fun (a : R, i : Int) -> a * 0.5 + A[i]) 1 (length A) in\n  \
    let s = scanl (fun (b : R, j : Int) -> b * 0.5 + A[j]) 1 ids in\n  \
    (r, map (fun (t : R) -> t * r) s)\n";

const IFOLD_INLINE: &str = "def f (A : [n]R) : (R, [n+1]R) =\n  \
    let r = ifold (fun (a : R, i : Int) -> a * 0.5 + A[i]) 1 (length A) in\n  \
    (r, scanl (fun (b : R, j : Int) -> b * 0.5 + A[j]) 1 (build (length A) (fun (k : Int) -> k)))\n";

const IN_LAMBDA: &str = "def f (A : [n]R) : [n+1]R =\n  \
    let s = scanl (*) 1 A in\n  \
    map (fun (t : R) -> t * reduce (*) 1 A) s\n";

const IN_BRANCH: &str = "def f (A : [n]R) : (R, [n+1]R) =\n  \
    let s = scanl (*) 1 A in\n  \
    (if length A > 2 then reduce (*) 1 A else 0, s)\n";

const BOTH_IN_LAMBDA: &str = "def f (A : [n]R) (B : [m]R) : [m]R =\n  \
    map (fun (t : R) -> let s = scanl (fun (a : R, x : R) -> a * x + t) 1 A in \
    reduce (fun (a : R, x : R) -> a * x + t) 1 A - s[0]) B\n";

/// That the rule fired once on `text`, leaving no `fold` (a `reduce`,
/// `foldl` or `ifold`) and one `scanl`, the fold's value read from it.
fn read_from_the_scan(text: &str, fold: Prim) {
    let (n, out, _) = run(text);
    let printed = syntax::print::module(&out);
    assert_eq!(n, 1, "{printed}");
    assert_eq!(count_prims(&out, fold), 0, "{printed}");
    assert_eq!(count_prims(&out, Prim::Scanl), 1, "{printed}");
}

#[test]
fn fires_on_reduce_and_scanl() {
    read_from_the_scan(PROD, Prim::Reduce);
}

#[test]
fn fires_on_foldl_with_renamed_binders() {
    read_from_the_scan(FOLDL, Prim::Foldl);
    read_from_the_scan(PAIRS, Prim::Foldl);
}

#[test]
fn fires_on_equal_array_expressions() {
    read_from_the_scan(ZIPPED, Prim::Foldl);
}

#[test]
fn fires_on_ifold_over_the_counters() {
    read_from_the_scan(IFOLD, Prim::Ifold);
    read_from_the_scan(IFOLD_INLINE, Prim::Ifold);
}

#[test]
fn fires_inside_a_lambda_when_both_are_there() {
    let (n, out, _) = run(BOTH_IN_LAMBDA);
    assert_eq!(n, 1, "{}", syntax::print::module(&out));
    assert_eq!(count_prims(&out, Prim::Reduce), 0);
}

#[test]
fn does_not_fire_on_other_folds() {
    let cases = [
        // Another function.
        "def f (A : [n]R) : (R, [n+1]R) =\n  (reduce (+) 1 A, scanl (*) 1 A)\n",
        // Another start.
        "def f (A : [n]R) : (R, [n+1]R) =\n  (reduce (*) 2 A, scanl (*) 1 A)\n",
        // Another array.
        "def f (A : [n]R) (B : [n]R) : (R, [n+1]R) =\n  (reduce (*) 1 A, scanl (*) 1 B)\n",
        // Other array expressions.
        "def f (A : [n]R) (B : [n]R) : (R, [n+1]R) =\n  (reduce (*) 1 (map2 (*) A B), scanl (*) 1 (map2 (+) A B))\n",
        // An ifold of another count than the counters scanned.
        "def f (A : [n]R) : (R, [n+1]R) =\n  (ifold (fun (a : R, i : Int) -> a + A[i]) 1 (length A - 1), \
         scanl (fun (b : R, j : Int) -> b + A[j]) 1 (build (length A) (fun (k : Int) -> k)))\n",
        // An ifold beside a scan over other integers than its counters.
        "def f (A : [n]R) : (R, [n+1]R) =\n  (ifold (fun (a : R, i : Int) -> a + A[i / 2]) 1 (length A), \
         scanl (fun (b : R, j : Int) -> b + A[j / 2]) 1 (build (length A) (fun (k : Int) -> 2 * k)))\n",
        // A right fold.
        "def f (A : [n]R) : (R, [n+1]R) =\n  (reduce (*) 1 A, scanr (*) 1 A)\n",
        // The fold under a lambda, the scan outside.
        IN_LAMBDA,
        // The fold in a branch.
        IN_BRANCH,
    ];
    for text in cases {
        let (n, out, m) = run(text);
        assert_eq!(n, 0, "fired on\n{text}\n{}", syntax::print::module(&out));
        for op in [Prim::Reduce, Prim::Ifold] {
            assert_eq!(
                count_prims(&out, op),
                count_prims(&m, op),
                "{}",
                syntax::print::module(&out)
            );
        }
    }
}

#[test]
fn fires_on_the_gradient_of_an_ifold() {
    let text =
        "def f (A : [n]R) : R = ifold (fun (a : R, i : Int) -> a * A[i] + sin a) 1 (length A)\n";
    let target = gradient(text);
    let (out, report) = optimize_report(&target, &Config::default()).expect("the optimizer runs");
    verified(&out, "the optimized gradient");
    assert_eq!(report.fired.get(&RuleName::ReduceFromScan), Some(&1));
    // The primal's fold is read from the forward sweep.
    assert_eq!(
        count_prims(&out, Prim::Ifold),
        0,
        "{}",
        syntax::print::module(&out)
    );
    assert_eq!(count_prims(&out, Prim::Scanl), 1);
    let a = [0.3, -1.2, 2.0];
    let inputs = vec![("A".to_string(), Value::reals(&a))];
    let want = eval(&target, &inputs).expect("the gradient runs");
    let got = eval(&out, &inputs).expect("the optimized gradient runs");
    assert!(want.approx_eq(&got, 0.0, 0.0), "{want:?} against {got:?}");
}

#[test]
fn fires_on_the_gradient_of_prod() {
    let text = "def prod (x : [n]R) : R = reduce (*) 1 x\n";
    let target = gradient(text);
    let (out, report) = optimize_report(&target, &Config::default()).expect("the optimizer runs");
    verified(&out, "the optimized gradient");
    assert_eq!(report.fired.get(&RuleName::ReduceFromScan), Some(&1));
    // One scan each way, and no reduction left: the value is the scan's
    // last element.
    assert_eq!(
        count_prims(&out, Prim::Reduce),
        0,
        "{}",
        syntax::print::module(&out)
    );
    assert_eq!(count_prims(&out, Prim::Scanl), 1);
    assert_eq!(count_prims(&out, Prim::Scanr), 1);
}

fn array() -> impl Strategy<Value = Vec<f64>> {
    prop::collection::vec(-2.0f64..2.0, 0..9)
}

proptest! {
    #![proptest_config(RunnerConfig { cases: 64, failure_persistence: None, ..RunnerConfig::default() })]

    /// The values of every program above are unchanged, exactly.
    #[test]
    fn values_unchanged(a in array(), b in array()) {
        let with_a = vec![("A".to_string(), Value::reals(&a))];
        for text in [PROD, FOLDL, PAIRS, IFOLD, IFOLD_INLINE, IN_LAMBDA, IN_BRANCH] {
            let (_, out, m) = run(text);
            exact(&m, &out, &with_a)?;
        }
        let with_both = vec![
            ("A".to_string(), Value::reals(&a)),
            ("B".to_string(), Value::reals(&b)),
        ];
        let (_, out, m) = run(BOTH_IN_LAMBDA);
        exact(&m, &out, &with_both)?;
        // B cut or padded to A's length.
        let b2: Vec<f64> = (0..a.len()).map(|i| b.get(i).copied().unwrap_or(0.5)).collect();
        let zipped = vec![
            ("A".to_string(), Value::reals(&a)),
            ("B".to_string(), Value::reals(&b2)),
        ];
        let (_, out, m) = run(ZIPPED);
        exact(&m, &out, &zipped)?;
    }
}
