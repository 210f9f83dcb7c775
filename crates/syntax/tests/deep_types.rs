//! Deep programs, and programs of many definitions, through elaboration,
//! inference, the verifier, the specialiser and the first-order check, on
//! the default 2 MiB test-thread stack: every recursion over the tree runs
//! under `stack::guard`.

use syntax::{Expr, Module, SourceFile, Ty, check_first_order, compile, infer, specialize, verify};

const N: usize = 20_000;

fn build(text: String) -> Module {
    compile(SourceFile {
        name: "deep.ad".into(),
        text,
    })
    .unwrap_or_else(|e| panic!("does not compile: {e:?}"))
}

fn checked(m: &Module) {
    if let Err(es) = verify(m) {
        panic!("does not verify: {:?}", &es[..es.len().min(3)]);
    }
    for d in &m.defs {
        assert_eq!(check_first_order(m, d), Ok(()));
    }
}

#[test]
fn let_chain_of_20000() {
    let mut text =
        String::from("def f (x : R) (k : Int) : R =\n  let x0 = x in\n  let k0 = k in\n");
    for i in 1..N {
        text.push_str(&format!("  let x{i} = x{} * 2 + 1 in\n", i - 1));
    }
    text.push_str(&format!("  x{}\n", N - 1));
    let m = build(text);
    assert_eq!(
        m.exprs
            .iter()
            .filter(|e| matches!(e, Expr::Let { .. }))
            .count(),
        N + 1
    );
    // Literals in real arithmetic became reals.
    assert!(!m.exprs.iter().any(|e| matches!(e, Expr::Int(_))));
    assert_eq!(m.defs[0].ret, Some(Ty::Real));
    checked(&m);
    let mut again = m.clone();
    infer(&mut again).expect("infers");
    assert_eq!(again, m);
    let s = specialize(&m).expect("specialises");
    checked(&s);
}

#[test]
fn deep_expressions_and_inlined_calls() {
    // 20,000 nested additions (deep on the left), and 5,000 calls of an
    // earlier definition, each inlined.
    let mut sum = String::from("x");
    for _ in 1..N {
        sum.push_str(" + x");
    }
    let mut calls = String::from("x");
    for _ in 0..5_000 {
        calls = format!("g ({calls})");
    }
    let text = format!(
        "def g (y : R) : R = y * y\ndef f (x : R) : R = {sum}\ndef h (x : R) : R = {calls}\n"
    );
    let m = build(text);
    checked(&m);
    let s = specialize(&m).expect("specialises");
    checked(&s);
}

#[test]
fn deep_beta_redexes_specialise() {
    // 2,000 nested applications of lambdas, the higher-order shape that
    // specialisation removes.
    let mut e = String::from("x");
    for i in 0..2_000 {
        e = format!("(fun (y{i} : R) -> y{i} + 1) ({e})");
    }
    let m = build(format!("def f (x : R) : R = {e}\n"));
    assert!(verify(&m).is_ok());
    let s = specialize(&m).expect("specialises");
    checked(&s);
    assert!(!s.exprs.iter().any(|e| matches!(e, Expr::App { .. })));
}

#[test]
fn twenty_thousand_definitions_each_cost_their_own_size() {
    // Elaboration used to rebuild the map of later definitions for every
    // definition (and scan the earlier ones for a duplicate name): 10,000
    // definitions took 22 s, 10^5 did not finish. One map for the module
    // makes this a second; the last definition is what it says.
    let n = 20_000;
    let text: String = (0..n)
        .map(|i| format!("def d{i} (x : R) : R =\n  sin x * {i}.5\n\n"))
        .collect();
    let m = build(text);
    assert_eq!(m.defs.len(), n);
    checked(&m);
    let last = m.defs.last().expect("the definitions");
    assert_eq!(last.name.as_str(), format!("d{}", n - 1));
    // A later definition is still refused by name.
    let err = compile(SourceFile {
        name: "t.ad".into(),
        text: "def a (x : R) : R =\n  b x\n\ndef b (x : R) : R =\n  x\n".into(),
    })
    .expect_err("`a` calls a later definition");
    assert!(err.to_string().contains("defined later"), "{err}");
}
