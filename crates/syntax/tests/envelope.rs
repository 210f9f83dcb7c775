//! The RON envelope: round trip, and refusal of other IRs and versions.

use syntax::{EnvelopeError, Module, SourceFile, from_ron, to_ron};

#[test]
fn round_trip_is_byte_identical() {
    let m = Module::new(SourceFile {
        name: "a.ad".into(),
        text: "def f : R = 1".into(),
    });
    let text = to_ron("source", 1, &m).expect("the module writes as RON");
    let back: Module = from_ron("source", 1, &text).expect("reads back");
    assert_eq!(back, m);
    assert_eq!(
        to_ron("source", 1, &back).expect("the module writes as RON"),
        text
    );
}

#[test]
fn other_ir_and_version_are_refused() {
    let m = Module::default();
    let text = to_ron("target", 1, &m).expect("the module writes as RON");
    let err = from_ron::<Module>("source", 1, &text).expect_err("another IR is refused");
    assert!(matches!(err, EnvelopeError::WrongIr { .. }), "{err}");
    let err = from_ron::<Module>("target", 2, &text).expect_err("another version is refused");
    assert!(
        matches!(err, EnvelopeError::WrongVersion { found: 1, .. }),
        "{err}"
    );
}

#[test]
fn truncated_file_is_malformed_with_position() {
    let m = Module::new(SourceFile {
        name: "a.ad".into(),
        text: "x".into(),
    });
    let text = to_ron("source", 1, &m).expect("the module writes as RON");
    let cut = &text[..text.len() / 2];
    match from_ron::<Module>("source", 1, cut) {
        Err(EnvelopeError::Malformed { line, .. }) => assert!(line >= 1),
        other => panic!("expected a malformed error, got {other:?}"),
    }
}

/// A type nested deeper than the RON reader goes: an error at its
/// position, worded for the file's user.
#[test]
fn nesting_beyond_the_readers_limit_is_malformed() {
    let m = syntax::compile(SourceFile {
        name: "a.ad".into(),
        text: "def f (x : R) : R = x".into(),
    })
    .expect("compiles");
    let text = to_ron("source", 1, &m).expect("the module writes as RON");
    assert!(text.contains("ty: Some(Real)"), "{text}");
    let deep = format!(
        "{}Real{}",
        "Array(Var(\"n\", 0), ".repeat(1000),
        ")".repeat(1000)
    );
    let text = text.replacen("ty: Some(Real)", &format!("ty: Some({deep})"), 1);
    match from_ron::<Module>("source", 1, &text) {
        Err(EnvelopeError::Malformed { line, message, .. }) => {
            assert!(line >= 1);
            assert_eq!(
                message,
                "nested too deeply: the reader stops at 128 levels of nesting"
            );
        }
        other => panic!("expected a malformed error, got {other:?}"),
    }
}

#[test]
fn header_is_read_from_the_first_bytes_or_by_the_ron_reader() {
    let m = Module::new(SourceFile {
        name: "a.ad".into(),
        text: "def f : R = 1".into(),
    });
    let text = to_ron("source", 7, &m).expect("the module writes as RON");
    let quick = syntax::read_header(&text).expect("header");
    assert_eq!((quick.ir.as_str(), quick.format), ("source", 7));
    // A truncated envelope still has its header: the module's reader says
    // where it is cut.
    let cut = &text[..40];
    assert_eq!(syntax::read_header(cut).expect("header"), quick);
    // Another layout (a comment first, fields on one line) goes through
    // the RON reader and gives the same header.
    let other = format!("// a comment\n{}", text.replace('\n', " "));
    assert_eq!(syntax::read_header(&other).expect("header"), quick);
    // Not an envelope at all: the RON reader's error.
    assert!(matches!(
        syntax::read_header("(ir: 3)"),
        Err(EnvelopeError::Malformed { .. })
    ));
}
