//! The one error type of the crate.

use semantics::ValueError;

/// A file that cannot be read or written, or data that does not fit the
/// parameter it is for. Every variant names the file or the parameter.
#[derive(Debug, thiserror::Error)]
pub enum DataError {
    /// A file that is not what it should be (truncated, corrupt, another
    /// dtype, Fortran order, not UTF-8, not a JSON object, ...).
    #[error("{file}: {message}")]
    File {
        /// The file (or the name the caller gave the bytes).
        file: String,
        /// What is wrong, lowercase, no trailing period.
        message: String,
    },
    /// The operating system refused to read or write a file.
    #[error("cannot {verb} {file}: {source}")]
    Io {
        /// `read`, `write`, `open`, `create`.
        verb: &'static str,
        /// The file.
        file: String,
        /// Why.
        source: std::io::Error,
    },
    /// A value that does not have its parameter's type (or sizes that
    /// disagree with another parameter's).
    #[error("input `{name}`{}: {source}", from.as_ref().map(|f| format!(" (from {f})")).unwrap_or_default())]
    Input {
        /// The parameter.
        name: String,
        /// The file it was read from, if any.
        from: Option<String>,
        /// What was expected and found, and where inside the value.
        source: ValueError,
    },
    /// A result that the output format cannot hold.
    #[error("result `{name}`: {message}")]
    Output {
        /// The result's name.
        name: String,
        /// Why.
        message: String,
    },
}

impl DataError {
    pub(crate) fn file(file: &str, message: impl Into<String>) -> DataError {
        DataError::File {
            file: file.to_string(),
            message: message.into(),
        }
    }

    pub(crate) fn io(
        verb: &'static str,
        file: &std::path::Path,
        source: std::io::Error,
    ) -> DataError {
        DataError::Io {
            verb,
            file: file.display().to_string(),
            source,
        }
    }
}
