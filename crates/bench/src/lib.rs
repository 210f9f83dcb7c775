//! The benchmarks behind `cargo xtask bench` (docs/performance.md), kept
//! out of the compiler's library crates: the C backend's kernels against a
//! hand-written baseline and JAX/PyTorch ([`kernels`], GradBench's det and ba
//! in [`evals`]; its report and plot
//! in [`report`]), the vectorised Jacobian against n forward passes
//! ([`jacobian`]), and GradBench's workloads through the tool's session
//! ([`gradbench`]). `examples/` holds two measurements: `gmmtime` (one GMM
//! gradient through C under chosen rules) and `call_overhead` (a call into
//! the in-process library).

pub mod evals;
pub mod gradbench;
pub mod jacobian;
pub mod kernels;
pub mod report;

pub use evals::*;
pub use kernels::*;
pub use report::REFERENCE;
