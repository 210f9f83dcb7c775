//! `adrev`: the compiler as a library. Load a program once, ask for a
//! derivative with one [`Request`], compile it once, call it many times
//! on named [`Inputs`], get named [`Outputs`].
//!
//! ```
//! use adrev::{Inputs, Kind, Program, Request};
//! use semantics::Value;
//!
//! let program = Program::from_text(
//!     "prod.ad",
//!     "def prod_ (A : [n]R) : R = reduce (*) 1 A",
//! )?;
//! let grad = program.compile(&Request::new(Kind::ValueAndGrad))?;
//! let out = grad.call(&Inputs::new().with("A", Value::reals(&[1.0, 2.0, 3.0, 4.0])))?;
//! assert_eq!(out.value, Value::Real(24.0));
//! assert_eq!(out.gradient("A"), Some(&Value::reals(&[24.0, 12.0, 8.0, 6.0])));
//! # Ok::<(), adrev::Error>(())
//! ```
//!
//! The shape is Cranelift's `Context::compile`: a request becomes a list
//! of passes ([`passes`]: expansion of the derivative constructs,
//! specialisation to first order, UNF, D_rho, UNF^-1, the direct macro,
//! forward mode, the optimizer) run by one loop that verifies between
//! them by the request's [`Verify`] policy. Every derivative of the
//! workspace is built there: the command line (`xtask`), the differential
//! tests (`difftest`), the benches and the Python package all call
//! [`Program::compile`].
//!
//! - [`Program`]: text or any IR file, loaded and verified once;
//!   [`Program::stages`] gives every stage boundary printed and as RON.
//! - [`Request`]: entry, [`Wrt`], [`Kind`] (value, gradient, VJP, JVP,
//!   Jacobian forward / reverse / chosen by sizes, Hessian), [`Route`]
//!   (UNF, direct, forward), optimize, [`Verify`], [`Backend`] (the
//!   evaluator, or C with `codegen::Config`).
//! - [`Compiled::call`] / [`Compiled::time`]: inputs checked against the
//!   entry's parameter types (which parameter, expected and found), outputs
//!   named by parameter (gradients, Jacobian blocks) and pairs (Hessian).
//! - [`Error`]: the user's errors (rendered diagnostics with
//!   `file:line:col`) and internal ones (a verifier refusing a pass's
//!   output), which the command line maps to exit status 1 and 2.
//!
//! Reverse mode of a non-real result (a VJP, a reverse Jacobian) goes
//! through the pullback `<f x, ct>`, a real-valued program written in the
//! language ([`pullback`]); a reverse Jacobian is one VJP per output real.
//!
//! The C backend is called in this process through `codegen::Library`
//! (one internal type, `native::Native`; a sanitized build goes through
//! codegen's driver process). Inputs may be data read from `.npy`, `.npz`
//! and `.json` files (the `data` crate), passed to C without a copy, and
//! outputs are written as JSON or `.npz` ([`Compiled::write_outputs`]).
//! docs/library.md is the guide.

pub mod compiled;
pub mod cost;
pub mod diag;
mod inlang;
pub mod inputs;
pub mod load;
mod native;
pub mod outputs;
pub mod passes;
pub mod program;
pub mod pullback;
pub mod request;
mod results;

pub use compiled::{Compiled, Timing};
pub use diag::{Error, Result};
pub use inputs::{Given, Inputs};
pub use load::Ir;
pub use outputs::Outputs;
pub use program::{Program, StageDump};
pub use request::{Backend, JacobianMode, Kind, Request, Route, Verify, Wrt};
pub use unf::Checkpoint;
