//! Forward mode's use of the one term builder, `syntax::build` (docs/ir.md,
//! "Building terms"): the builder returns this crate's errors.

use crate::Error;

/// Results of this crate.
pub(crate) type Res<T> = Result<T, Error>;

/// The term builder, failing with this crate's errors.
pub(crate) type Builder = syntax::build::Builder<Error>;

pub(crate) use syntax::build::Atom;
pub(crate) use syntax::print::ty as show_ty;
