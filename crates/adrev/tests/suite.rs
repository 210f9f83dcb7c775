//! The integration tests of `adrev`, one binary (docs/testing.md).

mod api;
mod common;
mod inlang;
mod nonscalar;
mod routes;
