//! Every builtin on hand-computed values, and its run-time errors with the
//! span of the builtin.

use crate::common;

use common::B;
use semantics::{Error, Value};
use std::f64::consts::{E, FRAC_PI_2, FRAC_PI_4, PI};
use syntax::{Prim, Span};

/// `op` applied to real constants.
fn real_op(op: Prim, xs: &[f64]) -> Value {
    let mut b = B::new();
    let args: Vec<_> = xs.iter().map(|&x| b.real(x)).collect();
    let e = b.prim(op, &args);
    b.run(e).expect("the operation evaluates")
}

fn real_of(op: Prim, xs: &[f64]) -> f64 {
    real_op(op, xs).as_real().expect("a real result")
}

/// `op` applied to integer constants.
fn int_op(op: Prim, xs: &[i64]) -> Result<Value, Error> {
    let mut b = B::new();
    let args: Vec<_> = xs.iter().map(|&x| b.int(x)).collect();
    let e = b.prim(op, &args);
    b.run(e)
}

fn bool_op(op: Prim, xs: &[bool]) -> bool {
    let mut b = B::new();
    let args: Vec<_> = xs.iter().map(|&x| b.boolean(x)).collect();
    let e = b.prim(op, &args);
    b.run(e).expect("evaluates").as_bool().expect("a boolean")
}

fn close(a: f64, b: f64) -> bool {
    semantics::reals_close(a, b, 1e-15, 1e-15)
}

#[test]
fn real_arithmetic() {
    assert_eq!(real_of(Prim::Add, &[2.0, 3.5]), 5.5);
    assert_eq!(real_of(Prim::Sub, &[2.0, 3.5]), -1.5);
    assert_eq!(real_of(Prim::Mul, &[2.0, 3.5]), 7.0);
    assert_eq!(real_of(Prim::Div, &[1.0, 4.0]), 0.25);
    assert_eq!(real_of(Prim::Div, &[1.0, 0.0]), f64::INFINITY);
    assert!(real_of(Prim::Div, &[0.0, 0.0]).is_nan());
    assert_eq!(real_of(Prim::Neg, &[2.0]), -2.0);
    assert!(real_of(Prim::Neg, &[0.0]).is_sign_negative());
}

#[test]
fn unary_real_functions() {
    assert_eq!(real_of(Prim::Sin, &[0.0]), 0.0);
    assert!(close(real_of(Prim::Sin, &[FRAC_PI_2]), 1.0));
    assert_eq!(real_of(Prim::Cos, &[0.0]), 1.0);
    assert!(close(real_of(Prim::Cos, &[PI]), -1.0));
    assert!(close(real_of(Prim::Tan, &[FRAC_PI_4]), 1.0));
    assert_eq!(real_of(Prim::Exp, &[0.0]), 1.0);
    assert!(close(real_of(Prim::Exp, &[1.0]), E));
    assert_eq!(real_of(Prim::Log, &[1.0]), 0.0);
    assert!(close(real_of(Prim::Log, &[E]), 1.0));
    assert_eq!(real_of(Prim::Sqrt, &[6.25]), 2.5);
    assert_eq!(real_of(Prim::Tanh, &[0.0]), 0.0);
    assert_eq!(real_of(Prim::Tanh, &[40.0]), 1.0);
    assert!(close(real_of(Prim::Tanh, &[0.5]), (E - 1.0) / (E + 1.0)));
    assert_eq!(real_of(Prim::Abs, &[-3.25]), 3.25);
    assert_eq!(real_of(Prim::Abs, &[3.25]), 3.25);
}

#[test]
fn ieee_at_the_edges_never_an_error() {
    assert_eq!(real_of(Prim::Log, &[0.0]), f64::NEG_INFINITY);
    assert!(real_of(Prim::Log, &[-1.0]).is_nan());
    assert!(real_of(Prim::Sqrt, &[-1.0]).is_nan());
    assert_eq!(real_of(Prim::Exp, &[1000.0]), f64::INFINITY);
    assert_eq!(real_of(Prim::Pow, &[0.0, -1.0]), f64::INFINITY);
    assert!(real_of(Prim::Pow, &[-8.0, 1.0 / 3.0]).is_nan());
    assert!(real_of(Prim::Sin, &[f64::INFINITY]).is_nan());
}

#[test]
fn binary_real_functions() {
    assert_eq!(real_of(Prim::Pow, &[2.0, 10.0]), 1024.0);
    assert_eq!(real_of(Prim::Pow, &[6.25, 0.5]), 2.5);
    assert_eq!(real_of(Prim::Pow, &[2.0, -2.0]), 0.25);
    assert_eq!(real_of(Prim::Max, &[2.0, 3.0]), 3.0);
    assert_eq!(real_of(Prim::Max, &[-2.0, -3.0]), -2.0);
    assert_eq!(real_of(Prim::Min, &[2.0, 3.0]), 2.0);
    assert_eq!(real_of(Prim::Max, &[f64::NAN, 1.0]), 1.0);
    assert_eq!(real_of(Prim::Min, &[1.0, f64::NAN]), 1.0);
}

#[test]
fn integer_arithmetic_is_checked() {
    assert_eq!(int_op(Prim::Add, &[2, 3]), Ok(Value::Int(5)));
    assert_eq!(int_op(Prim::Sub, &[2, 3]), Ok(Value::Int(-1)));
    assert_eq!(int_op(Prim::Mul, &[7, -6]), Ok(Value::Int(-42)));
    assert_eq!(int_op(Prim::Neg, &[5]), Ok(Value::Int(-5)));
    assert_eq!(int_op(Prim::Abs, &[-5]), Ok(Value::Int(5)));
    assert_eq!(int_op(Prim::Max, &[-5, 2]), Ok(Value::Int(2)));
    assert_eq!(int_op(Prim::Min, &[-5, 2]), Ok(Value::Int(-5)));
    let add = int_op(Prim::Add, &[i64::MAX, 1]).expect_err("overflows");
    assert_eq!(add.to_string(), "integer overflow in `+`");
    // The module is [e0, e1, e2 = e0 + e1]: the error points at e2.
    assert_eq!(add.span(), Span::new(2, 3));
    assert!(matches!(
        int_op(Prim::Mul, &[i64::MAX, 2]),
        Err(Error::Overflow { .. })
    ));
    assert!(matches!(
        int_op(Prim::Sub, &[i64::MIN, 1]),
        Err(Error::Overflow { .. })
    ));
    assert!(matches!(
        int_op(Prim::Neg, &[i64::MIN]),
        Err(Error::Overflow { .. })
    ));
    assert!(matches!(
        int_op(Prim::Abs, &[i64::MIN]),
        Err(Error::Overflow { .. })
    ));
    // `/` on Int floors, `mod` takes the divisor's sign (docs/semantics.md).
    let int = |op, xs: &[i64]| int_op(op, xs).expect("evaluates").as_int();
    assert_eq!(int(Prim::Div, &[7, 2]), Some(3));
    assert_eq!(int(Prim::Div, &[-7, 2]), Some(-4));
    assert_eq!(int(Prim::Mod, &[-7, 2]), Some(1));
    assert_eq!(int(Prim::Mod, &[7, -2]), Some(-1));
    for op in [Prim::Div, Prim::Mod] {
        let err = int_op(op, &[1, 0]).expect_err("division by zero");
        assert_eq!(err.to_string(), format!("division by zero in `{op}`"));
        assert_eq!(err.span(), Span::new(2, 3));
    }
    assert!(matches!(
        int_op(Prim::Div, &[i64::MIN, -1]),
        Err(Error::Overflow { .. })
    ));
    let m = int_op(Prim::Mod, &[i64::MIN, -1]).expect("mod by -1 is 0");
    assert_eq!(m.as_int(), Some(0));
}

#[test]
fn conversions_between_int_and_real() {
    let mut b = B::new();
    let n = b.int(-3);
    let e = b.prim(Prim::Real, &[n]);
    assert_eq!(b.run(e).expect("real n").as_real(), Some(-3.0));
    for (op, want) in [
        (Prim::Floor, -3),
        (Prim::Ceil, -2),
        (Prim::Round, -3),
        (Prim::Trunc, -2),
    ] {
        let got = real_op(op, &[-2.5]).as_int();
        assert_eq!(got, Some(want), "{op}");
    }
    for bad in [f64::NAN, f64::INFINITY, 1e19] {
        let mut b = B::new();
        let x = b.real(bad);
        let e = b.prim(Prim::Floor, &[x]);
        let err = b.run(e).expect_err("no Int value");
        assert!(
            matches!(
                err,
                Error::NotAnInt {
                    op: Prim::Floor,
                    ..
                }
            ),
            "{bad}: {err}"
        );
    }
}

#[test]
fn comparisons() {
    let cmp = |op, a: f64, b: f64| real_op(op, &[a, b]).as_bool().expect("a boolean");
    let table = [
        (Prim::Lt, [true, false, false]),
        (Prim::Le, [true, true, false]),
        (Prim::Gt, [false, false, true]),
        (Prim::Ge, [false, true, true]),
        (Prim::Eq, [false, true, false]),
        (Prim::Ne, [true, false, true]),
    ];
    for (op, [less, equal, greater]) in table {
        assert_eq!(cmp(op, 1.0, 2.0), less, "1 {op} 2");
        assert_eq!(cmp(op, 2.0, 2.0), equal, "2 {op} 2");
        assert_eq!(cmp(op, 3.0, 2.0), greater, "3 {op} 2");
        let ints = int_op(op, &[1, 2]).expect("integers compare");
        assert_eq!(ints, Value::Bool(less), "1 {op} 2 on integers");
        // Every comparison with NaN is false except `!=`.
        assert_eq!(cmp(op, f64::NAN, 2.0), op == Prim::Ne, "nan {op} 2");
    }
    assert!(cmp(Prim::Eq, 0.0, -0.0));
    assert!(bool_op(Prim::Eq, &[true, true]));
    assert!(bool_op(Prim::Ne, &[true, false]));
}

#[test]
fn logic() {
    for a in [false, true] {
        assert_eq!(bool_op(Prim::Not, &[a]), !a);
        for b in [false, true] {
            assert_eq!(bool_op(Prim::And, &[a, b]), a && b);
            assert_eq!(bool_op(Prim::Or, &[a, b]), a || b);
        }
    }
}

#[test]
fn ill_typed_operands_are_errors() {
    let mut b = B::new();
    let t = b.boolean(true);
    let e = b.prim(Prim::Sin, &[t]);
    let err = b.run(e).expect_err("sin of a boolean");
    assert_eq!(err.to_string(), "`sin` expects a real, found a boolean");
    assert_eq!(err.span(), Span::new(1, 2));
    let mut b = B::new();
    let x = b.real(1.0);
    let i = b.int(1);
    let e = b.prim(Prim::Add, &[x, i]);
    let err = b.run(e).expect_err("a real plus an integer");
    assert_eq!(
        err.to_string(),
        "`+` expects two reals or two integers, found a real and an integer"
    );
}

#[test]
fn map_and_map2() {
    let mut b = B::new();
    let x = b.var("x");
    let x2 = b.var("x");
    let sq = b.prim(Prim::Mul, &[x, x2]);
    let f = b.lam(&["x"], sq);
    let a = b.reals(&[1.0, 2.0, 3.0]);
    let e = b.prim(Prim::Map, &[f, a]);
    assert_eq!(b.run(e).expect("map"), Value::reals(&[1.0, 4.0, 9.0]));

    let mut b = B::new();
    let f = b.op_lam(Prim::Sub);
    let a = b.reals(&[1.0, 2.0, 3.0]);
    let c = b.reals(&[10.0, 20.0, 30.0]);
    let e = b.prim(Prim::Map2, &[f, a, c]);
    assert_eq!(b.run(e).expect("map2"), Value::reals(&[-9.0, -18.0, -27.0]));

    let mut b = B::new();
    let f = b.op_lam(Prim::Mul);
    let empty = b.array(&[]);
    let empty2 = b.array(&[]);
    let e = b.prim(Prim::Map2, &[f, empty, empty2]);
    assert_eq!(b.run(e).expect("map2 of []"), Value::array(vec![]));
}

#[test]
fn map2_sizes_must_agree() {
    let mut b = B::new();
    let f = b.op_lam(Prim::Mul);
    let a = b.reals(&[1.0, 2.0, 3.0]);
    let c = b.reals(&[1.0, 2.0, 3.0, 4.0]);
    let e = b.prim(Prim::Map2, &[f, a, c]);
    let err = b.run(e).expect_err("3 and 4");
    assert_eq!(err.to_string(), "map2 over arrays of sizes 3 and 4");
    assert_eq!(err.span(), b.m.span(e));
}

/// `op f z A` with `f = fun (x, y) -> x - y` (not associative, so the order shows).
fn fold_sub(op: Prim, z: f64, xs: &[f64]) -> Value {
    let mut b = B::new();
    let f = b.op_lam(Prim::Sub);
    let z = b.real(z);
    let a = b.reals(xs);
    let e = b.prim(op, &[f, z, a]);
    b.run(e).expect("the fold evaluates")
}

#[test]
fn reduce_and_foldl_are_left_folds() {
    // ((10 - 1) - 2) - 3
    assert_eq!(
        fold_sub(Prim::Reduce, 10.0, &[1.0, 2.0, 3.0]),
        Value::Real(4.0)
    );
    assert_eq!(
        fold_sub(Prim::Foldl, 10.0, &[1.0, 2.0, 3.0]),
        Value::Real(4.0)
    );
    assert_eq!(fold_sub(Prim::Reduce, 10.0, &[]), Value::Real(10.0));
    // Horner: foldl (fun (acc, c) -> acc * x + c) 0 [2, -1, 0.5, 3] at x = 1.5.
    let mut b = B::new();
    let acc = b.var("acc");
    let x = b.var("x");
    let mul = b.prim(Prim::Mul, &[acc, x]);
    let c = b.var("c");
    let body = b.prim(Prim::Add, &[mul, c]);
    let f = b.lam(&["acc", "c"], body);
    let z = b.real(0.0);
    let cs = b.reals(&[2.0, -1.0, 0.5, 3.0]);
    let fold = b.prim(Prim::Foldl, &[f, z, cs]);
    let xv = b.real(1.5);
    let e = b.let_("x", xv, fold);
    // ((2 * 1.5 - 1) * 1.5 + 0.5) * 1.5 + 3
    assert_eq!(b.run(e).expect("horner"), Value::Real(8.25));
}

#[test]
fn scans() {
    // [10, 10 - 1, (10 - 1) - 2, ((10 - 1) - 2) - 3]
    assert_eq!(
        fold_sub(Prim::Scanl, 10.0, &[1.0, 2.0, 3.0]),
        Value::reals(&[10.0, 9.0, 7.0, 4.0])
    );
    assert_eq!(fold_sub(Prim::Scanl, 10.0, &[]), Value::reals(&[10.0]));
    // [1 - (2 - (3 - 0)), 2 - (3 - 0), 3 - 0, 0]
    assert_eq!(
        fold_sub(Prim::Scanr, 0.0, &[1.0, 2.0, 3.0]),
        Value::reals(&[2.0, -1.0, 3.0, 0.0])
    );
    assert_eq!(fold_sub(Prim::Scanr, 5.0, &[]), Value::reals(&[5.0]));
    // scanr (fun (a, s) -> s * 10 + a) 0 [1, 2, 3]: the element comes first.
    let mut b = B::new();
    let s = b.var("s");
    let ten = b.real(10.0);
    let s10 = b.prim(Prim::Mul, &[s, ten]);
    let a = b.var("a");
    let body = b.prim(Prim::Add, &[s10, a]);
    let f = b.lam(&["a", "s"], body);
    let z = b.real(0.0);
    let xs = b.reals(&[1.0, 2.0, 3.0]);
    let e = b.prim(Prim::Scanr, &[f, z, xs]);
    assert_eq!(
        b.run(e).expect("scanr"),
        Value::reals(&[321.0, 32.0, 3.0, 0.0])
    );
}

fn unary_array(op: Prim, xs: &[f64]) -> Value {
    let mut b = B::new();
    let a = b.reals(xs);
    let e = b.prim(op, &[a]);
    b.run(e).expect("evaluates")
}

#[test]
fn shifts_and_length() {
    assert_eq!(
        unary_array(Prim::Shift1L, &[1.0, 2.0, 3.0]),
        Value::reals(&[2.0, 3.0])
    );
    assert_eq!(
        unary_array(Prim::Shift1R, &[1.0, 2.0, 3.0]),
        Value::reals(&[1.0, 2.0])
    );
    assert_eq!(unary_array(Prim::Shift1L, &[1.0]), Value::reals(&[]));
    assert_eq!(unary_array(Prim::Shift1L, &[]), Value::reals(&[]));
    assert_eq!(unary_array(Prim::Shift1R, &[]), Value::reals(&[]));
    assert_eq!(unary_array(Prim::Length, &[1.0, 2.0, 3.0]), Value::Int(3));
    assert_eq!(unary_array(Prim::Length, &[]), Value::Int(0));
}

#[test]
fn build_and_ifold() {
    let build = |n: i64| {
        let mut b = B::new();
        let n = b.int(n);
        let i = b.var("i");
        let i2 = b.var("i");
        let sq = b.prim(Prim::Mul, &[i, i2]);
        let f = b.lam(&["i"], sq);
        let e = b.prim(Prim::Build, &[n, f]);
        b.run(e)
    };
    let ints = |xs: &[i64]| Value::array(xs.iter().map(|&i| Value::Int(i)).collect());
    assert_eq!(build(4), Ok(ints(&[0, 1, 4, 9])));
    assert_eq!(build(0), Ok(ints(&[])));
    let err = build(-1).expect_err("negative size");
    assert_eq!(err.to_string(), "`build` with a negative count -1");
    assert_eq!(err.span(), Span::new(5, 6));

    // ifold (fun (acc, i) -> acc * 10 + i) 0 n: the digits 0, 1, ..., n-1.
    let ifold = |n: i64| {
        let mut b = B::new();
        let acc = b.var("acc");
        let ten = b.int(10);
        let m = b.prim(Prim::Mul, &[acc, ten]);
        let i = b.var("i");
        let body = b.prim(Prim::Add, &[m, i]);
        let f = b.lam(&["acc", "i"], body);
        let z = b.int(7);
        let n = b.int(n);
        let e = b.prim(Prim::Ifold, &[f, z, n]);
        b.run(e)
    };
    assert_eq!(ifold(4), Ok(Value::Int(70123)));
    assert_eq!(ifold(0), Ok(Value::Int(7)));
    assert!(matches!(
        ifold(-2),
        Err(Error::NegativeCount { count: -2, .. })
    ));
}

#[test]
fn indexing() {
    let index = |i: i64| {
        let mut b = B::new();
        let a = b.reals(&[10.0, 20.0, 30.0]);
        let i = b.int(i);
        let e = b.index(a, i);
        let res = b.run(e);
        (res, b.m.span(e))
    };
    assert_eq!(index(0).0, Ok(Value::Real(10.0)));
    assert_eq!(index(2).0, Ok(Value::Real(30.0)));
    let (res, span) = index(3);
    let err = res.expect_err("out of bounds");
    assert_eq!(err.to_string(), "index 3 out of bounds for an array of 3");
    assert_eq!(err.span(), span);
    let err = index(-1).0.expect_err("negative");
    assert_eq!(err.to_string(), "index -1 out of bounds for an array of 3");
}

#[test]
fn derivative_constructs_must_be_expanded() {
    for &op in Prim::ALL.iter().filter(|p| p.is_derivative_construct()) {
        let mut b = B::new();
        let args: Vec<_> = (0..op.arity()).map(|_| b.real(1.0)).collect();
        let e = b.prim(op, &args);
        let err = b.run(e).expect_err("not expanded");
        assert_eq!(
            err.to_string(),
            format!("`{op}` must be expanded before evaluation (run the forward stage)")
        );
        assert_eq!(err.span(), b.m.span(e));
    }
}

#[test]
fn every_primitive_is_covered() {
    // Applying each primitive to operands of the wrong kind must give an
    // error, never a panic, and the derivative constructs their own error.
    for &op in Prim::ALL {
        let mut b = B::new();
        let args: Vec<_> = (0..op.arity()).map(|_| b.array(&[])).collect();
        let e = b.prim(op, &args);
        let res = b.run(e);
        if op.is_derivative_construct() {
            assert!(matches!(res, Err(Error::NotExpanded { .. })), "{op}");
        } else if matches!(op, Prim::Shift1L | Prim::Shift1R) {
            assert_eq!(res, Ok(Value::array(vec![])), "{op}");
        } else if op == Prim::Length {
            assert_eq!(res, Ok(Value::Int(0)), "{op}");
        } else if syntax::hist::differentiable(op) || syntax::hist::is_partial(op) {
            // Scatter, the histograms and their partials of empty arrays.
            assert_eq!(res, Ok(Value::array(vec![])), "{op}");
        } else {
            assert!(matches!(res, Err(Error::Type { .. })), "{op}: {res:?}");
        }
    }
}
