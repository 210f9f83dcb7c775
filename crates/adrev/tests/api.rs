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
