//! `difftest`: random Source programs and the differential tests between
//! the ways this compiler computes a gradient.
//!
//! - [`gen_program`] / [`gen_inputs`] / [`admissible_inputs`]: random
//!   programs, well typed by construction, sized by a node budget, covering
//!   every construct of the first-order language (module [`generate`]),
//!   with [`Program::fragment`] saying whether the direct macro's language
//!   holds them; their inputs drawn away from the singular points and kinks
//!   of partial operations and from the ties of comparisons (module
//!   [`eval`]).
//! - [`redundant`]: with [`Features::redundant`], the redundancies an
//!   optimizer removes written into the programs (ring identities, built
//!   tuples projected, one computation twice, a fold next to its scan,
//!   constant arrays, ...): the programs of `optimize`'s rule tests.
//! - [`check_case`]: every comparison on one program at one point (module
//!   [`case`], with [`check_dot`] and [`check_c`]); [`fuzz()`] /
//!   [`fuzz_with`]: many cases, with coverage counts per construct and the
//!   depths of nested array operations reached, each failure shrunk
//!   ([`shrink()`]) into a program file ready to become a fixture.
//! - [`inlang::check_in_language`], part of [`check_case`]: each program
//!   wrapped in `grad_rev` and in `jvp` of `grad_rev` (reverse mode inside
//!   the language) against the whole-program gradient and forward over
//!   forward.
//! - [`check_random_programs`]: the loop of other crates' random-program
//!   tests (module [`sample`]).
//! - [`check_grad`]: every path on a user's program at a point and nearby
//!   points, as a report with a rendering (`cargo xtask check-grad`).
//!
//! Programs are generated as an AST of their own ([`ast`]), printed to text
//! and compiled with `syntax::compile`, so that the whole front end is part
//! of every test. Everything is deterministic given a seed ([`Rng`]).

pub mod ast;
pub mod case;
pub mod check;
pub mod deriv;
pub mod eval;
pub mod fuzz;
pub mod generate;
pub mod inlang;
pub mod paths;
pub mod redundant;
pub mod rng;
pub mod sample;
pub mod shrink;

pub use ast::{Apply, Fragment, GExpr, GTy, GVal, LamStyle, Loop, Program, Size};
pub use case::{CaseInfo, Disagreement, check_c, check_case, check_dot};
pub use check::{CheckConfig, CheckReport, check_grad};
pub use fuzz::{
    CONSTRUCTS, Failure, FuzzConfig, FuzzReport, fixture_text, fuzz, fuzz_with, sample_coverage,
};
pub use generate::{Features, admissible_inputs, gen_inputs, gen_program, gen_vector_program};
pub use rng::Rng;
pub use sample::{check_random_programs, count_from_env};
pub use shrink::{shrink, shrink_with};
