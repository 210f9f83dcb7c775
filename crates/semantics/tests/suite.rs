//! The integration tests of `semantics`, compiled as one binary: one link and
//! one executable on disk instead of one per file (CI ran out of disk
//! linking some sixty of them). Each file is a module and keeps its own
//! documentation.

mod common;

mod cost;
mod eval;
mod guarantee;
mod hist;
mod prims;
mod programs;
mod values;
mod whiles;
