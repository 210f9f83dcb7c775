//! Random programs from the project's one generator (`difftest`: the
//! paper's core, and in two cases of three the constructs of Section 7,
//! Appendix A and the rest of the language), each at a point away from its
//! kinks: every check of `difftest::check_case` — reverse mode through UNF
//! (each boundary verified, read back from RON and evaluated directly)
//! against central finite differences, forward mode, the direct macro on
//! its fragment and the optimizer, and the value against the generator's
//! own evaluator. `REVERSE_RANDOM_CASES` sets the number of programs
//! (default 150).

use difftest::{Features, Rng, admissible_inputs, check_case, gen_program};

const SEED: u64 = 0x7265_765f_7261_6e64;

#[test]
fn gradient_matches_forward_mode_and_finite_differences() {
    let cases: u64 = std::env::var("REVERSE_RANDOM_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(150);
    let mut failures = Vec::new();
    let mut checked = 0;
    for k in 0..cases {
        let mut rng = Rng::for_case(SEED, k);
        let feat = Features {
            extended: k % 3 != 0,
            open_reduce: k % 4 == 0,
            ..Features::default()
        };
        let size = 4 + rng.below(40);
        let p = gen_program(&mut rng, size, &feat);
        let Some((inputs, _)) = admissible_inputs(&mut rng, &p, 20) else {
            continue;
        };
        checked += 1;
        if let Err(d) = check_case(&p, &inputs, k % 2 == 0) {
            failures.push(format!("case {k}: {d:?}\n{}", p.text(Some(&inputs))));
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
