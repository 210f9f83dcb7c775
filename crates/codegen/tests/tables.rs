//! Array literals of reals as tables of constants (issue 19): a literal of
//! 20,000 numbers, the hardest to print among them, compiles to one
//! `static const double` table, not a store per number, and every number
//! read from it, returned whole, or met again in a gradient is the
//! evaluator's bit for bit, through the driver process and the library.

use codegen::Config;
use semantics::Value;

use crate::common;

/// How many numbers the literal holds.
const N: usize = 20_000;

/// The literal's numbers: those whose printing is easy to get wrong
/// first, then f64s of random bits (17 significant digits nearly all),
/// every one finite, as a literal's are.
fn numbers() -> Vec<f64> {
    let mut xs = vec![
        -0.0,
        0.0,
        5e-324,
        -5e-324,
        1.7976931348623157e308,
        -1.7976931348623157e308,
        2.2250738585072014e-308,
        0.30000000000000004,
        0.1,
        1.0 / 3.0,
        -2.0 / 3.0,
        123456789.12345679,
        9007199254740993.0,
    ];
    let mut state = 0x2545_f491_4f6c_dd1d_u64;
    while xs.len() < N {
        // xorshift64: deterministic, and no dependency for it.
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let x = f64::from_bits(state);
        if x.is_finite() {
            xs.push(x);
        }
    }
    xs
}

/// `[x0, x1, ...]`, each number in the shortest text that reads back.
fn literal(xs: &[f64]) -> String {
    let items: Vec<String> = xs.iter().map(|x| format!("{x:?}")).collect();
    format!("[{}]", items.join(", "))
}

/// `[[..], ..]`: the numbers as `rows` rows.
fn nested(xs: &[f64], rows: usize) -> String {
    let rows: Vec<String> = xs.chunks(xs.len() / rows).map(literal).collect();
    format!("[{}]", rows.join(", "))
}

fn bits(v: &Value, out: &mut Vec<u64>) {
    match v {
        Value::Real(x) => out.push(x.to_bits()),
        Value::Array(items) | Value::Tuple(items) => items.iter().for_each(|x| bits(x, out)),
        other => panic!("a real or an array of reals, not {other}"),
    }
}

fn all_bits(v: &Value) -> Vec<u64> {
    let mut out = Vec::new();
    bits(v, &mut out);
    out
}

#[test]
fn a_literal_of_twenty_thousand_reals_is_a_table_read_back_bit_for_bit() {
    let xs = numbers();
    let text = format!(
        "def pick (i : Int) : R =\n  let a = {} in\n  a[i]\n\n\
         def pick2 (i : Int) (j : Int) : R =\n  let m = {} in\n  m[i][j]\n\n\
         def whole (x : R) : [{N}]R = {}\n",
        literal(&xs),
        nested(&xs, 100),
        literal(&xs)
    );
    let m = common::module("tables.ad", &text);
    let c = codegen::emit(&m, &Config::default()).expect("emits");
    // One table for each literal, none of its numbers a statement.
    assert_eq!(
        c.source.matches("static const double ad_table_").count(),
        3,
        "three literals, three tables"
    );
    assert!(c.source.contains(&format!("ad_table_1[{N}] = {{")));
    assert!(
        c.source.lines().count() < N / 8 * 3 + 1000,
        "about 8 numbers a line, and few statements"
    );
    assert!(!c.source.contains("= 0.30000000000000004;"), "no stores");
    let built = common::build(&m, &Config::default(), "tables");
    for i in [0, 1, 2, 3, 4, 5, 6, 7, 11, 12, 13, 9_999, 10_000, N - 1] {
        let args = vec![Value::Int(i as i64)];
        let want = semantics::eval_def(&m, m.def("pick").expect("pick"), &args).expect("evaluates");
        let got = common::run_both(&built, "pick", &args).expect("runs");
        assert_eq!(all_bits(&got), all_bits(&want), "pick {i}");
        assert_eq!(all_bits(&got), [xs[i].to_bits()], "pick {i}");
        let (r, col) = (i / (N / 100), i % (N / 100));
        let args = vec![Value::Int(r as i64), Value::Int(col as i64)];
        let got = common::run_both(&built, "pick2", &args).expect("runs");
        assert_eq!(all_bits(&got), [xs[i].to_bits()], "pick2 {r} {col}");
    }
    // Outside the table: the evaluator's error, with its span.
    for i in [-1, N as i64] {
        let args = vec![Value::Int(i)];
        let want = semantics::eval_def(&m, m.def("pick").expect("pick"), &args);
        let got = common::run_both(&built, "pick", &args);
        match (want, got) {
            (Err(w), Err(codegen::Error::Eval(g))) => assert_eq!(w, g),
            (w, g) => panic!("pick {i}: evaluator {w:?}, C {g:?}"),
        }
    }
    // Returned whole: copied out of the table, every number intact.
    let got = common::run_both(&built, "whole", &[Value::Real(1.0)]).expect("runs");
    let want: Vec<u64> = xs.iter().map(|x| x.to_bits()).collect();
    assert_eq!(all_bits(&got), want);
}

#[test]
fn a_gradient_through_a_large_literal_reads_its_table() {
    let xs = numbers();
    let text = format!(
        "def f (x : [3]R) : R =\n  let a = {} in\n  \
         x[0] * a[4] + x[1] * a[7] + x[2] * reduce (+) 0 (map2 (*) a a)\n",
        literal(&xs[..1000])
    );
    let m = common::module("table_grad.ad", &text);
    let def = m.defs.last().expect("f").clone();
    let g = reverse::gradient(&m, &def, &reverse::Config::default()).expect("differentiates");
    let o = optimize::optimize(&g, &optimize::Config::default()).expect("optimizes");
    let c = codegen::emit(&o, &Config::default()).expect("emits");
    assert_eq!(
        c.source.matches("static const double ad_table_").count(),
        1,
        "the literal, shared by the value and the gradient's reads"
    );
    let built = common::build(&o, &Config::default(), "table_grad");
    let name = o.defs.last().expect("the gradient").name.to_string();
    let args = vec![Value::reals(&[1.5, -0.0, 1e-300])];
    let want = semantics::eval_def(&o, o.def(&name).expect("gradient"), &args).expect("evaluates");
    let got = common::run_both(&built, &name, &args).expect("runs");
    assert_eq!(all_bits(&got), all_bits(&want), "{got} against {want}");
    // The gradient's reads of the literal are its numbers.
    let g = all_bits(&got);
    assert_eq!(
        g[g.len() - 3..g.len() - 1],
        [xs[4].to_bits(), xs[7].to_bits()]
    );
}

#[test]
fn literals_below_the_threshold_keep_their_stores() {
    let small: Vec<f64> = (0..15).map(|k| k as f64 + 0.5).collect();
    let large: Vec<f64> = (0..16).map(|k| k as f64 + 0.5).collect();
    for (xs, tables) in [(small, 0), (large, 1)] {
        let text = format!("def f (i : Int) : R = {}[i]\n", literal(&xs));
        let m = common::module("threshold.ad", &text);
        let c = codegen::emit(&m, &Config::default()).expect("emits");
        assert_eq!(
            c.source.matches("static const double ad_table_").count(),
            tables,
            "{} numbers",
            xs.len()
        );
        let built = common::build(&m, &Config::default(), &format!("threshold{tables}"));
        for i in [0, xs.len() - 1] {
            let got = common::run_both(&built, "f", &[Value::Int(i as i64)]).expect("runs");
            assert_eq!(all_bits(&got), [xs[i].to_bits()]);
        }
    }
}

#[test]
fn tables_flow_through_conditionals_folds_rows_and_updates() {
    // Every construct that takes an array in memory, given a table: the
    // ones that update in place copy it first (the verifier refuses a
    // store into read-only memory, so a missed copy is an emit error).
    let row =
        |k: usize| -> Vec<f64> { (0..20).map(|j| (k * 20 + j) as f64 * 0.25 - 3.0).collect() };
    let a = literal(&row(0));
    let b = literal(&row(1));
    let m = nested(&[row(2), row(3), row(4)].concat(), 3);
    let text = format!(
        "def choose (c : Bool) (x : R) : [20]R = if c then {a} else map (fun v -> v * x) {b}\n\n\
         def accumulate (xs : [n]R) : [20]R =\n  \
           foldl (fun (acc, x) -> map2 (fun (u, w) -> u + w * x) acc {b}) {a} xs\n\n\
         def rows (x : R) : [3]R = map (fun r -> reduce (+) x r) {m}\n\n\
         def update (is : [k]Int) (vs : [k]R) : [20]R = scatter {a} is vs\n\n\
         def reverse_loop (x : R) : ([20]R, Int) =\n  \
           while (fun s -> let (v, k) = s in k < 3) (fun s -> let (v, k) = s in (map2 (fun (p, q) -> p * x + q) v {b}, k + 1)) ({a}, 0)\n"
    );
    let m = common::module("table_flow.ad", &text);
    let c = codegen::emit(&m, &Config::default()).expect("emits");
    assert_eq!(
        c.source.matches("static const double ad_table_").count(),
        8,
        "every literal written is a table"
    );
    let built = common::build(&m, &Config::default(), "table_flow");
    let cases: [(&str, Vec<&str>); 6] = [
        ("choose", vec!["true", "1.5"]),
        ("choose", vec!["false", "1.5"]),
        ("accumulate", vec!["[0.5, -2, 3]"]),
        ("rows", vec!["0.125"]),
        ("update", vec!["[3, 19, 25, -1]", "[1, 2, 3, 4]"]),
        ("reverse_loop", vec!["0.75"]),
    ];
    for (entry, texts) in cases {
        let args = common::args(&m, entry, &texts);
        let want = semantics::eval_def(&m, m.def(entry).expect("entry"), &args).expect("evaluates");
        let got = common::run_both(&built, entry, &args).expect("runs");
        assert_eq!(got.to_string(), want.to_string(), "{entry} {texts:?}");
    }
    // The table is unchanged by all of that: `choose true` after the rest.
    let args = common::args(&m, "choose", &["true", "0"]);
    let got = common::run_both(&built, "choose", &args).expect("runs");
    let want: Vec<u64> = row(0).iter().map(|x| x.to_bits()).collect();
    assert_eq!(all_bits(&got), want);
}
