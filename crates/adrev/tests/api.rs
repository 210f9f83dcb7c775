//! The library's API on small programs.

use adrev::{Inputs, Kind, Program, Request};
use semantics::Value;

#[test]
fn a_gradient_by_name() {
    let p = Program::from_text("prod.ad", "def prod_ (A : [n]R) : R = reduce (*) 1 A")
        .expect("compiles");
    let g = p.compile(&Request::new(Kind::Grad)).expect("a gradient");
    let out = g
        .call(&Inputs::new().with("A", Value::reals(&[1.0, 2.0, 3.0, 4.0])))
        .expect("runs");
    assert_eq!(
        out.gradient("A"),
        Some(&Value::reals(&[24.0, 12.0, 8.0, 6.0]))
    );
}

#[path = "../examples/gmm_many.rs"]
mod gmm_many;

#[test]
fn example_gmm_many_runs() {
    // The example's own code, on a few calls: the first point is the
    // fixture's, whose gradient is ADBench's expected one.
    let out = gmm_many::run(3, adrev::Backend::Eval).unwrap_or_else(|e| panic!("{}", e.message()));
    assert_eq!(out.len(), 3);
    let text = std::fs::read_to_string(gmm_many::GMM).expect("the fixture");
    let p = Program::load(gmm_many::GMM).expect("loads");
    let def = p.entry(None).expect("an entry");
    let exp = semantics::Expectations::parse(&text);
    let want = exp
        .grad(def, "alphas")
        .expect("a -- grad alphas line")
        .expect("reads");
    assert!(out[0].1.approx_eq_default(&want), "{} vs {want}", out[0].1);
    // The points move, so do the values.
    assert!(out[0].0 != out[2].0);
}
