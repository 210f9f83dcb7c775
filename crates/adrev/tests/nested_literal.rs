//! The gradient of a nested array literal of a variable, `[[...[x]...]]`
//! of depth d (issue 19, docs/scale.md "Shared types"): the type of the
//! node at depth k has k brackets, so any stage that hashes or compares a
//! node's whole type costs d². UNF's type table interns types by structure
//! (`unf::type_nodes_hashed`) and the verifier compares the re-inferred
//! types with a memo of shared elements (`syntax::ty_eq`); both count the
//! type nodes they touch, and this test asserts that the counts, over the
//! whole gradient route (inline, UNF, D_ρ, UNF⁻¹, optimize, with the
//! verifiers between), double when d doubles. Work is counted, never timed.

use adrev::{Inputs, Kind, Program, Request};
use semantics::Value;

/// `let a = [[...[x]...]] in x`, `depth` brackets deep.
fn nested(depth: usize) -> String {
    format!(
        "def f (x : R) : R =\n  let a = {}x{} in\n  x\n",
        "[".repeat(depth),
        "]".repeat(depth)
    )
}

/// The type nodes hashed and compared while the gradient is built.
fn gradient_work(depth: usize) -> (u64, u64) {
    let p = Program::from_text("nested.ad", nested(depth))
        .unwrap_or_else(|e| panic!("{}", e.message()));
    let hashed = unf::type_nodes_hashed();
    let compared = syntax::ty_eq::type_nodes_compared();
    let g = p
        .compile(&Request::new(Kind::ValueAndGrad))
        .unwrap_or_else(|e| panic!("{}", e.message()));
    let work = (
        unf::type_nodes_hashed() - hashed,
        syntax::ty_eq::type_nodes_compared() - compared,
    );
    let out = g
        .call(&Inputs::new().with("x", Value::Real(0.5)))
        .unwrap_or_else(|e| panic!("{}", e.message()));
    assert_eq!(out.value, Value::Real(0.5));
    assert_eq!(out.gradient("x"), Some(&Value::Real(1.0)));
    work
}

#[test]
fn the_gradient_of_a_nested_literal_hashes_and_compares_linearly_many_type_nodes() {
    let (small, large) = (gradient_work(2000), gradient_work(4000));
    for (what, a, b) in [
        ("type nodes hashed", small.0, large.0),
        ("type nodes compared", small.1, large.1),
    ] {
        // Every level's type is hashed and compared at least once; whole
        // types per node would be about 2·10^6 at depth 2,000.
        assert!(
            a >= 2000,
            "{what}: {a} at depth 2,000, too few to see the literal"
        );
        assert!(a <= 100 * 2000, "{what}: {a} at depth 2,000");
        let ratio = b as f64 / a as f64;
        assert!(
            (1.8..=2.2).contains(&ratio),
            "{what}: {a} at depth 2,000, {b} at 4,000: ratio {ratio:.2}, not linear"
        );
    }
}
