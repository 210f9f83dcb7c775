//! Gradients of generated programs: the generator of `random.rs` writes
//! programs with a real result; those reverse mode accepts are
//! differentiated, and each gradient program compiled to C must give the
//! evaluator's value and gradient (relative 1e-12) on several inputs.

use crate::common;

use codegen::Config;
use common::generator::{Gen, Rng, T, Tag};
use semantics::Value;

#[test]
fn gradients_of_generated_programs_agree_with_the_evaluator() {
    run(&Config::default(), "random-grad");
}

/// The same gradient programs built with `Config::parallel`, parallel from
/// two iterations on (see `random.rs`).
#[test]
fn gradients_of_generated_programs_agree_with_the_evaluator_in_parallel() {
    run(&common::parallel_from_two(), "random-grad-parallel");
}

fn run(cfg: &Config, name: &str) {
    let cases: usize = std::env::var("CODEGEN_RANDOM_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(48);
    let seed: u64 = std::env::var("CODEGEN_RANDOM_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(7_240_601);
    let mut g = Gen {
        rng: Rng::new(seed),
        fresh: 0,
    };
    let env = vec![
        ("A".to_string(), T::A(Tag("n".into(), 0))),
        ("B".to_string(), T::A(Tag("n".into(), 0))),
        ("x".to_string(), T::R),
    ];
    // Every generated program, differentiated where reverse mode takes it;
    // the gradient programs are printed and compiled together, so one C
    // build serves them all.
    let mut texts = Vec::new();
    for p in 0..cases * 4 {
        if texts.len() == cases {
            break;
        }
        let depth = 2 + g.rng.below(3);
        let body = g.real(&env, depth);
        let text = format!("def p{p} (A : [n]R) (B : [n]R) (x : R) : R =\n  {body}\n");
        let Ok(m) = syntax::compile(syntax::SourceFile {
            name: format!("p{p}.ad"),
            text: text.clone(),
        }) else {
            continue;
        };
        let Some(def) = m.entry(None) else { continue };
        if let Ok(grad) = reverse::gradient(&m, def, &reverse::Config::default()) {
            texts.push((syntax::print::module(&grad), text));
        }
    }
    eprintln!("reverse mode took {} programs", texts.len());
    assert!(
        texts.len() >= cases / 4,
        "reverse mode took only {} programs",
        texts.len()
    );
    let joined: String = texts
        .iter()
        .map(|(t, _)| t.as_str())
        .collect::<Vec<_>>()
        .join("\n");
    let m = common::target_module("gradients.ad", &joined);
    let built = common::build(&m, cfg, name);
    let inputs: &[(&[f64], &[f64], f64)] = &[
        (&[0.5, -1.5, 2.0, 0.25], &[1.0, 0.75, -0.5, 3.0], 0.7),
        (&[1.25], &[-2.0], -1.3),
        (
            &[0.1, 0.2, 0.3, 0.4, 0.5, 0.6],
            &[-0.6, 0.5, -0.4, 0.3, -0.2, 0.1],
            2.0,
        ),
    ];
    let mut failures = Vec::new();
    let mut values = 0;
    for (def, (_, source)) in m.defs.iter().zip(&texts) {
        for (a, b, x) in inputs {
            let args = vec![Value::reals(a), Value::reals(b), Value::Real(*x)];
            match common::agree(&m, &built, def.name.as_str(), &args) {
                Ok(_) => values += 1,
                Err(e) if e.starts_with("both failed") => {}
                Err(e) => failures.push(format!("{e}\n  at {a:?} {b:?} {x}\n  program: {source}")),
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n\n")
    );
    assert!(values >= texts.len(), "only {values} runs produced a value");
}
