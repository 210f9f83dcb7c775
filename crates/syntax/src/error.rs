//! The errors of the front end: everything wrong with a program's text or
//! types. Every variant carries the span it is about; rendering with the
//! source line happens at the boundary (xtask), never here.

use crate::ir::Span;

/// An error in a program, found by the lexer, the parser, elaboration,
/// type inference or the first-order check.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Error {
    /// Text that is not a program of the language.
    #[error("{message}")]
    Syntax {
        /// Where.
        span: Span,
        /// What was expected and found, lowercase, no trailing period.
        message: String,
    },
    /// A program nested deeper than `stack::MAX_DEPTH`.
    #[error("nesting too deep: more than {limit} levels")]
    TooDeep {
        /// Where the limit was crossed.
        span: Span,
        /// The limit.
        limit: usize,
    },
    /// A name, call or definition that cannot be resolved.
    #[error("{message}")]
    Scope {
        /// Where.
        span: Span,
        /// What is wrong.
        message: String,
    },
    /// An ill-typed program.
    #[error("{message}")]
    Type {
        /// Where.
        span: Span,
        /// What is wrong.
        message: String,
    },
    /// A construct outside the first-order Source subset that reverse mode accepts.
    #[error("{message}")]
    NotFirstOrder {
        /// The offending construct.
        span: Span,
        /// What is wrong.
        message: String,
    },
}

impl Error {
    /// Where the error is.
    pub fn span(&self) -> Span {
        match self {
            Error::Syntax { span, .. }
            | Error::TooDeep { span, .. }
            | Error::Scope { span, .. }
            | Error::Type { span, .. }
            | Error::NotFirstOrder { span, .. } => *span,
        }
    }
}
