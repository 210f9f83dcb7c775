//! adrev as a GradBench tool (gradbench/gradbench, CONTRIBUTING.md
//! "Protocol"): the messages ([`protocol`]), one session answering them
//! ([`Session`]), and every eval's functions ([`evals`]): which program of
//! `gradbench/` computes each, what the compiler is asked for, and how
//! GradBench's JSON input and output map to the program's parameters and
//! result ([`convert`]). docs/gradbench.md describes the protocol and every
//! eval with their sources.

pub mod convert;
pub mod engine;
pub mod evals;
pub mod protocol;
mod session;

pub use session::Session;
