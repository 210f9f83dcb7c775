//! The errors of the `unf` crate: what `lower` refuses in a Source program,
//! what the verifier finds wrong in a UNF module, and what `raise` and the
//! RON readers refuse. Every variant carries the span it is about
//! (`Span::GENERATED` when it is about a file rather than a program point).

use crate::ir::{CtxId, TermId, TyId};
use std::fmt;
use syntax::Span;

/// Where in a UNF module a verifier error is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Loc {
    /// The module as a whole (root, entry, input/output contexts).
    Module,
    /// A term.
    Term(TermId),
    /// A context table entry.
    Ctx(CtxId),
    /// A type table entry.
    Ty(TyId),
}

impl fmt::Display for Loc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Loc::Module => f.write_str("module"),
            Loc::Term(t) => write!(f, "term {t}"),
            Loc::Ctx(c) => write!(f, "context {c}"),
            Loc::Ty(t) => write!(f, "type {t}"),
        }
    }
}

/// One violation of the UNF typing rules or of the arena invariants.
#[derive(Debug, Clone, PartialEq)]
pub struct VerifyError {
    /// Where.
    pub at: Loc,
    /// The span of the Source node the term comes from, if any.
    pub span: Span,
    /// What is wrong, lowercase, no trailing period.
    pub message: String,
}

impl fmt::Display for VerifyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.at, self.message)
    }
}

/// An error of the UNF arrows.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Error {
    /// A Source construct reverse mode does not handle (yet).
    #[error("not supported yet by reverse mode: `{construct}`{detail}")]
    Unsupported {
        /// The construct in the program text.
        span: Span,
        /// What it is, as written (`if`, `foldl`, `reduce`, ...).
        construct: String,
        /// What about it, when the construct alone is supported (starts
        /// with a space, or is empty).
        detail: String,
    },
    /// The Source program is not one `lower` accepts (not first order, not
    /// in core form, ill-typed).
    #[error("{source}")]
    Source {
        /// What the front end's check said.
        #[from]
        source: syntax::Error,
    },
    /// A UNF module that breaks the typing rules or the arena invariants.
    #[error("ill-formed {ir} module: {}{}", .errors.first().map(|e| e.to_string()).unwrap_or_default(), more(.errors.len()))]
    Invalid {
        /// The span of the first error.
        span: Span,
        /// `source-unf` or `target-unf`.
        ir: &'static str,
        /// Everything the verifier found.
        errors: Vec<VerifyError>,
    },
    /// A RON file that is not the IR asked for.
    #[error("{source}")]
    Envelope {
        /// What the reader said.
        #[from]
        source: syntax::EnvelopeError,
    },
    /// A well-formed module that the arrow cannot take (for example a
    /// Target UNF whose output is not `D_ρ(T)` for some T ending in R).
    #[error("{message}")]
    Shape {
        /// Where.
        span: Span,
        /// What is wrong.
        message: String,
    },
}

fn more(n: usize) -> String {
    if n > 1 {
        format!(" (and {} more)", n - 1)
    } else {
        String::new()
    }
}

impl Error {
    /// Where the error is.
    pub fn span(&self) -> Span {
        match self {
            Error::Unsupported { span, .. }
            | Error::Invalid { span, .. }
            | Error::Shape { span, .. } => *span,
            Error::Source { source } => source.span(),
            Error::Envelope { .. } => Span::GENERATED,
        }
    }
}
