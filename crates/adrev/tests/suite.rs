//! The integration tests of `adrev`, one binary (docs/testing.md).

mod api;
mod common;
mod nonscalar;
