//! Support for the workspace's tests: the fixtures (`fixtures/<name>/`)
//! with their options files, every stage of a fixture computed from its
//! `program.ad`, comparisons of values, the one random number generator of
//! the tests, and the data-driven fixture runner ([`runner::main`], run as
//! the `fixtures` test of `xtask`; docs/testing.md).

pub mod c;
pub mod core_form;
pub mod fixture;
pub mod modules;
pub mod options;
pub mod runner;
pub mod stages;
pub mod values;

pub use difftest::Rng;
pub use fixture::Fixture;
pub use modules::same_module;
pub use options::{Backend, Options, Route};

use std::path::PathBuf;

/// The workspace root.
pub fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}
