//! Generated programs: the project's random-program generator
//! (`difftest`, every construct of the language with
//! `Features::default()`: scalar operators, `let` and tuple patterns,
//! conditionals, maps, folds and `reduce` of scalars, tuples and arrays,
//! scans, shifts, `build`, `ifold`, `while`, indexing, arrays of arrays and
//! of tuples, `scatter` and the histograms) writes programs returning a
//! real, an array or a tuple; each, built into one C program, must give
//! the evaluator's value (relative 1e-12) or the same error on several
//! inputs. With `Features::counts`, `ifold` and `build` also count to
//! numbers computed from reals: arrays of sizes known only at run time,
//! and negative counts, errors both must report alike (the inputs drawn
//! anywhere, besides the admissible ones, reach them).
//!
//! `CODEGEN_RANDOM_CASES` sets the number of programs (default 48),
//! `CODEGEN_RANDOM_SEED` the seed; a failure prints the program text.

use crate::common;

use codegen::Config;
use common::generated::{self, Case};
use difftest::{Features, gen_program, gen_vector_program};

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
    let count = generated::cases();
    let mut rng = generated::rng(20_240_601);
    let feat = Features {
        counts: true,
        ..Features::default()
    };
    let mut text = String::new();
    let mut cases = Vec::new();
    for k in 0..count {
        let size = 8 + rng.below(40);
        let p = if rng.below(3) == 0 {
            gen_vector_program(&mut rng, size, &feat)
        } else {
            gen_program(&mut rng, size, &feat)
        };
        let entry = format!("p{k}");
        let def = p.definition(&entry);
        text.push_str(&def);
        text.push('\n');
        let inputs = generated::inputs(&mut rng, &p, !cfg.parallel);
        cases.push(Case {
            entry,
            text: def,
            inputs,
        });
    }
    let m = common::module("random.ad", &text);
    let built = common::build(&m, cfg, name);
    generated::compare(&m, &built, &cases, count);
}
