//! The cost model (Fig. 11), NAO, and the bound of Theorem 5.4 on the
//! examples: hand-computed costs as oracles, and the bound checked on the
//! optimized gradients of Example 1.1 and Example 5.5 at the sizes of
//! their stated inputs (a snapshot of each report).

mod common;

use expect_test::{Expect, expect};
use optimize::cost::{self, Cost};
use optimize::{Config, optimize};

use common::{compile, expectations, fixture_program, program_text, sizes};

/// The static cost of the entry of `text` at its stated inputs.
fn cost_of(m: &syntax::Module, text: &str) -> Cost {
    let (inputs, _) = expectations(text, m);
    let def = m.entry(None).expect("a definition");
    cost::static_cost(m, def, &sizes(m, &inputs)).expect("the cost is defined")
}

#[test]
fn example_1_1_by_hand() {
    // let w1 = x1 * x2 in let w2 = w1 * x1 in w2:
    // two lets and a variable (3 moves), two products (3 moves, 1 mult each,
    // and 2 moves for their operands).
    let text = fixture_program("ex1_1");
    let m = compile(&text);
    assert_eq!(cost_of(&m, &text), Cost::new(13, 0, 2, 0));
    let def = m.entry(None).expect("a definition");
    assert_eq!(cost::nao(&m, def.body), 0);

    // let w1 = x1 * x2 in let w2 = w1 * x1 in (w2, w1 + x2 * x1, x1 * x1, 0):
    // 2 lets, 3 products of variables (5 moves, 1 mult each), one sum of a
    // variable and a product (3 + 1 + 5 moves, 1 add, 1 mult), w2 and 0.
    let rev = program_text("ex1_1_rev");
    let g = optimize(&compile(&rev), &Config::default()).expect("optimizes");
    assert_eq!(
        cost_of(&g, &rev),
        Cost::new(2 + 5 + 5 + 1 + 9 + 5 + 1, 1, 4, 0)
    );
}

#[test]
fn prod_by_hand() {
    // reduce (*) 1 A at n = 4: 4 * (Cost(a * b) + 2 moves) + the 1 and the A.
    let text = fixture_program("prod");
    let m = compile(&text);
    assert_eq!(cost_of(&m, &text), Cost::new(4 * 7 + 2, 0, 4, 0));
    let def = m.entry(None).expect("a definition");
    assert_eq!(cost::nao(&m, def.body), 1);
}

#[test]
fn shifts_and_scans_by_hand() {
    // scanl at n: n * (Cost(body) + 3); shift1R of the n+1 scan: n+1 moves.
    let text = "-- at A = [1, 2, 3]\ndef f (A : [n]R) : [n]R = shift1R (scanl (+) 0 A)\n";
    let m = compile(text);
    assert_eq!(cost_of(&m, text), Cost::new(3 * 8 + 2 + 4, 3, 0, 0));
}

/// The report of Theorem 5.4 for a source fixture and its hand-written
/// reverse output, optimized.
fn report(fixture: &str, rev: &str, snapshot: Expect) {
    let text = fixture_program(fixture);
    let m = compile(&text);
    let def = m.entry(None).expect("a definition");
    let source = cost_of(&m, &text);
    let p = cost::nao(&m, def.body);
    let rev_text = program_text(rev);
    let g = optimize(&compile(&rev_text), &Config::default()).expect("optimizes");
    let gradient = cost_of(&g, &rev_text);
    let check = cost::cheap_gradient(source, gradient, p);
    assert!(check.holds(), "Theorem 5.4 fails on {fixture}: {check:?}");
    snapshot.assert_eq(&format!(
        "source {}\ngradient {}\np {}\nratio {:.3}\nbound {}\n",
        check.source, check.gradient, check.nao, check.ratio, check.bound
    ));
}

#[test]
fn theorem_5_4_ex1_1() {
    report(
        "ex1_1",
        "ex1_1_rev",
        expect![[r#"
        source (moves 13, adds 0, mults 2, nlops 0)
        gradient (moves 28, adds 1, mults 4, nlops 0)
        p 0
        ratio 2.200
        bound 4
    "#]],
    );
}

#[test]
fn theorem_5_4_prod() {
    report(
        "prod",
        "prod_rev",
        expect![[r#"
        source (moves 30, adds 0, mults 4, nlops 0)
        gradient (moves 129, adds 0, mults 15, nlops 0)
        p 1
        ratio 4.235
        bound 12
    "#]],
    );
}

#[test]
fn theorem_5_4_sum() {
    report(
        "sum",
        "sum_rev",
        expect![[r#"
        source (moves 30, adds 4, mults 0, nlops 0)
        gradient (moves 47, adds 4, mults 0, nlops 0)
        p 1
        ratio 1.500
        bound 12
    "#]],
    );
}

#[test]
fn theorem_5_4_dot() {
    report(
        "dot",
        "dot_rev",
        expect![[r#"
        source (moves 59, adds 4, mults 4, nlops 0)
        gradient (moves 63, adds 4, mults 4, nlops 0)
        p 1
        ratio 1.060
        bound 12
    "#]],
    );
}

#[test]
fn lemma_5_3_rejects_what_partial_evaluation_removes() {
    let text = program_text("ex1_1_rev");
    let m = compile(&text);
    let def = m.entry(None).expect("a definition");
    let violations = cost::check_lemma_5_3(&m, def).expect_err("the raw output has lambdas");
    assert!(violations.iter().any(|v| v.message.contains("lambda")));
    assert!(violations.iter().any(|v| v.message.contains("application")));
}

#[test]
fn lemma_5_1_rejects_a_continuation_used_twice() {
    let text = "def f (x : R) : R =\n  let k = fun (z : R) -> z * x in\n  k x + k 1\n";
    let m = compile(text);
    let def = m.entry(None).expect("a definition");
    let violations = cost::check_lemma_5_1(&m, def).expect_err("k is used twice");
    assert_eq!(violations.len(), 1);
    assert!(violations[0].message.contains("`k` occurs 2 times"));
}
