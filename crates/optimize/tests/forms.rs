//! The optimized gradients of seeds/000's examples print as the paper's
//! final forms (Example 1.1 and Example 5.5), and optimization changes no
//! value. The inputs are the reverse-mode outputs transcribed from the
//! paper (tests/programs/*_rev.ad: Example 3.1's shape, Fig. 5's rules),
//! each stating its inputs and its value (the value and the gradient
//! computed by hand from the examples) in expectation comments.

mod common;

use expect_test::{Expect, expect};
use optimize::{Config, optimize};
use semantics::cost;

use common::{compile, eval, expectations, program_text, same, sugar, verified};

/// Optimizes `tests/programs/NAME.ad`, checks values, verification and the
/// lemmas, and returns the optimized module printed with the paper's sugar.
fn optimized(name: &str, raw: Expect) -> String {
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
    sugar(&out)
}

/// The body of a printed one-definition module, on one line.
fn body(printed: &str) -> String {
    let mut lines = printed.lines();
    lines.next();
    lines.map(str::trim).collect::<Vec<_>>().join(" ")
}

#[test]
fn example_1_1() {
    let printed = optimized(
        "ex1_1_rev",
        expect![[r#"
            def ex1_1_grad (x1 : R) (x2 : R) (x3 : R) : (R, R, R, R) =
              let w1 = x1 * x2 in
              let w2 = w1 * x1 in
              (w2, w1 + x2 * x1, x1 * x1, 0)
        "#]],
    );
    // The paper: let w1 = x1 * x2 in let w2 = w1 * x1 in (w1 + x2 * x1, x1 * x1, 0),
    // here after the value w2.
    assert_eq!(
        body(&printed),
        "let w1 = x1 * x2 in let w2 = w1 * x1 in (w2, w1 + x2 * x1, x1 * x1, 0)"
    );
}

#[test]
fn example_5_5_prod() {
    let printed = optimized(
        "prod_rev",
        expect![[r#"
            def prod_grad (A : [n]R) : (R, [n]R) =
              let v = reduce (*) 1 A in
              (v, map2 (*) (shift1R (scanl (*) 1 A)) (scanr (*) 1 (shift1L A)))
        "#]],
    );
    let grad = "map2 (*) (shift1R (scanl (*) 1 A)) (scanr (*) 1 (shift1L A))";
    let grad_swapped = "map2 (*) (scanr (*) 1 (shift1L A)) (shift1R (scanl (*) 1 A))";
    let b = body(&printed);
    assert!(
        b.contains(grad) || b.contains(grad_swapped),
        "the gradient of prod is not the paper's form:\n{printed}"
    );
}

#[test]
fn example_5_5_sum() {
    let printed = optimized(
        "sum_rev",
        expect![[r#"
            def sum_grad (A : [n]R) : (R, [n]R) =
              let A2 = map (fun (x_1 : R) -> 1) A in
              let v = reduce (+) 0 A in
              (v, A2)
        "#]],
    );
    // The result is `(v, G)` with G `ones_like A` or a name bound to it.
    let b = body(&printed);
    let grad = b
        .rsplit_once("(v, ")
        .and_then(|(_, g)| g.strip_suffix(')'))
        .unwrap_or_else(|| panic!("no gradient in\n{printed}"));
    assert!(
        grad == "ones_like A" || b.contains(&format!("let {grad} = ones_like A in")),
        "the gradient of sum is not ones_like A:\n{printed}"
    );
}

#[test]
fn example_5_5_dot() {
    let printed = optimized(
        "dot_rev",
        expect![[r#"
            def dot_grad (A : [n]R) (B : [n]R) : (R, [n]R, [n]R) =
              let v = reduce (+) 0 (map2 (*) A B) in
              (v, B, A)
        "#]],
    );
    assert!(
        body(&printed).ends_with("(v, B, A)"),
        "the gradient of dot is not (B, A):\n{printed}"
    );
}
