//! Parallel loops whose bodies allocate or fail (note [parallel loops] in
//! docs/codegen.md): each thread has an arena and a failure record of its
//! own, and the first failure in iteration order is the call's, as in the
//! sequential code.

use codegen::Config;
use semantics::Value;

use crate::common;

/// A map (`f`) and a `reduce (+)` over a map (`g`) whose elements each
/// write out a scratch array (used twice, so it is not kept delayed) and
/// index it at an input position (the failure). `f`'s sum indexes at
/// constants only, so only its map can fail.
const PROGRAM: &str = "def f (A : [n]R) (idx : [n]Int) : ([n]R, R) =
  let ys = map2 (fun (x, j) ->
    let r = build 4 (fun k -> sin (x * real (k + 1))) in
    r[j] + reduce (+) 0 r) A idx in
  (ys, reduce (+) 0 (map (fun x ->
    let r = build 3 (fun k -> x * real (k + 2)) in
    r[2] * r[0] + reduce (+) 0 r) A))

def g (A : [n]R) (idx : [n]Int) : R =
  reduce (+) 0 (map2 (fun (x, j) ->
    let r = build 4 (fun k -> x * real (k + j)) in
    r[j] * r[0] + reduce (+) 0 r) A idx)
";

fn inputs(n: usize, bad: &[(usize, i64)]) -> Vec<Value> {
    let xs: Vec<f64> = (0..n).map(|i| ((i as f64) * 0.37).cos()).collect();
    let mut idx: Vec<i64> = (0..n as i64).map(|i| i % 3).collect();
    for &(at, j) in bad {
        idx[at] = j;
    }
    vec![
        Value::reals(&xs),
        Value::Array(idx.into_iter().map(Value::Int).collect()),
    ]
}

/// The C of `PROGRAM` built with `Config::parallel` from two iterations.
fn parallel_build(tag: &str) -> (codegen::CProgram, codegen::Built) {
    let m = common::module("parallel_alloc.ad", PROGRAM);
    let cfg = common::parallel_from_two();
    let c = codegen::emit(&m, &cfg).expect("emits");
    let built = common::build(&m, &cfg, tag);
    (c, built)
}

#[test]
fn loops_that_allocate_run_on_threads_with_their_own_arenas() {
    let (c, _) = parallel_build("parallel-alloc-c");
    // The three loops over the points, and no `return` inside a parallel
    // region.
    assert_eq!(
        c.source.matches("if (!ad_workers(ctx").count(),
        3,
        "{}",
        c.source
    );
    assert!(
        c.source.contains("ad_alloc(ad_w"),
        "no allocation in a thread's arena"
    );
    assert!(c.source.contains("goto ad_stop_"), "no failure of a thread");
}

#[test]
fn loops_that_allocate_agree_with_the_sequential_build() {
    let m = common::module("parallel_alloc.ad", PROGRAM);
    let (_, par) = parallel_build("parallel-alloc-values");
    let seq = common::build(&m, &Config::default(), "parallel-alloc-values-seq");
    for n in [0, 1, 3, 1000] {
        let a = inputs(n, &[]);
        common::agree(&m, &par, "g", &a).unwrap_or_else(|e| panic!("n = {n}: {e}"));
        let p = common::agree(&m, &par, "f", &a).unwrap_or_else(|e| panic!("n = {n}: {e}"));
        let s = common::agree(&m, &seq, "f", &a).unwrap_or_else(|e| panic!("n = {n}: {e}"));
        // The map is exact; the sum is chunked (within the evaluator's
        // tolerance, checked by `agree`).
        let (Value::Tuple(p), Value::Tuple(s)) = (p, s) else {
            panic!("not a pair")
        };
        assert_eq!(
            p[0].to_string(),
            s[0].to_string(),
            "n = {n}: the map differs"
        );
    }
}

#[test]
fn the_first_failure_in_iteration_order_is_reported() {
    let m = common::module("parallel_alloc.ad", PROGRAM);
    let (_, par) = parallel_build("parallel-alloc-errors");
    let seq = common::build(&m, &Config::default(), "parallel-alloc-errors-seq");
    // With two threads the chunks are 0..500 and 500..1000: failures in
    // the second chunk only, in both (the first chunk's is reported), and
    // two in one chunk (its first).
    for bad in [
        vec![(700, 5)],
        vec![(300, 9), (700, 5)],
        vec![(100, 8), (200, -1)],
        vec![(999, 4)],
        vec![(0, 7), (999, 4)],
    ] {
        let a = inputs(1000, &bad);
        for entry in ["f", "g"] {
            let p = common::agree(&m, &par, entry, &a);
            let s = common::agree(&m, &seq, entry, &a);
            match (&p, &s) {
                (Err(p), Err(s)) if p.starts_with("both failed") => {
                    assert_eq!(p, s, "{entry} {bad:?}");
                    let (at, j) = bad[0];
                    assert!(
                        p.contains(&format!("index {j}")),
                        "{entry} {bad:?} at {at}: {p}"
                    );
                }
                _ => panic!("{entry} {bad:?}: parallel {p:?}, sequential {s:?}"),
            }
        }
    }
}

/// GMM's per-point sum (`sum (map (fun xi -> logsumexp ..) x)`: each
/// point writes out its k scores) runs on threads with their own arenas,
/// from `PAR_MIN_NESTED` points since its body has loops; before, it
/// allocated and stayed sequential.
#[test]
fn gmm_per_point_loop_is_parallel() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../fixtures/gmm/program.ad");
    let text = std::fs::read_to_string(path).expect("gmm program");
    let m = common::module("gmm.ad", &text);
    let cfg = Config {
        parallel: true,
        ..Config::default()
    };
    let c = codegen::emit(&m, &cfg).expect("emits");
    let per_point = c
        .source
        .lines()
        .any(|l| l.contains("p3_d0 >= 1024") && l.contains("ad_max_threads"));
    assert!(
        per_point,
        "the loop over the points is not parallel from 1024:\n{}",
        c.source
    );
    assert!(
        c.source.contains("if (!ad_workers(ctx"),
        "no threads with their own arenas"
    );
}

/// GMM's gradient (reverse mode and the optimizer, with respect to alphas,
/// means and icf, as the benchmark takes it): its per-point work is one
/// `reduce` whose accumulator holds the gradient's arrays, updated in
/// place. In parallel each thread folds its chunk of the points into an
/// accumulator of its own, and the results are added in thread order;
/// the values agree with the evaluator's within its tolerance.
#[test]
fn gmm_gradient_per_point_reduce_is_parallel() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../fixtures/gmm/program.ad");
    let text = std::fs::read_to_string(path).expect("gmm program");
    let m = common::module("gmm.ad", &text);
    let def = m.def("gmm").expect("gmm");
    let cfg = reverse::Config {
        wrt: Some(vec!["alphas".into(), "means".into(), "icf".into()]),
    };
    let g = reverse::gradient(&m, def, &cfg).expect("reverse mode");
    let g = optimize::optimize(&g, &optimize::Config::default()).expect("optimizes");
    let par = common::parallel_from_two();
    let c = codegen::emit(&g, &par).expect("emits");
    // The loop over the points (`p3_d0`) is a thread's chunk.
    let chunk = c
        .source
        .lines()
        .any(|l| l.contains("ad_split(p3_d0, (int64_t)"));
    assert!(
        chunk,
        "the gradient's loop over the points is not parallel:\n{}",
        c.source
    );
    let built = common::build(&g, &par, "parallel-gmm-grad");
    let (d, k, n) = (3usize, 4usize, 301usize);
    let t = d + d * (d - 1) / 2;
    let num = |i: usize, s: f64| ((i as f64) * s).sin();
    let rows = |r: usize, c: usize, s: f64| {
        Value::Array(
            (0..r)
                .map(|i| Value::reals(&(0..c).map(|j| num(i * c + j + 1, s)).collect::<Vec<_>>()))
                .collect(),
        )
    };
    let args = vec![
        Value::reals(&(0..k).map(|i| num(i + 1, 0.7)).collect::<Vec<_>>()),
        rows(k, d, 0.3),
        rows(k, t, 0.45),
        rows(n, d, 0.11),
        Value::Real(1.0),
        Value::Real(0.0),
        Value::Real(-0.12),
    ];
    let entry = g.defs.last().expect("the gradient").name.to_string();
    common::agree(&g, &built, &entry, &args).unwrap_or_else(|e| panic!("{e}"));
}

/// A `reduce` of arrays by `map2 (+)` is chunked only when `z` is zeros,
/// checked at run time: from ones it is the sequential left fold, bit for
/// bit the default build's.
#[test]
fn array_reductions_are_chunked_only_from_zeros() {
    let text = "def h (X : [n][2]R) (c : R) : [2]R =
  reduce (fun (u, v) -> map2 (+) u v) (map (fun a -> c) X[0]) (map (fun r -> map (fun a -> a * a) r) X)
";
    let m = common::module("array_reduce.ad", text);
    let par = common::build(&m, &common::parallel_from_two(), "parallel-array-reduce");
    let seq = common::build(&m, &Config::default(), "parallel-array-reduce-seq");
    let x = Value::Array(
        (0..1001)
            .map(|i| Value::reals(&[((i as f64) * 0.3).sin(), ((i as f64) * 0.7).cos()]))
            .collect(),
    );
    for c in [0.0, 1.0] {
        let a = vec![x.clone(), Value::Real(c)];
        let p = common::agree(&m, &par, "h", &a).unwrap_or_else(|e| panic!("c = {c}: {e}"));
        let s = common::agree(&m, &seq, "h", &a).unwrap_or_else(|e| panic!("c = {c}: {e}"));
        if c != 0.0 {
            assert_eq!(p.to_string(), s.to_string(), "from ones: not the left fold");
        }
    }
    let c = codegen::emit(&m, &common::parallel_from_two()).expect("emits");
    assert!(
        c.source.contains("if (!ad_workers(ctx"),
        "not parallel:\n{}",
        c.source
    );
}

/// The threads' arenas under AddressSanitizer: no overrun, no use after a
/// thread's region is released, also when a thread fails.
#[test]
fn threads_with_their_own_arenas_are_clean_under_the_sanitizers() {
    let m = common::module("parallel_alloc.ad", PROGRAM);
    let cfg = Config {
        sanitize: true,
        ..common::parallel_from_two()
    };
    let built = common::build(&m, &cfg, "parallel-alloc-sanitized");
    for bad in [vec![], vec![(300, 9), (700, 5)]] {
        let a = inputs(1000, &bad);
        for entry in ["f", "g"] {
            let r = common::agree(&m, &built, entry, &a);
            assert!(
                r.is_ok() || r.as_ref().is_err_and(|e| e.starts_with("both failed")),
                "{entry} {bad:?}: {r:?}"
            );
        }
    }
}
