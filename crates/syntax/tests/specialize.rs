//! Specialisation to first order and the first-order check.

use crate::support;

use expect_test::{Expect, expect};
use proptest::prelude::*;
use support::eval::call;
use syntax::{Error, Module, check_first_order, print, specialize, specialize_def, verify};

use crate::common::{at, ok};

/// Specialises; the result verifies and is first-order.
fn spec(text: &str) -> Module {
    let s = specialize(&ok(text)).unwrap_or_else(|e| panic!("{text:?}: {e:?}"));
    if let Err(es) = verify(&s) {
        panic!("{text:?}: does not verify: {es:?}");
    }
    for d in &s.defs {
        if let Err(e) = check_first_order(&s, d) {
            panic!("{text:?}: not first-order: {e}\n{}", print::module(&s));
        }
    }
    s
}

fn check(text: &str, want: Expect) {
    want.assert_eq(&print::module(&spec(text)));
}

/// The text a specialisation error points at, and its message.
fn spec_err(text: &str) -> (String, String) {
    not_first_order(text, specialize(&ok(text)))
}

/// [`spec_err`] for one definition (`specialize_def`).
fn spec_def_err(text: &str, name: &str) -> (String, String) {
    not_first_order(text, specialize_def(&ok(text), name))
}

fn not_first_order(text: &str, result: Result<Module, Error>) -> (String, String) {
    match result {
        Ok(s) => panic!("{text:?} specialises, to\n{}", print::module(&s)),
        Err(e) => {
            assert!(matches!(e, Error::NotFirstOrder { .. }), "{e:?}");
            (at(text, e.span()), e.to_string())
        }
    }
}

fn fo_err(text: &str) -> (String, String) {
    let m = ok(text);
    match check_first_order(&m, m.defs.last().expect("a definition")) {
        Ok(()) => panic!("{text:?} is first-order"),
        Err(e) => (at(text, e.span()), e.to_string()),
    }
}

#[test]
fn the_higher_order_example_of_seeds_002() {
    check(
        "def t (x : R) : R =\n  (fun (f : R -> R) -> f (f x)) (fun (y : R) -> y * y)",
        expect![[r#"
            def t (x : R) : R =
              let y : R = x in
              let y_1 : R = y * y in
              y_1 * y_1
        "#]],
    );
}

#[test]
fn let_bound_and_returned_lambdas_are_inlined() {
    check(
        "def f (A : [n]R) (c : R) = let g = fun x -> x * c in map g A",
        expect![[r#"
            def f (A : [n]R) (c : R) : [n]R =
              map (fun (x : R) -> x * c) A
        "#]],
    );
    // A function returned by a function, passed to a builtin.
    check(
        "def f (A : [n]R) =
           let twice = fun (h : R -> R) -> fun (x : R) -> h (h x) in
           map (twice (fun y -> y + 1)) A",
        expect![[r#"
            def f (A : [n]R) : [n]R =
              map (fun (x : R) ->
                let y : R = x in
                let y_1 : R = y + 1 in
                y_1 + 1) A
        "#]],
    );
    // The lets a closure needs float out to where it is used.
    check(
        "def f (A : [n]R) (c : R) = let g = (let k = c * 2 in fun x -> x * k) in map g A",
        expect![[r#"
            def f (A : [n]R) (c : R) : [n]R =
              let k = c * 2 in
              map (fun (x : R) -> x * k) A
        "#]],
    );
    // Tuples of functions.
    check(
        "def f (c : R) = let fs = (fun (x : R) -> x + c, fun (x : R) -> x * 2) in fs.2 (fs.1 3)",
        expect![[r#"
            def f (c : R) : R =
              let x : R = 3 in
              let x_9 : R = x + c in
              x_9 * 2
        "#]],
    );
}

#[test]
fn higher_order_helpers_live_on_in_their_callers_only() {
    // `twice` takes a function: it has no first-order form of its own, so
    // `specialize` leaves it out; its inlined copy in `f` is specialised.
    check(
        "def twice (g : R -> R) (x : R) : R = g (g x)
         def f (x : R) : R = twice (fun y -> y * y) x",
        expect![[r#"
            def f (x : R) : R =
              let x_1 : R = x in
              let y : R = x_1 in
              let y_1 : R = y * y in
              y_1 * y_1
        "#]],
    );
    // A helper that differentiates its argument: the construct stays, its
    // function now a lambda (forward mode expands it next).
    let s = specialize(&ok("def d1 (f : R -> R) (x : R) : R = diff f x
         def g (x : R) : R = d1 (fun y -> y * y) x"))
    .expect("specialises");
    assert!(verify(&s).is_ok());
    expect![[r#"
        def g (x : R) : R =
          let x_1 : R = x in
          diff (fun (y : R) -> y * y) x_1
    "#]]
    .assert_eq(&print::module(&s));
}

#[test]
fn one_definition_is_specialised_whatever_the_others_are() {
    // `pick` chooses a function at run time: `specialize` refuses the
    // module, `specialize_def` still gives `f` alone.
    let text =
        "def pick (b : Bool) (x : R) : R = (if b then fun (y : R) -> y else fun (y : R) -> 2 * y) x
                def f (x : R) : R = let h = fun y -> y * y in h x";
    assert!(specialize(&ok(text)).is_err());
    let s = specialize_def(&ok(text), "f").expect("specialises");
    assert_eq!(
        print::module(&s),
        "def f (x : R) : R =\n  let y : R = x in\n  y * y\n"
    );
    assert!(check_first_order(&s, &s.defs[0]).is_ok());
    assert_eq!(
        spec_def_err(text, "pick").1,
        "cannot specialise: this `if` chooses a function at run time"
    );
    assert!(matches!(
        specialize_def(&ok(text), "nowhere"),
        Err(Error::Scope { .. })
    ));
}

#[test]
fn derivative_constructs_stay() {
    let s = specialize(&ok(
        "def second (x : R) : R = diff (fun u -> diff (fun v -> v * v) u) x",
    ))
    .expect("specialises");
    assert!(verify(&s).is_ok());
    assert_eq!(
        print::module(&s),
        "def second (x : R) : R =\n  diff (fun (u : R) -> diff (fun (v : R) -> v * v) u) x\n"
    );
}

#[test]
fn what_cannot_be_specialised() {
    assert_eq!(
        spec_err(
            "def f (b : Bool) (x : R) : R = (if b then fun (y : R) -> y else fun (y : R) -> 2 * y) x"
        ),
        (
            "(if b then fun (y : R) -> y else fun (y : R) -> 2 * y)".into(),
            "cannot specialise: this `if` chooses a function at run time".into()
        )
    );
    assert_eq!(
        spec_def_err("def f (g : R -> R) (x : R) : R = g x", "f"),
        (
            "g : R -> R".into(),
            "cannot specialise: parameter `g` is a function (`R -> R`); the definition must have first-order parameters".into()
        )
    );
    assert_eq!(
        spec_def_err("def f (x : R) = fun (y : R) -> x + y", "f"),
        (
            "f".into(),
            "cannot specialise: the result of `f` is a function (`R -> R`)".into()
        )
    );
    assert_eq!(
        spec_err("def f (x : R) : R = [fun (y : R) -> y][0] x"),
        (
            "fun (y : R) -> y".into(),
            "cannot specialise: a function value is used where only a first-order value can go"
                .into()
        )
    );
}

#[test]
fn first_order_errors() {
    assert_eq!(
        fo_err("def f (x : R) : R = (fun (y : R) -> y) x"),
        (
            "(fun (y : R) -> y) x".into(),
            "a function application is not first-order: reverse mode needs every function inlined (`specialize`)".into()
        )
    );
    assert_eq!(
        fo_err("def f (A : [n]R) : [n]R = let g = fun (x : R) -> x in map g A"),
        (
            "fun (x : R) -> x".into(),
            "a function value is not first-order: reverse mode needs lambdas only as the function argument of map, map2, reduce, foldl, scanl, scanr, build, ifold, while or trips".into()
        )
    );
    assert_eq!(
        fo_err("def f (g : R -> R) : R = 1"),
        (
            "g : R -> R".into(),
            "parameter `g` of type `R -> R` is not first-order: reverse mode needs parameters of ground type".into()
        )
    );
    assert_eq!(
        fo_err("def f (x : R) : R = diff (fun (y : R) -> y * x) x"),
        (
            "diff (fun (y : R) -> y * x) x".into(),
            "`diff` is not first-order: reverse mode needs derivative constructs expanded first (forward mode)".into()
        )
    );
    assert_eq!(
        fo_err("def f (A : [n]R) = map (fun (x : R) -> fun (y : R) -> x) A"),
        (
            "f".into(),
            "the result of `f` of type `[n](R -> R)` is not first-order: reverse mode needs a result of ground type".into()
        )
    );
    // Section 7 / Appendix A constructs are first-order.
    let m = ok("def f (A : [n]R) (x : R) : R =
        let B = scanl (fun (a, b) -> a * b) 1 A in
        let C = shift1L B in
        if x > 0 then foldl (fun (acc, c) -> acc * x + c) 0 C else reduce (fun (a, b) -> a + b * x) 0 A");
    assert!(check_first_order(&m, &m.defs[0]).is_ok());
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, .. ProptestConfig::default() })]

    /// Specialisation keeps the meaning: on generated higher-order
    /// programs, the reference evaluator gives the same result (or the same
    /// failure) before and after, and the result is first-order.
    #[test]
    fn specialisation_preserves_values(seed in any::<u64>(), size in 3usize..72) {
        let p = support::program(seed, size, true, false);
        let text = support::text(&p);
        let m = ok(&text);
        let s = specialize(&m).expect("specialises");
        prop_assert!(verify(&s).is_ok(), "{text}");
        prop_assert!(s.defs.iter().all(|d| check_first_order(&s, d).is_ok()), "{}", print::module(&s));
        let entry = m.defs.len() - 1;
        let before = call(&m, entry, support::inputs(seed, &p));
        let after = call(&s, entry, support::inputs(seed, &p));
        prop_assert_eq!(before.is_ok(), after.is_ok(), "{}\n{}", text, print::module(&s));
        if let (Ok(a), Ok(b)) = (before, after) {
            prop_assert_eq!(a, b, "{}\n{}", text, print::module(&s));
        }
    }
}
