//! Reading the user's files is the library's (`adrev::load`); writing
//! the outputs is the command line's.

pub use adrev::load::{Ir as Program, compile_text, load, load_unf, read_text};

use crate::diag::CliError;
use std::path::Path;

/// Writes a file, with an error naming it.
pub fn write_text(path: &Path, text: &str) -> Result<(), CliError> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .map_err(|e| CliError::user(format!("cannot create `{}`: {e}", dir.display())))?;
    }
    std::fs::write(path, text)
        .map_err(|e| CliError::user(format!("cannot write `{}`: {e}", path.display())))
}

/// Writes an IR file, or says why the module cannot be one (nested more
/// deeply than a RON file holds: `syntax::EnvelopeError::TooDeep`).
pub fn write_ron(path: &Path, text: Result<String, syntax::EnvelopeError>) -> Result<(), CliError> {
    match text {
        Ok(text) => write_text(path, &text),
        Err(e @ syntax::EnvelopeError::Unwritable(_)) => Err(CliError::internal(format!(
            "cannot write `{}`: {e}",
            path.display()
        ))),
        Err(e) => Err(CliError::user(format!(
            "cannot write `{}`: {e}",
            path.display()
        ))),
    }
}
