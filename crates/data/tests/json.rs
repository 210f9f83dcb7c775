//! JSON: every type of the language read by its expected type, errors
//! with the path inside the value, non-finite reals, results written in
//! the shortest round-tripping form and read back bit for bit.

use data::{Data, InputFile, read_json};
use semantics::Value;

use crate::common::ty;

fn read(text: &str, t: &str) -> Result<Value, String> {
    read_json(text.as_bytes(), "in.json")
        .map_err(|e| e.to_string())?
        .to_data(&ty(t))
        .map(|d| d.to_value())
        .map_err(|e| e.to_string())
}

#[test]
fn every_type_reads_by_the_expected_type() {
    let cases = [
        ("1.5", "R", "1.5"),
        ("3", "R", "3"),
        ("3", "Int", "3"),
        ("true", "Bool", "true"),
        ("[[1, 2], [3, 4]]", "[n][m]R", "[[1, 2], [3, 4]]"),
        ("[]", "[n][m]R", "[]"),
        ("[1.5, [2, 3]]", "(R, [n]R)", "(1.5, [2, 3])"),
        ("[]", "()", "()"),
        ("[[1, true], [2, false]]", "[n](Int, Bool)", "[(1, true), (2, false)]"),
        ("[\"NaN\", \"Infinity\", \"-Infinity\", -0.0]", "[4]R", "[nan, inf, -inf, -0]"),
        ("[[[1.5, [2]]]]", "[1]([1](R, [k]Int))", "[[(1.5, [2])]]"),
        ("9007199254740993", "R", "9007199254740992"),
    ];
    for (text, t, want) in cases {
        assert_eq!(read(text, t).map(|v| v.to_string()), Ok(want.to_string()), "{text} as {t}");
    }
}

#[test]
fn errors_say_where_what_was_expected_and_what_was_found() {
    let e = read("2.5", "Int").expect_err("not an integer");
    assert_eq!(e, "expected an integer, found 2.5 (an integer has no fraction or exponent)");
    let e = read("[[1, 2], [3]]", "[n][m]R").expect_err("ragged");
    assert_eq!(
        e,
        "at [1]: expected an array of 2 elements like the rows before it, found 1 (rows of different lengths)"
    );
    let e = read("[1.5, [2, \"x\"]]", "(R, [n]R)").expect_err("a string");
    assert!(e.starts_with("at .2[1]: expected a real, found the string \"x\""), "{e}");
    let e = read("[1, 2, 3]", "(R, R)").expect_err("a triple for a pair");
    assert_eq!(e, "expected a pair, found an array of 3 elements");
    let e = read("{\"a\": 1}", "[n]R").expect_err("an object");
    assert_eq!(e, "expected an array of n reals, found an object");
    let e = read("null", "R").expect_err("null");
    assert_eq!(e, "expected a real, found null");
    let e = read("[[1, 2], [3, true]]", "[n](Int, Int)").expect_err("a boolean");
    assert_eq!(e, "at [1].2: expected an integer, found `true`");
    let e = read("99999999999999999999", "Int").expect_err("too large");
    assert!(e.contains("does not fit in 64 bits") || e.contains("fraction"), "{e}");
    let e = read("1e400", "R").expect_err("out of range");
    assert!(e.starts_with("in.json: not JSON: number out of range"), "{e}");
    let e = read("[1, 2", "[n]R").expect_err("truncated");
    assert!(e.starts_with("in.json: not JSON: EOF while parsing a list at line 1 column 5"), "{e}");
    let e = read_json(b"[1, \xff]", "bad.json").expect_err("not UTF-8");
    assert_eq!(e.to_string(), "bad.json: not UTF-8 text (byte 5 is not part of a character)");
}

#[test]
fn inputs_files_are_objects_of_named_values() {
    let mut f = InputFile::from_json(br#"{"x": 2, "A": [[1, 2]], "extra": null}"#, "in.json")
        .expect("an object");
    assert_eq!(f.names(), ["x", "A", "extra"]);
    let x = f.take("x", &ty("R")).expect("fits").expect("present");
    assert_eq!(x.to_value(), Value::Real(2.0));
    let e = f.take("A", &ty("[n]R")).expect_err("a matrix for a vector");
    assert_eq!(
        e.to_string(),
        "input `A` (from in.json): at [0]: expected a real, found an array of 2 elements"
    );
    // Unknown names are the caller's to report: they stay in the file.
    assert_eq!(f.names(), ["extra"]);
    let e = InputFile::from_json(b"[1, 2]", "in.json").expect_err("not an object");
    assert_eq!(
        e.to_string(),
        "in.json: not a JSON object of named values: invalid type: sequence, expected an object of named values at line 1 column 0"
    );
    let e = InputFile::from_json(br#"{"x": 1, "x": 2}"#, "in.json").expect_err("twice");
    assert_eq!(e.to_string(), "in.json: `x` is given twice");
    let e = InputFile::from_json(b"\xfe{}", "in.json").expect_err("not UTF-8");
    assert!(e.to_string().contains("not UTF-8"), "{e}");
}

#[test]
fn results_are_written_shortest_and_read_back_bit_for_bit() {
    let t = ty("(R, [n]R, Int, Bool, ())");
    let reals = [0.1, 1.0 / 3.0, 1e21, 1e-7, -0.0, 5e-324, f64::MAX, f64::NAN, f64::INFINITY, f64::NEG_INFINITY];
    let v = Value::tuple(vec![
        Value::Real(2.5),
        Value::reals(&reals),
        Value::Int(i64::MIN),
        Value::Bool(false),
        Value::unit(),
    ]);
    let d = Data::from_value(&v, &t, &semantics::SizeEnv::new());
    assert!(matches!(&d, Data::Tuple(items) if matches!(items[1], Data::Dense(_))));
    let mut out = Vec::new();
    data::write_json(&mut out, &[("value", &d), ("n", &Data::Value(Value::Int(3)))]).expect("write");
    let text = String::from_utf8(out).expect("UTF-8");
    assert_eq!(
        text,
        "{\n  \"value\": [2.5, [0.1, 0.3333333333333333, 1e+21, 1e-7, -0.0, 5e-324, 1.7976931348623157e+308, \"NaN\", \"Infinity\", \"-Infinity\"], -9223372036854775808, false, []],\n  \"n\": 3\n}\n"
    );
    let mut f = InputFile::from_json(text.as_bytes(), "out.json").expect("reads back");
    let back = f.take("value", &t).expect("fits").expect("present").to_value();
    let (Some(a), Some(b)) = (back.as_tuple(), v.as_tuple()) else { panic!("tuples") };
    let bits = |x: &Value| -> Vec<u64> {
        x.as_array().expect("reals").iter().map(|r| r.as_real().expect("real").to_bits()).collect()
    };
    // NaN reads back as the canonical NaN; every other real bit for bit.
    let (ga, gb) = (bits(&a[1]), bits(&b[1]));
    assert_eq!(ga.len(), gb.len());
    for (x, y) in ga.iter().zip(&gb) {
        assert!(x == y || (f64::from_bits(*x).is_nan() && f64::from_bits(*y).is_nan()));
    }
    assert_eq!(a[2], b[2]);
    assert_eq!(a[4], b[4]);
}
