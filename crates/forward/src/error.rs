//! The errors of forward mode. Every variant carries the span of the
//! program text it is about (`Span::GENERATED` when no text is to blame),
//! so the CLI can point at the line; messages are lowercase without a
//! trailing period.

use syntax::Span;

/// Why a module could not be differentiated in forward mode.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Error {
    /// The input is not in core form (untyped, a `Section`, an
    /// unannotated lambda parameter, ...); the elaborator should have
    /// rejected or rewritten it.
    #[error("forward mode needs a module in core form: {message}")]
    NotCore {
        /// The offending node.
        span: Span,
        /// What is missing.
        message: String,
    },
    /// A primitive the table does not differentiate (`trigamma`, reached
    /// by a third derivative of `lgamma`).
    #[error("`{op}` has no derivative (a third derivative of `lgamma` is not supported)")]
    NoDerivative {
        /// The primitive.
        span: Span,
        /// Which one.
        op: syntax::Prim,
    },
    /// The requested definition or parameter does not exist.
    #[error("{message}")]
    NotFound {
        /// The entry definition's name, or `GENERATED`.
        span: Span,
        /// What was looked for.
        message: String,
    },
    /// A derivative was asked of (or with respect to) a value of a type
    /// that has no tangent representation here: a function-typed input or
    /// output of `grad`, `jvp`, `jacob`, ..., or an `Int`/`Bool` output of
    /// a Jacobian.
    #[error("cannot differentiate {what} of type {ty}")]
    UnsupportedType {
        /// The construct or parameter.
        span: Span,
        /// What it is ("the input of `grad`", "parameter `x`", ...).
        what: String,
        /// The type, printed in the language's syntax.
        ty: String,
    },
    /// A derivative construct whose function mentions a function-typed
    /// variable that is neither bound by a `let` in scope nor an argument of
    /// a directly applied lambda: its derivative code is not available at
    /// compile time (see docs/forward.md, "Free variables").
    #[error(
        "the function differentiated here uses `{name}`, a function-typed variable whose definition is not known at compile time"
    )]
    FunctionFreeVariable {
        /// The use of the variable.
        span: Span,
        /// The variable.
        name: String,
    },
    /// A derivative construct applied to arguments of the wrong shape.
    #[error("{message}")]
    Construct {
        /// The construct.
        span: Span,
        /// What is wrong.
        message: String,
    },
    /// Reverse mode, run by the driver for `grad_rev` or `vjp_rev`
    /// (`crate::Reverse`), refused the function or failed on it.
    #[error("{message}")]
    Reverse {
        /// Where reverse mode points (inside the function), or the construct.
        span: Span,
        /// Reverse mode's message.
        message: String,
        /// Whether it is a broken invariant of reverse mode (a bug).
        internal: bool,
    },
    /// A broken invariant of this crate: a bug, not a user error.
    #[error("internal error in forward mode: {message}")]
    Internal {
        /// The node being transformed.
        span: Span,
        /// What went wrong.
        message: String,
    },
}

impl Error {
    /// Where the error is.
    pub fn span(&self) -> Span {
        match self {
            Error::NotCore { span, .. }
            | Error::NotFound { span, .. }
            | Error::NoDerivative { span, .. }
            | Error::UnsupportedType { span, .. }
            | Error::FunctionFreeVariable { span, .. }
            | Error::Construct { span, .. }
            | Error::Reverse { span, .. }
            | Error::Internal { span, .. } => *span,
        }
    }
}

impl From<syntax::build::BuildError> for Error {
    fn from(e: syntax::build::BuildError) -> Error {
        match e {
            syntax::build::BuildError::Untyped { span, node } => Error::NotCore {
                span,
                message: format!("node {node} has no type"),
            },
            syntax::build::BuildError::Internal { span, message } => {
                Error::Internal { span, message }
            }
        }
    }
}
