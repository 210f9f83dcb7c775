//! The generated programs of the optimizer's tests, from the one
//! random-program generator (`difftest`), as text with admissible inputs
//! in `-- at` comments.
//!
//! - [`program`], for the pipeline tests: restricted to the direct
//!   macro's language (docs/direct.md: the paper's core, where Theorem
//!   5.4 is stated). Scalar programs read reals and pairs of reals only
//!   (no array operation: NAO 0); array programs also arrays, with `map`,
//!   `map2`, `reduce` and `foldl` nested up to two deep.
//! - [`redundant_program`], for the rule and cost tests: the whole
//!   language with lambdas (`Features::higher_order`) and the redundancies
//!   the rules remove (`Features::redundant`), returning a real or an
//!   array.

use difftest::{Features, Program, Rng, admissible_inputs, gen_program, gen_vector_program};
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
        redundant: false,
    };
    with_inputs(seed, |rng| {
        let size = 4 + rng.below(36);
        gen_program(rng, size, &feat)
    })
}

/// The first program `draw` makes from `seed`'s generator that has
/// admissible inputs, as text with them.
fn with_inputs(seed: u64, mut draw: impl FnMut(&mut Rng) -> Program) -> String {
    let mut rng = Rng::new(seed);
    loop {
        let p = draw(&mut rng);
        if let Some((inputs, _)) = admissible_inputs(&mut rng, &p, 20) {
            return p.text(Some(&inputs));
        }
    }
}

/// The program of `seed` for the rules: lambdas applied, bound and
/// passed, every array builtin, and the redundancies of
/// `difftest::redundant`; half return a real, half an array (or a tuple
/// with one).
pub fn redundant_program(seed: u64) -> String {
    let feat = Features {
        higher_order: true,
        redundant: true,
        ..Features::default()
    };
    with_inputs(seed, |rng| {
        let size = 16 + rng.below(48);
        if seed.is_multiple_of(2) {
            gen_program(rng, size, &feat)
        } else {
            gen_vector_program(rng, size, &feat)
        }
    })
}
