//! The whole chain on hand-built core modules.

use crate::common;

use common::{B, Value, arr, items, run};
use syntax::{Prim, Ty};

fn grad(m: &syntax::Module, args: &[Value]) -> Value {
    let def = m.defs.last().expect("a definition");
    let s = unf::lower(m, def).expect("lower");
    unf::verify(&s).expect("source unf verifies");
    eprintln!("{}", unf::print(&s));
    let src = unf::raise(&s).expect("raise source");
    let plain = run(&src, args);
    let t = reverse::reverse(&s, &reverse::Config::default()).expect("reverse");
    unf::verify(&t).expect("target unf verifies");
    eprintln!("{}", unf::print(&t));
    let g = unf::raise(&t).expect("raise target");
    if let Err(errs) = syntax::verify(&g) {
        panic!(
            "the gradient program does not verify: {errs:?}\n{}",
            syntax::print::module(&g)
        );
    }
    eprintln!("{}", syntax::print::module(&g));
    let out = run(&g, args);
    assert!(items(&out)[0].approx_eq_default(&plain), "{out} vs {plain}");
    // The Target UNF module itself evaluates to the same tuple.
    let inputs: Vec<(String, Value)> = def
        .params
        .iter()
        .zip(args)
        .map(|(p, a)| (p.name.to_string(), a.clone()))
        .collect();
    let direct = semantics::eval_unf(&t, &inputs).expect("eval target-unf");
    assert!(direct.approx_eq_default(&out), "{direct} vs {out}");
    let source = semantics::eval_unf(&s, &inputs).expect("eval source-unf");
    assert!(source.approx_eq_default(&plain), "{source} vs {plain}");
    out
}

#[test]
fn ex1_1() {
    let mut b = B::new();
    let x1 = b.var("x1", Ty::Real);
    let x2 = b.var("x2", Ty::Real);
    let w1v = b.op(Prim::Mul, vec![x1, x2]);
    let w1 = b.var("w1", Ty::Real);
    let x1b = b.var("x1", Ty::Real);
    let w2v = b.op(Prim::Mul, vec![w1, x1b]);
    let w2 = b.var("w2", Ty::Real);
    let inner = b.let_("w2", w2v, w2);
    let body = b.let_("w1", w1v, inner);
    let m = b.def(
        "ex1_1",
        &[("x1", Ty::Real), ("x2", Ty::Real), ("x3", Ty::Real)],
        body,
    );
    let out = grad(&m, &[Value::Real(2.0), Value::Real(3.0), Value::Real(5.0)]);
    assert!(
        out.approx_eq_default(&Value::tuple(vec![
            Value::Real(12.0),
            Value::Real(12.0),
            Value::Real(4.0),
            Value::Real(0.0)
        ])),
        "{out}"
    );
}

#[test]
fn prod_with_zero() {
    let mut b = B::new();
    let x = b.var("x", Ty::Real);
    let y = b.var("y", Ty::Real);
    let mul = b.op(Prim::Mul, vec![x, y]);
    let f = b.lam(&["x", "y"], mul);
    let one = b.real(1.0);
    let a = b.var("A", arr());
    let body = b.op(Prim::Reduce, vec![f, one, a]);
    let m = b.def("prod_", &[("A", arr())], body);
    let reals = Value::reals;
    let out = grad(&m, &[reals(&[1.0, 2.0, 3.0, 4.0])]);
    assert!(
        out.approx_eq_default(&Value::tuple(vec![
            Value::Real(24.0),
            reals(&[24.0, 12.0, 8.0, 6.0])
        ])),
        "{out}"
    );
    let out = grad(&m, &[reals(&[1.0, 0.0, 3.0, 4.0])]);
    assert!(
        out.approx_eq_default(&Value::tuple(vec![
            Value::Real(0.0),
            reals(&[0.0, 12.0, 0.0, 0.0])
        ])),
        "{out}"
    );
    let out = grad(&m, &[reals(&[])]);
    assert!(
        out.approx_eq_default(&Value::tuple(vec![Value::Real(1.0), reals(&[])])),
        "{out}"
    );
}

#[test]
fn dot() {
    let mut b = B::new();
    let x = b.var("x", Ty::Real);
    let y = b.var("y", Ty::Real);
    let add = b.op(Prim::Add, vec![x, y]);
    let plus = b.lam(&["x", "y"], add);
    let zero = b.real(0.0);
    let x = b.var("a", Ty::Real);
    let y = b.var("b", Ty::Real);
    let mul = b.op(Prim::Mul, vec![x, y]);
    let times = b.lam(&["a", "b"], mul);
    let a = b.var("A", arr());
    let bb = b.var("B", arr());
    let m2 = b.prim(Prim::Map2, vec![times, a, bb], arr());
    let body = b.op(Prim::Reduce, vec![plus, zero, m2]);
    let m = b.def("dot_", &[("A", arr()), ("B", arr())], body);
    let reals = Value::reals;
    let out = grad(
        &m,
        &[reals(&[1.0, 2.0, 3.0, 4.0]), reals(&[5.0, 6.0, 7.0, 8.0])],
    );
    assert!(
        out.approx_eq_default(&Value::tuple(vec![
            Value::Real(70.0),
            reals(&[5.0, 6.0, 7.0, 8.0]),
            reals(&[1.0, 2.0, 3.0, 4.0])
        ])),
        "{out}"
    );
}

#[test]
fn tuple_free_variable_in_a_map_body() {
    // def f (A : [n]R) (x : R) : R =
    //   let p = (A, x) in reduce (+) 0 (map (fun y -> y * p.2 + sin (p.2)) p.1)
    let src = "def f (A : [n]R) (x : R) : R =\n  let p = (A, x) in\n  reduce (+) 0 (map (fun y -> y * p.2 + sin (p.2)) p.1)\n";
    let m = syntax::compile(syntax::SourceFile {
        name: "t.ad".into(),
        text: src.into(),
    })
    .expect("compile");
    let a = Value::reals(&[1.0, -2.0, 0.5]);
    let out = grad(&m, &[a, Value::Real(0.7)]);
    // f = x * sum A + n sin x: df/dA_i = x, df/dx = sum A + n cos x.
    let expected = Value::tuple(vec![
        Value::Real(0.7 * -0.5 + 3.0 * 0.7f64.sin()),
        Value::reals(&[0.7, 0.7, 0.7]),
        Value::Real(-0.5 + 3.0 * 0.7f64.cos()),
    ]);
    assert!(out.approx_eq_default(&expected), "{out}");
}
