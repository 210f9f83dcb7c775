//! Programs whose definitions call each other, through the library: the
//! loaded program keeps its calls (each definition elaborated once) and a
//! request inlines the entry it needs (`Pass::Inline`), so every route
//! differentiates a long chain of definitions, and any definition can be
//! the entry.

use adrev::{Inputs, Kind, Program, Request, Route};
use semantics::Value;

/// `d0 x = x * 1.0001`, `d_i x = d_{i-1} x * 1.0001`: the value is
/// `x * 1.0001^n` and the derivative `1.0001^n`.
fn chain(n: usize) -> Program {
    let mut text = String::from("def d0 (x : R) : R = x * 1.0001\n");
    for i in 1..n {
        text.push_str(&format!("def d{i} (x : R) : R = d{} x * 1.0001\n", i - 1));
    }
    Program::from_text("chain.ad", text).unwrap_or_else(|e| panic!("{}", e.message()))
}

#[test]
fn every_route_differentiates_a_chain_of_a_thousand_definitions() {
    let n = 1000;
    let p = chain(n);
    let x = 0.5;
    // The program's own order of operations: ((x * c) * c) * ...
    let mut value = x;
    for _ in 0..n {
        value *= 1.0001;
    }
    let slope = 1.0001f64.powi(n as i32);
    let at = Inputs::new().with("x", Value::Real(x));
    for route in [Route::Unf, Route::Direct, Route::Forward] {
        let g = p
            .compile(&Request::new(Kind::ValueAndGrad).route(route))
            .unwrap_or_else(|e| panic!("{route:?}: {}", e.message()));
        let out = g.call(&at).unwrap_or_else(|e| panic!("{}", e.message()));
        assert_eq!(out.value, Value::Real(value), "{route:?}");
        let got = out.gradient("x").and_then(Value::as_real).expect("a real");
        assert!(
            (got - slope).abs() <= 1e-12 * slope,
            "{route:?}: {got} vs {slope}"
        );
    }
}

#[test]
fn any_definition_is_an_entry_and_the_others_stay_out_of_its_program() {
    let p = Program::from_text(
        "calls.ad",
        "def sq (x : R) : R = x * x\n\
         def twice (g : R -> R) (x : R) : R = g (g x)\n\
         def f (x : R) : R = twice sq x + sq 3\n\
         def h (A : [n]R) : R = sum (map f A)\n",
    )
    .unwrap_or_else(|e| panic!("{}", e.message()));
    let at = Inputs::new().with("x", Value::Real(2.0));
    let g = p
        .compile(&Request::new(Kind::ValueAndGrad).entry("f"))
        .unwrap_or_else(|e| panic!("{}", e.message()));
    let out = g.call(&at).unwrap_or_else(|e| panic!("{}", e.message()));
    assert_eq!(out.value, Value::Real(16.0 + 9.0));
    assert_eq!(out.gradient("x"), Some(&Value::Real(4.0 * 8.0)));
    let v = p
        .compile(&Request::new(Kind::Value).entry("sq"))
        .unwrap_or_else(|e| panic!("{}", e.message()));
    let module = v.module().expect("a program");
    assert_eq!(module.defs.len(), 1, "{}", syntax::print::module(module));
    let out = v.call(&at).unwrap_or_else(|e| panic!("{}", e.message()));
    assert_eq!(out.value, Value::Real(4.0));
    // A higher-order helper checks but is no entry of a derivative.
    assert_eq!(
        p.entry(Some("twice")).expect("a definition").params.len(),
        2
    );
    let e = p
        .compile(&Request::new(Kind::Grad).entry("twice"))
        .expect_err("a function parameter");
    assert!(!e.is_internal(), "{}", e.message());
    let at = Inputs::new().with("A", Value::reals(&[1.0, 2.0]));
    let out = p
        .compile(&Request::new(Kind::ValueAndGrad))
        .and_then(|g| g.call(&at))
        .unwrap_or_else(|e| panic!("{}", e.message()));
    assert_eq!(out.value, Value::Real(1.0 + 9.0 + 16.0 + 9.0));
    assert_eq!(out.gradient("A"), Some(&Value::reals(&[4.0, 32.0])));
}
