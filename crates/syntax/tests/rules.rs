//! Custom derivative rules (`with jvp`, `with vjp`; `syntax::rules`): what
//! they elaborate to, that printing reads back to the same module, the
//! erasure that leaves the body, and every refusal with its place.

use expect_test::expect;
use syntax::{print, rules, verify};

use crate::common::{check, compile_err as err, ok};

const SAFE_LOG: &str = "def safe_log (x : R) : R = log x
  with jvp (x, dx) -> dx / x
  with vjp (x, ct) -> ct / x
def f (y : R) : R = safe_log (y * y)
";

#[test]
fn a_definition_with_rules_is_a_with_rules_node_at_each_call() {
    check(
        SAFE_LOG,
        expect![[r#"
            def safe_log (x : R) : R =
              with_rules log (fun (x_10 : R, dx : R) -> dx / x_10) (fun (x_11 : R, ct : R) -> ct / x_11) x

            def f (y : R) : R =
              let x : R = y * y in
              with_rules log (fun (x_10 : R, dx : R) -> dx / x_10) (fun (x_11 : R, ct : R) -> ct / x_11) x
        "#]],
    );
}

#[test]
fn printing_reads_back_to_the_same_module() {
    for text in [
        SAFE_LOG,
        "def g (x : R) (y : [n]R) : R = x * sum y
           with vjp (x, y, ct) -> (ct * sum y, map (fun v -> ct * x) y)",
        "def h (a : R, b : R) : (R, R) = (a * b, a + b) with jvp (a, b, da, db) -> (a * db + b * da, da + db)",
    ] {
        let m = ok(text);
        let printed = print::module(&m);
        let again = ok(&printed);
        assert_eq!(printed, print::module(&again), "{text}");
    }
}

#[test]
fn a_rule_alone_leaves_the_other_unit() {
    check(
        "def g (x : R) : R = x * x with vjp (x, ct) -> 2 * x * ct",
        expect![[r#"
            def g (x : R) : R =
              with_rules (fun (x_9 : R) -> x_9 * x_9) () (fun (x_10 : R, ct : R) -> 2 * x_10 * ct) x
        "#]],
    );
}

#[test]
fn erasing_the_rules_leaves_the_body() {
    let mut m = ok(SAFE_LOG);
    rules::erase(&mut m);
    verify(&m).unwrap_or_else(|e| panic!("{e:?}"));
    assert!(!rules::any(&m));
    expect![[r#"
        def safe_log (x : R) : R =
          let x_9 = x in
          log x_9

        def f (y : R) : R =
          let x : R = y * y in
          let x_9 = x in
          log x_9
    "#]]
    .assert_eq(&print::module(&m));
}

#[test]
fn a_rule_reading_a_variable_bound_outside_it_is_refused_where_it_reads_it() {
    // Futhark's pitfall: `x` is the definition's parameter, not the rule's.
    let (at, msg) = err("def f (x : R) : R = sin x with jvp (y, dy) -> cos x * dy");
    assert_eq!(at, "x");
    assert!(
        msg.contains("may read only its own parameters, not `x`"),
        "{msg}"
    );
    let (at, msg) = err(
        "def f (a : R) : R = let k = a * 2 in with_rules (fun x -> k * x) (fun (x, dx) -> dx) () a",
    );
    assert_eq!(at, "k");
    assert!(msg.contains("only its parameters, not `k`"), "{msg}");
}

#[test]
fn the_rules_types_are_checked_against_the_function() {
    let (at, msg) = err("def f (x : R) : R = sin x with jvp (x, dx) -> (dx, dx)");
    assert_eq!(at, "(dx, dx)");
    assert_eq!(msg, "expected `R`, found `(R, R)`");
    let (at, msg) = err("def f (x : R) (y : R) : R = x * y with vjp (x, y, ct) -> ct * y");
    assert_eq!(at, "ct * y");
    assert_eq!(msg, "expected `(R, R)`, found `R`");
    let (at, msg) = err("def f (x : R) : R = sin x with jvp (x, dx, e) -> dx");
    assert_eq!(at, "with jvp (x, dx, e) -> dx");
    assert!(
        msg.contains(
            "the `jvp` rule takes the 1 parameter and its tangent (2 arguments), this one takes 3"
        ),
        "{msg}"
    );
    let (at, msg) = err("def f (x : R) : R = sin x with vjp (x : Int, ct) -> ct");
    assert!(msg.starts_with("expected"), "{at}: {msg}");
}

#[test]
fn malformed_rule_clauses_are_refused() {
    let (at, msg) = err("def c : R = 1 with jvp (x, dx) -> dx");
    assert_eq!(
        (at.as_str(), msg.as_str()),
        ("with", "derivative rules need a definition with parameters")
    );
    let (at, msg) = err("def f (x : R) : R = x with hvp (x, dx) -> dx");
    assert_eq!(
        (at.as_str(), msg.as_str()),
        ("hvp", "expected `jvp` or `vjp` after `with`, found `hvp`")
    );
    let (at, msg) = err("def f (x : R) : R = x with jvp (x, dx) -> dx with jvp (x, dx) -> dx");
    assert_eq!(
        (at.as_str(), msg.as_str()),
        ("jvp", "a second `jvp` rule for this definition")
    );
    let (_, msg) = err("def f (x : R) : R = let y = x with jvp (x, dx) -> dx in y");
    assert!(msg.contains("expected `in`"), "{msg}");
    let (_, msg) = err("def f (g : R -> R) (x : R) : R = g x with jvp (g, x, dg, dx) -> dx");
    assert!(msg.contains("ground type"), "{msg}");
    let (_, msg) = err("def f (x : R) : R = with_rules (fun y -> y) () () x");
    assert!(msg.contains("needs a `jvp` or a `vjp` rule"), "{msg}");
}
