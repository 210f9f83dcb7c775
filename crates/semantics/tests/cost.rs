//! The cost model (seeds/000 Fig. 11): static costs computed by hand as
//! oracles, the dynamic count equal to the static cost on restricted
//! programs without `if` and bounded by it with `if`, the dynamic count on
//! higher-order programs, NAO, and the checkers of Lemma 5.1 and 5.3
//! rejecting what they should.

use semantics::cost::{self, Cost};
use semantics::{Expectations, Value};
use syntax::{Module, SourceFile};

fn compile(text: &str) -> Module {
    syntax::compile(SourceFile {
        name: "cost.ad".to_string(),
        text: text.to_string(),
    })
    .unwrap_or_else(|e| panic!("does not compile: {e}\n{text}"))
}

/// The text of the repository's `fixtures/NAME/program.ad`.
fn fixture(name: &str) -> String {
    let path = format!(
        "{}/../../fixtures/{name}/program.ad",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {path}: {e}"))
}

/// The static and the dynamic cost of the entry of `text` at its `-- at`
/// inputs (the static one as an error when there is none).
fn costs(text: &str) -> (Result<Cost, semantics::Error>, Cost) {
    let m = compile(text);
    let def = m.entry(None).expect("a definition");
    let inputs = Expectations::parse(text).inputs(def).expect("inputs read");
    let args: Vec<Value> = def
        .params
        .iter()
        .map(|p| {
            inputs
                .iter()
                .find(|(n, _)| n == p.name.as_str())
                .map(|(_, v)| v.clone())
                .expect("an input per parameter")
        })
        .collect();
    let sizes = cost::sizes_at(def, &args).expect("sizes bind");
    let st = cost::static_cost(&m, def, &sizes);
    let (_, dynamic) = cost::dynamic_cost(&m, def, &args).expect("evaluates");
    (st, dynamic)
}

#[test]
fn example_1_1() {
    // let w1 = x1 * x2 in let w2 = w1 * x1 in w2: two lets and a variable
    // (3 moves), two products of variables (5 moves and a mult each).
    let (st, dynamic) = costs(&fixture("ex1_1"));
    assert_eq!(st, Ok(Cost::new(13, 0, 2, 0)));
    assert_eq!(dynamic, Cost::new(13, 0, 2, 0));
}

#[test]
fn prod_reduce() {
    // reduce (*) 1 A at n = 4: 4 * (Cost(a * b) + 2 moves) + the 1 and the A.
    let (st, dynamic) = costs(&fixture("prod"));
    assert_eq!(st, Ok(Cost::new(4 * 7 + 2, 0, 4, 0)));
    assert_eq!(dynamic, Cost::new(4 * 7 + 2, 0, 4, 0));
}

#[test]
fn scans_and_shifts() {
    // scanl at n = 3: 3 * (Cost(a + b) + 3); shift1R of the 4-element scan: 4.
    let text = "-- at A = [1, 2, 3]\ndef f (A : [n]R) : [n]R = shift1R (scanl (+) 0 A)\n";
    let (st, dynamic) = costs(text);
    assert_eq!(st, Ok(Cost::new(3 * 8 + 2 + 4, 3, 0, 0)));
    assert_eq!(dynamic, Cost::new(3 * 8 + 2 + 4, 3, 0, 0));
}

#[test]
fn nested_maps_scale_with_both_sizes() {
    // map (fun r -> map (fun x -> sin x) r) M on 2 rows of 3:
    // inner per element: sin x = (3,0,0,1), + 2 moves; per row: 3 * that +
    // the r (1) + 2 moves; plus the M (1).
    let text = "-- at M = [[1, 2, 3], [4, 5, 6]]\n\
                def f (M : [n][m]R) : [n][m]R = map (fun (r : [m]R) -> map (fun (x : R) -> sin x) r) M\n";
    let row = Cost::new(3 * 5 + 1 + 2, 0, 0, 3);
    let (st, dynamic) = costs(text);
    assert_eq!(st, Ok(row.times(2) + Cost::MOVE));
    assert_eq!(dynamic, row.times(2) + Cost::MOVE);
}

#[test]
fn if_static_takes_the_dearer_branch() {
    // 1 move for the if, x < 1 (5 moves, 1 add); branches x * x (5, mult)
    // and sin x (3, nlop): statically their componentwise max.
    let text = "-- at x = 0.5\ndef f (x : R) : R = if x < 1 then x * x else sin x\n";
    let (st, dynamic) = costs(text);
    assert_eq!(st, Ok(Cost::new(11, 1, 1, 1)));
    assert_eq!(dynamic, Cost::new(11, 1, 1, 0));
    assert!(dynamic.le(st.expect("static")));
}

#[test]
fn higher_order_programs_have_only_a_dynamic_cost() {
    // let f = fun z -> z * x in f x + f 1: per call 1 move to bind z, the f
    // and the argument (2), the body (5 moves, 1 mult); the let and the sum.
    let text = "-- at x = 2\ndef f (x : R) : R =\n  let f = fun (z : R) -> z * x in\n  f x + f 1\n";
    let (st, dynamic) = costs(text);
    assert!(
        matches!(st, Err(semantics::Error::NotRestricted { .. })),
        "{st:?}"
    );
    assert_eq!(dynamic, Cost::new(1 + 8 + 8 + 3, 1, 2, 0));
}

#[test]
fn nao_counts_nesting() {
    let flat = compile("def f (A : [n]R) : R = reduce (+) 0 (map (fun (x : R) -> x * x) A)\n");
    let nested = compile(
        "def f (M : [n][m]R) : R = reduce (+) 0 (map (fun (r : [m]R) -> reduce (+) 0 r) M)\n",
    );
    let scalar = compile(&fixture("ex1_1"));
    for (m, p) in [(&scalar, 0), (&flat, 1), (&nested, 2)] {
        let def = m.entry(None).expect("a definition");
        assert_eq!(cost::nao(m, def.body), p, "{}", syntax::print::module(m));
    }
}

#[test]
fn lemma_5_1_rejects_a_continuation_used_twice() {
    let m = compile("def f (x : R) : R =\n  let k = fun (z : R) -> z * x in\n  k x + k 1\n");
    let def = m.entry(None).expect("a definition");
    let violations = cost::check_lemma_5_1(&m, def).expect_err("k is used twice");
    assert_eq!(violations.len(), 1);
    assert!(violations[0].message.contains("`k` occurs 2 times"));
}

#[test]
fn lemma_5_3_rejects_lambdas_and_calls() {
    let m = compile("def f (x : R) : R =\n  let k = fun (z : R) -> z * x in\n  k x\n");
    let def = m.entry(None).expect("a definition");
    let violations = cost::check_lemma_5_3(&m, def).expect_err("k remains");
    let messages: Vec<&str> = violations.iter().map(|v| v.message.as_str()).collect();
    assert!(
        messages.iter().any(|v| v.contains("a lambda remains")),
        "{messages:?}"
    );
    assert!(
        messages
            .iter()
            .any(|v| v.contains("an application remains")),
        "{messages:?}"
    );
    assert!(
        messages.iter().any(|v| v.contains("`k` is a function")),
        "{messages:?}"
    );
    // A lambda as the function of a builtin is part of the builtin.
    let ok = compile("def f (A : [n]R) : [n]R = map (fun (x : R) -> x * 2) A\n");
    let def = ok.entry(None).expect("a definition");
    assert_eq!(cost::check_lemma_5_3(&ok, def), Ok(()));
}

#[test]
fn cheap_gradient_bound() {
    assert_eq!(cost::cheap_gradient_bound(0), 4.0);
    assert_eq!(cost::cheap_gradient_bound(2), 36.0);
    let c = cost::cheap_gradient(Cost::new(10, 0, 0, 0), Cost::new(30, 5, 5, 0), 0);
    assert_eq!(c.ratio, 4.0);
    assert!(c.holds());
    let c = cost::cheap_gradient(Cost::new(10, 0, 0, 0), Cost::new(41, 0, 0, 0), 0);
    assert!(!c.holds());
}
