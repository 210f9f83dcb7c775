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
    Lines::new(&file.text).position(span)
}

/// The starts of the lines of a text, for many positions in one text
/// without scanning it for each.
pub struct Lines<'a> {
    text: &'a str,
    starts: Vec<usize>,
}

impl<'a> Lines<'a> {
    /// Indexes `text`.
    pub fn new(text: &'a str) -> Lines<'a> {
        let starts = std::iter::once(0)
            .chain(text.match_indices('\n').map(|(i, _)| i + 1))
            .collect();
        Lines { text, starts }
    }

    /// The position of `span`.
    pub fn position(&self, span: Span) -> Position {
        let text = self.text;
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
        let line = self.starts.partition_point(|&s| s <= lo);
        let start = self.starts[line - 1];
        let col = text[start..lo].chars().count() + 1;
        let flat: String = text[lo..hi]
            .split_whitespace()
            .take(SNIPPET)
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
