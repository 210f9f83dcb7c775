//! The integration tests of `data`, compiled as one binary (see the
//! workspace's rule: one `tests/suite.rs` per crate).

mod common;

mod args;
mod json;
mod large;
mod npy;
