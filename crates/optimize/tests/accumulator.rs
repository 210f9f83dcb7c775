//! `prune-accumulator` on the shapes it is for (reverse mode's argmin under
//! forward mode, GradBench's kmeans Hessian diagonal): a fold's state
//! component that no use reads and the fold only carries is not computed,
//! and the argmin's array of candidates, read at the fold's counter, is
//! computed in the fold (`gather-fusion`). Each program's value is kept,
//! and the counted cost shows what is no longer computed.

use crate::common;

use optimize::{RuleName, RuleSet};

use common::optimized_cost as run;

/// kmeans' argmin: each candidate a pair (distance, a tangent), the state
/// the best pair and its index, the result the index alone.
const ARGMIN: &str = "-- at A = [0.3, 0.1, 0.2, 0.4]\n\
                      -- value = 1\n\
                      def f (A : [n]R) : Int =\n\
                      \x20 let X = map (fun a -> (a * a, sin a)) A in\n\
                      \x20 (ifold (fun (s, i) -> let e = X[i] in if s.1.1 < e.1 then s else (e, i)) ((1 / 0, 0), -1) (length A)).2\n";

#[test]
fn a_carried_tangent_is_not_computed() {
    let (with, fired) = run(ARGMIN, RuleSet::all());
    assert!(fired.contains_key(&RuleName::PruneAccumulator), "{fired:?}");
    assert_eq!(with.nlops, 0, "no sin: the tangent is dead");
    let (without, _) = run(ARGMIN, RuleSet::all().without(RuleName::PruneAccumulator));
    assert_eq!(
        without.nlops, 4,
        "one sin per candidate, carried in the state"
    );
}

#[test]
fn the_candidates_are_computed_in_the_fold() {
    // Read once per iteration at the counter: computed there, never
    // written as an array (no move of an element into X).
    let (with, fired) = run(ARGMIN, RuleSet::all());
    assert!(fired.contains_key(&RuleName::GatherFusion), "{fired:?}");
    let (without, _) = run(ARGMIN, RuleSet::all().without(RuleName::GatherFusion));
    assert!(with.moves < without.moves, "{with:?} against {without:?}");
}

#[test]
fn a_reduction_of_pairs_keeps_the_projected_sum() {
    let text = "-- at A = [0.3, 0.1, 0.2]\n\
                def f (A : [n]R) : R =\n\
                \x20 let t = reduce (fun (x, y) -> (x.1 + y.1, x.2 + y.2)) (0, 0) (map (fun a -> (a * a, sin a)) A) in\n\
                \x20 t.1 * 2\n";
    let (with, fired) = run(text, RuleSet::all());
    assert!(fired.contains_key(&RuleName::PruneAccumulator), "{fired:?}");
    assert_eq!(with.nlops, 0, "no sin: the second sum is dead");
}

#[test]
fn a_component_the_result_needs_through_the_state_is_kept() {
    // The index depends on the second component (compared), which
    // depends on the third: nothing is dead.
    let text = "-- at A = [0.3, 0.1, 0.2, 0.4]\n\
                -- value = 2\n\
                def f (A : [n]R) : Int =\n\
                \x20 (ifold (fun (s, i) -> if s.2 < sin s.3 then (i, s.2 + A[i], s.3 + 1) else (s.1, s.2, s.3 * 2)) (0, 0, 0.5) (length A)).1\n";
    let (_, fired) = run(text, RuleSet::all());
    assert!(
        !fired.contains_key(&RuleName::PruneAccumulator),
        "{fired:?}"
    );
}

#[test]
fn a_component_no_reader_projects_is_not_computed() {
    // `prune-components` through a function that reads its element by
    // projection only (`t.2 * b`, not the bare `t.2`), in a loop: the
    // array is computed once, not fused into the reader.
    let text = "-- at A = [0.5, -0.5, 1]\n\
                -- at B = [1, 2]\n\
                -- value = [[1, -0.5, 2], [2, -1, 4]]\n\
                def f (A : [n]R) (B : [m]R) : [m][n]R =\n\
                \x20 let X = map (fun a -> if a > 0 then (sin a, a * 2) else (cos a, a)) A in\n\
                \x20 map (fun b -> map (fun t -> t.2 * b) X) B\n";
    let (with, fired) = run(text, RuleSet::all());
    assert!(fired.contains_key(&RuleName::PruneComponents), "{fired:?}");
    assert_eq!(with.nlops, 0, "no sin or cos: the first component is dead");
    let (without, _) = run(text, RuleSet::all().without(RuleName::PruneComponents));
    assert_eq!(without.nlops, 3);
}

#[test]
fn a_branch_computes_only_the_projected_components() {
    // `split-tuple` of a conditional of tuples read twice by projection.
    let text = "-- at a = 0.5\n\
                -- value = 0.25\n\
                def f (a : R) : R =\n\
                \x20 let x = if a > 0 then (sin a, a) else (cos a, 0) in\n\
                \x20 x.2 * x.2\n";
    let (with, _) = run(text, RuleSet::all());
    assert_eq!(with.nlops, 0, "no sin: the first component is dead");
}
