//! The bodies of the fuzz targets: one function per reader of user input,
//! each taking the raw bytes a fuzzer made up.
//!
//! `fuzz/` (a crate outside the workspace, built by `cargo fuzz`) wraps
//! each of these in `fuzz_target!`; the corpus replay test
//! (`tests/corpus.rs`) calls the same functions on every file of
//! `fuzz/corpus/<target>/`, so CI replays what the long runs found
//! without a fuzzer. docs/testing.md ("Coverage-guided fuzzing") has the
//! runs and their counts.
//!
//! What a target checks, beyond "returns": no panic, no abort, no stack
//! overflow (the fuzzer sees those as crashes), no hang (its timeout), and
//! the invariants of the reader's contract, asserted here so that a
//! violation is a crash too:
//! - an error's span lies within the text it is about (the renderer
//!   would show no snippet otherwise);
//! - what a reader accepts passes the verifier of its IR, and the next
//!   stage of the pipeline takes it without panicking.

use syntax::{SourceFile, Span};

mod protocol;

pub use protocol::gradbench_protocol;

/// The body of a target: the bytes the fuzzer made up, in; a panic, out,
/// when something is wrong.
pub type Body = fn(&[u8]);

/// The targets, by name: the name of the corpus directory and of the
/// `cargo fuzz` target.
pub const TARGETS: &[(&str, Body)] = &[
    ("program_text", program_text),
    ("ron_source", ron_source),
    ("ron_target", ron_target),
    ("ron_source_unf", ron_source_unf),
    ("ron_target_unf", ron_target_unf),
    ("value_literal", value_literal),
    ("json_value", json_value),
    ("npy_file", npy_file),
    ("gradbench_protocol", gradbench_protocol),
];

/// Inputs larger than this are ignored: the readers are linear, and the
/// fuzzer learns nothing from megabytes it would take seconds to read.
const MAX_INPUT: usize = 64 * 1024;

/// The bytes as text, if they are UTF-8 (the command line refuses other
/// bytes before any reader sees them) and not too large.
fn text(data: &[u8]) -> Option<&str> {
    if data.len() > MAX_INPUT {
        return None;
    }
    std::str::from_utf8(data).ok()
}

/// Asserts that `span` is generated or lies within `text` on character
/// boundaries (a fuzz target reports a finding by panicking).
fn assert_span_in(span: Span, text: &str, what: &str) {
    if let Some(problem) = span_problem(span, text) {
        panic!("{what}: {problem}");
    }
}

/// What is wrong with `span` as a position in `text`, or `None` when it is
/// generated or lies within `text` on character boundaries.
fn span_problem(span: Span, text: &str) -> Option<String> {
    if span.is_generated() {
        return None;
    }
    let (lo, hi) = (span.lo as usize, span.hi as usize);
    let inside =
        lo <= hi && hi <= text.len() && text.is_char_boundary(lo) && text.is_char_boundary(hi);
    (!inside).then(|| format!("span {lo}..{hi} outside a text of {} bytes", text.len()))
}

/// Program text: parse, elaborate and type (`syntax::compile`, what
/// `check` and every command on a `.ad` file run). An accepted program
/// passes the verifier and the first-order check runs on each definition.
pub fn program_text(data: &[u8]) {
    let Some(text) = text(data) else { return };
    let file = SourceFile {
        name: "fuzz.ad".to_string(),
        text: text.to_string(),
    };
    match syntax::compile(file) {
        Ok(m) => {
            if let Err(errors) = syntax::verify(&m) {
                panic!("the front end's output fails the verifier: {errors:?}");
            }
            for def in &m.defs {
                if let Err(e) = syntax::check_first_order(&m, def) {
                    assert_span_in(e.span(), text, "a first-order error");
                }
            }
        }
        Err(e) => assert_span_in(e.span(), text, "a front-end error"),
    }
}

/// Reads a term-language file (`source` or `target`), verifies it, and on
/// success runs `next` on the module.
fn term_ron(data: &[u8], ir: &str, next: fn(syntax::Module)) {
    let Some(text) = text(data) else { return };
    let Ok(m) = syntax::from_ron::<syntax::Module>(ir, syntax::FORMAT_VERSION, text) else {
        return;
    };
    let verified = if ir == syntax::SOURCE_IR {
        syntax::verify_source(&m)
    } else {
        syntax::verify(&m)
    };
    if verified.is_ok() {
        next(m);
    }
}

/// A `source` RON file: read, verify, and lower its last definition to
/// UNF when it is first-order (`cargo xtask unf`).
pub fn ron_source(data: &[u8]) {
    term_ron(data, syntax::SOURCE_IR, |m| {
        if let Some(entry) = m.entry(None)
            && syntax::check_first_order(&m, entry).is_ok()
        {
            let _ = unf::lower(&m, entry);
        }
    });
}

/// A `target` RON file: read, verify, and optimize (`cargo xtask optimize`).
pub fn ron_target(data: &[u8]) {
    term_ron(data, syntax::TARGET_IR, |m| {
        let _ = optimize::optimize_owned(m, &optimize::Config::default());
    });
}

/// Reads and checks a UNF file of `kind`, running `next` on what passes.
fn unf_ron(data: &[u8], kind: unf::Kind, next: fn(&unf::Module, unf::Checked)) {
    let Some(text) = text(data) else { return };
    let Ok(m) = unf::from_ron(text, kind) else {
        return;
    };
    if let Ok(checked) = unf::check(&m) {
        next(&m, checked);
    }
}

/// A `source-unf` RON file: read, verify, differentiate (`cargo xtask reverse`).
pub fn ron_source_unf(data: &[u8]) {
    unf_ron(data, unf::Kind::Source, |m, checked| {
        let _ = reverse::reverse_checked(m, checked, &reverse::Config { wrt: None });
    });
}

/// A `target-unf` RON file: read, verify, raise back to a Target program
/// (`cargo xtask unf-inverse`).
pub fn ron_target_unf(data: &[u8]) {
    unf_ron(data, unf::Kind::Target, |m, checked| {
        let _ = unf::raise_checked(m, checked);
    });
}

/// A JSON input (`data::read_json`): the first line is the parameter's
/// type, the rest the JSON, typed by `Json::to_data`. Data read back is
/// written as JSON (`data::write_json_value`) and reads back to the same
/// value.
pub fn json_value(data: &[u8]) {
    if data.len() > MAX_INPUT {
        return;
    }
    let split = data.iter().position(|&b| b == b'\n').unwrap_or(data.len());
    let Some(ty) = std::str::from_utf8(&data[..split])
        .ok()
        .and_then(|t| syntax::parse_ty(t).ok())
    else {
        return;
    };
    let body = data.get(split + 1..).unwrap_or(&[]);
    let Ok(json) = data::read_json(body, "fuzz.json") else {
        return;
    };
    let Ok(value) = json.to_data(&ty) else {
        return;
    };
    let mut out = Vec::new();
    data::write_json_value(&mut out, &value).expect("writing to a Vec succeeds");
    let again = data::read_json(&out, "written.json")
        .unwrap_or_else(|e| panic!("written JSON does not read back: {e}"))
        .to_data(&ty)
        .unwrap_or_else(|e| panic!("written JSON is not of its type: {e}"));
    assert!(
        again.to_value().approx_eq(&value.to_value(), 0.0, 0.0),
        "JSON round trip: {} became {}",
        value.to_value(),
        again.to_value()
    );
}

/// A `.npy` or `.npz` input (`data::read_npy_bytes`, `read_npz_bytes`): an
/// array read is written again (`data::write_npy_to`) and reads back with
/// the same shape and elements.
pub fn npy_file(data: &[u8]) {
    if data.len() > MAX_INPUT {
        return;
    }
    if let Ok(array) = data::read_npy_bytes(data, "fuzz.npy") {
        let mut out = Vec::new();
        data::write_npy_to(&mut out, &array).expect("writing to a Vec succeeds");
        let again = data::read_npy_bytes(&out, "written.npy")
            .unwrap_or_else(|e| panic!("a written .npy does not read back: {e}"));
        assert_eq!(again.shape(), array.shape(), "the shape after a round trip");
        assert!(
            again.to_value().approx_eq(&array.to_value(), 0.0, 0.0),
            "the elements after a round trip"
        );
    }
    let _ = data::read_npz_bytes(data, "fuzz.npz");
}

/// A value on the command line (`--at NAME=VALUE`): the first line is the
/// parameter's type, read by `syntax::parse_ty`, the rest the value, read
/// by `semantics::parse_value` as that type. A value read back prints
/// and reads back to an equal one.
pub fn value_literal(data: &[u8]) {
    let Some(text) = text(data) else { return };
    let (ty_text, value_text) = text.split_once('\n').unwrap_or((text, ""));
    let Ok(ty) = syntax::parse_ty(ty_text) else {
        return;
    };
    let Ok(value) = semantics::parse_value(value_text, &ty) else {
        return;
    };
    let printed = value.to_string();
    match semantics::parse_value(&printed, &ty) {
        Ok(again) => assert!(
            again.approx_eq(&value, 0.0, 0.0),
            "`{printed}` reads back as `{again}`"
        ),
        Err(e) => panic!("the printed value `{printed}` does not read back: {e}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_span_past_the_text_is_a_finding() {
        let problem = span_problem(Span { lo: 2, hi: 9 }, "abc");
        assert_eq!(
            problem.as_deref(),
            Some("span 2..9 outside a text of 3 bytes")
        );
    }

    #[test]
    fn a_span_inside_a_character_is_a_finding() {
        let problem = span_problem(Span { lo: 0, hi: 1 }, "é");
        assert_eq!(
            problem.as_deref(),
            Some("span 0..1 outside a text of 2 bytes")
        );
    }

    #[test]
    fn spans_within_the_text_pass() {
        assert_eq!(span_problem(Span { lo: 0, hi: 2 }, "é"), None);
        assert_eq!(span_problem(Span::GENERATED, ""), None);
        assert_span_in(Span { lo: 0, hi: 2 }, "é", "test");
        assert_span_in(Span::GENERATED, "", "test");
        program_text(b"def f (x : R) : R = x +");
        value_literal(b"[n](R, Int)\n[(1.5, 2), (-0, -3)]");
    }
}
