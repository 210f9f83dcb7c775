//! Elaboration, surface form → core form: every fixture, name resolution,
//! inlining of definitions and of the prelude, and the errors of each.

use std::collections::HashSet;

use expect_test::expect;
use syntax::{Error, Expr, Pat, Prim};

use crate::common::{check, compile_err as err, ok};

fn scope_err(text: &str) -> (String, String) {
    assert!(
        matches!(crate::common::compile(text), Err(Error::Scope { .. })),
        "{text:?} should fail with a scope error"
    );
    err(text)
}

#[test]
fn builtins_sections_and_projections() {
    check(
        "def f (A : [n]R) (p : (R, Bool)) = (map sin A, fst p, not (snd p), reduce (+) 0 A, (*) 2 3)",
        expect![[r#"
            def f (A : [n]R) (p : (R, Bool)) : ([n]R, R, Bool, R, R) =
              (map sin A, p.1, not p.2, reduce (+) 0 A, 2 * 3)
        "#]],
    );
    check(
        "def f (A : [n](R, R)) = map snd A",
        expect![[r#"
            def f (A : [n](R, R)) : [n]R =
              map (fun (p_9 : (R, R)) -> p_9.2) A
        "#]],
    );
}

#[test]
fn local_bindings_shadow_everything() {
    // A local `sin` is not the builtin; a local `g` is not the definition.
    check(
        "def g (x : R) = x + 1
         def f (x : R) = let sin = fun y -> y * 2 in let g = 3 in sin x * g",
        expect![[r#"
            def g (x : R) : R =
              x + 1

            def f (x : R) : R =
              let sin = fun (y : R) -> y * 2 in
              let g = 3 in
              sin x * g
        "#]],
    );
}

#[test]
fn calls_of_definitions_are_inlined_and_renamed_apart() {
    check(
        "def sq (x : R) = x * x
         def f (x : R) = sq (sq x)",
        expect![[r#"
            def sq (x : R) : R =
              x * x

            def f (x : R) : R =
              let x_2 : R = let x_1 : R = x in x_1 * x_1 in
              x_2 * x_2
        "#]],
    );
    // A definition used as a value becomes a lambda; one without
    // parameters is its body.
    check(
        "def sq (x : R) = x * x
         def two = 2
         def f (A : [n]R) = map sq (map (fun a -> a * two) A)",
        expect![[r#"
            def sq (x : R) : R =
              x * x

            def two : R =
              2

            def f (A : [n]R) : [n]R =
              map (fun (x : R) -> x * x) (map (fun (a : R) -> a * 2) A)
        "#]],
    );
}

#[test]
fn the_prelude_is_in_scope_and_may_be_shadowed() {
    check(
        "def f (A : [n]R) (B : [n]R) = (sum A, prod A, dot A B, zeros_like A, ones_like B)",
        expect![[r#"
            def f (A : [n]R) (B : [n]R) : (R, R, R, [n]R, [n]R) =
              (let A_9 : [n]R = A in reduce (+) 0 A_9, let A_11 : [n]R = A in reduce (*) 1 A_11, let A_13 : [n]R = A in let B_15 : [n]R = B in reduce (+) 0 (map2 (*) A_13 B_15), let A_16 : [n]R = A in map (fun (x : R) -> 0) A_16, let A_18 : [n]R = B in map (fun (x_20 : R) -> 1) A_18)
        "#]],
    );
    // The user's `sum` shadows the prelude's, from its definition on.
    check(
        "def sum (A : [n]R) : R = 7
         def f (A : [n]R) = sum A",
        expect![[r#"
            def sum (A : [n]R) : R =
              7

            def f (A : [n]R) : R =
              let A_1 : [n]R = A in
              7
        "#]],
    );
    // The output holds the user's definitions only.
    let m = ok("def f (A : [n]R) = sum A\ndef g (A : [n]R) = f A + dot A A");
    let names: Vec<&str> = m.defs.iter().map(|d| d.name.as_str()).collect();
    assert_eq!(names, ["f", "g"]);
}

#[test]
fn copies_of_the_prelude_point_at_the_call() {
    let text = "def f (A : [n]R) = 2 * sum A";
    let m = ok(text);
    let call = text.find("sum A").expect("present");
    let call = (call as u32, (call + "sum A".len()) as u32);
    for (e, span) in m.exprs.iter().zip(&m.spans) {
        if let Expr::Prim {
            op: Prim::Reduce, ..
        } = e
        {
            assert_eq!((span.lo, span.hi), call);
        }
        assert!(span.hi as usize <= text.len(), "every span is in the text");
    }
    // So a size mismatch inside an inlined `dot` is reported at the call's
    // arguments.
    assert_eq!(
        err("def f (A : [2]R) (B : [3]R) = dot A B"),
        ("B".into(), "expected `[2]R`, found `[3]R`".into())
    );
}

#[test]
fn binders_are_unique_within_each_definition() {
    let m = ok("def g (x : R) = let y = x * x in let y = y + 1 in y
                def f (x : R) (y : R) = g x + g y + (let x = 2 in g x)");
    for d in &m.defs {
        let mut seen = HashSet::new();
        let mut names: Vec<String> = d
            .params
            .iter()
            .map(|p| p.name.as_str().to_string())
            .collect();
        let mut stack = vec![d.body];
        while let Some(id) = stack.pop() {
            match m.expr(id) {
                Expr::Let { pat, .. } => match pat {
                    Pat::Var(x) => names.push(x.as_str().to_string()),
                    Pat::Tuple(xs) => names.extend(xs.iter().map(|x| x.as_str().to_string())),
                },
                Expr::Lambda { params, .. } => {
                    names.extend(params.iter().map(|p| p.name.as_str().to_string()))
                }
                _ => {}
            }
            stack.extend(m.expr(id).children());
        }
        for n in names {
            assert!(seen.insert(n.clone()), "`{n}` bound twice in `{}`", d.name);
        }
        // The user's names are kept where they do not clash.
        assert!(seen.contains("x") && seen.contains("y"));
    }
}

#[test]
fn scope_errors() {
    assert_eq!(
        scope_err("def f (x : R) : R = f x"),
        (
            "f".into(),
            "recursion is not supported: `f` calls itself".into()
        )
    );
    assert_eq!(
        scope_err("def f (x : R) : R = g x\ndef g (x : R) : R = x"),
        (
            "g".into(),
            "recursion is not supported: `f` calls `g`, which is defined later".into()
        )
    );
    assert_eq!(
        scope_err("def f (x : R) : R = map g [x]\ndef g (x : R) : R = x"),
        (
            "g".into(),
            "recursion is not supported: `f` calls `g`, which is defined later".into()
        )
    );
    assert_eq!(
        scope_err("def f (x : R) : R = h x"),
        ("h".into(), "unknown name `h`".into())
    );
    assert_eq!(
        scope_err("def f (x : R) : R = x + y"),
        ("y".into(), "unknown name `y`".into())
    );
    assert_eq!(
        scope_err("def sin (x : R) : R = x"),
        (
            "sin".into(),
            "`sin` is a builtin and cannot be redefined".into()
        )
    );
    assert_eq!(
        scope_err("def f (x : R) : R = x\ndef f (x : R) : R = x"),
        ("f".into(), "`f` is defined twice".into())
    );
    assert_eq!(
        scope_err("def f (x : R) (x : R) : R = x"),
        ("x : R".into(), "parameter `x` appears twice".into())
    );
    assert_eq!(
        scope_err("def f (x : R) : R = (fun (a, a) -> a) x x"),
        ("a".into(), "parameter `a` appears twice".into())
    );
}

#[test]
fn arity_errors() {
    assert_eq!(
        err("def f (A : [n]R) : [n]R = let g = map sin in g A"),
        ("map sin".into(), "`map` takes 2 arguments, 1 given".into())
    );
    assert_eq!(
        err("def f (x : R) : R = sin x x"),
        ("sin x x".into(), "`sin` takes 1 argument, 2 given".into())
    );
    assert_eq!(
        err("def f (p : (R, R)) : R = fst p p"),
        ("fst p p".into(), "`fst` takes 1 argument, 2 given".into())
    );
    assert_eq!(
        err("def g (x : R) (y : R) : R = x + y\ndef f (x : R) : R = g x"),
        ("g x".into(), "`g` takes 2 arguments, 1 given".into())
    );
}
