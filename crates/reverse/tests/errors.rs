//! What reverse mode refuses, and how it says it.

use crate::common;

use common::{B, Value, arr};
use reverse::{Config, reverse};
use syntax::{Prim, Ty};

fn sum_times(b: &mut B) -> syntax::ExprId {
    // reduce (+) 0 A * s
    let (x, y) = (b.var("x", Ty::Real), b.var("y", Ty::Real));
    let f = b.op(Prim::Add, vec![x, y]);
    let f = b.lam(&["x", "y"], f);
    let zero = b.real(0.0);
    let a = b.var("A", arr());
    let r = b.op(Prim::Reduce, vec![f, zero, a]);
    let s = b.var("s", Ty::Real);
    b.op(Prim::Mul, vec![r, s])
}

fn lowered() -> unf::Module {
    let mut b = B::new();
    let body = sum_times(&mut b);
    let m = b.def("f", &[("A", arr()), ("s", Ty::Real)], body);
    unf::lower(&m, m.defs.last().expect("a definition")).expect("lower")
}

fn wrt(names: &[&str]) -> Config {
    Config {
        wrt: Some(names.iter().map(|s| s.to_string()).collect()),
    }
}

#[test]
fn a_subset_of_the_parameters() {
    let s = lowered();
    let t = reverse(&s, &wrt(&["s"])).expect("reverse");
    assert_eq!(t.wrt, vec![2]);
    let g = unf::raise(&t).expect("raise");
    let a = Value::reals(&[1.0, 2.0]);
    let out = common::run(&g, &[a, Value::Real(3.0)]);
    let expected = Value::tuple(vec![Value::Real(9.0), Value::Real(3.0)]);
    assert!(out.approx_eq_default(&expected), "{out}");
}

#[test]
fn unknown_and_repeated_parameters() {
    let s = lowered();
    let err = reverse(&s, &wrt(&["q"])).expect_err("unknown");
    assert_eq!(err.to_string(), "`q` is not a parameter of `f`");
    let err = reverse(&s, &wrt(&["s", "s"])).expect_err("twice");
    assert_eq!(
        err.to_string(),
        "`s` is listed twice in the parameters to differentiate"
    );
    let err = reverse(&s, &wrt(&[])).expect_err("none");
    assert_eq!(
        err.to_string(),
        "the gradient is asked with respect to no parameter"
    );
}

#[test]
fn target_unf_is_not_an_input() {
    let s = lowered();
    let t = reverse(&s, &Config::default()).expect("reverse");
    let err = reverse(&t, &Config::default()).expect_err("target");
    assert_eq!(
        err.to_string(),
        "reverse mode takes a `source-unf` module, not `target-unf`"
    );
}

#[test]
fn a_result_that_is_not_a_real() {
    let mut b = B::new();
    let x = b.var("x", Ty::Real);
    let y = b.var("x", Ty::Real);
    let body = b.tuple(vec![x, y]);
    let m = b.def("pairs", &[("x", Ty::Real)], body);
    let s = unf::lower(&m, m.defs.last().expect("a definition")).expect("lower");
    let err = reverse(&s, &Config::default()).expect_err("tuple");
    assert_eq!(
        err.to_string(),
        "reverse mode needs a program whose result is a real, but `pairs` returns (R×R)"
    );
}

#[test]
fn an_ill_typed_input() {
    let mut s = lowered();
    s.root = unf::TermId(0);
    let err = reverse(&s, &Config::default()).expect_err("ill-typed");
    assert!(
        err.to_string()
            .starts_with("ill-formed source-unf module: "),
        "{err}"
    );
}

#[test]
fn the_whole_chain_in_one_call() {
    let mut b = B::new();
    let body = sum_times(&mut b);
    let m = b.def("f", &[("A", arr()), ("s", Ty::Real)], body);
    let g = reverse::gradient(&m, m.defs.last().expect("a definition"), &wrt(&["A"]))
        .expect("gradient");
    assert_eq!(g.defs[0].name.as_str(), "f_grad");
    let out = common::run(&g, &[Value::reals(&[1.0, 2.0]), Value::Real(3.0)]);
    let expected = Value::tuple(vec![Value::Real(9.0), Value::reals(&[3.0, 3.0])]);
    assert!(out.approx_eq_default(&expected), "{out}");
}

#[test]
fn a_fused_if_is_checked() {
    // `if x > 0 then log x else x * x`: D_ρ fuses F(if, J^T if); the
    // verifier refuses a fused `if` whose result is not a real.
    let m = syntax::compile(syntax::SourceFile {
        name: "f.ad".into(),
        text: "def f (x : R) : R = if x > 0 then log x else x * x".into(),
    })
    .expect("compile");
    let s = unf::lower(&m, m.defs.last().expect("a definition")).expect("lower");
    let t = reverse(&s, &Config::default()).expect("reverse");
    unf::verify(&t).expect("verifies");
    let i = t
        .terms
        .iter()
        .position(|x| matches!(x, unf::Term::Fused(unf::Prim::If { .. }, _)))
        .expect("a fused if");
    let mut bad = t.clone();
    let unf::Term::Fused(unf::Prim::If { ret, .. }, _) = &mut bad.terms[i] else {
        unreachable!("found above")
    };
    let boolean = t
        .tys
        .iter()
        .position(|ty| *ty == unf::UTy::Ground(Ty::Bool))
        .expect("the condition's type");
    *ret = unf::TyId(boolean as u32);
    let errs = unf::verify(&bad).expect_err("not a real-valued if");
    assert!(
        errs.iter()
            .any(|e| e.message
                == "only a first-order primitive or an `if` with a real result is fused"),
        "{errs:?}"
    );
}
