//! The integration tests of `forward`, compiled as one binary: one link and
//! one executable on disk instead of one per file (CI ran out of disk
//! linking some sixty of them). Each file is a module and keeps its own
//! documentation.

mod common;

mod acceptance;
mod constructs;
mod programs;
mod properties;
mod table;
mod types;
