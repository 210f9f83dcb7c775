//! Gradients of generated programs: the project's random-program generator
//! (`difftest`, `Features::default()`) writes programs with a real result;
//! reverse mode differentiates them (through UNF, as the driver does), and each gradient program compiled to
//! C must give the evaluator's value and gradient (relative 1e-12) on
//! several inputs.

use crate::common;

use codegen::Config;
use common::generated::{self, Case};
use difftest::{Features, gen_program};

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
    let count = generated::cases();
    let mut rng = generated::rng(7_240_601);
    let feat = Features::default();
    // Every generated program's gradient; the gradient programs are
    // printed and compiled together, so one C build serves them all.
    let mut texts = Vec::new();
    let mut cases = Vec::new();
    for k in 0..count {
        let size = 6 + rng.below(30);
        let p = gen_program(&mut rng, size, &feat);
        let source = p.definition(&format!("p{k}"));
        let m = common::module(&format!("p{k}.ad"), &source);
        let def = m.entry(None).expect("a definition");
        let grad = difftest::paths::unf_program(&m, def, &reverse::Config::default())
            .unwrap_or_else(|e| panic!("reverse mode refuses a generated program: {e}\n{source}"));
        texts.push(syntax::print::module(&grad));
        let entry = grad.defs.last().expect("the gradient").name.to_string();
        let inputs = generated::inputs(&mut rng, &p, !cfg.parallel);
        cases.push(Case {
            entry,
            text: source,
            inputs,
        });
    }
    let m = common::target_module("gradients.ad", &texts.join("\n"));
    let built = common::build(&m, cfg, name);
    generated::compare(&m, &built, &cases, count);
}
