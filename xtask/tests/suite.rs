//! The integration tests of `xtask`, compiled as one binary: one link and
//! one executable on disk instead of one per file (CI ran out of disk
//! linking some sixty of them). Each file is a module and keeps its own
//! documentation.

mod common;

mod check_grad;
mod checkpoint;
mod deep;
mod errors;
mod exact_output;
mod higher_order;
mod inspect;
mod layout;
mod library;
mod memory;
mod mutations;
mod native;
mod pipeline;
mod rules;
