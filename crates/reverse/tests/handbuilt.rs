//! The whole chain on hand-built core modules.

#[path = "../../unf/tests/common/mod.rs"]
mod common;

use common::{B, V, arr, run};
use syntax::{Prim, Ty};

fn grad(m: &syntax::Module, args: &[V]) -> V {
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
    eprintln!("{}", syntax::print::module(&g));
    let out = run(&g, args);
    let V::T(items) = &out else { panic!("{out:?}") };
    assert_eq!(items[0], plain);
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
    let out = grad(&m, &[V::R(2.0), V::R(3.0), V::R(5.0)]);
    assert_eq!(
        out,
        V::T(vec![V::R(12.0), V::R(12.0), V::R(4.0), V::R(0.0)])
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
    let reals = |xs: &[f64]| V::A(xs.iter().map(|&x| V::R(x)).collect());
    let out = grad(&m, &[reals(&[1.0, 2.0, 3.0, 4.0])]);
    assert_eq!(out, V::T(vec![V::R(24.0), reals(&[24.0, 12.0, 8.0, 6.0])]));
    let out = grad(&m, &[reals(&[1.0, 0.0, 3.0, 4.0])]);
    assert_eq!(out, V::T(vec![V::R(0.0), reals(&[0.0, 12.0, 0.0, 0.0])]));
    let out = grad(&m, &[reals(&[])]);
    assert_eq!(out, V::T(vec![V::R(1.0), reals(&[])]));
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
    let reals = |xs: &[f64]| V::A(xs.iter().map(|&x| V::R(x)).collect());
    let out = grad(
        &m,
        &[reals(&[1.0, 2.0, 3.0, 4.0]), reals(&[5.0, 6.0, 7.0, 8.0])],
    );
    assert_eq!(
        out,
        V::T(vec![
            V::R(70.0),
            reals(&[5.0, 6.0, 7.0, 8.0]),
            reals(&[1.0, 2.0, 3.0, 4.0])
        ])
    );
}
