//! The GradBench tool's tests: one binary (docs/testing.md).

mod evals;
mod oracle;
mod protocol;
mod routes;
mod tool;
