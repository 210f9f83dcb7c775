//! The integration tests of `syntax`, compiled as one binary: one link and
//! one executable on disk instead of one per file (CI ran out of disk
//! linking some sixty of them). Each file is a module and keeps its own
//! documentation.

mod calls;
mod common;
mod support;

mod deep;
mod deep_types;
mod derivatives;
mod elaborate;
mod envelope;
mod names;
mod no_panic;
mod parse;
mod print;
mod reals;
mod roundtrip;
mod rules;
mod shared_types;
mod specialize;
mod target_prims;
mod types;
mod verify;
mod whiles;
