//! The optimized gradients of seeds/000's examples have the paper's final
//! forms (Example 1.1 and Example 5.5), for two inputs each:
//! - the reverse-mode output of the pipeline (`fixtures/*/40.target.ron`,
//!   via UNF, whose raise step already inlines the continuations);
//! - the direct macro's output transcribed from the paper
//!   (`tests/programs/*_rev.ad`: Example 3.1 with its continuation
//!   lambdas, Fig. 5's rules), which exercises beta-reduction and the
//!   inlining of continuations (Lemma 5.1); these also state their values,
//!   checked before and after.
//!
//! The paper's forms are for G, the gradient alone; the pipeline's programs
//! also return the value, so the forms are checked on
//! `optimize::gradient_only` of each, and the full outputs are compared up
//! to names and `let` placement (`common::expanded_results`).

use crate::common;

use expect_test::{Expect, expect};
use optimize::{Config, gradient_only, optimize};
use semantics::cost;

use common::{compile, eval, expanded_results, expectations, program_text, same, verified};

/// The pipeline's gradient program of a fixture.
fn pipeline(fixture: &str) -> syntax::Module {
    // What `40.target.ron` holds, computed from the program.
    let f = testkit::Fixture::load(fixture).unwrap_or_else(|e| panic!("{e}"));
    testkit::stages::boundaries(&f)
        .expect("reverse mode takes the fixture")
        .target
}

/// A transcribed reverse-mode output: its value checked against its
/// comments before and after optimization, Lemma 5.1 before, Lemma 5.3
/// after, the optimized program snapshotted.
fn transcribed(name: &str, raw: Expect) -> syntax::Module {
    let text = program_text(name);
    let m = compile(&text);
    let (inputs, expected) = expectations(&text, &m);
    let expected = expected.expect("the program states its value");
    let before = eval(&m, &inputs).expect("the reverse-mode output evaluates");
    assert!(
        same(&before, &expected),
        "{name}: {before:?} is not the stated {expected:?}"
    );
    let def = m.entry(None).expect("a definition");
    cost::check_lemma_5_1(&m, def).unwrap_or_else(|v| panic!("{name}: Lemma 5.1 fails: {v:?}"));

    let out = optimize(&m, &Config::default()).expect("optimizes");
    verified(&out, name);
    let after = eval(&out, &inputs).expect("the optimized program evaluates");
    assert!(
        same(&after, &expected),
        "{name}: optimized to {after:?}, not {expected:?}"
    );
    let def = out.entry(None).expect("a definition");
    cost::check_lemma_5_3(&out, def).unwrap_or_else(|v| panic!("{name}: Lemma 5.3 fails: {v:?}"));
    raw.assert_eq(&syntax::print::module(&out));
    m
}

/// G, the gradient alone, optimized, as `expanded_results` prints it.
fn g_form(m: &syntax::Module) -> Vec<String> {
    let g = optimize(
        &gradient_only(m, None).expect("a gradient program"),
        &Config::default(),
    )
    .expect("optimizes");
    expanded_results(&g)
}

/// A form as the paper writes it (a body over the parameters `params`),
/// as `expanded_results` prints it.
fn paper(params: &str, ret: &str, body: &str) -> Vec<String> {
    expanded_results(&compile(&format!("def g {params} : {ret} =\n  {body}\n")))
}

#[test]
fn example_1_1() {
    let xs = "(x1 : R) (x2 : R) (x3 : R)";
    let paper_g = paper(
        xs,
        "(R, R, R)",
        "let w1 = x1 * x2 in let w2 = w1 * x1 in (w1 + x2 * x1, x1 * x1, 0)",
    );
    // With the value in front, as the pipeline returns it.
    let paper_full = paper(
        xs,
        "(R, R, R, R)",
        "let w1 = x1 * x2 in let w2 = w1 * x1 in (w2, w1 + x2 * x1, x1 * x1, 0)",
    );
    // The pipeline.
    let m = pipeline("ex1_1");
    assert_eq!(g_form(&m), paper_g);
    let out = optimize(&m, &Config::default()).expect("optimizes");
    assert_eq!(expanded_results(&out), paper_full);
    // Example 3.1's continuations, transcribed.
    let t = transcribed(
        "ex1_1_rev",
        expect![[r#"
            def ex1_1_grad (x1 : R) (x2 : R) (x3 : R) : (R, R, R, R) =
              let w1 = x1 * x2 in
              (w1 * x1, w1 + x2 * x1, x1 * x1, 0)
        "#]],
    );
    assert_eq!(g_form(&t), paper_g);
    let out = optimize(&t, &Config::default()).expect("optimizes");
    assert_eq!(expanded_results(&out), paper_full);
}

#[test]
fn example_5_5_prod() {
    let a = "(A : [n]R)";
    // The transcription of Fig. 5 gives the paper's form, the operands of
    // the commutative `map2 (*)` in the other order.
    let t = transcribed(
        "prod_rev",
        expect![[r#"
            def prod_grad (A : [n]R) : (R, [n]R) =
              let s_5 = scanl (*) 1 A in
              (s_5[length A], map2 (*) (shift1R s_5) (scanr (*) 1 (shift1L A)))
        "#]],
    );
    assert_eq!(
        g_form(&t),
        paper(
            a,
            "[n]R",
            "map2 (*) (shift1R (scanl (*) 1 A)) (scanr (*) 1 (shift1L A))"
        )
    );
    // The pipeline scans all of A and shifts after (`shift1L (scanr (*) 1
    // A)`) where the paper scans the shifted array (`scanr (*) 1 (shift1L
    // A)`): equal for a non-empty A, and only the former is right for the
    // empty one (see docs/optimize.md).
    assert_eq!(
        g_form(&pipeline("prod")),
        paper(
            a,
            "[n]R",
            "map2 (*) (shift1R (scanl (*) 1 A)) (shift1L (scanr (*) 1 A))"
        )
    );
}

#[test]
fn example_5_5_sum() {
    let paper_g = paper("(A : [n]R)", "[n]R", "ones_like A");
    assert_eq!(g_form(&pipeline("sum")), paper_g);
    let t = transcribed(
        "sum_rev",
        expect![[r#"
            def sum_grad (A : [n]R) : (R, [n]R) =
              (reduce (+) 0 A, map (fun (x_1 : R) -> 1) A)
        "#]],
    );
    assert_eq!(g_form(&t), paper_g);
}

#[test]
fn example_5_5_dot() {
    let paper_g = paper("(A : [n]R) (B : [n]R)", "([n]R, [n]R)", "(B, A)");
    assert_eq!(g_form(&pipeline("dot")), paper_g);
    let t = transcribed(
        "dot_rev",
        expect![[r#"
            def dot_grad (A : [n]R) (B : [n]R) : (R, [n]R, [n]R) =
              (reduce (+) 0 (map2 (*) A B), B, A)
        "#]],
    );
    assert_eq!(g_form(&t), paper_g);
}
