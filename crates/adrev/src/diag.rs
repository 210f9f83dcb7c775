//! Rendering errors for people: `file:line:col`, the line, a caret.
//!
//! Every failure of the library becomes an [`Error`] here, already
//! rendered, so that a caller (the command line, a binding) only prints it
//! and picks an exit status. The stage crates never render; they return
//! spans, and this is the one place that turns a span into text.

use codespan_reporting::diagnostic::{Diagnostic, Label};
use codespan_reporting::files::SimpleFile;
use codespan_reporting::term;
use syntax::{SourceFile, Span};

/// A failure of the library, rendered for the terminal (each message ends
/// with a newline).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// The user's input is wrong: the program, the request or the inputs
    /// (the command line's exit status 1).
    #[error("{0}")]
    User(String),
    /// A bug of the compiler: a pass produced something its verifier
    /// refuses, or broke an invariant (exit status 2).
    #[error("internal error: {0}")]
    Internal(String),
}

impl Error {
    /// A user error with a plain message (no program position).
    pub fn user(message: impl Into<String>) -> Error {
        Error::User(format!("error: {}\n", message.into()))
    }

    /// An internal error with a plain message.
    pub fn internal(message: impl Into<String>) -> Error {
        let mut m = message.into();
        if !m.ends_with('\n') {
            m.push('\n');
        }
        Error::Internal(m)
    }

    /// Whether this is a bug of the compiler rather than the user's error.
    pub fn is_internal(&self) -> bool {
        matches!(self, Error::Internal(_))
    }

    /// The rendered message, without the `internal error:` prefix.
    pub fn message(&self) -> &str {
        match self {
            Error::User(m) | Error::Internal(m) => m,
        }
    }
}

/// A module that could not be written as RON; `what` names the file or
/// the stage. Nesting too deep for a RON file is the input's doing (an
/// array literal nested that deep), anything else a bug.
pub fn unwritable(what: &str, e: syntax::EnvelopeError) -> Error {
    match e {
        syntax::EnvelopeError::Unwritable(_) => Error::internal(format!("{what}: {e}")),
        _ => Error::user(format!("{what}: {e}")),
    }
}

/// The result type of the library.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Renders one diagnostic about `span` in `file`. Spans outside the text
/// (generated nodes, or a RON file whose text and spans disagree) render
/// without a snippet rather than failing.
pub fn render(file: &SourceFile, span: Span, message: &str, note: Option<&str>) -> String {
    if let Some(text) = render_long_line(file, span, message) {
        return text;
    }
    let mut diag = Diagnostic::error().with_message(message);
    let len = file.text.len();
    if !span.is_generated()
        && (span.lo as usize) <= len
        && (span.hi as usize) <= len
        && span.lo <= span.hi
    {
        let (lo, hi) = (span.lo as usize, span.hi as usize);
        if file.text.is_char_boundary(lo) && file.text.is_char_boundary(hi) {
            diag = diag.with_labels(vec![Label::primary((), lo..hi)]);
        }
    }
    if let Some(note) = note {
        diag = diag.with_notes(vec![note.to_string()]);
    }
    let name = if file.name.is_empty() {
        "<input>"
    } else {
        file.name.as_str()
    };
    let files = SimpleFile::new(name, file.text.as_str());
    let mut out = String::new();
    let config = term::Config::default();
    match term::emit_to_string(&mut out, &config, &files, &diag) {
        Ok(()) => out,
        Err(_) => format!("error: {message}\n  --> {name}\n"),
    }
}

/// A user error at a program position.
pub fn at(file: &SourceFile, span: Span, message: &str) -> Error {
    Error::User(render(file, span, message, None))
}

/// An error of a pass at a program position: internal when the pass says
/// it broke its own invariant (`internal`), the user's otherwise.
pub fn pass_error(file: &SourceFile, span: Span, message: &str, internal: bool) -> Error {
    if internal {
        Error::Internal(render(file, span, message, None))
    } else {
        at(file, span, message)
    }
}

/// Lines longer than this are shown as an excerpt around the span.
const LONG_LINE: usize = 240;

/// A diagnostic on a very long line (generated programs, a 100,000-deep
/// nesting on one line): `file:line:col` and an excerpt around the span,
/// rather than the whole line.
fn render_long_line(file: &SourceFile, span: Span, message: &str) -> Option<String> {
    if span.is_generated() {
        return None;
    }
    let (lo, hi) = (span.lo as usize, span.hi as usize);
    let text = &file.text;
    if lo > text.len() || !text.is_char_boundary(lo) {
        return None;
    }
    let line_start = text[..lo].rfind('\n').map_or(0, |i| i + 1);
    let line_end = text[lo..].find('\n').map_or(text.len(), |i| lo + i);
    if line_end - line_start <= LONG_LINE {
        return None;
    }
    let line_no = text[..lo].matches('\n').count() + 1;
    let col = text[line_start..lo].chars().count() + 1;
    let floor = |mut i: usize| {
        while !text.is_char_boundary(i) {
            i -= 1;
        }
        i
    };
    let from = floor(lo.saturating_sub(40).max(line_start));
    let to = floor((hi.max(lo) + 40).min(line_end));
    let excerpt = &text[from..to];
    let caret_at = text[from..lo].chars().count() + if from > line_start { 1 } else { 0 };
    let width = text[lo..floor(hi.clamp(lo, to))].chars().count().max(1);
    let name = if file.name.is_empty() {
        "<input>"
    } else {
        file.name.as_str()
    };
    Some(format!(
        "error: {message}\n  ┌─ {name}:{line_no}:{col}\n  │ (line {line_no} is {} characters long; an excerpt)\n  │ {}{excerpt}{}\n  │ {}{}\n\n",
        line_end - line_start,
        if from > line_start { "…" } else { "" },
        if to < line_end { "…" } else { "" },
        " ".repeat(caret_at),
        "^".repeat(width.min(80)),
    ))
}
