//! The integration tests of `adrev`, one binary (docs/testing.md).

mod api;
mod calls;
mod checkpoint;
mod common;
mod inlang;
mod nested_literal;
mod nonscalar;
