//! `codegen::Library`, the in-process path: many calls on one library,
//! run-time errors with the evaluator's spans, dense inputs passed without
//! a copy (peak memory measured), and argument checks with the evaluator's
//! messages. (Every fixture and random program also runs through it in
//! `common::agree` / `common::run_entry_both`, bit for bit against the
//! driver process.)

use std::borrow::Cow;

use crate::common;

use codegen::Config;
use data::{Buffer, Data, Dense};
use semantics::Value;

const PROGRAM: &str = r#"
def weighted (w : R) (A : [n]R) : R =
  reduce (+) 0 (map (fun x -> w * x * x) A)

def pick (A : [n]R) (i : Int) : R =
  A[i]

def scale (A : [n][m]R) (s : R) : [n][m]R =
  map (fun row -> map (fun x -> s * x) row) A

def sum (A : [n]R) : R =
  reduce (+) 0 A

def call_f (x : R) : R = x + 1

def f (x : R) : R = x * 2
"#;

fn library(tag: &str) -> (syntax::Module, codegen::Built, codegen::Library) {
    let m = common::module("library.ad", PROGRAM);
    let built = common::build(&m, &Config::default(), tag);
    let lib = codegen::Library::open(&built).expect("open the library");
    (m, built, lib)
}

#[test]
fn one_library_answers_a_thousand_calls_like_the_evaluator() {
    let (m, _built, lib) = library("library-calls");
    let def = m.def("weighted").expect("weighted");
    for k in 0..1000 {
        let n = k % 17;
        let xs: Vec<f64> = (0..n).map(|i| (i as f64 * 0.37 + k as f64).sin()).collect();
        let w = k as f64 / 7.0;
        let args = vec![Value::Real(w), Value::reals(&xs)];
        let want = semantics::eval_def(&m, def, &args).expect("the evaluator's value");
        let dense = [
            Data::Dense(Dense::scalar(&Value::Real(w)).expect("a scalar")),
            Data::Dense(Dense::reals(vec![n], &xs).expect("a vector")),
        ];
        let got = lib.call("weighted", &dense).expect("a call").to_value();
        assert_eq!(got.to_string(), want.to_string(), "call {k}");
    }
}

#[test]
fn run_time_errors_are_the_evaluators_with_their_spans() {
    let (m, built, lib) = library("library-errors");
    let def = m.def("pick").expect("pick");
    let args = common::args(&m, "pick", &["[1, 2, 3]", "3"]);
    let want = semantics::eval_def(&m, def, &args).expect_err("out of bounds");
    let got = lib.call_values("pick", &args).expect_err("out of bounds");
    assert_eq!(got, codegen::Error::Eval(want.clone()));
    assert_eq!(
        codegen::run(&built, "pick", &args).expect_err("out of bounds"),
        got
    );
    // The context is reusable after a failure.
    let ok = common::args(&m, "pick", &["[1, 2, 3]", "2"]);
    assert_eq!(
        lib.call_values("pick", &ok).expect("in bounds"),
        Value::Real(3.0)
    );
}

#[test]
fn bad_arguments_are_refused_with_the_evaluators_messages() {
    let (m, _built, lib) = library("library-args");
    let def = m.def("scale").expect("scale");
    // A vector where a matrix is expected: the same error as the evaluator's.
    let xs = [1.0, 2.0, 3.0];
    let bad = [
        Data::Dense(Dense::reals(vec![3], &xs).expect("a vector")),
        Data::Dense(Dense::scalar(&Value::Real(2.0)).expect("a scalar")),
    ];
    let got = lib
        .call("scale", &bad)
        .expect_err("a vector is not a matrix");
    let want = semantics::eval_def(&m, def, &[Value::reals(&xs), Value::Real(2.0)])
        .expect_err("a vector is not a matrix");
    assert_eq!(got.span(), want.span());
    assert!(
        got.to_string()
            .contains("at [0]: expected an array of m reals, found a real"),
        "{got}"
    );
    // Integers where reals are expected.
    let ints = [
        Data::Dense(Dense::new(vec![1, 1], Buffer::Int(Cow::Owned(vec![1]))).expect("ints")),
        Data::Dense(Dense::scalar(&Value::Real(2.0)).expect("a scalar")),
    ];
    let got = lib.call("scale", &ints).expect_err("ints are not reals");
    assert!(
        got.to_string()
            .contains("expected a real, found an integer"),
        "{got}"
    );
    let arity = lib
        .call("scale", &bad[..1])
        .expect_err("one argument short");
    assert!(
        matches!(arity, codegen::Error::Eval(semantics::Error::Arity { .. })),
        "{arity}"
    );
    // A matrix comes back dense, with its shape.
    let mat = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
    let args = [
        Data::Dense(Dense::reals(vec![2, 3], &mat).expect("a matrix")),
        Data::Dense(Dense::scalar(&Value::Real(0.5)).expect("a scalar")),
    ];
    let Data::Dense(out) = lib.call("scale", &args).expect("scaled") else {
        panic!("a matrix of reals comes back dense");
    };
    assert_eq!(out.shape(), &[2, 3]);
    assert_eq!(
        out.buffer(),
        &Buffer::Real(Cow::Owned(mat.iter().map(|x| 0.5 * x).collect()))
    );
}

/// A line of /proc/self/status in bytes: `VmHWM` (the peak resident set)
/// or `VmRSS` (the current one).
fn status(key: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with(key))?;
    Some(line.split_whitespace().nth(1)?.parse::<u64>().ok()? * 1024)
}

/// Resets the peak to the current resident set (Linux 4.0 on) and
/// returns the current resident set; `None` where that is not possible.
fn reset_peak() -> Option<u64> {
    std::fs::write("/proc/self/clear_refs", "5").ok()?;
    status("VmRSS:")
}

#[test]
fn ten_million_reals_are_passed_in_place() {
    let (_m, _built, lib) = library("library-large");
    let n = 10_000_000;
    let xs: Vec<f64> = (0..n).map(|i| ((i % 1000) as f64) * 1e-3).collect();
    let before = reset_peak();
    let args = [Data::Dense(Dense::reals(vec![n], &xs).expect("a vector"))];
    let got = lib.call("sum", &args).expect("the sum").to_value();
    let after = status("VmHWM:");
    // The evaluator's `reduce` folds from the left, and so does the
    // generated code by default: the same additions in the same order.
    let want = xs.iter().fold(0.0, |a, x| a + x);
    assert_eq!(got, Value::Real(want));
    if let (Some(b), Some(a)) = (before, after) {
        let grown = a.saturating_sub(b);
        eprintln!(
            "10^7 reals ({} MB): peak RSS {} MB before the call, {} MB after (+{} MB)",
            (n * 8) >> 20,
            b >> 20,
            a >> 20,
            grown >> 20
        );
        // A copy of the input would add 80 MB, values ~240 MB.
        assert!(
            grown < 16 << 20,
            "the call grew the peak by {} MB",
            grown >> 20
        );
    }
}

#[test]
fn a_definition_named_like_a_wrapper_keeps_its_own_symbol() {
    let (_m, built, lib) = library("library-symbols");
    let entry = |n: &str| built.program.entry(Some(n)).expect("an entry").clone();
    let (cf, f) = (entry("call_f"), entry("f"));
    let symbols = [&cf.symbol, &cf.call_symbol, &f.symbol, &f.call_symbol];
    for (i, a) in symbols.iter().enumerate() {
        for b in &symbols[i + 1..] {
            assert_ne!(a, b, "two functions named alike");
        }
    }
    assert_eq!(
        lib.call_values("call_f", &[Value::Real(1.0)])
            .expect("call_f"),
        Value::Real(2.0)
    );
    assert_eq!(
        lib.call_values("f", &[Value::Real(1.0)]).expect("f"),
        Value::Real(2.0 * 1.0)
    );
    assert_eq!(
        lib.call_values("f", &[Value::Real(3.0)]).expect("f"),
        Value::Real(6.0)
    );
    let e = lib.call_values("g", &[]).expect_err("no such entry");
    assert_eq!(e.to_string(), "no definition named `g`");
}

#[test]
fn one_library_is_shared_by_threads() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<codegen::Library>();
    let (_m, _built, lib) = library("library-threads");
    let lib = std::sync::Arc::new(lib);
    let handles: Vec<_> = (0..4)
        .map(|t| {
            let lib = lib.clone();
            std::thread::spawn(move || {
                for k in 0..200 {
                    let xs: Vec<f64> = (0..k % 9).map(|i| (i + t) as f64).collect();
                    let args = [Data::Dense(
                        Dense::reals(vec![xs.len()], &xs).expect("a vector"),
                    )];
                    let got = lib.call("sum", &args).expect("a sum").to_value();
                    assert_eq!(got, Value::Real(xs.iter().fold(0.0, |a, x| a + x)));
                }
            })
        })
        .collect();
    for h in handles {
        h.join().expect("a thread");
    }
}
