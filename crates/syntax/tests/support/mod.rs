//! Test support: random programs from the workspace's one generator
//! (`difftest`, with its higher-order lambdas), and a reference evaluator
//! independent of the compiler's own passes.

#![allow(dead_code)]

pub mod eval;

use difftest::{Features, GVal, Program, Rng, gen_inputs, gen_program, gen_vector_program};
use eval::V;

/// A generated program of about `size` nodes for seed `seed`: with
/// `higher_order`, lambdas applied directly, bound and passed to lambdas;
/// with `derivatives` also `diff`, `grad`, `jvp`, ... of generated
/// functions. One program in three returns an array or a tuple, the others
/// a real.
pub fn program(seed: u64, size: usize, higher_order: bool, derivatives: bool) -> Program {
    let feat = Features {
        higher_order,
        derivatives,
        ..Features::default()
    };
    let mut rng = Rng::for_case(seed, 0);
    if rng.below(3) == 0 {
        gen_vector_program(&mut rng, size, &feat)
    } else {
        gen_program(&mut rng, size, &feat)
    }
}

/// The program's text, one definition `f`.
pub fn text(p: &Program) -> String {
    p.text(None)
}

/// Inputs for `p` in the reference evaluator's representation.
pub fn inputs(seed: u64, p: &Program) -> Vec<V> {
    let mut rng = Rng::for_case(seed, 1);
    gen_inputs(&mut rng, p).iter().map(value).collect()
}

fn value(v: &GVal) -> V {
    match v {
        GVal::Real(x) => V::R(*x),
        GVal::Int(i) => V::I(*i),
        GVal::Bool(b) => V::B(*b),
        GVal::Array(xs) => V::A(xs.iter().map(value).collect()),
        GVal::Tuple(xs) => V::T(xs.iter().map(value).collect()),
    }
}
