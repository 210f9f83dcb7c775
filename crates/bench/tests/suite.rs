//! The benchmark harness's tests, one binary.

mod evals;
mod kernels;
