//! Random programs from the project's one generator (`difftest`: the
//! paper's core, and in two cases of three the constructs of Section 7,
//! Appendix A and the rest of the language), each at a point away from its
//! kinks: every check of `difftest::check_case` — reverse mode through UNF
//! (each boundary verified, read back from RON and evaluated directly)
//! against central finite differences, forward mode, the direct macro on
//! its fragment and the optimizer, and the value against the generator's
//! own evaluator. `REVERSE_RANDOM_CASES` sets the number of programs
//! (default 150).

use difftest::{Features, check_case, check_random_programs, count_from_env};

#[test]
fn gradient_matches_forward_mode_and_finite_differences() {
    let features = |k: u64| Features {
        extended: !k.is_multiple_of(3),
        open_reduce: k.is_multiple_of(4),
        ..Features::default()
    };
    check_random_programs(
        0x7265_765f_7261_6e64,
        count_from_env("REVERSE_RANDOM_CASES", 150),
        features,
        |k, p, inputs, _| {
            check_case(p, inputs, k.is_multiple_of(2))
                .map(|_| ())
                .map_err(|d| format!("{d:?}"))
        },
    );
}
