//! The loop IR (`imp`): a small imperative IR between Target and C, in
//! the manner of Futhark's ImpCode. Typed variables (scalars, addresses
//! of memory blocks, result parameters, arena marks), pure expressions,
//! and statements: declarations and stores, counted loops with bounds,
//! unbounded loops, conditionals, checks that stop the call at a failure
//! site, allocations from the arena, and regions that give every
//! allocation its lifetime.
//!
//! - `ir.rs`: the definition (serde, dumped as RON in an envelope named
//!   [`IR_NAME`]);
//! - `verify.rs`: the verifier (scopes, types, mutability, lifetimes of
//!   memory, what a parallel body may do);
//! - `print.rs`: the IR's own notation; `c.rs`: C99, printed last;
//! - `build.rs`: a builder of functions for the lowering.
//!
//! See docs/codegen.md, "The loop IR".

pub mod bounds;
mod build;
pub mod c;
pub mod fuse;
mod ir;
pub mod licm;
pub mod print;
pub mod reuse;
mod verify;

pub use build::FuncBuilder;
pub use ir::*;
pub use verify::{VerifyError, verify, verify_func};

/// A program as a RON file in the loop IR's envelope (refused when nested
/// more deeply than a RON file holds).
pub fn to_ron(p: &Program) -> Result<String, syntax::envelope::EnvelopeError> {
    syntax::envelope::to_ron(IR_NAME, FORMAT, p)
}

/// Reads a program from its RON file and verifies it.
pub fn from_ron(text: &str) -> Result<Program, String> {
    let p: Program =
        syntax::envelope::from_ron(IR_NAME, FORMAT, text).map_err(|e| e.to_string())?;
    verify(&p).map_err(|e| e.to_string())?;
    Ok(p)
}

#[cfg(test)]
mod bounds_tests;
#[cfg(test)]
mod fuse_tests;
#[cfg(test)]
mod jam_tests;
#[cfg(test)]
mod licm_tests;
#[cfg(test)]
mod reuse_tests;
#[cfg(test)]
mod table_tests;
#[cfg(test)]
mod test_support;
#[cfg(test)]
mod tests;
