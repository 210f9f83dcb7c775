//! Deeply nested programs: the parser and the printer handle 20,000 levels
//! on the default 2 MiB test-thread stack, and refuse nesting beyond
//! `stack::MAX_DEPTH` with `Error::TooDeep` at the place it was crossed.

use crate::common;

use common::{parse, parse_ok, same_module};
use syntax::stack::MAX_DEPTH;
use syntax::{Error, Expr, print};

const N: usize = 20_000;

/// Asserts two long texts are equal, showing only where they first differ.
fn assert_same(got: &str, want: &str) {
    if got != want {
        let at = got
            .bytes()
            .zip(want.bytes())
            .take_while(|(a, b)| a == b)
            .count();
        let near = |s: &str| {
            s.get(at.saturating_sub(40)..(at + 40).min(s.len()))
                .unwrap_or("")
                .to_string()
        };
        panic!(
            "texts differ at byte {at} (lengths {} and {}):\n got: {:?}\nwant: {:?}",
            got.len(),
            want.len(),
            near(got),
            near(want)
        );
    }
}

fn let_chain(n: usize) -> String {
    let mut text = String::from("def f (x : R) : R =\n  let x0 = 1 in\n");
    for i in 1..n {
        text.push_str(&format!("  let x{i} = x{} + 1 in\n", i - 1));
    }
    text.push_str(&format!("  x{}\n", n - 1));
    text
}

#[test]
fn let_chain_of_20000_parses_prints_and_reparses() {
    let text = let_chain(N);
    let m = parse_ok(&text);
    assert_eq!(
        m.exprs
            .iter()
            .filter(|e| matches!(e, Expr::Let { .. }))
            .count(),
        N
    );
    let printed = print::module(&m);
    assert_same(&printed, &text);
    let back = parse_ok(&printed);
    assert_eq!(same_module(&m, &back), Ok(()));
    // Cloning and dropping an arena does not recurse.
    let copy = m.clone();
    assert_eq!(copy, m);
    drop(copy);
}

#[test]
fn let_chain_inside_a_tuple_prints_inline() {
    let inner = "let y = 1 in ".repeat(N);
    let text = format!("def f = (1, {inner}y)");
    let m = parse_ok(&text);
    let printed = print::module(&m);
    assert_same(&printed, &format!("def f =\n  (1, {inner}y)\n"));
}

#[test]
fn nested_lambdas_with_let_bodies_indent_a_bounded_amount() {
    let text = format!("def f = {}x", "fun x -> let y = x in ".repeat(N));
    let m = parse_ok(&text);
    let printed = print::module(&m);
    // Indentation stops growing after a few levels, so the output stays
    // linear in the size of the program.
    assert!(printed.len() < 2 * text.len(), "{} bytes", printed.len());
    assert_eq!(same_module(&m, &parse_ok(&printed)), Ok(()));
    assert_same(&print::module(&parse_ok(&printed)), &printed);
}

#[test]
fn nested_parentheses_20000_deep() {
    let text = format!("def f = {}x{}", "(".repeat(N), ")".repeat(N));
    let m = parse_ok(&text);
    assert_eq!(m.exprs, vec![Expr::Var(syntax::Name::new("x"))]);
    assert_eq!(print::module(&m), "def f =\n  x\n");
}

#[test]
fn nested_tuples_negations_and_lambdas_20000_deep() {
    // ((((x, 1), 1), 1) ...): every level is a node.
    let text = format!("def f = {}x{}", "(".repeat(N), ", 1)".repeat(N));
    let m = parse_ok(&text);
    let printed = print::module(&m);
    assert_same(&printed, &format!("def f =\n  {}\n", &text[8..]));
    assert_eq!(same_module(&m, &parse_ok(&printed)), Ok(()));

    // Right-nested operators through parentheses: 1 - (1 - (1 - ...)).
    let text = format!("def f = {}1 - 1{}", "1 - (".repeat(N), ")".repeat(N));
    let m = parse_ok(&text);
    assert_same(&print::module(&m), &format!("def f =\n  {}\n", &text[8..]));

    // - - - ... x prints as -(-(-( ... ))).
    let text = format!("def f = {}x", "- ".repeat(N));
    let m = parse_ok(&text);
    let printed = print::module(&m);
    assert_same(
        &printed,
        &format!("def f =\n  -{}x{}\n", "(-".repeat(N - 1), ")".repeat(N - 1)),
    );
    assert_eq!(same_module(&m, &parse_ok(&printed)), Ok(()));

    // fun x -> fun x -> ... and if-chains in else position.
    let text = format!("def f = {}x", "fun x -> ".repeat(N));
    assert_same(
        &print::module(&parse_ok(&text)),
        &format!("def f =\n  {}\n", &text[8..]),
    );
    let text = format!("def f = {}0", "if c then 1 else ".repeat(N));
    assert_same(
        &print::module(&parse_ok(&text)),
        &format!("def f =\n  {}\n", &text[8..]),
    );

    // Left-nested application and indexing need no recursion in the parser.
    let text = format!("def f = a{}", "[0]".repeat(N));
    assert_same(
        &print::module(&parse_ok(&text)),
        &format!("def f =\n  {}\n", &text[8..]),
    );
}

#[test]
fn nesting_past_the_limit_is_too_deep_at_the_crossing() {
    // Parentheses: the parser's own recursion.
    let n = MAX_DEPTH + 10;
    let text = format!("def f = {}x{}", "(".repeat(n), ")".repeat(n));
    match parse(&text) {
        Err(Error::TooDeep { span, limit }) => {
            assert_eq!(limit, MAX_DEPTH);
            // The body is level 1 and starts at byte 8, after `def f = `;
            // level k + 1 starts after the k-th parenthesis. The error
            // points at the first token of level MAX_DEPTH + 1.
            let at = 8 + MAX_DEPTH as u32;
            assert_eq!((span.lo, span.hi), (at, at + 1));
        }
        other => panic!("expected TooDeep, got {:?}", other.map(|m| m.exprs.len())),
    }
    // A let chain as long as the limit: the k-th `let` (from 0) is level
    // k + 1 and its bound expression level k + 2, so the bound expression
    // of `let x{MAX_DEPTH - 1}` is the first one too deep.
    let text = let_chain(MAX_DEPTH);
    match parse(&text) {
        Err(Error::TooDeep { span, .. }) => {
            let at = &text[span.lo as usize..];
            let want = format!("x{} + 1 in", MAX_DEPTH - 2);
            assert!(at.starts_with(&want), "{:?}", &at[..20]);
        }
        other => panic!("expected TooDeep, got {:?}", other.map(|m| m.exprs.len())),
    }
    // A left-nested sum the parser reads in a loop: the tree is too high.
    let text = format!("def f = 1{}", " + 1".repeat(MAX_DEPTH));
    match parse(&text) {
        Err(Error::TooDeep { span, limit }) => {
            assert_eq!(limit, MAX_DEPTH);
            assert_eq!(span.lo, 8);
            assert_eq!(span.hi as usize, text.len());
        }
        other => panic!("expected TooDeep, got {:?}", other.map(|m| m.exprs.len())),
    }
    // Exactly at the limit is fine.
    let text = format!("def f = 1{}", " + 1".repeat(MAX_DEPTH - 1));
    assert!(parse(&text).is_ok());
}

#[test]
fn deep_types_are_refused_early() {
    let deep = format!("{}R", "[n]".repeat(1_000));
    match syntax::parse_ty(&deep) {
        Err(Error::TooDeep { limit, .. }) => assert_eq!(limit, syntax::parser::MAX_TYPE_DEPTH),
        other => panic!("expected TooDeep, got {other:?}"),
    }
    let ok = format!("{}R", "[n]".repeat(syntax::parser::MAX_TYPE_DEPTH - 1));
    let t = syntax::parse_ty(&ok).unwrap_or_else(|e| panic!("{e:?}"));
    assert_eq!(t.to_string(), ok);
}
