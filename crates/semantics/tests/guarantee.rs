//! The caveats of the cost report: the constructs docs/derivatives.md
//! (section 7) names as outside Theorem 5.4's guarantee are found where
//! they are written, and nowhere else.

use semantics::guarantee::{CaveatKind, caveats};
use syntax::SourceFile;

/// The kinds and (line, column) of the caveats of the last definition.
fn found(text: &str) -> Vec<(CaveatKind, (usize, usize))> {
    let m = syntax::compile(SourceFile {
        name: "guarantee.ad".to_string(),
        text: text.to_string(),
    })
    .unwrap_or_else(|e| panic!("does not compile: {e}\n{text}"));
    let def = m.entry(None).expect("a definition");
    caveats(&m, def.body)
        .into_iter()
        .map(|c| (c.kind, c.line_col))
        .collect()
}

#[test]
fn indexing_inside_a_loop_is_named_where_its_transpose_is_dense() {
    // A free array of reals read in one loop: a scatter-add, no caveat.
    let free = "def f (A : [n]R) : R =\n  sum (build (length A) (fun i -> A[i] * A[i]))\n";
    assert_eq!(found(free), vec![]);
    // Rows of reals of a free matrix: a scatter-add of rows, no caveat.
    let rows = "def f (M : [n][n]R) : R =\n  sum (build (length M) (fun i -> sum M[i]))\n";
    assert_eq!(found(rows), vec![]);
    // Inside nested loops (named whatever the inner length), of elements
    // neither reals nor rows of reals, of an array the loop binds.
    let nested = "def f (A : [n]R) : R =\n  sum (build (length A) (fun i -> sum (map (fun d -> A[d]) [0, 1])))\n";
    assert_eq!(found(nested), vec![(CaveatKind::IndexInLoop, (2, 54))]);
    let cube = "def f (M : [n][n][n]R) : R =\n  sum (build (length M) (fun i -> sum M[i][0]))\n";
    // `M[i]` (its elements are matrices) and `M[i][0]` (a row the loop reads).
    let both = vec![(CaveatKind::IndexInLoop, (2, 39)); 2];
    assert_eq!(found(cube), both);
    let bound =
        "def f (A : [n]R) : R =\n  sum (map (fun x -> let B = map (fun y -> y * x) A in B[0]) A)\n";
    assert_eq!(found(bound), vec![(CaveatKind::IndexInLoop, (2, 56))]);
}

#[test]
fn indexing_outside_loops_and_loops_without_indexing_are_not() {
    assert_eq!(found("def f (A : [n]R) : R =\n  A[0] * sum A\n"), vec![]);
    assert_eq!(
        found("def f (A : [n]R) : R =\n  reduce (+) 0 (map (fun x -> x * x) A)\n"),
        vec![]
    );
}

#[test]
fn only_a_non_real_conditional_inside_another_is_named() {
    let nested = "def f (x : R) : R =\n  let p = if x > 0 then (if x > 1 then (x, 1) else (1, x)) else (x, x) in\n  p.1 * p.2\n";
    assert_eq!(found(nested), vec![(CaveatKind::NestedIf, (2, 25))]);
    let reals = "def f (x : R) : R =\n  if x > 0 then (if x > 1 then x else 1) else x\n";
    assert_eq!(found(reals), vec![]);
}
