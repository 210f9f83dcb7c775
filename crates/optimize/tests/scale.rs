//! The optimizer is linear: the reverse-mode output of a chain of `let`s
//! (one continuation per `let`, each inlined into the next) is optimized
//! in time proportional to its length. Measured in this (debug) build on
//! chains of 2,000, 4,000 and 8,000 multiplications, best of three runs
//! each: linear growth gives a ratio of 4 between the first and the last,
//! quadratic 16; the test allows 10 (the machines are shared, and a larger
//! arena also costs more per node in cache misses). The release-mode benchmark
//! (`cargo bench -p optimize`) times 20,000.

mod common;

use std::time::{Duration, Instant};

use optimize::{Config, optimize};
use semantics::Value;
use semantics::cost;

use common::{compile, eval, let_chain_grad, same, verified};

fn best_time(m: &syntax::Module) -> Duration {
    // The verifier (on by default) is timed by its own crate's tests.
    let cfg = Config {
        verify: false,
        ..Config::default()
    };
    (0..3)
        .map(|_| {
            let start = Instant::now();
            let out = optimize(m, &cfg).expect("optimizes");
            let t = start.elapsed();
            drop(out);
            t
        })
        .min()
        .expect("three runs")
}

#[test]
fn let_chain_is_optimized_correctly() {
    let n = 50;
    let m = compile(&let_chain_grad(n));
    let out = optimize(&m, &Config::default()).expect("optimizes");
    verified(&out, "the optimized chain");
    let def = out.entry(None).expect("a definition");
    cost::check_lemma_5_3(&out, def).expect("no lambda is left");
    let x = 1.01f64;
    let inputs = vec![("x".to_string(), Value::Real(x))];
    let expected = Value::tuple(vec![
        Value::Real(x.powi(n as i32 + 1)),
        Value::Real((n as f64 + 1.0) * x.powi(n as i32)),
    ]);
    for module in [&m, &out] {
        let got = eval(module, &inputs).expect("evaluates");
        assert!(same(&got, &expected), "{got:?} is not {expected:?}");
    }
}

#[test]
fn let_chain_time_grows_linearly() {
    let times: Vec<(usize, Duration)> = [2_000, 4_000, 8_000]
        .into_iter()
        .map(|n| (n, best_time(&compile(&let_chain_grad(n)))))
        .collect();
    let ratio = times[2].1.as_secs_f64() / times[0].1.as_secs_f64().max(1e-6);
    assert!(
        ratio < 10.0,
        "optimizing 4x the chain took {ratio:.1}x the time (linear: 4): {times:?}"
    );
}
