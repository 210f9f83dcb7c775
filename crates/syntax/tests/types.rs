//! Type inference through `compile`: well-typed programs get the types the
//! typing rules of docs/types.md give, ill-typed ones the exact message at
//! the exact place. A place is checked as the text it covers.

use syntax::{Error, Expr, Module, Ty, parse_ty, print};

use crate::common::{compile as build, compile_err as err, ok};

/// The signature of the last definition, as `(T1, ..., Tk) -> T` text.
fn entry_type(m: &Module) -> String {
    let d = m.defs.last().expect("a definition");
    let ty = Ty::Func(
        d.params
            .iter()
            .map(|p| p.ty.clone().expect("typed"))
            .collect(),
        Box::new(d.ret.clone().expect("typed")),
    );
    print::ty(&ty)
}

fn is_type_error(text: &str) -> bool {
    matches!(build(text), Err(Error::Type { .. }))
}

#[test]
fn scalar_mismatches() {
    assert_eq!(
        err("def f (x : R) : R = sin [1, 2]"),
        ("[1, 2]".into(), "expected `R`, found `[2]R`".into())
    );
    assert_eq!(
        err("def f (A : [n]R) : R = A"),
        ("A".into(), "expected `R`, found `[n]R`".into())
    );
    assert_eq!(
        err("def f (x : Int) : Int = x + 1.5"),
        ("1.5".into(), "expected `Int`, found `R`".into())
    );
    assert_eq!(
        err("def f (b : Bool) : R = b + 1"),
        (
            "b".into(),
            "expected a number (`R` or `Int`), found `Bool`".into()
        )
    );
    assert_eq!(
        err("def f (x : R) : R = if x then 1 else 2"),
        ("x".into(), "expected `Bool`, found `R`".into())
    );
    assert_eq!(
        err("def f (x : R) : R = if x > 0 then x else (x, x)"),
        ("(x, x)".into(), "expected `R`, found `(R, R)`".into())
    );
    assert_eq!(
        err("def f (A : [n]R) : Bool = A == A"),
        (
            "A".into(),
            "expected a number or a boolean, found `[n]R`".into()
        )
    );
    assert_eq!(
        err("def f (x : R) : Bool = x && true"),
        ("x".into(), "expected `Bool`, found `R`".into())
    );
}

#[test]
fn tuples_arrays_and_functions() {
    assert_eq!(
        err("def f (p : (R, R)) : R = p.3"),
        (
            "p.3".into(),
            "tuple index 3 out of range for `(R, R)`".into()
        )
    );
    assert_eq!(
        err("def f (x : R) : R = x.1"),
        ("x.1".into(), "expected a tuple, found `R`".into())
    );
    assert_eq!(
        err("def f (A : [n]R) : R = A[1.5]"),
        ("1.5".into(), "expected `Int`, found `R`".into())
    );
    assert_eq!(
        err("def f (x : R) : R = x[0]"),
        ("x".into(), "expected an array, found `R`".into())
    );
    assert_eq!(
        err("def f (x : R) : R = reduce (+) 0 (map (fun y -> y) x)"),
        ("x".into(), "expected an array, found `R`".into())
    );
    assert_eq!(
        err("def f (A : [n]R) : [n]R = map (fun (a, b) -> a) A"),
        (
            "(fun (a, b) -> a)".into(),
            "`map` needs a function of 1 argument, this one takes 2".into()
        )
    );
    assert_eq!(
        err("def f (x : R) : R = (fun (a, b) -> a) x"),
        (
            "(fun (a, b) -> a) x".into(),
            "this function takes 2 arguments, 1 given".into()
        )
    );
    assert_eq!(
        err("def f (x : R) : R = let g = x in g 1"),
        ("g".into(), "expected a function, found `R`".into())
    );
    assert_eq!(
        err("def f (A : [n]R) : [n]R = map (fun (b : Bool) -> 1) A"),
        ("b : Bool".into(), "expected `R`, found `Bool`".into())
    );
    assert_eq!(
        err("def f (A : [n]R) : [n]R = map (fun x -> x > 0) A"),
        (
            "map (fun x -> x > 0) A".into(),
            "expected `[n]R`, found `[n]Bool`".into()
        )
    );
}

#[test]
fn sizes() {
    // A definite mismatch: two literals.
    assert_eq!(
        err("def f (A : [3]R) (B : [4]R) : [3]R = map2 (fun (a, b) -> a + b) A B"),
        ("B".into(), "expected `[3]R`, found `[4]R`".into())
    );
    // A definite mismatch: one variable with two offsets.
    assert_eq!(
        err("def f (A : [n]R) : [n]R = shift1L A"),
        ("shift1L A".into(), "expected `[n]R`, found `[n-1]R`".into())
    );
    assert_eq!(
        err("def f (A : [n]R) : R = reduce (+) 0 (map2 (*) A (shift1L A))"),
        (
            "(shift1L A)".into(),
            "expected `[n]R`, found `[n-1]R`".into()
        )
    );
    assert_eq!(
        err("def f (A : [n]R) : [n]R = scanl (+) 0 A"),
        (
            "scanl (+) 0 A".into(),
            "expected `[n]R`, found `[n+1]R`".into()
        )
    );
    // Not decidable statically: checked at run time, no error.
    let m = ok("def f (A : [n]R) (B : [m]R) : [n]R = map2 (+) A B");
    assert_eq!(entry_type(&m), "([n]R, [m]R) -> [n]R");
    let m = ok("def f (A : [n]R) : [n]R = map2 (+) A [1, 2, 3]");
    assert_eq!(entry_type(&m), "[n]R -> [n]R");
    // Sizes flow through the builtins.
    let m = ok("def f (A : [n]R) = shift1R (scanr (+) 0 A)");
    assert_eq!(entry_type(&m), "[n]R -> [n]R");
    let m = ok("def f (A : [n]R) = build (length A) (fun i -> A[i] * 2)");
    assert_eq!(entry_type(&m), "[n]R -> [n]R");
    let m = ok("def f (x : R) = build 3 (fun i -> x)");
    assert_eq!(entry_type(&m), "R -> [3]R");
    let m = ok("def f (k : Int) (x : R) = build k (fun i -> x)");
    assert_eq!(entry_type(&m), "(Int, R) -> [_]R");
    let m = ok("def f (A : [_]R) = map2 (+) A [1, 2]");
    assert_eq!(entry_type(&m), "[2]R -> [2]R");
    let m = ok("def f (A : [n][m]R) = map sum A");
    assert_eq!(entry_type(&m), "[n][m]R -> [n]R");
}

#[test]
fn literals_are_real_unless_an_int_is_needed() {
    let m = ok("def f (A : [n]R) : R = A[0] + A[length A - 1] * 2");
    let ints: Vec<i64> = m
        .exprs
        .iter()
        .filter_map(|e| match e {
            Expr::Int(k) => Some(*k),
            _ => None,
        })
        .collect();
    let reals: Vec<f64> = m
        .exprs
        .iter()
        .filter_map(|e| match e {
            Expr::Real(x) => Some(*x),
            _ => None,
        })
        .collect();
    assert_eq!(ints, vec![0, 1]);
    assert_eq!(reals, vec![2.0]);
    let m = ok("def f (n : Int) = n * 2 + 1");
    assert_eq!(entry_type(&m), "Int -> Int");
    let m = ok("def f = 1 + 2");
    assert_eq!(entry_type(&m), "() -> R");
    let m = ok("def f (x : R) = let k = 3 in x * k");
    assert_eq!(entry_type(&m), "R -> R");
    let m = ok("def f (A : [n]R) = let k = 3 in A[k]");
    assert_eq!(entry_type(&m), "[n]R -> R");
    let m = ok("def f (x : R) = ifold (fun (s, i) -> s + x) 0 10");
    assert_eq!(entry_type(&m), "R -> R");
}

#[test]
fn unresolved_types_ask_for_an_annotation() {
    assert_eq!(
        err("def f x = 1"),
        (
            "x".into(),
            "cannot infer the type of `x`; annotate it".into()
        )
    );
    assert_eq!(
        err("def f (x : R) : R = let g = fun y -> y in x"),
        (
            "y".into(),
            "cannot infer the type of `y`; annotate it".into()
        )
    );
    assert_eq!(
        err("def f (x : R) : R = let g = fun p -> p.1 in x"),
        (
            "p.1".into(),
            "cannot infer the type of the tuple in `.1`; annotate it".into()
        )
    );
    // Unannotated parameters are inferred from the body alone.
    let m = ok("def f x y = x * y + 1");
    assert_eq!(entry_type(&m), "(R, R) -> R");
    let m = ok("def f A = sum A");
    assert_eq!(entry_type(&m), "[_]R -> R");
}

#[test]
fn occurs_check() {
    let (at, message) = err("def f (x : R) : R = let g = fun h -> h h in x");
    assert_eq!(at, "h");
    assert!(message.ends_with("which would contain itself"), "{message}");
}

#[test]
fn higher_order_and_derivative_constructs() {
    let m = ok("def t (x : R) : R = (fun (f : R -> R) -> f (f x)) (fun (y : R) -> y * y)");
    assert_eq!(entry_type(&m), "R -> R");
    let m = ok("def f (A : [n](R, R)) = map fst A");
    assert_eq!(entry_type(&m), "[n](R, R) -> [n]R");
    let m = ok("def f (x : [n]R) = jacob (fun (v : [n]R) -> map sin v) x");
    assert_eq!(entry_type(&m), "[n]R -> [n][n]R");
    let m = ok("def f (x : R) (y : R) = jvp (fun (p : (R, R)) -> p.1 * p.2) (x, y) (1, 0)");
    assert_eq!(entry_type(&m), "(R, R) -> (R, R)");
    let m = ok("def f (A : [n]R) = vjp (fun (v : [n]R) -> sum v) A 1");
    assert_eq!(entry_type(&m), "[n]R -> (R, [n]R)");
    let m = ok("def f (A : [n]R) = grad (fun v -> dot v v) A");
    assert_eq!(entry_type(&m), "[n]R -> [n]R");
    assert_eq!(
        err("def f (x : R) : R = grad (fun (g : R -> R) -> 1) (fun (z : R) -> z)"),
        (
            "(fun (z : R) -> z)".into(),
            "`grad` needs a point of ground type, found `R -> R`".into()
        )
    );
    assert!(is_type_error(
        "def f (x : R) : R = diff (fun (v : [2]R) -> 1) x"
    ));
    assert!(is_type_error(
        "def f (x : R) : R = diff (fun (v : R) -> [v]) x"
    ));
    // Monomorphic within a definition: no let-polymorphism.
    assert!(is_type_error(
        "def f (x : R) (b : Bool) = let id = fun y -> y in (id x, id b)"
    ));
}

#[test]
fn annotations_in_types_parse_back() {
    // The entry types the printer writes read back as the same type.
    for text in [
        "def f (A : [n][m]R) = map sum A",
        "def f (x : R) (y : R) = jvp (fun (p : (R, R)) -> p.1 * p.2) (x, y) (1, 0)",
        "def f (A : [n]R) = shift1R (scanr (+) 0 A)",
    ] {
        let m = ok(text);
        let written = entry_type(&m);
        let back = parse_ty(&written).expect("the printed type parses");
        assert_eq!(print::ty(&back), written);
    }
}

#[test]
fn histograms_of_rows() {
    assert_eq!(
        entry_type(&ok(
            "def f (d : [m][k]R) (is : [n]Int) (v : [n][k]R) : [m][k]R = hist_add_rows d is v"
        )),
        "([m][k]R, [n]Int, [n][k]R) -> [m][k]R"
    );
    assert_eq!(
        err("def f (d : [m]R) (is : [n]Int) (v : [n]R) : [m]R = hist_add_rows d is v"),
        ("d".into(), "expected an array, found `R`".into())
    );
    assert_eq!(
        err(
            "def f (d : [m][k]Bool) (is : [n]Int) (v : [n][k]Bool) : [m][k]Bool = hist_add_rows d is v"
        ),
        (
            "d".into(),
            "expected a number (`R` or `Int`), found `Bool`".into()
        )
    );
    assert!(is_type_error(
        "def f (d : [m][k]R) (is : [n]R) (v : [n][k]R) : [m][k]R = hist_add_rows d is v"
    ));
    assert!(is_type_error(
        "def f (d : [m][k]R) (is : [n]Int) (v : [n]R) : [m][k]R = hist_add_rows d is v"
    ));
}
