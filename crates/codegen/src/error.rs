//! The errors of the C backend. Every variant carries a span (of the node
//! or parameter it is about, or `Span::GENERATED` when it concerns the
//! toolchain or the files); rendering happens at the boundary (xtask).

use syntax::Span;

/// A failure to emit, build or run C code for a program.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Error {
    /// A construct the C backend cannot compile: a lambda that is neither
    /// the function argument of a builtin nor applied where it stands, a
    /// function-typed parameter or result, a conditional choosing between
    /// functions.
    #[error("the C backend does not support {what}")]
    Unsupported {
        /// The construct.
        span: Span,
        /// What it is, lowercase.
        what: String,
    },
    /// A program that is not in typed core form (no types, a surface-form
    /// node, an unbound variable, an operand of the wrong type).
    #[error("the C backend needs a typed core-form program: {message}")]
    NotCoreForm {
        /// The offending node.
        span: Span,
        /// What is wrong.
        message: String,
    },
    /// The entry asked for does not exist.
    #[error("{}", match name { Some(n) => format!("no definition named `{n}`"), None => "the module has no definitions".to_string() })]
    NoSuchEntry {
        /// `Span::GENERATED`: the name comes from the command line.
        span: Span,
        /// The name asked for, or `None` for the default entry.
        name: Option<String>,
    },
    /// The compiled program stopped with a run-time error of the language
    /// (an index out of bounds, an integer overflow, ...), or an input was
    /// refused: the same error the evaluator gives.
    #[error(transparent)]
    Eval(#[from] semantics::Error),
    /// A run-time situation the compiled code cannot represent although
    /// the evaluator can: an array of arrays whose rows differ in length,
    /// an accumulator whose size changes from one step to the next.
    #[error("the C backend does not support {what} (found at run time)")]
    UnsupportedAtRuntime {
        /// The builtin or node.
        span: Span,
        /// What was found.
        what: String,
    },
    /// The C compiler could not be started or refused the generated code.
    #[error("C compiler failed: {message}")]
    Compiler {
        /// `Span::GENERATED`.
        span: Span,
        /// The command line and what the compiler printed.
        message: String,
    },
    /// Reading or writing a file, or starting the compiled program, failed.
    #[error("cannot {action} `{path}`: {message}")]
    Io {
        /// `Span::GENERATED`.
        span: Span,
        /// What was being done (`write`, `read`, `run`).
        action: String,
        /// The file.
        path: String,
        /// The operating system's message.
        message: String,
    },
    /// The compiled program crashed, was stopped by a sanitizer, or wrote
    /// output that does not match the entry's layout: a bug in this crate.
    #[error("internal error in the C backend: {message}")]
    Internal {
        /// The entry's definition, or `Span::GENERATED`.
        span: Span,
        /// What happened, with the program's stderr.
        message: String,
    },
}

impl Error {
    /// Where the error is.
    pub fn span(&self) -> Span {
        match self {
            Error::Unsupported { span, .. }
            | Error::NotCoreForm { span, .. }
            | Error::NoSuchEntry { span, .. }
            | Error::UnsupportedAtRuntime { span, .. }
            | Error::Compiler { span, .. }
            | Error::Io { span, .. }
            | Error::Internal { span, .. } => *span,
            Error::Eval(e) => e.span(),
        }
    }

    pub(crate) fn unsupported(span: Span, what: impl Into<String>) -> Error {
        Error::Unsupported {
            span,
            what: what.into(),
        }
    }

    /// The module is not in the core form the backend takes.
    pub fn core(span: Span, message: impl Into<String>) -> Error {
        Error::NotCoreForm {
            span,
            message: message.into(),
        }
    }

    /// An I/O error while doing `action` on `path`.
    pub fn io(action: &str, path: &std::path::Path, e: impl std::fmt::Display) -> Error {
        Error::Io {
            span: Span::GENERATED,
            action: action.to_string(),
            path: path.display().to_string(),
            message: e.to_string(),
        }
    }
}
