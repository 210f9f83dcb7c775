//! `unf`: the Unary Normal Form of seeds/000 (Section 4) and the two arrows
//! around it.
//!
//! - [`lower`] (the arrow UNF, Fig. 9): a first-order Source definition in
//!   core form → a Source UNF [`Module`].
//! - [`raise`] (the arrow UNF^-1, Fig. 10): a Source or Target UNF module →
//!   a Target program in core form (`syntax::Module`).
//! - [`verify`]: the typing rules of Fig. 6 and Fig. 7 and the arena
//!   invariants; [`print`]: the paper's notation; [`to_ron`] / [`from_ron`]:
//!   the `source-unf` / `target-unf` envelopes.
//!
//! The reverse derivative between them (Fig. 8) is the `reverse` crate.
//!
//! Invariants of a module (checked by `verify`): contexts and types are
//! stored once in canonical tables and referenced by id; children have
//! smaller ids than their parents; every term but the root has one parent;
//! every term is well typed, `in(root) = input`, `out(root) = output`.

pub mod error;
mod hashcons;
pub mod ir;
pub mod lower;
pub mod print;
pub mod raise;
pub mod tables;
pub mod verify;

pub use error::{Error, Loc, VerifyError};
pub use hashcons::type_nodes_hashed;
pub use ir::{
    Ctx, CtxId, FORMAT_VERSION, Fun, Kind, LoopKind, Module, Op, Prim, SOURCE_UNF_IR,
    TARGET_UNF_IR, Term, TermId, TyId, UTy,
};
pub use lower::{lower, lower_checked};
pub use print::print;
pub use raise::{Checkpoint, raise, raise_checked, raise_checked_with, raise_with};
pub use tables::Tables;
pub use verify::{Checked, check, check_with_verified_source, verify};

/// Writes a module in its envelope (`source-unf` or `target-unf`, by kind);
/// refuses one nested more deeply than a RON file holds.
pub fn to_ron(m: &Module) -> Result<String, syntax::envelope::EnvelopeError> {
    syntax::to_ron(m.kind.ir_name(), FORMAT_VERSION, m)
}

/// Reads a module of the given kind from its envelope. A file of another
/// IR or version, a truncated file, or one whose `kind` disagrees with its
/// envelope is refused; the module is not verified (call [`verify`]).
pub fn from_ron(text: &str, kind: Kind) -> Result<Module, Error> {
    let m: Module = syntax::from_ron(kind.ir_name(), FORMAT_VERSION, text)?;
    if m.kind != kind {
        return Err(Error::Shape {
            span: syntax::Span::GENERATED,
            message: format!(
                "the envelope says `{}` but the module's kind is `{}`",
                kind.ir_name(),
                m.kind.ir_name()
            ),
        });
    }
    Ok(m)
}

/// The error for a module the verifier rejects.
pub fn invalid(m: &Module, errors: Vec<VerifyError>) -> Error {
    Error::Invalid {
        span: errors
            .iter()
            .map(|e| e.span)
            .find(|s| !s.is_generated())
            .unwrap_or(syntax::Span::GENERATED),
        ir: m.kind.ir_name(),
        errors,
    }
}
