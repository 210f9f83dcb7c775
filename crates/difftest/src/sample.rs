//! The random-program tests of other crates in one loop: programs of the
//! one generator, each with admissible inputs, checked by the caller, the
//! failures listed together with their programs and inputs.

use crate::ast::{GVal, Program};
use crate::generate::{Features, admissible_inputs, gen_program};
use crate::rng::Rng;

/// The number in the environment variable `var`, or `default`: how a test
/// is run with more cases (`UNF_RANDOM_CASES=5000`).
pub fn count_from_env(var: &str, default: u64) -> u64 {
    std::env::var(var)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

/// Runs `check` on `cases` programs returning a real, case `k` generated
/// from `Rng::for_case(seed, k)` with `features(k)` at about 4 to 43
/// nodes, at admissible inputs (with the program's value there, from the
/// generator's own evaluator). Panics listing every failure, or when
/// fewer than half the cases had admissible inputs.
pub fn check_random_programs(
    seed: u64,
    cases: u64,
    features: impl Fn(u64) -> Features,
    mut check: impl FnMut(u64, &Program, &[GVal], f64) -> Result<(), String>,
) {
    let mut failures = Vec::new();
    let mut checked = 0;
    for k in 0..cases {
        let mut rng = Rng::for_case(seed, k);
        let size = 4 + rng.below(40);
        let p = gen_program(&mut rng, size, &features(k));
        let Some((inputs, value)) = admissible_inputs(&mut rng, &p, 20) else {
            continue;
        };
        checked += 1;
        if let Err(e) = check(k, &p, &inputs, value) {
            failures.push(format!("case {k}: {e}\n{}", p.text(Some(&inputs))));
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(checked >= cases / 2, "only {checked} cases had inputs");
}
