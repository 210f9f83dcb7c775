//! A buffer of C lines with indentation.
//!
//! Loop bodies are written into a detached writer first and spliced in
//! afterwards, once it is known whether the body allocated (it then needs
//! an arena mark and reset) or may run in parallel (a pragma).

/// Lines of C being written.
#[derive(Debug, Default)]
pub(crate) struct Writer {
    lines: Vec<String>,
    indent: usize,
}

impl Writer {
    /// Appends a line at the current indentation.
    pub fn line(&mut self, text: impl AsRef<str>) {
        let text = text.as_ref();
        self.lines
            .push(format!("{}{text}", "    ".repeat(self.indent)));
    }

    /// Opens a block: writes `head {` and indents.
    pub fn open(&mut self, head: impl AsRef<str>) {
        let head = head.as_ref();
        if head.is_empty() {
            self.line("{");
        } else {
            self.line(format!("{head} {{"));
        }
        self.indent += 1;
    }

    /// Closes a block.
    pub fn close(&mut self) {
        self.indent = self.indent.saturating_sub(1);
        self.line("}");
    }

    /// Closes a block and opens the next one on the same line (`} else {`).
    pub fn reopen(&mut self, head: &str) {
        self.indent = self.indent.saturating_sub(1);
        self.line(format!("}} {head} {{"));
        self.indent += 1;
    }

    /// Appends lines written by a detached writer, indented to the
    /// current level.
    pub fn splice(&mut self, lines: Vec<String>) {
        let pad = "    ".repeat(self.indent);
        self.lines
            .extend(lines.into_iter().map(|l| format!("{pad}{l}")));
    }

    /// The lines written so far.
    pub fn into_lines(self) -> Vec<String> {
        self.lines
    }

    /// The text written.
    pub fn finish(self) -> String {
        let mut out = String::new();
        for l in self.lines {
            out.push_str(&l);
            out.push('\n');
        }
        out
    }
}

/// A name reduced to C identifier characters (`x'` → `x_q`), at most 24
/// characters; empty when nothing is left.
pub(crate) fn c_ident(name: &str) -> String {
    let mut out = String::new();
    for ch in name.chars() {
        if ch.is_ascii_alphanumeric() || ch == '_' {
            out.push(ch);
        } else if ch == '\'' {
            out.push_str("_q");
        }
        if out.len() >= 24 {
            break;
        }
    }
    out
}
