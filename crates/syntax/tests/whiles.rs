//! `while` and `trips` in the front end: the printer's round trip, and
//! `bound_whiles`, the rewrite reverse mode starts with (docs/derivatives.md,
//! "`while` loops"): no `while` left, nested ones included, and the result
//! in core form.

use syntax::{Expr, Module, Prim, SourceFile, bound_whiles, has_while, print, verify};

fn compile(text: &str) -> Module {
    syntax::compile(SourceFile {
        name: "whiles.ad".to_string(),
        text: text.to_string(),
    })
    .unwrap_or_else(|e| panic!("{text}: {e}"))
}

const NESTED: &str = "def f (a : R) (n : Int) : R =
  let (x, k) = while (fun s -> let (x, k) = s in k < n)
                     (fun s -> let (x, k) = s in (while (fun y -> y < a) (fun y -> y * 2 + x) x, k + 1))
                     (a, 0) in
  x + real (trips (fun y -> y > 1) (fun y -> y / 2) a)
";

fn count(m: &Module, op: Prim) -> usize {
    m.exprs
        .iter()
        .filter(|e| matches!(e, Expr::Prim { op: o, .. } if *o == op))
        .count()
}

#[test]
fn while_loops_print_and_read_back() {
    let m = compile(NESTED);
    let printed = print::module(&m);
    assert!(printed.contains("while (fun"), "{printed}");
    let again = compile(&printed);
    assert_eq!(print::module(&again), printed);
}

#[test]
fn bounding_leaves_no_while_and_a_core_form_module() {
    let m = compile(NESTED);
    assert!(has_while(&m));
    assert_eq!(count(&m, Prim::While), 2);
    let b = bound_whiles(&m).expect("bounds");
    assert!(!has_while(&b));
    verify(&b).unwrap_or_else(|e| panic!("{e:?}\n{}", print::module(&b)));
    // The outer loop becomes a count and an ifold; the inner one is
    // bounded in both copies of the outer body (the count's and the
    // ifold's): three `ifold`s, three `trips` of the rewrite and the
    // program's own.
    assert_eq!(count(&b, Prim::Ifold), 3);
    assert_eq!(count(&b, Prim::Trips), 4);
}

#[test]
fn a_module_without_while_is_left_as_it_is() {
    let m = compile("def f (x : R) : R =\n  ifold (fun (a, i) -> a * x) x 3\n");
    assert!(!has_while(&m));
}
