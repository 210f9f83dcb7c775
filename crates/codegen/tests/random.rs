//! Generated programs: a seeded generator writes well-typed programs that
//! mix every construct the C backend compiles (scalar arithmetic, `let`,
//! tuples, conditionals, maps and their fusion, folds with scalar and pair
//! accumulators, scans, shifts, `build`, `ifold`, indexing, arrays of
//! arrays), and each must give the evaluator's value (relative 1e-12) or
//! the same error on several inputs. Indices are clamped into bounds, so
//! the only errors are size mismatches of dynamic sizes and negative
//! counts, which the generated code reports eagerly too.
//!
//! `CODEGEN_RANDOM_CASES` sets the number of programs (default 48); a
//! failure prints the program text.

use crate::common;

use codegen::Config;
use common::generator::{Gen, Rng, T, Tag};
use semantics::Value;

#[test]
fn generated_programs_agree_with_the_evaluator() {
    run(&Config::default(), "random");
}

/// The same programs built with `Config::parallel`, and parallel from two
/// iterations on, so that these small inputs take the parallel paths (on a
/// machine with more than one core).
#[test]
fn generated_programs_agree_with_the_evaluator_in_parallel() {
    run(&common::parallel_from_two(), "random-parallel");
}

fn run(cfg: &Config, name: &str) {
    let cases: usize = std::env::var("CODEGEN_RANDOM_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(48);
    let seed: u64 = std::env::var("CODEGEN_RANDOM_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20_240_601);
    let mut g = Gen {
        rng: Rng::new(seed),
        fresh: 0,
    };
    let env = vec![
        ("A".to_string(), T::A(Tag("n".into(), 0))),
        ("B".to_string(), T::A(Tag("n".into(), 0))),
        ("x".to_string(), T::R),
        ("k".to_string(), T::I),
    ];
    let mut text = String::new();
    let mut bodies = Vec::new();
    for p in 0..cases {
        let depth = 3 + g.rng.below(3);
        let body = match g.rng.below(3) {
            0 => g.array(&env, depth).0,
            1 => format!("({}, {})", g.real(&env, depth), g.array(&env, depth - 1).0),
            _ => g.real(&env, depth),
        };
        text.push_str(&format!(
            "def p{p} (A : [n]R) (B : [n]R) (x : R) (k : Int) =\n  {body}\n\n"
        ));
        bodies.push(body);
    }
    let m = common::module("random.ad", &text);
    let built = common::build(&m, cfg, name);
    let inputs: &[(&[f64], &[f64], f64, i64)] = &[
        (&[0.5, -1.5, 2.0, 0.25], &[1.0, 0.75, -0.5, 3.0], 0.7, 2),
        (&[1.25], &[-2.0], -1.3, 0),
        (&[], &[], 0.3, 3),
        (
            &[0.1, 0.2, 0.3, 0.4, 0.5, 0.6],
            &[-0.6, 0.5, -0.4, 0.3, -0.2, 0.1],
            2.0,
            5,
        ),
    ];
    let mut failures = Vec::new();
    let mut values = 0;
    for (p, body) in bodies.iter().enumerate() {
        let entry = format!("p{p}");
        for (a, b, x, k) in inputs {
            let args = vec![
                Value::reals(a),
                Value::reals(b),
                Value::Real(*x),
                Value::Int(*k),
            ];
            match common::agree(&m, &built, &entry, &args) {
                Ok(_) => values += 1,
                Err(e) if e.starts_with("both failed") => {}
                Err(e) => {
                    failures.push(format!("{e}\n  at {a:?} {b:?} {x} {k}\n  program: {body}"))
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n\n")
    );
    assert!(values >= cases * 2, "only {values} runs produced a value");
}
