//! The integration tests of `unf`, compiled as one binary: one link and
//! one executable on disk instead of one per file (CI ran out of disk
//! linking some sixty of them). Each file is a module and keeps its own
//! documentation.

/// The builder of core-form Source modules the tests share with `reverse`'s.
use testkit::core_form as common;

mod errors;
mod random;
mod reals;
