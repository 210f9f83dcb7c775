//! The generated Source programs of the optimizer's pipeline tests: the
//! one random-program generator (`difftest::gen_program`), restricted to
//! the direct macro's language (docs/direct.md: the paper's core, where
//! Theorem 5.4 is stated), as text with admissible inputs in `-- at`
//! comments. Scalar programs read reals and pairs of reals only (no array
//! operation: NAO 0); array programs also arrays, with `map`, `map2`,
//! `reduce` and `foldl` nested up to two deep.

use difftest::{Features, admissible_inputs, gen_program};
use syntax::Prim;

/// The real operators of the paper's cost model (seeds/000 Section 5),
/// whose partial derivatives cost about what the operator does; `atan2`,
/// `lgamma`, ... have partials several times dearer, outside Theorem 5.4's
/// constants.
const PAPER_OPS: [Prim; 16] = [
    Prim::Add,
    Prim::Sub,
    Prim::Mul,
    Prim::Div,
    Prim::Pow,
    Prim::Max,
    Prim::Min,
    Prim::Sin,
    Prim::Cos,
    Prim::Tan,
    Prim::Tanh,
    Prim::Exp,
    Prim::Log,
    Prim::Sqrt,
    Prim::Abs,
    Prim::Neg,
];

/// The program of `seed`, with inputs at which every partial operation is
/// away from its singular points; `arrays` allows array parameters and
/// operations.
pub fn program(seed: u64, arrays: bool) -> String {
    let feat = Features {
        max_nao: 2,
        open_reduce: false,
        extended: false,
        arrays,
        ops: Some(PAPER_OPS.to_vec()),
        derivatives: false,
        counts: false,
        higher_order: false,
    };
    let mut rng = testkit::Rng::new(seed);
    loop {
        let size = 4 + rng.below(36);
        let p = gen_program(&mut rng, size, &feat);
        if let Some((inputs, _)) = admissible_inputs(&mut rng, &p, 20) {
            return p.text(Some(&inputs));
        }
    }
}
