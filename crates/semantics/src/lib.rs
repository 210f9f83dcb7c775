//! `semantics`: what programs mean.
//!
//! In: a core-form module (`syntax::Module`, as `syntax::elaborate`
//! produces it, or any later stage's output) and input values. Out: the
//! value of a definition, or an [`Error`] with the span it is about.
//!
//! - [`value`]: run-time values, printed in the literal syntax of
//!   language.md with reals in their shortest round-tripping form, compared
//!   with a tolerance, checked against types;
//! - [`literal`]: reading values in that syntax, typed by the expected type;
//! - [`eval`]: the call-by-value reference evaluator (seeds/000 Appendix A.1);
//! - [`expect`]: the expectation comments (`-- at`, `-- value`, `-- grad`)
//!   of example and fixture files;
//! - [`cost`]: the cost model of seeds/000 Section 5 (Fig. 11, statically
//!   and counted in an evaluation through [`eval::Probe`]), NAO, and the
//!   checks of Lemma 5.1, Lemma 5.3 and Theorem 5.4;
//! - [`unf_eval`]: evaluation of Source UNF and Target UNF modules;
//! - [`memory`]: the memory budget both evaluators check, so that running
//!   out of memory is an [`Error`] at a position, not an abort.
//!
//! Invariants: nothing here panics on any module or input; every run-time
//! failure is an [`Error`] with a span. The chosen meaning of every builtin
//! is written in docs/semantics.md.

pub mod cost;
pub mod eval;
pub mod expect;
pub mod guarantee;
pub mod items;
pub mod literal;
pub mod memory;
pub mod unf_eval;
pub mod value;

mod env;
mod error;
mod hist;
mod prims;
mod shape;

pub use error::Error;
pub use eval::{
    Config, MAX_NESTING, Probe, eval_def, eval_def_probed, eval_def_with, eval_entry,
    eval_entry_probed, eval_entry_with,
};
pub use expect::Expectations;
pub use items::Items;
pub use literal::{parse_input, parse_value};
pub use shape::{SizeEnv, ValueError, describe};
pub use unf_eval::eval_unf;
pub use value::{ABS_TOL, Closure, REL_TOL, Value, format_real, reals_close};
