//! Where a span is, for people: `line:col` and the text written there.

use std::fmt;
use syntax::{SourceFile, Span};

/// A span of the program text as a report shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Position {
    /// 1-based line and column (in characters) of the span's start;
    /// `None` for a generated span or one outside the text.
    pub line_col: Option<(usize, usize)>,
    /// The text of the span on one line, shortened to [`SNIPPET`]
    /// characters; empty when there is none.
    pub snippet: String,
}

/// The longest snippet a report shows.
pub const SNIPPET: usize = 48;

/// The position of `span` in `file`.
pub fn position(file: &SourceFile, span: Span) -> Position {
    let text = file.text.as_str();
    let (lo, hi) = (span.lo as usize, span.hi as usize);
    if span.is_generated()
        || lo > hi
        || hi > text.len()
        || !text.is_char_boundary(lo)
        || !text.is_char_boundary(hi)
    {
        return Position {
            line_col: None,
            snippet: String::new(),
        };
    }
    let before = &text[..lo];
    let line = before.matches('\n').count() + 1;
    let col = before[before.rfind('\n').map_or(0, |i| i + 1)..]
        .chars()
        .count()
        + 1;
    let flat: String = text[lo..hi]
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    let snippet = if flat.chars().count() > SNIPPET {
        let cut: String = flat.chars().take(SNIPPET - 1).collect();
        format!("{cut}…")
    } else {
        flat
    };
    Position {
        line_col: Some((line, col)),
        snippet,
    }
}

impl fmt::Display for Position {
    /// `3:14 \`log x\``, or `(generated)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line_col {
            Some((line, col)) if self.snippet.is_empty() => write!(f, "{line}:{col}"),
            Some((line, col)) => write!(f, "{line}:{col} `{}`", self.snippet),
            None => f.write_str("(generated)"),
        }
    }
}
