//! The inputs of one call checked together: size variables bound by one
//! parameter and checked in the others, dense or not, with the
//! evaluator's messages naming the parameter that bound the size.

use std::borrow::Cow;

use data::{Arg, Buffer, Data, Dense, check_args};
use semantics::Value;

use crate::common::ty;

#[test]
fn sizes_agree_across_parameters() {
    let (tm, tv) = (ty("[n][m]R"), ty("[m]R"));
    let a = Data::Dense(Dense::reals(vec![2, 3], &[0.0; 6]).expect("matrix"));
    let good = Data::Dense(Dense::reals(vec![3], &[0.0; 3]).expect("vector"));
    let bad = Data::Value(Value::reals(&[1.0, 2.0]));
    let arg = |name, ty, data| Arg {
        name,
        ty,
        data,
        from: Some("in.npz"),
    };
    let sizes = check_args(&[arg("A", &tm, &a), arg("x", &tv, &good)]).expect("consistent");
    assert_eq!(sizes.get(&syntax::Name::new("m")), Some(3));
    let e = check_args(&[arg("A", &tm, &a), arg("x", &tv, &bad)]).expect_err("m = 3, not 2");
    assert_eq!(
        e.to_string(),
        "input `x` (from in.npz): expected an array of 3 reals (m = 3, as in `A`), found 2 elements"
    );
    // A dense array of the wrong rank or dtype for the type.
    let e = check_args(&[arg("x", &tv, &a)]).expect_err("a matrix for a vector");
    assert_eq!(
        e.to_string(),
        "input `x` (from in.npz): at [0]: expected a real, found an array of 3 elements (of R)"
    );
    let ints =
        Data::Dense(Dense::new(vec![3], Buffer::Int(Cow::Owned(vec![1, 2, 3]))).expect("ints"));
    let e = check_args(&[arg("x", &tv, &ints)]).expect_err("ints for reals");
    assert_eq!(
        e.to_string(),
        "input `x` (from in.npz): at [0]: expected a real, found an integer"
    );
    let e = check_args(&[arg("A", &tm, &good)]).expect_err("a vector for a matrix");
    assert_eq!(
        e.to_string(),
        "input `A` (from in.npz): at [0]: expected an array of m reals, found a real"
    );
    // A tuple, dense inside.
    let tt = ty("(R, [n]R)");
    let t = Data::Tuple(vec![
        Data::Dense(Dense::scalar(&Value::Real(1.0)).expect("scalar")),
        Data::Dense(Dense::scalar(&Value::Real(1.0)).expect("scalar")),
    ]);
    let e = check_args(&[arg("p", &tt, &t)]).expect_err("a real for an array");
    assert_eq!(
        e.to_string(),
        "input `p` (from in.npz): at .2: expected an array of n reals, found a real"
    );
}

#[test]
fn dense_and_values_convert_both_ways() {
    let t = ty("[n][m]Int");
    let v = semantics::parse_value("[[1, 2, 3], [4, 5, 6]]", &t).expect("value");
    let Data::Dense(d) = Data::from_value(&v, &t, &semantics::SizeEnv::new()) else {
        panic!("arrays of a scalar are dense");
    };
    assert_eq!(d.shape(), &[2, 3]);
    assert_eq!(d.to_value(), v);
    // Empty arrays take their inner dims from the sizes bound so far.
    let mut sizes = semantics::SizeEnv::new();
    Value::reals(&[1.0; 4])
        .check_input(&ty("[m]R"), &mut sizes, None)
        .expect("m = 4");
    let empty = Value::array(vec![]);
    let Data::Dense(e) = Data::from_value(&empty, &t, &sizes) else {
        panic!("dense")
    };
    assert_eq!(e.shape(), &[0, 4]);
    // Ragged values stay values (the checks then report them).
    let ragged = Value::array(vec![
        Value::array(vec![Value::Int(1)]),
        Value::array(vec![]),
    ]);
    assert!(matches!(
        Data::from_value(&ragged, &ty("[n][_]Int"), &sizes),
        Data::Value(_)
    ));
    assert!(Dense::new(vec![2, 2], Buffer::Real(Cow::Owned(vec![1.0; 3]))).is_none());
}

/// An empty array's inner dims are not checked, as the evaluator does not
/// check them in `[]`: a `[0][0]` result (the C backend does not set the
/// inner dims of an array without rows) is a `[n][m]R` at m = 2. Found by
/// codegen's generated-program test through the shared library.
#[test]
fn an_empty_array_has_no_inner_sizes_to_check() {
    let (tm, tv) = (ty("[n][m]R"), ty("[m]R"));
    let rows = Data::Dense(Dense::reals(vec![0, 0], &[]).expect("no rows"));
    let x = Data::Value(Value::reals(&[1.0, 2.0]));
    let arg = |name, ty, data| Arg {
        name,
        ty,
        data,
        from: None,
    };
    let sizes = check_args(&[arg("x", &tv, &x), arg("A", &tm, &rows)]).expect("consistent");
    assert_eq!(sizes.get(&syntax::Name::new("n")), Some(0));
    assert!(
        Value::array(vec![])
            .check_input(&tm, &mut sizes.clone(), None)
            .is_ok()
    );
}
