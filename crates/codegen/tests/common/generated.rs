//! The generated-program tests' shared part: programs from the project's
//! one random-program generator (`difftest`), with inputs, built together
//! into one C program and compared with the evaluator.

use codegen::Built;
use difftest::{GVal, Program, Rng};
use semantics::Value;
use syntax::Module;

/// `CODEGEN_RANDOM_CASES`, the number of programs (default 48).
pub fn cases() -> usize {
    difftest::count_from_env("CODEGEN_RANDOM_CASES", 48) as usize
}

/// The generator for `CODEGEN_RANDOM_SEED`, or `default`.
pub fn rng(default: u64) -> Rng {
    Rng::new(difftest::count_from_env("CODEGEN_RANDOM_SEED", default))
}

/// Inputs for `p`: two drawn away from its singular points and ties
/// (`difftest::admissible_inputs`), and, where `any` (configurations
/// bit-identical to the evaluator, where a tie cannot break differently),
/// one drawn anywhere, at which both may fail or give infinities.
pub fn inputs(rng: &mut Rng, p: &Program, any: bool) -> Vec<Vec<Value>> {
    let mut out: Vec<Vec<GVal>> = (0..2)
        .filter_map(|_| difftest::admissible_inputs(rng, p, 20).map(|(xs, _)| xs))
        .collect();
    if any {
        out.push(difftest::gen_inputs(rng, p));
    }
    out.iter()
        .map(|xs| xs.iter().map(GVal::to_value).collect())
        .collect()
}

/// One entry to compare: its name, the program text shown on a failure,
/// and its inputs.
pub struct Case {
    pub entry: String,
    pub text: String,
    pub inputs: Vec<Vec<Value>>,
}

/// Runs every case in the evaluator and in `built`; panics listing every
/// disagreement, or when fewer than `min_values` runs gave a value.
pub fn compare(m: &Module, built: &Built, cases: &[Case], min_values: usize) {
    let mut failures = Vec::new();
    let mut values = 0;
    for case in cases {
        for args in &case.inputs {
            match super::agree(m, built, &case.entry, args) {
                Ok(_) => values += 1,
                Err(e) if e.starts_with("both failed") => {}
                Err(e) => {
                    let at: Vec<String> = args.iter().map(|v| v.to_string()).collect();
                    failures.push(format!(
                        "{e}\n  at {}\n  program: {}",
                        at.join(" "),
                        case.text
                    ))
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
    assert!(values >= min_values, "only {values} runs produced a value");
}
