//! Forward-mode gradients agree with central finite differences on the
//! programs of the one random-program generator (`difftest::gen_program`):
//! scalar operations (smooth and not), `if`, `let`, tuples, lambdas
//! applied directly, bound and passed to other lambdas
//! (`Features::higher_order`), every array builtin (`Features::extended`)
//! and the derivative constructs nested inside (`Features::derivatives`),
//! over every signature the generator draws (reals, pairs, arrays of
//! reals, of tuples and of arrays).
//!
//! For each program, the gradient from `grad_program` (both seeding modes)
//! is compared with difftest's central differences of the program with its
//! constructs expanded, component by component of the flattened inputs; a
//! component whose difference quotients do not settle, or whose forward
//! and backward quotients disagree (a kink of `abs`, `max`, `if` within the
//! step, or violent curvature), is inconclusive and skipped, since no
//! difference quotient says anything there (Remark 182.3). `jvp` along a
//! random direction must give the inner product of that direction with the
//! gradient. The test counts the components compared, skipped and
//! compared with a non-zero derivative, and fails when too few were
//! compared, so that it cannot pass on programs that say nothing.

use crate::common::verified;

use std::collections::BTreeMap;

use difftest::paths::{
    Gradient, ad_agree, fd_agree, finite_differences, flat, inconclusive, run_gradient,
    source_value, unflatten,
};
use difftest::{Features, GVal, Program, Rng, check_random_programs, count_from_env};
use forward::{Config, Mode};
use semantics::Value;
use syntax::Module;

/// The seed of the programs (the same on every run: the test asserts how
/// many components were compared, which a fresh draw could miss).
const SEED: u64 = 1823;

/// Components compared with finite differences, skipped as inconclusive,
/// and compared with a non-zero derivative.
#[derive(Debug, Default)]
struct Counts {
    compared: usize,
    skipped: usize,
    nonzero: usize,
}

/// Lambdas, every array builtin, and derivative constructs nested up to
/// two deep.
fn features() -> Features {
    Features {
        higher_order: true,
        derivatives: true,
        ..Features::default()
    }
}

/// The program compiled, its derivative constructs expanded (`grad_rev`
/// and `vjp_rev` by reverse mode, the others by this crate), its lambdas
/// kept: what forward mode differentiates and finite differences
/// evaluate.
fn expanded(p: &Program) -> Result<Module, String> {
    let m = p.compile().map_err(|e| format!("does not compile: {e}"))?;
    let m = adrev::passes::expand(&m).map_err(|e| format!("expand: {e}"))?;
    verified(&m);
    Ok(m)
}

/// Checks one program at `inputs`; `Err` describes a disagreement.
fn check(p: &Program, inputs: &[GVal], rng: &mut Rng, counts: &mut Counts) -> Result<(), String> {
    let m = expanded(p)?;
    let def = m.entry(None).expect("a definition").clone();
    let named = p.named_inputs(inputs);
    // The value of the expanded program (the generator's evaluator
    // computes derivative constructs by finite differences, so its value
    // is close, not equal: difftest's own suite compares the two).
    let value = source_value(&m, &def, &named)?;
    let mut grads: Vec<Gradient> = Vec::new();
    for mode in [Mode::Passes, Mode::Vectorised] {
        let cfg = Config {
            mode,
            ..Config::default()
        };
        let g = forward::grad_program_with(&m, &def, None, &cfg)
            .map_err(|e| format!("{mode:?}: {e}"))?;
        verified(&g);
        let out = run_gradient(&g, &named).map_err(|e| format!("{mode:?}: {e}"))?;
        if !semantics::reals_close(out.value, value, 1e-9, 1e-12) {
            return Err(format!("{mode:?}: value {} vs {value}", out.value));
        }
        grads.push(out);
    }
    ad_agree(&grads[0].grads, &grads[1].grads).map_err(|e| format!("passes vs vectorised: {e}"))?;
    let ad = &grads[0].grads;
    let wrt: Vec<usize> = (1..=def.params.len()).collect();
    let fd = finite_differences(&m, &def, &named, &wrt)?;
    fd_agree(ad, &fd).map_err(|e| format!("forward mode vs finite differences: {e}"))?;
    let skipped = inconclusive(&fd);
    counts.skipped += skipped;
    counts.compared += flat(ad).len() - skipped;
    let errors = flat(&fd.errors);
    counts.nonzero += flat(ad)
        .iter()
        .zip(&errors)
        .filter(|(g, e)| **g != 0.0 && e.is_finite())
        .count();
    check_jvp(&m, &named, ad, rng)
}

/// `jvp` along a random direction shaped like the inputs is the inner
/// product of the direction with the gradient `ad`.
fn check_jvp(
    m: &Module,
    named: &[(String, Value)],
    ad: &[Value],
    rng: &mut Rng,
) -> Result<(), String> {
    let def = m.entry(None).expect("a definition");
    let j = forward::jvp(m, def).map_err(|e| format!("jvp: {e}"))?;
    verified(&j);
    let values: Vec<Value> = named.iter().map(|(_, v)| v.clone()).collect();
    let dir: Vec<f64> = flat(&values).iter().map(|_| rng.range(-1.5, 1.5)).collect();
    let mut at = 0;
    let tangents: Vec<Value> = values.iter().map(|v| unflatten(v, &dir, &mut at)).collect();
    let params = &j.entry(None).expect("the jvp definition").params;
    let inputs: Vec<(String, Value)> = params
        .iter()
        .map(|p| p.name.to_string())
        .zip(values.into_iter().chain(tangents))
        .collect();
    let out = semantics::eval_entry(&j, None, &inputs).map_err(|e| format!("jvp eval: {e}"))?;
    let pair = flat(&[out]);
    let expected: f64 = flat(ad).iter().zip(&dir).map(|(g, d)| g * d).sum();
    let scale = 1.0f64.max(expected.abs());
    if expected.is_finite() && (pair[1] - expected).abs() > 1e-8 * scale {
        return Err(format!(
            "jvp tangent {} vs <dir, grad> = {expected}",
            pair[1]
        ));
    }
    Ok(())
}

#[test]
fn forward_gradients_agree_with_central_differences() {
    let cases = count_from_env("FORWARD_RANDOM_CASES", 160);
    let mut counts = Counts::default();
    let mut constructs = BTreeMap::new();
    check_random_programs(
        SEED,
        cases,
        |_| features(),
        |k, p, inputs, _| {
            p.count(&mut constructs);
            let mut rng = Rng::for_case(SEED ^ 0x6a76, k);
            check(p, inputs, &mut rng, &mut counts)
        },
    );
    if std::env::var("FWD_STATS").is_ok() {
        eprintln!("{counts:?}\n{constructs:?}");
    }
    // Not vacuous: most components compared, and about one a case with a
    // slope (many components are read by no operation, or only by
    // comparisons: their derivative is 0, and compared so; 155 of 882 in
    // 160 cases when this was written).
    assert!(
        counts.compared >= 4 * cases as usize && counts.compared >= 4 * counts.skipped,
        "too few components compared: {counts:?}"
    );
    assert!(
        counts.nonzero >= cases as usize * 3 / 4,
        "too few non-zero derivatives compared: {counts:?}"
    );
    // The programs reach the constructs this crate transforms.
    for construct in [
        "lambda-applied",
        "lambda-bound",
        "lambda-passed",
        "if",
        "let",
        "proj",
        "map",
        "map2",
        "reduce",
        "foldl",
        "scanl",
        "scanr",
        "shift1L",
        "shift1R",
        "build",
        "ifold",
        "length",
        "index",
        "abs",
        "max",
        "pow",
        "diff",
        "grad",
        "jvp",
        "vjp",
        "grad_rev",
        "vjp_rev",
        "forward over forward",
        "forward over reverse",
    ] {
        assert!(
            constructs.contains_key(construct),
            "no program of {cases} has `{construct}`: {constructs:?}"
        );
    }
}
