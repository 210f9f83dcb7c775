//! Programs from text: compiled by `syntax::compile`, evaluated at inputs
//! written in the literal syntax, compared with hand-computed values; and
//! run-time errors that point at the right part of the text.

use semantics::{Error, Value, eval_entry, parse_value};
use syntax::{Module, SourceFile};

fn compile(text: &str) -> Module {
    match syntax::compile(SourceFile {
        name: "test.ad".into(),
        text: text.into(),
    }) {
        Ok(m) => m,
        Err(e) => panic!("does not compile: {e}\n{text}"),
    }
}

/// Evaluates the last definition of `text` at `inputs` (`NAME = VALUE`,
/// each value read against its parameter's type).
fn eval(text: &str, inputs: &[(&str, &str)]) -> (Module, Result<Value, Error>) {
    let m = compile(text);
    let def = m.entry(None).expect("a definition");
    let values = inputs
        .iter()
        .map(|(name, value)| {
            let param = def
                .params
                .iter()
                .find(|p| p.name.as_str() == *name)
                .expect("a parameter of that name");
            let ty = param.ty.as_ref().expect("typed in core form");
            let v = parse_value(value, ty).expect("the input reads");
            (name.to_string(), v)
        })
        .collect::<Vec<_>>();
    let res = eval_entry(&m, None, &values);
    (m, res)
}

/// The value of `text` at `inputs`, printed.
fn value(text: &str, inputs: &[(&str, &str)]) -> String {
    match eval(text, inputs).1 {
        Ok(v) => v.to_string(),
        Err(e) => panic!("evaluation failed: {e}\n{text}"),
    }
}

/// The error of `text` at `inputs`, and the text its span covers.
fn error(text: &str, inputs: &[(&str, &str)]) -> (String, String) {
    let (m, res) = eval(text, inputs);
    let err = res.expect_err("evaluation should fail");
    let span = err.span();
    let covered = m
        .file
        .text
        .get(span.lo as usize..span.hi as usize)
        .unwrap_or("<no text>")
        .to_string();
    (err.to_string(), covered)
}

#[test]
fn folds_and_scans_from_text() {
    let a = [("A", "[1, 2, 3]")];
    assert_eq!(value("def f (A : [n]R) : R = reduce (-) 10 A", &a), "4");
    assert_eq!(
        value(
            "def f (A : [n]R) : R = foldl (fun (acc, x) -> acc * 10 + x) 0 A",
            &a
        ),
        "123"
    );
    assert_eq!(
        value("def f (A : [n]R) : [n+1]R = scanl (-) 10 A", &a),
        "[10, 9, 7, 4]"
    );
    assert_eq!(
        value(
            "def f (A : [n]R) : [n+1]R = scanr (fun (x, s) -> s * 10 + x) 0 A",
            &a
        ),
        "[321, 32, 3, 0]"
    );
    assert_eq!(value("def f (A : [n]R) = shift1L A", &a), "[2, 3]");
    assert_eq!(value("def f (A : [n]R) = shift1R A", &a), "[1, 2]");
    assert_eq!(value("def f (A : [n]R) : Int = length A", &a), "3");
}

#[test]
fn prelude_and_earlier_definitions() {
    let a = [("A", "[1, 2, 3, 4]")];
    assert_eq!(value("def f (A : [n]R) : R = sum A + prod A", &a), "34");
    assert_eq!(value("def f (A : [n]R) : R = dot A A", &a), "30");
    assert_eq!(
        value("def f (A : [n]R) = (zeros_like A, ones_like A)", &a),
        "([0, 0, 0, 0], [1, 1, 1, 1])"
    );
    assert_eq!(
        value(
            "def sq (x : R) : R = x * x\ndef f (A : [n]R) : [n]R = map sq A",
            &a
        ),
        "[1, 4, 9, 16]"
    );
}

#[test]
fn build_ifold_and_indexing() {
    assert_eq!(
        value(
            "def f (A : [n]R) = build (length A) (fun i -> A[length A - 1 - i])",
            &[("A", "[1, 2.5, 3]")]
        ),
        "[3, 2.5, 1]"
    );
    assert_eq!(
        value(
            "def f (x : R) : R = ifold (fun (acc, i) -> acc * x) 1 5",
            &[("x", "2")]
        ),
        "32"
    );
}

#[test]
fn tuples_nested_arrays_and_closures() {
    assert_eq!(
        value(
            "def f (M : [n][m]R) : [n]R = map (fun (row : [m]R) -> reduce (+) 0 row) M",
            &[("M", "[[1, 2], [3, 4], [5, 6]]")]
        ),
        "[3, 7, 11]"
    );
    assert_eq!(
        value(
            "def f (a : R) (b : R) : (R, R) = let (x, y) = (a + b, a - b) in (y, x)",
            &[("a", "1.5"), ("b", "0.25")]
        ),
        "(1.25, 1.75)"
    );
    assert_eq!(
        value(
            "def f (x : R) : R = let k = 3 in let g = fun y -> k * y + x in g (g 1)",
            &[("x", "0.5")]
        ),
        "11"
    );
    assert_eq!(
        value(
            "def f (x : R) : R = if x > 0 then log x else 0 - x",
            &[("x", "-2")]
        ),
        "2"
    );
}

#[test]
fn ieee_values_print_in_literal_syntax() {
    assert_eq!(value("def f (x : R) : R = log x", &[("x", "0")]), "-inf");
    assert_eq!(value("def f (x : R) : R = sqrt x", &[("x", "-1")]), "nan");
    assert_eq!(
        value("def f (x : R) : R = x * 1e-300", &[("x", "1")]),
        "1e-300"
    );
    assert_eq!(value("def f (x : R) : R = x / 10", &[("x", "1")]), "0.1");
}

#[test]
fn run_time_errors_point_at_the_text() {
    let (msg, at) = error(
        "def f (A : [n]R) (B : [m]R) : [n]R = map2 (*) A B",
        &[("A", "[1, 2, 3]"), ("B", "[1, 2, 3, 4]")],
    );
    assert_eq!(msg, "map2 over arrays of sizes 3 and 4");
    assert_eq!(at, "map2 (*) A B");
    let (msg, at) = error(
        "def f (A : [n]R) (i : Int) : R = A[i] + 1",
        &[("A", "[1, 2]"), ("i", "2")],
    );
    assert_eq!(msg, "index 2 out of bounds for an array of 2");
    assert_eq!(at, "A[i]");
    let (msg, at) = error("def f (n : Int) = build n (fun i -> i)", &[("n", "-3")]);
    assert_eq!(msg, "`build` with a negative count -3");
    assert_eq!(at, "build n (fun i -> i)");
    let (msg, at) = error("def f (k : Int) : Int = k * k", &[("k", "4000000000")]);
    assert_eq!(msg, "integer overflow in `*`");
    assert_eq!(at, "k * k");
}

#[test]
fn inputs_must_fit_the_parameters() {
    let m = compile("def f (A : [n]R) (B : [n]R) : R = dot A B");
    let a = ("A".to_string(), Value::reals(&[1.0, 2.0, 3.0, 4.0]));
    let b = ("B".to_string(), Value::reals(&[1.0, 2.0, 3.0]));
    let err = eval_entry(&m, None, &[a, b]).expect_err("n is 4 and 3");
    assert_eq!(
        err.to_string(),
        "input `B`: expected an array of 4 reals (n = 4, as in `A`), found 3 elements"
    );
    let span = err.span();
    assert_eq!(&m.file.text[span.lo as usize..span.hi as usize], "B : [n]R");
}

#[test]
fn a_20000_let_chain_from_text_on_a_small_stack() {
    let res = std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(|| {
            let mut text = String::from("def f (x : R) : R =\n");
            for i in 0..20_000 {
                let prev = if i == 0 {
                    "x".to_string()
                } else {
                    format!("v{}", i - 1)
                };
                text.push_str(&format!("  let v{i} = {prev} + 1 in\n"));
            }
            text.push_str("  v19999\n");
            value(&text, &[("x", "0.5")])
        })
        .expect("spawn a thread")
        .join()
        .expect("no panic");
    assert_eq!(res, "20000.5");
}
