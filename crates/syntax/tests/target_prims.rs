//! The Target-only derivative primitives (`d1pow`, `d2pow`, `d2div`,
//! `dtan`, `dtanh`, `dabs`, `digamma`, `trigamma`): Source programs cannot name them, Target text
//! can, they type as the operators they differentiate, print as named
//! builtins and read back; `verify_source` and the first-order check reject
//! them in a module that claims to be Source.

use crate::common::file;
use syntax::{Expr, Prim, print};

const TARGET: &str = "def f_grad (x : R) (y : R) : (R, R, R, R, R, R) =
  (d1pow x y, d2pow x y, d2div x y, dtan x, dtanh y, dabs x)
";

fn target_only() -> Vec<Prim> {
    Prim::ALL
        .iter()
        .copied()
        .filter(|p| p.is_target_only())
        .collect()
}

#[test]
fn the_target_only_primitives_are_the_derivative_ones() {
    let names: Vec<&str> = target_only().iter().map(|p| p.symbol()).collect();
    assert_eq!(
        names,
        [
            "d1pow",
            "d2pow",
            "dtan",
            "dtanh",
            "dabs",
            "d2div",
            "digamma",
            "trigamma",
            "gather",
            "hist_winner_scatter",
            "hist_winner_min",
            "hist_winner_max",
            "gather_won",
            "pick_dest",
            "dhist_mul_dest",
            "dhist_mul_vals"
        ]
    );
    for p in target_only() {
        assert_eq!(Prim::from_name(p.symbol()), None, "{p}");
        assert_eq!(Prim::from_target_name(p.symbol()), Some(p), "{p}");
    }
    // Every Source builtin is a Target builtin too.
    for p in Prim::ALL.iter().filter(|p| !p.is_target_only()) {
        if let Some(q) = Prim::from_name(p.symbol()) {
            assert_eq!(Prim::from_target_name(p.symbol()), Some(q));
        }
    }
}

#[test]
fn source_text_cannot_name_them() {
    for p in target_only() {
        let args = if p.arity() == 2 { "x x" } else { "x" };
        let text = format!("def f (x : R) : R =\n  {} {args}\n", p.symbol());
        let err = syntax::compile(file(&text)).expect_err("not a Source builtin");
        assert_eq!(err.to_string(), format!("unknown name `{}`", p.symbol()));
    }
    // A Source program may use the names for its own variables.
    let m = syntax::compile(file("def f (x : R) : R =\n  let dtan = x in dtan * 2\n"))
        .expect("an ordinary name in Source");
    assert!(syntax::verify_source(&m).is_ok());
}

#[test]
fn target_text_reads_types_and_prints_back() {
    let m = syntax::compile_target(file(TARGET)).expect("Target text compiles");
    syntax::verify(&m).expect("verifies");
    let ops: Vec<Prim> = m
        .exprs
        .iter()
        .filter_map(|e| match e {
            Expr::Prim { op, .. } => Some(*op),
            _ => None,
        })
        .collect();
    assert_eq!(ops.len(), 6);
    assert!(ops.iter().all(|p| p.is_target_only()));
    let printed = print::module(&m);
    assert_eq!(printed, TARGET);
    let back = syntax::compile_target(file(&printed)).expect("reads back");
    assert_eq!(print::module(&back), printed);
}

#[test]
fn they_take_reals_only() {
    let err = syntax::compile_target(file("def f (n : Int) : R =\n  dabs n\n"))
        .expect_err("an Int is not a real");
    assert!(err.to_string().contains("expected `R`"), "{err}");
    let err = syntax::compile_target(file("def f (x : R) : R =\n  d1pow x\n"))
        .expect_err("two arguments");
    assert_eq!(err.to_string(), "`d1pow` takes 2 arguments, 1 given");
}

#[test]
fn a_module_claiming_to_be_source_is_rejected() {
    let m = syntax::compile_target(file(TARGET)).expect("Target text compiles");
    let errors = syntax::verify_source(&m).expect_err("Target primitives in Source");
    let messages: Vec<String> = errors.iter().map(|e| e.message.clone()).collect();
    assert_eq!(messages.len(), 6, "{messages:?}");
    assert!(messages.contains(&"`d1pow` is a Target primitive, not one of Source".to_string()));
    let def = m.defs.last().expect("a definition");
    let err = syntax::check_first_order(&m, def).expect_err("not Source");
    assert!(
        err.to_string()
            .contains("`d1pow` is a Target primitive: reverse mode takes Source programs"),
        "{err}"
    );
}
