//! The printer: reals, types, minimal parentheses, layout, and core-form
//! modules built by hand.

use crate::common;

use common::{parse_ok, same_module};
use syntax::print;
use syntax::{Def, Expr, ExprId, Module, Name, Param, Pat, Prim, Size, SourceFile, Span, Ty};

#[test]
fn reals_print_shortest_and_read_back() {
    let cases: &[(f64, &str)] = &[
        (18.0, "18"),
        (0.1, "0.1"),
        (1e-300, "1e-300"),
        (1.5e300, "1.5e300"),
        (0.0, "0"),
        (-0.0, "-0"),
        (-2.5, "-2.5"),
        (100.0, "100"),
        (1000.0, "1e3"),
        (123456.0, "123456"),
        (0.01, "0.01"),
        (0.001, "1e-3"),
        (0.0001, "1e-4"),
        (0.00012, "1.2e-4"),
        (0.0015, "0.0015"),
        (1.0 / 3.0, "0.3333333333333333"),
        (2.0f64.sqrt(), "1.4142135623730951"),
        (f64::MAX, "1.7976931348623157e308"),
        (f64::MIN_POSITIVE, "2.2250738585072014e-308"),
        (5e-324, "5e-324"),
        (1e21, "1e21"),
        (9223372036854775807.0, "9.223372036854776e18"),
        (1152921504606846976.0, "1152921504606847000"),
        (123.456, "123.456"),
        (f64::INFINITY, "(1 / 0)"),
        (f64::NEG_INFINITY, "(-1 / 0)"),
        (f64::NAN, "(0 / 0)"),
    ];
    for &(x, text) in cases {
        assert_eq!(print::real(x), text, "for {x:?}");
        if x.is_finite() {
            let back: f64 = text.parse().expect("a Rust float literal");
            assert_eq!(back.to_bits(), x.to_bits(), "{text} reads back");
        }
    }
}

#[test]
fn types_print_with_minimal_parentheses() {
    for text in [
        "R",
        "Int",
        "Bool",
        "[n]R",
        "[3][n+1][m-2][_]R",
        "(R, Int, Bool)",
        "()",
        "R -> R -> R",
        "(R -> R) -> R",
        "(R, R) -> R",
        "((R, R)) -> R",
        "(()) -> R",
        "() -> R",
        "[n](R, R)",
        "[n](R -> R)",
        "(R -> R, [n]R) -> (R, R)",
        "((R, R) -> R) -> [n]R -> R",
    ] {
        let t = syntax::parse_ty(text).unwrap_or_else(|e| panic!("{text}: {e:?}"));
        assert_eq!(t.to_string(), text);
        assert_eq!(print::ty(&t), text);
    }
    assert_eq!(
        syntax::parse_ty("((R))  ->  (R)").map(|t| t.to_string()),
        Ok("R -> R".into())
    );
}

/// Parses `def t = text` and prints the body back.
fn reprint(text: &str) -> String {
    let m = parse_ok(&format!("def t = {text}"));
    print::expr(&m, m.defs[0].body)
}

#[test]
fn expressions_print_with_minimal_parentheses() {
    for text in [
        "a + b * c",
        "(a + b) * c",
        "a - (b - c)",
        "a - b - c",
        "a / (b * c)",
        "(a < b) == c",
        "a < (b == c)",
        "a || b && c",
        "(a || b) && c",
        "-a * b",
        "-(a * b)",
        "-f x",
        "(-f) x",
        "f (-x)",
        "a - -b",
        "-(-a)",
        "f a b",
        "(f a) b",
        "f (g a) b.1 c[i] [1, 2] ()",
        "p.1.2",
        "(f x).1",
        "(1).2",
        "(2.5).1",
        "(if c then a else b) + 1",
        "a + if c then a else b + 1",
        "a * (if c then x else y) + 1",
        "(fun x -> x) 1",
        "f (fun x -> x)",
        "map (fun (x : R) -> x * x) A",
        "fun (x, y) -> x",
        "fun (x : R, y) -> x",
        "fun () -> 1",
        "-if c then 1 else 2",
        "-(if c then 1 else 2) + 3",
        "(let x = 1 in x) + 1",
        "if a then if b then 1 else 2 else 3",
        "if if a then b else c then 1 else 2",
        "[let x = 1 in x, fun y -> y]",
        "(a, if c then 1 else 2)",
        "a[let i = 0 in i]",
        "(+) a b",
        "reduce (&&) true (map (fun x -> x < 0.5) A)",
        "(a, b).2",
        "[1, 2][0]",
        "1e-300 + 1.5e300 + 0.1",
    ] {
        assert_eq!(reprint(text), text);
    }
}

#[test]
fn let_chains_take_one_line_per_binding() {
    let text = "def f (x : R) (ys : [n]R) : R =\n  let a = x * 2 in\n  let (b, c) : (R, R) = (a, a) in\n  let g = fun (y : R) ->\n    let z = y in\n    z in\n  b + c\n\ndef h =\n  f 1 [2]\n";
    let m = parse_ok(text);
    assert_eq!(print::module(&m), text);
    assert_eq!(
        print::expr(&m, m.defs[0].body),
        "let a = x * 2 in\nlet (b, c) : (R, R) = (a, a) in\nlet g = fun (y : R) ->\n  let z = y in\n  z in\nb + c"
    );
}

#[test]
fn let_chains_in_lambdas_are_indented() {
    let text = "def f (A : [n]R) =\n  map (fun x ->\n    let a = x * x in\n    let b = a + 1 in\n    \
                a * b) A\n\ndef g =\n  fun y ->\n    let h = fun z ->\n      let w = z in\n      \
                w in\n    h y\n";
    let m = parse_ok(text);
    assert_eq!(print::module(&m), text);
}

/// A tiny builder for core-form modules.
struct B {
    m: Module,
}

impl B {
    fn add(&mut self, e: Expr) -> ExprId {
        self.m.add(e, Span::GENERATED)
    }
    fn var(&mut self, n: &str) -> ExprId {
        self.add(Expr::Var(Name::new(n)))
    }
    fn prim(&mut self, op: Prim, args: Vec<ExprId>) -> ExprId {
        self.add(Expr::Prim { op, args })
    }
}

fn param(n: &str, ty: Ty) -> Param {
    Param {
        name: Name::new(n),
        ty: Some(ty),
        span: Span::GENERATED,
    }
}

#[test]
fn core_form_prints_prims_annotations_and_special_reals() {
    let mut b = B {
        m: Module::new(SourceFile::default()),
    };
    let arr = Ty::array(Size::Var(Name::new("n"), 0), Ty::Real);
    let x = b.var("x");
    let sin = b.prim(Prim::Sin, vec![x]);
    let minus_two = b.add(Expr::Real(-2.0));
    let mul = b.prim(Prim::Mul, vec![sin, minus_two]);
    let lam = b.add(Expr::Lambda {
        params: vec![param("x", Ty::Real)],
        body: mul,
    });
    let a = b.var("A");
    let map = b.prim(Prim::Map, vec![lam, a]);
    let inf = b.add(Expr::Real(f64::INFINITY));
    let ninf = b.add(Expr::Real(f64::NEG_INFINITY));
    let nan = b.add(Expr::Real(f64::NAN));
    let eighteen = b.add(Expr::Real(18.0));
    let neg_int = b.add(Expr::Int(-3));
    let sum = b.prim(Prim::Add, vec![inf, ninf]);
    let sum = b.prim(Prim::Add, vec![sum, nan]);
    let sum = b.prim(Prim::Add, vec![sum, eighteen]);
    let sum = b.prim(Prim::Add, vec![sum, neg_int]);
    let w = b.var("w");
    let body = b.prim(Prim::Mul, vec![sum, w]);
    let let_w = b.add(Expr::Let {
        pat: Pat::Var(Name::new("w")),
        ty: Some(arr.clone()),
        value: map,
        body,
    });
    let x2 = b.var("x");
    let neg = b.prim(Prim::Neg, vec![x2]);
    let neg2 = b.prim(Prim::Neg, vec![neg]);
    let thunk = b.add(Expr::Lambda {
        params: vec![],
        body: neg2,
    });
    let call = b.add(Expr::App {
        func: thunk,
        args: vec![],
    });
    let pair = b.add(Expr::Tuple(vec![let_w, call]));
    b.m.defs.push(Def {
        name: Name::new("f"),
        name_span: Span::GENERATED,
        params: vec![param("A", arr.clone()), param("x", Ty::Real)],
        ret: Some(Ty::Tuple(vec![Ty::Real, Ty::Real])),
        body: pair,
    });
    let text = print::module(&b.m);
    assert_eq!(
        text,
        "def f (A : [n]R) (x : R) : (R, R) =\n  (let w : [n]R = map (fun (x : R) -> sin x * (-2)) A in \
         ((1 / 0) + (-1 / 0) + (0 / 0) + 18 + (-3)) * w, (fun () -> -(-x)) ())\n"
    );
    // The text is valid syntax. It reads back in surface form, where
    // `(-2)` is a negation and `(1 / 0)` a division, which print the same
    // from then on.
    let back = parse_ok(&text);
    let again = print::module(&back);
    assert_eq!(
        again,
        "def f (A : [n]R) (x : R) : (R, R) =\n  (let w : [n]R = map (fun (x : R) -> sin x * -2) A in \
         (1 / 0 + -1 / 0 + 0 / 0 + 18 + -3) * w, (fun () -> -(-x)) ())\n"
    );
    assert_eq!(print::module(&parse_ok(&again)), again);
}

#[test]
fn malformed_modules_print_without_panicking() {
    let mut m = Module::new(SourceFile::default());
    let x = m.add(Expr::Var(Name::new("x")), Span::GENERATED);
    // A child id that does not point backwards, and a missing node.
    m.exprs.push(Expr::Prim {
        op: Prim::Add,
        args: vec![x, ExprId(1)],
    });
    m.spans.push(Span::GENERATED);
    m.exprs.push(Expr::Prim {
        op: Prim::Sub,
        args: vec![x],
    });
    m.spans.push(Span::GENERATED);
    m.exprs
        .push(Expr::Tuple(vec![ExprId(1), ExprId(2), ExprId(99)]));
    m.spans.push(Span::GENERATED);
    m.defs.push(Def {
        name: Name::new("bad"),
        name_span: Span::GENERATED,
        params: vec![],
        ret: None,
        body: ExprId(3),
    });
    assert_eq!(
        print::module(&m),
        "def bad =\n  (x + <invalid e1>, (-) x, <invalid e99>)\n"
    );
}

#[test]
fn integral_reals_read_back_as_ints() {
    let m = parse_ok("def f = 18.0 + 1.5e300");
    let text = print::module(&m);
    assert_eq!(text, "def f =\n  18 + 1.5e300\n");
    let back = parse_ok(&text);
    let kinds: Vec<_> = back
        .exprs
        .iter()
        .filter(|e| !matches!(e, Expr::Prim { .. }))
        .cloned()
        .collect();
    assert_eq!(kinds, [Expr::Int(18), Expr::Real(1.5e300)]);
    // The round-trip comparison treats the two spellings as one literal.
    assert!(same_module(&m, &back).is_ok());
}
