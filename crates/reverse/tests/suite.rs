//! The integration tests of `reverse`, compiled as one binary: one link and
//! one executable on disk instead of one per file (CI ran out of disk
//! linking some sixty of them). Each file is a module and keeps its own
//! documentation.

/// The builder of core-form Source modules the tests share with `unf`'s.
use testkit::core_form as common;

mod cost;
mod cost_rows;
mod direct_errors;
mod direct_scale;
mod direct_sections;
mod errors;
mod gmm;
mod handbuilt;
mod jacobian_rows;
mod kinks;
mod prod_zeros;
mod random;
mod scale;
mod snapshots;
mod unrolled;
