//! `recompute-cheap` of a map padding rows to a common length, the shape
//! reverse mode leaves in kmeans' Hessian diagonal (docs/optimize.md,
//! "kmeans' Hessian diagonal"): `map (fun t -> build D (fun c -> if c <
//! length t.2 then t.2[c] else 0)) G` read by two loops is copied into
//! each, which reads `G`'s rows directly, instead of being written out
//! (n D reals) and read back.

use crate::common;

use optimize::{Config, RuleName, optimize_report};

use common::{compile, eval, expectations, verified};

const PADDED: &str = "-- at G = [(0, [1, 2]), (1, [3, 4]), (0, [5, 6])]\n\
-- at D = 3\n\
-- value = ([3, 7, 11], [2, 4, 6])\n\
def f (G : [n](Int, [m]R)) (D : Int) : ([n]R, [n]R) =\n\
\x20 let P = map (fun t -> build D (fun c -> let r = t.2 in if c < length r then r[c] else 0)) G in\n\
\x20 (map (fun p -> reduce (+) 0 p) P, map (fun p -> reduce max 0 p) P)\n";

#[test]
fn a_padding_map_read_twice_is_copied_into_its_readers() {
    let m = compile(PADDED);
    let (inputs, expected) = expectations(PADDED, &m);
    let (out, report) = optimize_report(&m, &Config::default()).expect("optimizes");
    verified(&out, "the optimized program");
    let live = syntax::print::module(&out);
    assert!(
        report.fired.contains_key(&RuleName::RecomputeCheap),
        "recompute-cheap did not fire: {:?}\n{live}",
        report.fired
    );
    // No array of padded rows is bound: each reduction pads as it reads.
    assert!(!live.contains("let P"), "{live}");
    let before = eval(&m, &inputs).expect("the program runs");
    let after = eval(&out, &inputs).expect("the optimized program runs");
    assert_eq!(before, after);
    assert_eq!(Some(after), expected);
}

#[test]
fn an_unguarded_read_is_not_cheap() {
    // `r[c]` without the guard may fail: the map stays bound.
    let text = PADDED
        .replace("if c < length r then r[c] else 0", "r[c]")
        .replace("-- value = ([3, 7, 11], [2, 4, 6])\n", "");
    let m = compile(&text);
    let (out, _) = optimize_report(&m, &Config::default()).expect("optimizes");
    verified(&out, "the optimized program");
    let live = syntax::print::module(&out);
    assert!(live.contains("let P"), "{live}");
}

/// `share-inner-loop` does not share an inner loop that `recompute-cheap`
/// copies back: a `build` of arithmetic in two loops over `A4` (here two
/// histograms' rows after `hist-interchange`) was shared into a map, the
/// map copied into both loops again, and so on until the round limit
/// (found by `rules::optimize_preserves_values_and_removes_lambdas`).
#[test]
fn shared_and_recomputed_cheap_loops_reach_a_fixpoint() {
    let text = "-- at A1 = [0.683, 1.102, 0.912]\n\
-- at A4 = [0.914, 1.247, -1.319]\n\
def f (A1 : [m]R) (A4 : [m]R) : R =\n\
\x20 let g = fun (v : R) -> reduce (+) 0 (map (fun q -> reduce (+) 0 q) (build (length A1) (fun c -> \
reduce_by_index A1 (+) (build (length (map (fun t -> t * real c) A4)) (fun i -> i / 2)) (map (fun t -> t * real c) A4)))) in\n\
\x20 (g (1 + 1) + g (1 + 1)) * 0.5\n";
    let m = compile(text);
    let (inputs, _) = expectations(text, &m);
    let (out, report) = optimize_report(&m, &Config::default()).expect("optimizes");
    verified(&out, "the optimized program");
    assert!(
        report.converged,
        "no fixpoint in {} rounds: {:?}\n{}",
        report.rounds,
        report.fired,
        syntax::print::module(&out)
    );
    let before = eval(&m, &inputs).expect("the program runs");
    let after = eval(&out, &inputs).expect("the optimized program runs");
    assert_eq!(before, after);
}
