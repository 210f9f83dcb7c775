//! `share-inner-loop` with a `scanr` as its first loop: reverse mode's
//! backward pass over a fold (`C = scanr (fun (p, c) -> vjp_s f p c) ..
//! P`) and its per-element pass (`map2 (fun (p, c) -> vjp_F f p c) P
//! (shift1L C)`) both recompute an inner loop of the fold's body from the
//! same element `p`; the rule computes it once, into an array both read.
//! It fires on the gradient of a fold whose body runs an inner scan over
//! the element and a free array (lstm's shape), and on a scanr and a
//! map written directly, not when the inner loop reads the scan's carry, and the gradient's values are unchanged bit
//! for bit.

use crate::common;

use optimize::{Config, RuleName, optimize_report};
use semantics::Value;
use syntax::{Module, Prim};

use common::{compile, count_prims, eval, gradient, verified};

/// The gradient of `text`'s last definition (reverse mode, UNF^-1), and
/// it optimized with `rules` (all of them, or all but share-inner-loop).
fn grad(text: &str, share: bool) -> (Module, Module, usize) {
    let target = gradient(text);
    let mut cfg = Config::default();
    if !share {
        cfg.rules = cfg.rules.without(RuleName::ShareInnerLoop);
    }
    let (out, report) = optimize_report(&target, &cfg).expect("the optimizer runs");
    verified(&out, "the optimized gradient");
    let n = report
        .fired
        .get(&RuleName::ShareInnerLoop)
        .copied()
        .unwrap_or(0);
    (target, out, n)
}

/// A fold whose body scans a free array with the element: the states of
/// the inner scan are what both backward loops need.
const INNER_SCAN: &str = "def f (W : [m]R) (A : [n]R) : R =\n  \
    foldl (fun (acc : R, x : R) ->\n    \
    let s = scanl (fun (b : R, w : R) -> sin (b * w + x)) x W in\n    \
    acc * s[length W] + x) 0.5 A\n";

/// A scanr and a map over its array with one inner loop of the element
/// (shared), and the same with the scanr's loop reading its carry (not).
const DIRECT: &str = "def f (W : [m]R) (A : [n]R) : ([n+1]R, [n]R) =\n  \
    let C = scanr (fun (x : R, c : R) -> c * 0.5 + reduce (+) 0 (map (fun (w : R) -> sin (w * x)) W)) 0 A in\n  \
    (C, map2 (fun (y : R, d : R) -> d * reduce (+) 0 (map (fun (v : R) -> sin (v * y)) W)) A (shift1L C))\n";

const READS_CARRY: &str = "def f (W : [m]R) (A : [n]R) : ([n+1]R, [n]R) =\n  \
    let C = scanr (fun (x : R, c : R) -> c * 0.5 + reduce (+) 0 (map (fun (w : R) -> sin (w * c)) W)) 0 A in\n  \
    (C, map2 (fun (y : R, d : R) -> d * reduce (+) 0 (map (fun (v : R) -> sin (v * y)) W)) A (shift1L C))\n";

/// `text` optimized: the module and how often share-inner-loop fired.
fn direct(text: &str) -> (Module, Module, usize) {
    let m = compile(text);
    let (out, report) = optimize_report(&m, &Config::default()).expect("the optimizer runs");
    verified(&out, "the optimized program");
    let n = report
        .fired
        .get(&RuleName::ShareInnerLoop)
        .copied()
        .unwrap_or(0);
    (m, out, n)
}

#[test]
fn shares_the_inner_scan_of_a_folds_gradient() {
    let (_, with, n) = grad(INNER_SCAN, true);
    let (_, without, _) = grad(INNER_SCAN, false);
    assert!(n >= 1, "{}", syntax::print::module(&with));
    // The inner scan once in the forward sweep and once, shared, for the
    // two backward loops (instead of once in each).
    assert!(
        count_prims(&with, Prim::Scanl) < count_prims(&without, Prim::Scanl),
        "{}\n---\n{}",
        syntax::print::module(&with),
        syntax::print::module(&without)
    );
}

#[test]
fn shares_between_a_scanr_and_a_map() {
    let (_, out, n) = direct(DIRECT);
    // Twice: the map of `sin`, then the sum over it.
    assert!(n >= 1, "{}", syntax::print::module(&out));
    assert_eq!(
        count_prims(&out, Prim::Reduce),
        1,
        "{}",
        syntax::print::module(&out)
    );
}

#[test]
fn does_not_share_what_reads_the_carry() {
    let (_, out, n) = direct(READS_CARRY);
    assert_eq!(n, 0, "{}", syntax::print::module(&out));
    assert_eq!(
        count_prims(&out, Prim::Reduce),
        2,
        "{}",
        syntax::print::module(&out)
    );
}

#[test]
fn values_unchanged() {
    // A fixed sequence in [-1.5, 1.5).
    let mut state = 7u64;
    let mut next = move || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 11) as f64 / (1u64 << 53) as f64 * 3.0 - 1.5
    };
    for (text, is_grad) in [(INNER_SCAN, true), (DIRECT, false), (READS_CARRY, false)] {
        let (raw, with, without) = if is_grad {
            let (raw, with, _) = grad(text, true);
            (raw, with, grad(text, false).1)
        } else {
            let (raw, with, _) = direct(text);
            let mut cfg = Config::default();
            cfg.rules = cfg.rules.without(RuleName::ShareInnerLoop);
            let without = optimize::optimize(&raw, &cfg).expect("the optimizer runs");
            (raw, with, without)
        };
        for (n, m) in [(0, 3), (1, 2), (4, 3), (6, 0)] {
            let w: Vec<f64> = (0..m).map(|_| next()).collect();
            let a: Vec<f64> = (0..n).map(|_| next()).collect();
            let inputs = vec![
                ("W".to_string(), Value::reals(&w)),
                ("A".to_string(), Value::reals(&a)),
            ];
            let want = eval(&without, &inputs).expect("evaluates");
            let got = eval(&with, &inputs).expect("evaluates");
            assert!(want.approx_eq(&got, 0.0, 0.0), "{want:?} against {got:?}");
            let reference = eval(&raw, &inputs).expect("evaluates");
            assert!(
                reference.approx_eq(&got, 1e-12, 1e-12),
                "{reference:?} against {got:?}"
            );
        }
    }
}
