//! The optimizer is linear: the reverse-mode output of a chain of `let`s
//! (one continuation per `let`, each inlined into the next) is optimized
//! in time proportional to its length. Measured in this (debug) build on
//! chains of 2,000, 4,000 and 8,000 multiplications, best of three runs
//! each: linear growth gives a ratio of 4 between the first and the last,
//! quadratic 16; the test allows 10 (the machines are shared, and a larger
//! arena also costs more per node in cache misses). The release-mode benchmark
//! (`cargo bench -p optimize`) times 20,000.

use crate::common;

use optimize::{Config, optimize};
use semantics::Value;
use semantics::cost;

use common::{compile, eval, let_chain_grad, same, verified};

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

/// Linear growth, measured by work rather than time (these machines are
/// shared; `cargo xtask bench scale` reports times): every round is one
/// linear pass, so the rounds must not grow with the chain, and the rewrites
/// and the output must grow in proportion to it.
#[test]
fn let_chain_work_grows_linearly() {
    let runs: Vec<(usize, optimize::Report, usize)> = [2_000, 8_000]
        .into_iter()
        .map(|n| {
            let (out, report) =
                optimize::optimize_report(&compile(&let_chain_grad(n)), &Config::default())
                    .expect("the chain optimizes");
            (n, report, out.exprs.len())
        })
        .collect();
    let (small, large) = (&runs[0], &runs[1]);
    assert!(
        large.1.rounds <= small.1.rounds + 1,
        "rounds grew: {} vs {}",
        small.1.rounds,
        large.1.rounds
    );
    let fired = |r: &optimize::Report| r.fired.values().sum::<usize>() as f64;
    let work_ratio = fired(&large.1) / fired(&small.1).max(1.0);
    assert!(
        work_ratio <= 4.4,
        "4x the chain fired {work_ratio:.2}x the rewrites"
    );
    let size_ratio = large.2 as f64 / small.2.max(1) as f64;
    assert!(
        size_ratio <= 4.4,
        "4x the chain gave {size_ratio:.2}x the output"
    );
}
