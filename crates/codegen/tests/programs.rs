//! Hand-written programs covering each construct the C backend compiles,
//! each checked against the evaluator on a few inputs (empty arrays
//! included), and the run-time errors the evaluator reports.

use crate::common;

use codegen::Config;
use common::{agree, args, module};

/// One module, many definitions: built once, each definition run on
/// several argument lists.
const FEATURES: &str = r#"
def scalars (x : R) (y : R) : R =
  let a = sin x * cos y + tan (x / 4) - exp (y / 3) in
  let b = log (abs x + 1) + sqrt (abs y) + tanh x in
  let c = pow (abs x + 0.5) y + max x y - min x y in
  if a > b && not (c < 0) || x == y then a * b - c else -(a / c)

def ints (k : Int) (j : Int) : (Int, Bool) =
  let a = k * j + k - j in
  ((if a > 0 - k then a else 0 - k) + j - (-j), a >= 0 && k != j)

def tuples (x : R) (y : R) : ((R, R), R) =
  let p = (x + y, x * y) in
  let (u, v) = p in
  ((v, u), p.1 - snd p)

def dotp (A : [n]R) (B : [n]R) : R =
  reduce (+) 0 (map2 (*) A B)

def fused (A : [n]R) : R =
  reduce (fun (a, b) -> max a b) (-1000) (map (fun x -> x * 2) (map (fun y -> y + 1) A))

def shared (A : [n]R) : [n]R =
  let e = map exp A in
  let s = reduce (+) 0 e in
  map (fun x -> x / s) e

def prods (A : [n]R) : (R, [n]R) =
  let s = scanl (*) 1 A in
  let r = scanr (*) 1 (shift1L A) in
  (s[length A], map2 (*) r (shift1R s))

def scans (A : [n]R) : ([n+1]R, [n+1]R) =
  (scanl (fun (acc, x) -> acc * 0.5 + x) 1 A, scanr (fun (x, acc) -> x - acc) 2 A)

def shifts (A : [n]R) : ([n-1]R, [n-1]R, [n-1]R) =
  (shift1L (map (fun x -> x * 3) A), shift1R (map (fun x -> x - 1) A), shift1L A)

def pair_fold (A : [n]R) : (R, R) =
  foldl (fun (p, x) -> (p.1 + x, p.2 * x + 1)) (0, 1) A

def swap_fold (A : [n]R) : (R, R) =
  foldl (fun (p, x) -> (p.2, p.1 + x)) (1, 2) A

def horner (c : [n]R) (x : R) : R =
  foldl (fun (acc, ci) -> acc * x + ci) 0 c

def builds (k : Int) (x : R) : [_]R =
  build k (fun i -> if i > 2 then x else x * 2)

def ifolds (k : Int) : (R, Int) =
  ifold (fun (acc, i) -> (acc.1 + 1 / (1 + acc.1), acc.2 + i)) (1, 0) k

def conds (A : [n]R) (x : R) : [n]R =
  if x > 0 then map (fun a -> a * x) A else A

def literal (x : R) : [3]R =
  [x, x + 1, sin x]

def indexing (A : [n]R) (i : Int) : R =
  A[i] + (map (fun x -> x * x) A)[i]

def matrix (A : [n]R) : [n][n]R =
  map (fun x -> map (fun y -> x * y + 1) A) A

def rowsums (A : [n]R) : [n]R =
  let M = map (fun x -> map (fun y -> x - y) A) A in
  map (fun row -> reduce (+) 0 row) M

def rows (A : [n]R) (i : Int) : ([n]R, R) =
  let M = build (length A) (fun r -> map (fun y -> y + A[r]) (scanl (+) 0 (shift1L A))) in
  let row = M[i] in
  (row, reduce (+) 0 (map (fun rr -> rr[0]) M))

def vec_fold (A : [n]R) : [n]R =
  foldl (fun (acc, x) -> map2 (fun (a, b) -> a * x + b) acc A) (map (fun a -> 0) A) A

def vec_scan (A : [n]R) : [n+1][n]R =
  scanl (fun (acc, x) -> map (fun a -> a + x) acc) A A

def higher (x : R) : R =
  let twice = fun (f : R -> R) -> fun (y : R) -> f (f y) in
  (twice (fun z -> z * z + 1)) x

def lengths (A : [n]R) : Int =
  length A + length (shift1L A) + length (scanl (+) 0 A)

def unit_result (x : R) : () =
  ()

def bools (A : [n]R) : [n]Bool =
  map (fun a -> a > 0) A

def streams (A : [n]R) : (R, R, [n+1]R, [n]R, R) =
  (reduce (+) 0 (scanr (fun (x, acc) -> x + acc * 0.5) 1 A),
   foldl (fun (acc, s) -> acc * 0.5 + s) 0 (scanl (+) 0 (scanl (*) 1 A)),
   map2 (fun (l, r) -> l - r) (scanl (+) 0 A) (scanr (+) 0 A),
   shift1L (scanl (fun (acc, x) -> acc + x * x) 0 A),
   (scanl (+) 0 A)[length A])

def stream_pairs (A : [n]R) : [n+1](R, R) =
  scanr (fun (x, p) -> (p.2 + x, p.1 * x)) (1, 2) A

def views (A : [n]R) (B : [n]R) : ([n]R, [n](R, R), R) =
  let z = map2 (fun (a, b) -> (b, a)) A B in
  (map (fun p -> p.1) z, z, reduce (+) 0 (map (fun p -> let (u, v) = p in v) z))

def stream_rows (A : [n]R) : [n+1][2]R =
  map (fun s -> [s, s * 2]) (scanr (+) 0 A)

def acc_inplace (M : [n][3]R) : ((R, [3]R), [3][3]R) =
  let z = ((0, [0, 0, 0]), [[0, 0, 0], [0, 0, 0], [0, 0, 0]]) in
  reduce (fun (u, v) ->
    let (a, b) = u in
    let (c, e) = v in
    ((a.1 + c.1, map2 (+) a.2 c.2), map2 (fun (p, q) -> map2 (fun (s, t) -> s * 0.5 + t) p q) b e)) z
    (map (fun row -> ((row[0], row), map (fun r -> map (fun s -> s * r) row) row)) M)

def acc_swap (A : [n]R) : ([2]R, [2]R) =
  foldl (fun (u, x) -> (map (fun a -> a + x) u.2, u.1)) ([1, 2], [3, 4]) A

def acc_reads (A : [n]R) : [3]R =
  foldl (fun (u, x) -> map (fun a -> a + u[0] * x) u) [1, 2, 3] A

def scan_last (A : [n]R) : (R, (R, R), [n]R, [n]R, R, [n+1]R, R) =
  let s = scanl (*) 1 A in
  let p = scanl (fun (q, x) -> (q.1 + x, q.2 * x)) (0, 1) A in
  let u = scanl (+) 0 (scanl (*) 2 A) in
  (s[length A], p[length A], shift1R s, map (fun t -> t.1) (shift1L p), s[0], shift1R u, u[length A + 1])
"#;

#[test]
fn every_construct_agrees_with_the_evaluator() {
    let m = module("features.ad", FEATURES);
    let built = common::build(&m, &Config::default(), "features");
    let cases: &[(&str, &[&[&str]])] = &[
        (
            "scalars",
            &[&["0.5", "1.25"], &["-2", "3"], &["1", "1"], &["0", "-0.5"]],
        ),
        ("ints", &[&["3", "4"], &["-7", "2"], &["0", "0"]]),
        ("tuples", &[&["1.5", "-2"]]),
        ("dotp", &[&["[1, 2, 3]", "[4, 5, 6]"], &["[]", "[]"]]),
        ("fused", &[&["[1, -2, 3.5]"], &["[]"]]),
        ("shared", &[&["[0.5, 1.5, -1, 2]"], &["[]"]]),
        ("prods", &[&["[1, 2, 3, 4]"], &["[0.5]"], &["[2, 0, 3]"]]),
        ("scans", &[&["[1, 2, 3]"], &["[]"]]),
        ("shifts", &[&["[1, 2, 3, 4]"], &["[7]"]]),
        ("pair_fold", &[&["[1, 2, 3]"], &["[]"]]),
        ("swap_fold", &[&["[1, 2, 3, 4]"]]),
        ("horner", &[&["[2, -1, 0.5, 3]", "1.5"]]),
        ("builds", &[&["5", "1.5"], &["0", "2"]]),
        ("ifolds", &[&["6"], &["0"]]),
        ("conds", &[&["[1, 2]", "3"], &["[1, 2]", "-3"]]),
        ("literal", &[&["0.25"]]),
        ("indexing", &[&["[1, 2, 3]", "2"], &["[1, 2, 3]", "0"]]),
        ("matrix", &[&["[1, 2, 3]"], &["[]"]]),
        ("rowsums", &[&["[1, 2, 4]"]]),
        ("rows", &[&["[1, 2, 4]", "1"], &["[3, 5]", "0"]]),
        ("vec_fold", &[&["[1, 2, 3]"], &["[]"]]),
        ("vec_scan", &[&["[1, 2]"], &["[]"]]),
        ("higher", &[&["0.5"]]),
        ("lengths", &[&["[1, 2, 3]"], &["[]"]]),
        ("unit_result", &[&["1"]]),
        ("bools", &[&["[1, -2, 0]"]]),
        ("streams", &[&["[1, 2, 3]"], &["[0.5]"], &["[]"]]),
        ("stream_pairs", &[&["[1, 2, 3]"], &["[]"]]),
        ("stream_rows", &[&["[1, 2, 3]"], &["[]"]]),
        ("views", &[&["[1, 2, 3]", "[4, 5, 6]"], &["[]", "[]"]]),
        // Array accumulators updated in place (aligned) and not (a swap
        // of components, a read of another element).
        (
            "acc_inplace",
            &[&["[[1, 2, 3], [0.5, -1, 2], [4, 0, 1]]"], &["[]"]],
        ),
        ("acc_swap", &[&["[1, 2, 3]"], &["[]"]]),
        ("acc_reads", &[&["[1, -2, 0.5]"], &["[]"]]),
        // The last element of a scan written out, read from its
        // accumulator (`reduce-from-scan`'s form).
        ("scan_last", &[&["[1, -2, 0.5, 3]"], &["[]"]]),
    ];
    let mut failures = Vec::new();
    for (entry, arg_lists) in cases {
        for texts in arg_lists.iter() {
            let a = args(&m, entry, texts);
            if let Err(e) = agree(&m, &built, entry, &a) {
                failures.push(format!("{entry} {texts:?}: {e}"));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // Every definition was exercised.
    for def in &m.defs {
        assert!(
            cases.iter().any(|(e, _)| *e == def.name.as_str()),
            "no case for {}",
            def.name
        );
    }
}

#[test]
fn results_are_bit_identical_to_the_evaluator() {
    // No reassociation and no contraction: the same operations in the
    // same order on the same libm.
    let m = module(
        "bits.ad",
        "def f (A : [n]R) : (R, [n]R) =\n  let e = map (fun x -> sin x * exp x + cos x / 3) A in\n  (reduce (+) 0 e, scanl (*) 1 (shift1R e))\n",
    );
    let built = common::build(&m, &Config::default(), "bits");
    let xs: Vec<f64> = (0..257).map(|i| (i as f64 * 0.37).sin() * 3.0).collect();
    let a = vec![semantics::Value::reals(&xs)];
    common::assert_bit_identical(&m, &built, "f", &a, "");
}

#[test]
fn math_functions_of_constants_are_the_run_time_library_s() {
    // gcc folds a math function of a constant with MPFR (correctly
    // rounded); glibc's `tanh` (and sometimes `tan`, `sin`, `cos`) is
    // within an ulp of that, so a folded call could differ from the
    // evaluator's. The constants reach the calls directly and through a
    // fold's first step (fuzz-diff seed 20261130, case 11020: 1 ulp of
    // `tanh 0.7` grown by `tan` to a 4e-7 difference).
    let text = "def f (x : R) : (R, R) =\n  let k = [0.7, 1.1, 2.3, -0.4] in\n  (tanh 0.7 + tan 1.1 + sin 2.3 + cos (-0.4) + x, foldl (fun (a, b) -> tan ((a + x) / tanh a) + b) 0.7 k)\n";
    let m = module("folded.ad", text);
    let built = common::build(&m, &Config::default(), "folded");
    for x in [1.0, 0.25, -3.5] {
        let a = vec![semantics::Value::Real(x)];
        common::assert_bit_identical(&m, &built, "f", &a, &format!("at x = {x}"));
    }
}

#[test]
fn the_last_element_of_a_scan_needs_no_bounds_check() {
    // `S[length A]` of `S = scanl f z A` is the scan's final accumulator:
    // no load, no index site; the other reads of `S` are unchanged.
    let text =
        "def f (A : [n]R) : (R, [n]R) =\n  let s = scanl (*) 1 A in\n  (s[length A], shift1R s)\n";
    let m = module("last.ad", text);
    let prog = codegen::emit(&m, &Config::default()).expect("emits");
    assert!(
        !prog
            .sites
            .iter()
            .any(|s| s.kind == codegen::SiteKind::Index),
        "{}",
        prog.source
    );
    let built = common::build(&m, &Config::default(), "last");
    for xs in [vec![], vec![2.0], vec![1.5, -2.0, 0.25, 3.0]] {
        let a = vec![semantics::Value::reals(&xs)];
        common::assert_bit_identical(&m, &built, "f", &a, "");
    }
}

#[test]
fn derivative_primitives_are_bit_identical_to_the_evaluator() {
    // The Target-only primitives reverse mode writes, at their kinks too:
    // `dabs 0 = -1`, `d2pow` 0 at a non-positive base, `d1pow 0 0` NaN.
    let m = common::target_module(
        "partials.ad",
        "def f (A : [n]R) (B : [n]R) : [n]R =\n  map2 (fun (x, y) -> d1pow x y + 10 * d2pow x y + 100 * d2div x y + 1000 * dtan x + 10000 * dtanh y + 100000 * dabs x) A B\n",
    );
    let built = common::build(&m, &Config::default(), "partials");
    let pts = [-2.0, -0.5, 0.0, 0.3, 1.0, 2.5];
    let (mut xs, mut ys) = (Vec::new(), Vec::new());
    for &x in &pts {
        for &y in &pts {
            xs.push(x);
            ys.push(y);
        }
    }
    let a = vec![semantics::Value::reals(&xs), semantics::Value::reals(&ys)];
    common::assert_bit_identical(&m, &built, "f", &a, "");
}

#[test]
fn run_time_errors_are_the_evaluators() {
    let text = r#"
def oob (A : [n]R) (i : Int) : R =
  A[i]

def oob_delayed (A : [n]R) (i : Int) : R =
  (map (fun x -> x + 1) A)[i]

def mismatch (A : [n]R) (k : Int) : [_]R =
  map2 (+) A (build k (fun i -> 1))

def negative (k : Int) : [_]R =
  build k (fun i -> 0)

def negative_fold (k : Int) : Int =
  ifold (fun (acc, i) -> acc + i) 0 k

def overflow (k : Int) : Int =
  k * k * k

def inner (A : [n]R) (i : Int) : [n]R =
  map (fun x -> x + A[i]) A

def scan_shift_oob (A : [n]R) : R =
  let s = scanl (*) 1 A in
  (shift1R s)[length A] + s[length A]
"#;
    let m = module("errors.ad", text);
    let built = common::build(&m, &Config::default(), "errors");
    let cases: &[(&str, &[&str])] = &[
        ("oob", &["[1, 2]", "2"]),
        ("oob", &["[1, 2]", "-1"]),
        ("oob", &["[]", "0"]),
        ("oob_delayed", &["[1, 2]", "5"]),
        ("mismatch", &["[1, 2]", "3"]),
        ("negative", &["-1"]),
        ("negative_fold", &["-4"]),
        ("overflow", &["3000000"]),
        ("overflow", &["-9223372036854775807"]),
        ("inner", &["[1, 2, 3]", "3"]),
        // The shifted scan has the buffer of the scan, not its length.
        ("scan_shift_oob", &["[1, 2, 3]"]),
        ("scan_shift_oob", &["[]"]),
    ];
    for (entry, texts) in cases {
        let a = args(&m, entry, texts);
        let def = m.def(entry).expect("entry");
        let want = semantics::eval_def(&m, def, &a).expect_err("the evaluator fails");
        match codegen::run(&built, entry, &a) {
            Err(codegen::Error::Eval(got)) => {
                assert_eq!(got, want, "{entry} {texts:?}");
                assert_eq!(got.to_string(), want.to_string());
            }
            other => panic!("{entry} {texts:?}: evaluator {want:?}, C backend {other:?}"),
        }
    }
}

#[test]
fn inputs_are_checked_like_the_evaluators() {
    let m = module(
        "inputs.ad",
        "def f (A : [n]R) (B : [n]R) : R =\n  reduce (+) 0 (map2 (*) A B)\n",
    );
    let built = common::build(&m, &Config::default(), "inputs");
    let inputs = vec![
        ("A".to_string(), semantics::Value::reals(&[1.0, 2.0])),
        ("B".to_string(), semantics::Value::reals(&[1.0])),
    ];
    let want = semantics::eval_entry(&m, None, &inputs).expect_err("sizes differ");
    let got = codegen::run_entry(&built, None, &inputs).expect_err("sizes differ");
    assert_eq!(got.to_string(), want.to_string());
    let missing = codegen::run_entry(&built, None, &inputs[..1]).expect_err("B missing");
    assert_eq!(
        missing.to_string(),
        semantics::eval_entry(&m, None, &inputs[..1])
            .expect_err("B missing")
            .to_string()
    );
}

#[test]
fn unsupported_constructs_are_refused_with_their_span() {
    let text = "def f (x : R) : R =\n  let g = if x > 0 then (fun (y : R) -> y) else (fun (y : R) -> -y) in\n  g x\n";
    let m = module("unsupported.ad", text);
    match codegen::emit(&m, &Config::default()) {
        Err(codegen::Error::Unsupported { span, what }) => {
            assert!(what.contains("function"), "{what}");
            assert!(text[span.lo as usize..span.hi as usize].starts_with("if x > 0"));
        }
        other => panic!("expected an unsupported-construct error, got {other:?}"),
    }
    let text = "def f (g : R -> R) (x : R) : R =\n  g x\n";
    let m = module("unsupported2.ad", text);
    match codegen::emit(&m, &Config::default()) {
        Err(codegen::Error::Unsupported { what, .. }) => {
            assert!(what.contains("function type"), "{what}")
        }
        other => panic!("expected an unsupported-construct error, got {other:?}"),
    }
}

#[test]
fn parallel_loops_agree_with_the_evaluator() {
    // Large enough for the parallel paths (the threshold is 32768 elements).
    let m = module(
        "parallel.ad",
        "def f (A : [n]R) : (R, [n]R, R) =\n  let s = reduce (+) 0 (map (fun x -> x * x + 1) A) in\n  (s, map (fun x -> sin x * s) A, reduce (fun (a, b) -> max a b) (-1) A)\n",
    );
    let cfg = Config {
        parallel: true,
        shared_library: true,
        ..Config::default()
    };
    let c = codegen::emit(&m, &cfg).expect("emits");
    assert!(c.source.contains("omp parallel for"), "no parallel map");
    assert!(
        c.source.contains("omp parallel num_threads"),
        "no parallel reduction"
    );
    let built = codegen::build(&c, &common::dir("parallel"), &cfg).expect("builds with OpenMP");
    assert!(built.commands.iter().all(|c| c.contains("-fopenmp")));
    let xs: Vec<f64> = (0..100_003)
        .map(|i| ((i as f64) * 0.61).sin().abs())
        .collect();
    for n in [xs.len(), 5] {
        let a = vec![semantics::Value::reals(&xs[..n])];
        agree(&m, &built, "f", &a).unwrap_or_else(|e| panic!("n = {n}: {e}"));
    }
}

#[test]
fn reassociated_reductions_agree_with_the_evaluator() {
    let m = module(
        "lanes.ad",
        "def f (A : [n]R) (k : Int) : (R, R, (R, R)) =\n  (reduce (+) 0 (map (fun x -> x * x) A),\n   reduce (fun (a, b) -> max a b) (-1) (build (length A) (fun i -> A[i] * 2)),\n   reduce (fun (p, q) -> (p.1 + q.1, p.2 * q.2)) (0, 1) (map (fun x -> (x, 1 + x * 0.001)) A))\n",
    );
    let cfg = Config {
        reassociate: true,
        shared_library: true,
        ..Config::default()
    };
    let c = codegen::emit(&m, &cfg).expect("emits");
    assert!(c.source.contains("+= 4"), "no reduction in lanes");
    let built = codegen::build(&c, &common::dir("lanes"), &cfg).expect("builds");
    let xs: Vec<f64> = (0..1003)
        .map(|i| ((i as f64) * 0.37).cos().abs() + 0.1)
        .collect();
    for n in [0, 1, 3, 4, 5, 1003] {
        let a = vec![semantics::Value::reals(&xs[..n]), semantics::Value::Int(2)];
        agree(&m, &built, "f", &a).unwrap_or_else(|e| panic!("n = {n}: {e}"));
    }
}

#[test]
fn eval_entry_prints_what_the_evaluator_prints() {
    let text = "def f (A : [n]R) (x : R) : (R, [n]R) =\n  (reduce (+) 0 (map (fun a -> a * x) A), map (fun a -> a / 3) A)\n";
    let m = module("eval.ad", text);
    let inputs = vec![
        (
            "A".to_string(),
            semantics::Value::reals(&[0.1, 0.2, 1e-300, -7.5]),
        ),
        ("x".to_string(), semantics::Value::Real(0.3)),
    ];
    let want = semantics::eval_entry(&m, None, &inputs).expect("evaluates");
    let got = codegen::eval_entry(
        &m,
        None,
        &inputs,
        &Config::default(),
        &common::dir("eval-entry"),
    )
    .expect("runs");
    assert_eq!(got.to_string(), want.to_string());
    let missing = codegen::eval_entry(
        &m,
        Some("g"),
        &inputs,
        &Config::default(),
        &common::dir("eval-entry"),
    );
    assert!(matches!(missing, Err(codegen::Error::NoSuchEntry { .. })));
}

#[test]
fn vector_math_and_vector_reductions_agree_with_the_evaluator() {
    let m = module(
        "vector.ad",
        "def f (A : [n]R) : (R, [n]R, R) =\n  (reduce (+) 0 (map (fun x -> sin x * exp x) A),\n   map (fun x -> cos x * exp x + sin x * exp x) A,\n   reduce (*) 1 (map (fun x -> 1 + tanh x * 0.001) A))\n",
    );
    let cfg = Config {
        reassociate: true,
        vector_math: true,
        native: true,
        shared_library: true,
        ..Config::default()
    };
    let c = codegen::emit(&m, &cfg).expect("emits");
    assert!(
        c.source.contains("omp simd reduction(+:"),
        "no vector reduction"
    );
    let built = codegen::build(&c, &common::dir("vector"), &cfg).expect("builds with libmvec");
    assert!(built.commands.iter().any(|c| c.contains("-lmvec")));
    let xs: Vec<f64> = (0..1003).map(|i| ((i as f64) * 0.37).sin()).collect();
    for n in [0, 1, 7, 1003] {
        let a = vec![semantics::Value::reals(&xs[..n])];
        agree(&m, &built, "f", &a).unwrap_or_else(|e| panic!("n = {n}: {e}"));
    }
}

#[test]
fn parameters_of_every_ground_type_cross_the_boundary() {
    let text = "def f (K : [n]Int) (M : [n][2]R) (p : (R, Int)) (b : Bool) (E : [m]([2]R, Bool)) : ([n]Int, [2][n]R, (Int, R), [m]Bool) =\n  let (r, k) = p in\n  (map (fun i -> i * k) K,\n   [map (fun row -> row[0] * r) M, map (fun row -> row[1]) M],\n   (length E + k, if b then r else -r),\n   map (fun e -> e.2 && e.1[1] > 0) E)\n";
    let m = module("ground.ad", text);
    let built = common::build(&m, &Config::default(), "ground");
    let cases: &[&[&str]] = &[
        &[
            "[1, -2, 3]",
            "[[1, 2], [3, 4], [5, -6]]",
            "(0.5, 3)",
            "true",
            "[([1, 2], true), ([3, -4], true)]",
        ],
        &["[]", "[]", "(-1.5, -2)", "false", "[]"],
    ];
    for texts in cases {
        agree(&m, &built, "f", &args(&m, "f", texts)).unwrap_or_else(|e| panic!("{texts:?}: {e}"));
    }
}

#[test]
fn deep_let_chains_compile() {
    // A long chain of lets is a deep tree; every pass over it is guarded.
    let mut text = String::from("def f (x : R) : R =\n");
    for k in 0..3000 {
        let prev = if k == 0 {
            "x".to_string()
        } else {
            format!("y{}", k - 1)
        };
        text.push_str(&format!("  let y{k} = {prev} * 1.0001 + 0.5 in\n"));
    }
    text.push_str("  y2999\n");
    let m = module("deep.ad", &text);
    let built = common::build(&m, &Config::default(), "deep");
    agree(&m, &built, "f", &[semantics::Value::Real(0.25)]).unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn histograms_of_rows_are_the_evaluators_bit_for_bit_and_fail_as_it_does() {
    let m = module(
        "rows.ad",
        "def f (d : [m][k]R) (is : [n]Int) (v : [n][j]R) : [m][k]R = hist_add_rows d is v\n",
    );
    let built = common::build(&m, &Config::default(), "rows");
    let def = m.def("f").expect("f");
    let (mm, k, n) = (5usize, 3usize, 200usize);
    let row = |i: usize, len: usize| {
        let xs: Vec<f64> = (0..len)
            .map(|c| ((i * 7 + c) as f64 * 0.37).sin() * 1e3)
            .collect();
        semantics::Value::reals(&xs)
    };
    let d = semantics::Value::array((0..mm).map(|i| row(i, k)).collect());
    let is: Vec<semantics::Value> = (0..n)
        .map(|j| semantics::Value::Int((j as i64 * 13) % 7 - 1))
        .collect();
    let v = semantics::Value::array((0..n).map(|j| row(j + 11, k)).collect());
    let a = vec![d.clone(), semantics::Value::array(is.clone()), v];
    let want = semantics::eval_def(&m, def, &a).expect("evaluates");
    let got = codegen::run(&built, "f", &a).expect("runs");
    assert_eq!(want, got);
    assert_eq!(want.to_string(), got.to_string());
    // A row of another length, in range: the evaluator's error.
    let bad = semantics::Value::array((0..n).map(|j| row(j, k + 1)).collect());
    let a = vec![d, semantics::Value::array(is), bad];
    let want = semantics::eval_def(&m, def, &a).expect_err("rows differ");
    match codegen::run(&built, "f", &a) {
        Err(codegen::Error::Eval(got)) => assert_eq!(got, want),
        other => panic!("evaluator {want:?}, C backend {other:?}"),
    }
}

/// `max` and `min` of reals are the runtime's `ad_max` and `ad_min`, bit
/// for bit the evaluator's (`syntax::derivatives::max`, `min`): the other
/// operand when one is NaN, and of +0 and -0 in either order `max` is +0
/// and `min` -0. So both are associative, and a `reduce max` split into
/// lanes (the reassociate configuration) is the left fold exactly, the
/// sign of a zero included (libm's `fmax` returns its first operand on a
/// tie, which made the lanes' result depend on where the zeros were).
#[test]
fn max_and_min_of_zeros_and_nans_are_the_evaluator_s_bit_for_bit() {
    let text = "def f (x : R) (y : R) : (R, R) =\n  (max x y, min x y)\n\ndef r (A : [n]R) : (R, R) =\n  (reduce (fun (a, b) -> max a b) (0 - 1) A, reduce (fun (a, b) -> min a b) 1 A)\n";
    let m = module("maxmin.ad", text);
    let specials = [0.0, -0.0, f64::NAN, 1.0, f64::NEG_INFINITY];
    // Exact values, independently of the evaluator.
    let eval = |x: f64, y: f64| {
        let a = vec![semantics::Value::Real(x), semantics::Value::Real(y)];
        semantics::eval_def(&m, m.def("f").expect("f"), &a)
            .expect("evaluates")
            .to_string()
    };
    assert_eq!(eval(-0.0, 0.0), "(0, -0)");
    assert_eq!(eval(0.0, -0.0), "(0, -0)");
    assert_eq!(eval(f64::NAN, 1.0), "(1, 1)");
    assert_eq!(eval(-0.0, f64::NAN), "(-0, -0)");
    let zeros: Vec<Vec<f64>> = (0..64u32)
        .map(|bits| {
            (0..9)
                .map(|i| match (bits >> (i % 6)) & 1 {
                    0 => 0.0,
                    _ if i == 7 && bits % 5 == 0 => f64::NAN,
                    _ => -0.0,
                })
                .collect()
        })
        .collect();
    for (tag, cfg) in [
        ("default", Config::default()),
        (
            "lanes",
            Config {
                reassociate: true,
                ..Config::default()
            },
        ),
    ] {
        let built = common::build(&m, &cfg, &format!("maxmin-{tag}"));
        for x in specials {
            for y in specials {
                let a = vec![semantics::Value::Real(x), semantics::Value::Real(y)];
                let got = codegen::run(&built, "f", &a).expect("runs").to_string();
                assert_eq!(got, eval(x, y), "{tag}: max and min of {x:?} and {y:?}");
            }
        }
        for xs in &zeros {
            let a = vec![semantics::Value::reals(xs)];
            common::assert_bit_identical(&m, &built, "r", &a, &format!("{tag}: {xs:?}"));
        }
    }
}

/// Reverse mode's winner of a `max` or `min` reduction (note [winner by
/// scans], crates/unf/src/raise/select.rs: two scans, the fold itself
/// where a NaN is present) runs in C as in the evaluator, bit for bit, in
/// the default and the fast configurations: arrays of ties, signed zeros,
/// infinities and NaN at pseudo-random places, long enough for the
/// vectorized scans' blocks and rest.
#[test]
fn reduction_winners_are_the_evaluator_s_in_c() {
    let text = "def f (z : R) (x : [n]R) : R =\n  reduce (fun (a, b) -> max a b) z x + 2 * reduce (fun (a, b) -> min a b) (0 - z) x\n";
    let m = module("winner.ad", text);
    let def = m.defs.last().expect("f").clone();
    let g = reverse::gradient(&m, &def, &reverse::Config::default()).expect("differentiates");
    let o = optimize::optimize(&g, &optimize::Config::default()).expect("optimizes");
    let name = o.defs.last().expect("the gradient").name.to_string();
    let vals = [
        -1.0,
        -0.0,
        0.0,
        3.0,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
    ];
    let mut seed = 12345u64;
    let mut next = move || {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (seed >> 33) as usize
    };
    let mut cases = Vec::new();
    for n in [0usize, 1, 2, 7, 8, 9, 31, 64] {
        for _ in 0..12 {
            // A NaN in a third of the arrays, never in the others.
            let nan = next() % 3 == 0;
            let x: Vec<f64> = (0..n)
                .map(|_| vals[next() % if nan { vals.len() } else { vals.len() - 1 }])
                .collect();
            cases.push((vals[next() % vals.len()], x));
        }
    }
    for (tag, cfg) in [
        ("default", Config::default()),
        (
            "fast",
            Config {
                reassociate: true,
                vector_math: true,
                native: true,
                ..Config::default()
            },
        ),
    ] {
        let built = common::build(&o, &cfg, &format!("winner-{tag}"));
        for (z, x) in &cases {
            let a = vec![semantics::Value::Real(*z), semantics::Value::reals(x)];
            common::assert_bit_identical(
                &o,
                &built,
                &name,
                &a,
                &format!("{tag}: z = {z:?}, x = {x:?}"),
            );
        }
    }
}

/// In the reassociate configuration a vector reduction nested in another
/// loop runs 4 lanes wide (`simdlen(4)`, `imp::NESTED_SIMD_WIDTH`: short
/// rows, such as kmeans' distances over d = 8, were more than twice as
/// slow at gcc's widest vectors), and one at the top of the function at
/// gcc's width; the values are the evaluator's within rounding.
#[test]
fn nested_vector_reductions_are_four_lanes_wide() {
    let text = "def f (A : [n][d]R) (x : [d]R) : (R, [n]R) =\n  (reduce (+) 0 (map (fun a -> a * a) x),\n   map (fun r -> reduce (+) 0 (map2 (*) r x)) A)\n";
    let m = module("widths.ad", text);
    let cfg = Config {
        reassociate: true,
        ..Config::default()
    };
    let c = codegen::emit(&m, &cfg).expect("emits");
    let pragmas: Vec<&str> = c
        .source
        .lines()
        .map(str::trim)
        .filter(|l| l.starts_with("AD_PRAGMA(omp simd"))
        .collect();
    assert_eq!(pragmas.len(), 2, "{}", c.source);
    assert_eq!(
        pragmas.iter().filter(|l| l.contains("simdlen(4)")).count(),
        1,
        "{pragmas:?}"
    );
    let built = common::build(&m, &cfg, "widths");
    for (rows, d) in [(0, 3), (3, 1), (5, 8), (2, 19)] {
        let a: Vec<Vec<f64>> = (0..rows)
            .map(|i| (0..d).map(|j| ((i * d + j) as f64 * 0.31).sin()).collect())
            .collect();
        let x: Vec<f64> = (0..d).map(|j| 1.0 + j as f64 * 0.1).collect();
        let args = vec![
            semantics::Value::array(a.iter().map(|r| semantics::Value::reals(r)).collect()),
            semantics::Value::reals(&x),
        ];
        agree(&m, &built, "f", &args).unwrap_or_else(|e| panic!("{rows} x {d}: {e}"));
    }
}
