//! The parser on small programs: precedence, every expression form, types,
//! spans, and the exact messages and spans of syntax errors.

use crate::common;

use common::{body, e, err, parse, parse_ok};
use syntax::{Error, Expr, Param, Pat, Prim, Size, Span, Ty, parse_ty};

#[test]
fn infix_precedence_and_associativity() {
    assert_eq!(e("a + b * c"), "(+ a (* b c))");
    assert_eq!(e("a * b + c"), "(+ (* a b) c)");
    assert_eq!(e("a - b - c"), "(- (- a b) c)");
    assert_eq!(e("a / b / c"), "(/ (/ a b) c)");
    assert_eq!(e("a || b && c"), "(|| a (&& b c))");
    assert_eq!(e("a && b || c && d"), "(|| (&& a b) (&& c d))");
    assert_eq!(e("a + 1 < b * 2 && c"), "(&& (< (+ a 1i) (* b 2i)) c)");
    assert_eq!(e("a == b"), "(== a b)");
    assert_eq!(
        e("a != b || a <= b && a >= b"),
        "(|| (!= a b) (&& (<= a b) (>= a b)))"
    );
    assert_eq!(e("(a + b) * c"), "(* (+ a b) c)");
}

#[test]
fn prefix_minus_binds_tighter_than_times_looser_than_application() {
    assert_eq!(e("-a * b"), "(* (neg a) b)");
    assert_eq!(e("-f x"), "(neg (app f x))");
    assert_eq!(e("a * -b"), "(* a (neg b))");
    assert_eq!(e("a - -b"), "(- a (neg b))");
    assert_eq!(e("- -a"), "(neg (neg a))");
    assert_eq!(e("-2"), "(neg 2i)");
    assert_eq!(e("-2.5e-3"), "(neg 0.0025r)");
    assert_eq!(e("f (-x)"), "(app f (neg x))");
    assert_eq!(e("f -x"), "(- f x)");
}

#[test]
fn application_collects_all_arguments() {
    assert_eq!(e("f a b c"), "(app f a b c)");
    assert_eq!(e("f (g a) b"), "(app f (app g a) b)");
    assert_eq!(e("(f a) b"), "(app (app f a) b)");
    assert_eq!(e("sin x + cos y"), "(+ (app sin x) (app cos y))");
    assert_eq!(
        e("reduce (+) 0 (map2 (*) A B)"),
        "(app reduce (section +) 0i (app map2 (section *) A B))"
    );
    assert_eq!(e("f (a, b)"), "(app f (tuple a b))");
    assert_eq!(e("f [1, 2]"), "(app f (array 1i 2i))");
    assert_eq!(e("f () x"), "(app f (tuple) x)");
}

#[test]
fn postfix_projection_and_indexing() {
    assert_eq!(e("p.1"), "(proj p 1)");
    assert_eq!(e("p.1.2"), "(proj (proj p 1) 2)");
    assert_eq!(e("(e).2"), "(proj e 2)");
    assert_eq!(e("(1, 2.5).2"), "(proj (tuple 1i 2.5r) 2)");
    assert_eq!(e("a[i]"), "(index a i)");
    assert_eq!(e("a[i][j + 1]"), "(index (index a i) (+ j 1i))");
    assert_eq!(e("a [i]"), "(app a (array i))");
    assert_eq!(e("f a[i] p.2"), "(app f (index a i) (proj p 2))");
    assert_eq!(e("p.1[0]"), "(index (proj p 1) 0i)");
    assert_eq!(e("-p.1"), "(neg (proj p 1))");
    assert_eq!(e("x.10"), "(proj x 10)");
}

#[test]
fn literals() {
    assert_eq!(e("3"), "3i");
    assert_eq!(e("3.0"), "3.0r");
    assert_eq!(e("2.5e-3"), "0.0025r");
    assert_eq!(e("1e10"), "10000000000.0r");
    assert_eq!(e("1E+2"), "100.0r");
    assert_eq!(e("0.1"), "0.1r");
    assert_eq!(e("9223372036854775807"), "9223372036854775807i");
    assert_eq!(e("true && false"), "(&& true false)");
    assert_eq!(e("1e-400"), "0.0r");
}

#[test]
fn tuples_arrays_sections() {
    assert_eq!(e("()"), "(tuple)");
    assert_eq!(e("(a)"), "a");
    assert_eq!(e("((a))"), "a");
    assert_eq!(e("(a, b, c)"), "(tuple a b c)");
    assert_eq!(e("[]"), "(array)");
    assert_eq!(e("[[1, 2], [3]]"), "(array (array 1i 2i) (array 3i))");
    for op in [
        "+", "-", "*", "/", "<", "<=", ">", ">=", "==", "!=", "&&", "||",
    ] {
        assert_eq!(e(&format!("({op})")), format!("(section {op})"));
    }
    assert_eq!(e("(- x)"), "(neg x)");
}

#[test]
fn let_if_fun_extend_as_far_right_as_possible() {
    assert_eq!(e("let x = 1 in x + 1"), "(let x 1i (+ x 1i))");
    assert_eq!(e("let x : R = 1 in x"), "(let x:R 1i x)");
    assert_eq!(e("let (a, b, c) = t in a"), "(let <a b c> t a)");
    assert_eq!(e("let (a) = t in a"), "(let a t a)");
    assert_eq!(e("let (a, b) : (R, R) = t in a"), "(let <a b>:(R, R) t a)");
    assert_eq!(e("if a < b then a else b + 1"), "(if (< a b) a (+ b 1i))");
    assert_eq!(e("fun x -> x * x"), "(fun (x) (* x x))");
    assert_eq!(e("a + let x = 1 in x * 2"), "(+ a (let x 1i (* x 2i)))");
    assert_eq!(e("a * if c then x else y + 1"), "(* a (if c x (+ y 1i)))");
    assert_eq!(e("-if c then x else y"), "(neg (if c x y))");
    assert_eq!(e("(if c then x else y) + 1"), "(+ (if c x y) 1i)");
    assert_eq!(e("let x = let y = 1 in y in x"), "(let x (let y 1i y) x)");
    assert_eq!(
        e("if a then if b then 1 else 2 else 3"),
        "(if a (if b 1i 2i) 3i)"
    );
}

#[test]
fn lambda_parameters() {
    assert_eq!(e("fun (x : R) -> x"), "(fun (x:R) x)");
    assert_eq!(e("fun (x) -> x"), "(fun (x) x)");
    assert_eq!(e("fun (x, y) -> x"), "(fun (x y) x)");
    assert_eq!(e("fun (x : R, y : [n]R) -> x"), "(fun (x:R y:[n]R) x)");
    assert_eq!(e("fun x y -> x"), "(fun (x y) x)");
    assert_eq!(e("fun (x : R) (y : R) -> x"), "(fun (x:R y:R) x)");
    assert_eq!(e("fun (p : (R, R)) -> p.1"), "(fun (p:(R, R)) (proj p 1))");
    assert_eq!(e("fun () -> 1"), "(fun () 1i)");
    assert_eq!(
        e("fun (f : R -> R) -> f (f x)"),
        "(fun (f:R -> R) (app f (app f x)))"
    );
}

#[test]
fn fixtures_shapes() {
    assert_eq!(
        body("def t (x : R) : R =\n  (fun (f : R -> R) -> f (f x)) (fun (y : R) -> y * y)"),
        "(app (fun (f:R -> R) (app f (app f x))) (fun (y:R) (* y y)))"
    );
    assert_eq!(
        body("def horner (c : [n]R) (x : R) : R =\n  foldl (fun (acc, ci) -> acc * x + ci) 0 c"),
        "(app foldl (fun (acc ci) (+ (* acc x) ci)) 0i c)"
    );
}

#[test]
fn definitions_and_parameters() {
    let m = parse_ok(
        "-- a comment\ndef c : R = 1\ndef f x (y) (z : Int) (u : R, v) = c -- trailing\ndef g = f",
    );
    let names: Vec<_> = m.defs.iter().map(|d| d.name.to_string()).collect();
    assert_eq!(names, ["c", "f", "g"]);
    assert_eq!(m.defs[0].params, Vec::<Param>::new());
    assert_eq!(m.defs[0].ret, Some(Ty::Real));
    let params: Vec<_> = m.defs[1]
        .params
        .iter()
        .map(|p| (p.name.to_string(), p.ty.clone()))
        .collect();
    assert_eq!(
        params,
        [
            ("x".to_string(), None),
            ("y".to_string(), None),
            ("z".to_string(), Some(Ty::Int)),
            ("u".to_string(), Some(Ty::Real)),
            ("v".to_string(), None)
        ]
    );
    assert_eq!(m.defs[1].ret, None);
    assert!(m.types.is_empty());
    assert_eq!(m.file.name, "test.ad");
}

#[test]
fn identifiers_and_keywords() {
    assert_eq!(e("x' + _y1 + shift1L"), "(+ (+ x' _y1) shift1L)");
    assert_eq!(e("define + lets + iff"), "(+ (+ define lets) iff)");
}

fn span_text(text: &str, span: Span) -> &str {
    &text[span.lo as usize..span.hi as usize]
}

#[test]
fn spans_cover_the_text_of_each_node() {
    let text = "def f (x : R) (y : [n]R) : R =\n  let p = (x, -y[0]) in\n  sin p.1 * (p.2 + 1)";
    let m = parse_ok(text);
    let d = &m.defs[0];
    assert_eq!(span_text(text, d.name_span), "f");
    assert_eq!(span_text(text, d.params[0].span), "x : R");
    assert_eq!(span_text(text, d.params[1].span), "y : [n]R");
    let mut texts: Vec<&str> = m.spans.iter().map(|&s| span_text(text, s)).collect();
    texts.sort();
    let mut expected = vec![
        "x",
        "y",
        "0",
        "y[0]",
        "-y[0]",
        "(x, -y[0])",
        "sin",
        "p",
        "p.1",
        "sin p.1",
        "p",
        "p.2",
        "1",
        "(p.2 + 1)",
        "sin p.1 * (p.2 + 1)",
        "let p = (x, -y[0]) in\n  sin p.1 * (p.2 + 1)",
    ];
    expected.sort();
    assert_eq!(texts, expected);
    let lam = parse_ok("def g = fun (a : R, b) -> a");
    let Expr::Lambda { params, .. } = lam.expr(lam.defs[0].body) else {
        panic!("not a lambda")
    };
    let spans: Vec<_> = params.iter().map(|p| (p.span.lo, p.span.hi)).collect();
    assert_eq!(spans, [(13, 18), (20, 21)]);
}

#[test]
fn operands_come_before_their_users() {
    let m =
        parse_ok("def f (x : R) = let y = x * 2 in if y > 1 then [y, x][0] else (fun z -> z) y");
    for (i, ex) in m.exprs.iter().enumerate() {
        for c in ex.children() {
            assert!(c.index() < i, "child {c} of e{i}");
        }
    }
    assert_eq!(m.spans.len(), m.exprs.len());
}

#[test]
fn types() {
    let t = |s: &str| parse_ty(s).unwrap_or_else(|e| panic!("{s}: {e:?}"));
    let arr = |n: Size, t: Ty| Ty::array(n, t);
    let var = |n: &str, k| Size::Var(syntax::Name::new(n), k);
    let func = |ps: Vec<Ty>, r: Ty| Ty::Func(ps, Box::new(r));
    assert_eq!(t("R"), Ty::Real);
    assert_eq!(t("Int"), Ty::Int);
    assert_eq!(t("Bool"), Ty::Bool);
    assert_eq!(t("[n]R"), arr(var("n", 0), Ty::Real));
    assert_eq!(t("[3]R"), arr(Size::Lit(3), Ty::Real));
    assert_eq!(t("[n+1]R"), arr(var("n", 1), Ty::Real));
    assert_eq!(t("[n - 1]R"), arr(var("n", -1), Ty::Real));
    assert_eq!(t("[_]R"), arr(Size::Dyn, Ty::Real));
    assert_eq!(t("[n][m]R"), arr(var("n", 0), arr(var("m", 0), Ty::Real)));
    assert_eq!(t("(R, Int)"), Ty::Tuple(vec![Ty::Real, Ty::Int]));
    assert_eq!(t("()"), Ty::Tuple(vec![]));
    assert_eq!(t("(R)"), Ty::Real);
    assert_eq!(
        t("R -> R -> R"),
        func(vec![Ty::Real], func(vec![Ty::Real], Ty::Real))
    );
    assert_eq!(
        t("(R -> R) -> R"),
        func(vec![func(vec![Ty::Real], Ty::Real)], Ty::Real)
    );
    assert_eq!(t("(R, R) -> R"), func(vec![Ty::Real, Ty::Real], Ty::Real));
    assert_eq!(
        t("((R, R)) -> R"),
        func(vec![Ty::Tuple(vec![Ty::Real, Ty::Real])], Ty::Real)
    );
    assert_eq!(t("() -> R"), func(vec![], Ty::Real));
    assert_eq!(t("(()) -> R"), func(vec![Ty::Tuple(vec![])], Ty::Real));
    assert_eq!(
        t("[n]R -> R"),
        func(vec![arr(var("n", 0), Ty::Real)], Ty::Real)
    );
    assert_eq!(
        t("[n](R, R)"),
        arr(var("n", 0), Ty::Tuple(vec![Ty::Real, Ty::Real]))
    );
    assert_eq!(
        t("[n](R -> R)"),
        arr(var("n", 0), func(vec![Ty::Real], Ty::Real))
    );
    assert_eq!(
        t("(R -> R, R)"),
        Ty::Tuple(vec![func(vec![Ty::Real], Ty::Real), Ty::Real])
    );
    assert_eq!(
        t("[18446744073709551615]R"),
        arr(Size::Lit(u64::MAX), Ty::Real)
    );
}

#[test]
fn type_errors_of_syntax() {
    let msg = |s: &str| match parse_ty(s) {
        Err(Error::Syntax { message, span }) => (message, span_text(s, span).to_string()),
        other => panic!("{s}: {other:?}"),
    };
    assert_eq!(
        msg("Real"),
        (
            "unknown type `Real`: the types are `R`, `Int`, `Bool`, arrays `[n]T`, tuples `(T, U)` and functions `T -> U`".to_string(),
            "Real".to_string()
        )
    );
    assert_eq!(
        msg("R ->"),
        (
            "expected a type, found end of input".to_string(),
            String::new()
        )
    );
    assert_eq!(
        msg("[n*2]R"),
        (
            "expected `]` after the size of the array type, found `*`".to_string(),
            "*".to_string()
        )
    );
    assert_eq!(
        msg("(R, R"),
        (
            "expected `)` or `,` in the parenthesized type, found end of input".to_string(),
            String::new()
        )
    );
    assert_eq!(
        msg("R R"),
        (
            "expected end of input after the type, found `R`".to_string(),
            "R".to_string()
        )
    );
}

#[test]
fn syntax_errors_have_exact_messages_and_spans() {
    let cases: &[(&str, &str, &str)] = &[
        (
            "def f (x : R) = (let y = x y)",
            "expected `in` after the bound expression, found `)`",
            ")",
        ),
        (
            "",
            "expected `def` at the start of a definition, found end of input",
            "",
        ),
        (
            "def f = 1 2 )",
            "expected `def` or end of input after the definition, found `)`",
            ")",
        ),
        (
            "def f = a < b < c",
            "comparisons do not associate: parenthesize the comparison before `<`",
            "<",
        ),
        (
            "def f = a == b != c",
            "comparisons do not associate: parenthesize the comparison before `!=`",
            "!=",
        ),
        (
            "def f = if a then b",
            "expected `else` after the `then` branch, found end of input",
            "",
        ),
        (
            "def f = if a b else c",
            "expected `then` after the condition, found `else`",
            "else",
        ),
        (
            "def f = fun -> 1",
            "expected a parameter after `fun`, found `->`",
            "->",
        ),
        (
            "def f = fun x = 1",
            "expected `->` after the parameters, found `=`",
            "=",
        ),
        ("def f = p.0", "tuple positions start at 1", "0"),
        (
            "def f = p.x",
            "expected a tuple position (1, 2, ...) after `.`, found `x`",
            "x",
        ),
        (
            "def f = p.99999999999",
            "tuple position `99999999999` is too large",
            "99999999999",
        ),
        (
            "def f = 9223372036854775808",
            "integer literal `9223372036854775808` is too large (at most 9223372036854775807)",
            "9223372036854775808",
        ),
        (
            "def f = 1e400",
            "real literal `1e400` is too large for an f64",
            "1e400",
        ),
        ("def f = 2x", "invalid number `2x`", "2x"),
        ("def f = a ! b", "unexpected character `!`", "!"),
        ("def f = a & b", "unexpected character `&`", "&"),
        ("def f = é", "unexpected character `é`", "é"),
        (
            "def f = (a, b",
            "expected `)` or `,` in the parenthesized expression, found end of input",
            "",
        ),
        (
            "def f = [a b",
            "expected `]` or `,` in the array, found end of input",
            "",
        ),
        (
            "def f = a[1",
            "expected `]` after the index, found end of input",
            "",
        ),
        (
            "def f = let in 1",
            "expected a name or a tuple pattern after `let`, found `in`",
            "in",
        ),
        (
            "def f = let () = 1 in 1",
            "expected a name in the pattern, found `)`",
            ")",
        ),
        (
            "def f = let x 1 in x",
            "expected `=` after the pattern of `let`, found `1`",
            "1",
        ),
        (
            "def f = let x 1.0e0 in x",
            "expected `=` after the pattern of `let`, found `1.0e0`",
            "1.0e0",
        ),
        (
            "def 1 = 2",
            "expected a definition name after `def`, found `1`",
            "1",
        ),
        (
            "def f (x : R = 1",
            "expected `)` after the parameter, found `=`",
            "=",
        ),
        (
            "def f (x : Real) = 1",
            "unknown type `Real`: the types are `R`, `Int`, `Bool`, arrays `[n]T`, tuples `(T, U)` and functions `T -> U`",
            "Real",
        ),
        ("def f () = 1", "expected a parameter name, found `)`", ")"),
        (
            "def f x",
            "expected `=` after the header of the definition, found end of input",
            "",
        ),
        ("def f = ", "expected an expression, found end of input", ""),
        ("def f = * 2", "expected an expression, found `*`", "*"),
        (
            "def f = g fun x -> x",
            "expected `def` or end of input after the definition, found `fun`",
            "fun",
        ),
        (
            "def f = 1 def",
            "expected a definition name after `def`, found end of input",
            "",
        ),
        (
            "def f (x : [n+y]R) = x",
            "expected a number after the sign in the size, found `y`",
            "y",
        ),
        (
            "def f (x : [-1]R) = x",
            "expected a size (a name, a number or `_`), found `-`",
            "-",
        ),
        (
            "def f = a --> b\n  )",
            "expected `def` or end of input after the definition, found `)`",
            ")",
        ),
    ];
    for (text, message, at) in cases {
        assert_eq!(
            err(text),
            (message.to_string(), at.to_string()),
            "for {text:?}"
        );
    }
}

#[test]
fn comments_and_whitespace() {
    assert_eq!(
        body("-- header\n--\ndef f =\n  a -- one\n  -- two\n  + b--three"),
        "(+ a b)"
    );
    assert_eq!(e("a\t*\r\nb"), "(* a b)");
    assert_eq!(e("a-b"), "(- a b)");
    assert_eq!(
        err("def f = a->b"),
        (
            "expected `def` or end of input after the definition, found `->`".to_string(),
            "->".to_string()
        )
    );
}

#[test]
fn parse_keeps_the_source_file() {
    let text = "def f = 1";
    let m = parse_ok(text);
    assert_eq!(m.file.text, text);
    assert!(matches!(m.expr(m.defs[0].body), Expr::Int(1)));
    assert!(matches!(
        parse("def f = let (a, b) = p in a").map(|m| m.exprs.last().cloned()),
        Ok(Some(Expr::Let {
            pat: Pat::Tuple(_),
            ..
        }))
    ));
    assert!(matches!(
        parse("def f = -x").map(|m| m.exprs.last().cloned()),
        Ok(Some(Expr::Prim { op: Prim::Neg, .. }))
    ));
}

#[test]
fn a_byte_order_mark_is_skipped() {
    let text = "\u{feff}def f = x";
    let m = parse_ok(text);
    assert_eq!(span_text(text, m.defs[0].name_span), "f");
    assert_eq!(span_text(text, m.span(m.defs[0].body)), "x");
}
