//! Graphviz pictures of the IRs, as DOT text (render with `dot -Tsvg`).
//!
//! - [`term`]: a Source or Target module as a term graph with sharing:
//!   every node of the arena a vertex, except variables, which are edges
//!   from the value they name (so a value used twice is drawn once with
//!   two edges); lambdas are boxes around their bodies, definitions
//!   boxes around theirs.
//! - [`string_diagram`]: a Source or Target UNF module as the string
//!   diagram of seeds/000 Fig. 6 and 7: each entry of a context is a
//!   wire, each primitive a box that reads wires and appends (or, `pair`
//!   and `proj`, consumes) some; the bodies of `map`, `reduce`, `if` and
//!   the loops are diagrams of their own, inside the primitive's box.
//!   In Target UNF the continuation wires (the reverse pass) are dashed.

mod term;
mod unf_diagram;

pub use term::term;
pub use unf_diagram::string_diagram;

use std::fmt::Write;

/// The style of what goes in: parameters, input contexts (blue).
pub(crate) const INPUT: &str = "shape=invhouse, style=filled, fillcolor=\"#dbe9f6\"";
/// The style of what comes out: results, output contexts (green).
pub(crate) const OUTPUT: &str = "shape=house, style=filled, fillcolor=\"#e3f1dc\"";

/// A DOT document under construction.
pub(crate) struct Dot {
    out: String,
    /// Edges are written after every vertex, outside every cluster: an
    /// edge inside a cluster would pull the vertices it names into it.
    edges: String,
    next: usize,
    depth: usize,
}

impl Dot {
    /// A directed graph with the given name and graph attributes.
    pub(crate) fn new(name: &str, attrs: &str) -> Dot {
        let mut out = String::new();
        let _ = writeln!(out, "digraph {} {{", quote(name));
        let _ = writeln!(out, "  {attrs}");
        let _ = writeln!(
            out,
            "  node [fontname=\"Helvetica\", fontsize=11];\n  edge [fontname=\"Helvetica\", fontsize=9];"
        );
        Dot {
            out,
            edges: String::new(),
            next: 0,
            depth: 1,
        }
    }

    fn indent(&mut self) {
        for _ in 0..self.depth {
            self.out.push_str("  ");
        }
    }

    /// The id the next vertex will have.
    pub(crate) fn peek(&self) -> String {
        format!("n{}", self.next)
    }

    /// A fresh vertex with a label and attributes; returns its id.
    pub(crate) fn node(&mut self, label: &str, attrs: &str) -> String {
        let id = format!("n{}", self.next);
        self.next += 1;
        self.indent();
        let sep = if attrs.is_empty() { "" } else { ", " };
        let _ = writeln!(self.out, "{id} [label={}{sep}{attrs}];", quote(label));
        id
    }

    /// An edge, with a label (empty for none) and attributes.
    pub(crate) fn edge(&mut self, from: &str, to: &str, label: &str, attrs: &str) {
        let mut a = Vec::new();
        if !label.is_empty() {
            a.push(format!("label={}", quote(label)));
        }
        if !attrs.is_empty() {
            a.push(attrs.to_string());
        }
        if a.is_empty() {
            let _ = writeln!(self.edges, "  {from} -> {to};");
        } else {
            let _ = writeln!(self.edges, "  {from} -> {to} [{}];", a.join(", "));
        }
    }

    /// Opens a cluster (a labelled box around what follows).
    pub(crate) fn begin_cluster(&mut self, label: &str, attrs: &str) {
        let id = self.next;
        self.next += 1;
        self.indent();
        let _ = writeln!(self.out, "subgraph cluster_{id} {{");
        self.depth += 1;
        self.indent();
        let _ = writeln!(self.out, "label={}; {attrs}", quote(label));
    }

    /// Closes the innermost cluster.
    pub(crate) fn end_cluster(&mut self) {
        self.depth = self.depth.saturating_sub(1);
        self.indent();
        self.out.push_str("}\n");
    }

    /// A line as it is (`{rank=same; a; b}`).
    pub(crate) fn raw(&mut self, line: &str) {
        self.indent();
        self.out.push_str(line);
        self.out.push('\n');
    }

    /// The finished document.
    pub(crate) fn finish(mut self) -> String {
        self.out.push_str(&self.edges);
        self.out.push_str("}\n");
        self.out
    }
}

/// A DOT string literal.
fn quote(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}
