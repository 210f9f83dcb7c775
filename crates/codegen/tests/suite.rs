//! The integration tests of `codegen`, compiled as one binary: one link and
//! one executable on disk instead of one per file (CI ran out of disk
//! linking some sixty of them). Each file is a module and keeps its own
//! documentation.

mod common;

mod hoisting;
mod library;
mod loop_passes;
mod parallel;
mod programs;
mod random;
mod random_grad;
mod rebracket;
mod sanitize;
mod tables;
mod whiles;
