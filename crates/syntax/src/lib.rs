//! `syntax`: program text → the typed Source program.
//!
//! In: the text of a `.ad` file (language.md). Out: a [`Module`] in core
//! form: every builtin resolved to a [`Prim`], calls of earlier definitions
//! kept as calls ([`compile_calls`]) or inlined ([`compile`],
//! [`inline_entry`]), binders unique, every node typed. The crate also owns the
//! printer back to text, the verifier of the term IR, the first-order check
//! that reverse mode relies on, the specialiser of higher-order programs to
//! first order, and the RON envelope of every IR file (docs/types.md).
//!
//! Invariants of a core-form module (checked by `verify`):
//! - every child id is smaller than its parent's, and every node has one parent;
//! - every binder's name is unique within its definition;
//! - `types[i]` is the type of `exprs[i]` under the typing rules of
//!   language.md.

pub mod bound;
pub mod build;
pub mod derivatives;
pub mod elaborate;
pub mod envelope;
pub mod first_order;
pub mod fxhash;
pub mod hist;
pub mod infer;
pub mod inline;
pub mod ir;
pub mod lexer;
pub mod parser;
pub mod print;
mod reals;
pub mod rules;
pub mod special;
pub mod specialize;
pub mod stack;
pub mod ty_eq;
pub mod verify;
pub mod visit;

pub use bound::{bound_whiles, has_while};
pub use elaborate::{elaborate, elaborate_calls, elaborate_target};
pub use envelope::{EnvelopeError, from_ron, read_header, to_ron};
pub use first_order::check_first_order;
pub use infer::infer;
pub use inline::{inline_all, inline_entry};
pub use ir::{
    Def, Expr, ExprId, Fixity, Module, Name, Param, Pat, Prim, Reals, Size, SourceFile, Span, Ty,
};
pub use parser::{parse, parse_ty};
pub use specialize::{specialize, specialize_def};
pub use verify::{VerifyError, verify, verify_source};
pub use visit::free_vars;

/// The envelope name of a typed Source program (the output of `parse`).
pub const SOURCE_IR: &str = "source";
/// The envelope name of a Target program (the output of reverse mode,
/// forward mode and the optimizer).
pub const TARGET_IR: &str = "target";
/// The format version of both; bump on any change to the serialized types.
pub const FORMAT_VERSION: u32 = 1;

pub mod error;
pub use error::Error;

/// Program text → a typed core-form module whose definitions are each
/// self-contained: [`parse`] then [`elaborate`] (every call inlined).
pub fn compile(file: SourceFile) -> Result<Module, Error> {
    elaborate(&parse(file)?)
}

/// Program text → a typed core-form module that keeps the calls of earlier
/// definitions: [`parse`] then [`elaborate_calls`], linear in the program.
/// What the driver loads; [`inline_entry`] closes the entry a route needs.
pub fn compile_calls(file: SourceFile) -> Result<Module, Error> {
    elaborate_calls(&parse(file)?)
}

/// Program text of a Target program (a printed gradient) → a typed
/// core-form module: [`parse`] then [`elaborate_target`], which also
/// resolves the Target-only builtins (`d1pow`, `dtan`, ...).
pub fn compile_target(file: SourceFile) -> Result<Module, Error> {
    elaborate_target(&parse(file)?)
}
