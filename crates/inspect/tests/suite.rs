//! The integration tests of `inspect`, compiled as one binary. Each file
//! is a module and keeps its own documentation.

mod common;

mod activity;
mod deep;
mod dot;
mod hazards;
mod residuals;
