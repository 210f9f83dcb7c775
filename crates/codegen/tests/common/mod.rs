//! Helpers shared by the codegen tests: compiling program text, building
//! it into a directory of its own, and comparing the C backend with the
//! evaluator (the independent oracle) at a relative tolerance of 1e-12.

#![allow(dead_code)]

pub mod generated;

pub use testkit::c::{run_both, short};

use std::path::PathBuf;

use codegen::{Built, Config};
use semantics::Value;
use syntax::{Module, SourceFile};

/// The relative tolerance of every comparison with the evaluator.
pub const REL: f64 = 1e-12;
/// The absolute tolerance near zero.
pub const ABS: f64 = 1e-300;

/// Program text to a typed core-form module; panics with the front end's
/// message if the text is not a program (a bug in the test).
pub fn module(name: &str, text: &str) -> Module {
    syntax::compile(SourceFile {
        name: name.to_string(),
        text: text.to_string(),
    })
    .unwrap_or_else(|e| {
        let span = e.span();
        let at = text.get(span.lo as usize..span.hi as usize).unwrap_or("");
        panic!("{name} does not compile: {e} at `{at}`\n{text}")
    })
}

/// [`module`] for Target text (a printed gradient program, which may use
/// the Target-only derivative primitives `d1pow`, `dtan`, ...).
pub fn target_module(name: &str, text: &str) -> Module {
    syntax::compile_target(SourceFile {
        name: name.to_string(),
        text: text.to_string(),
    })
    .unwrap_or_else(|e| panic!("{name} does not compile: {e}\n{text}"))
}

/// A fresh directory under the test target's scratch space.
pub fn dir(tag: &str) -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("codegen-tests")
        .join(tag);
    let _ = std::fs::remove_dir_all(&d);
    d
}

/// Emits and builds a module.
pub fn build(m: &Module, cfg: &Config, tag: &str) -> Built {
    let c = codegen::emit(m, cfg).unwrap_or_else(|e| panic!("emit {tag}: {e}"));
    if cfg.parallel {
        // The tests that ask for parallel loops must get some, from the
        // trip count they asked for.
        let from = format!(">= {}", cfg.parallel_min);
        assert!(
            c.source.lines().any(|l| {
                (l.contains("omp parallel for")
                    || l.contains("ad_max_threads() > 1")
                    || l.contains("ad_max_threads() : 1"))
                    && l.contains(&from)
            }),
            "{tag}: no loop parallel from {} iterations",
            cfg.parallel_min
        );
    }
    // Every test build also has the shared library (one compile, linked
    // twice), so that `agree` can run it in process too.
    let cfg = Config {
        shared_library: !cfg.sanitize,
        ..cfg.clone()
    };
    codegen::build(&c, &dir(tag), &cfg).unwrap_or_else(|e| panic!("build {tag}: {e}"))
}

/// Runs `entry` of `m` in the evaluator and in the built program (through
/// the driver and the library, [`run_both`]) and asserts that both print
/// the same value: bit for bit, the sign of zero included (NaN prints as
/// `nan` whatever its payload). `context` names the case in the message.
pub fn assert_bit_identical(m: &Module, built: &Built, entry: &str, args: &[Value], context: &str) {
    let def = m
        .def(entry)
        .unwrap_or_else(|| panic!("no definition `{entry}`"));
    let want = semantics::eval_def(m, def, args).expect("the evaluator evaluates");
    let got = run_both(built, entry, args).unwrap_or_else(|e| panic!("{context}: C backend {e}"));
    assert_eq!(
        want.to_string(),
        got.to_string(),
        "{context}: `{entry}` is not the evaluator's"
    );
}

/// Runs `entry` of `m` in the evaluator and in the built program on the
/// same arguments and checks that both agree (values within [`REL`], or
/// the same error).
pub fn agree(m: &Module, built: &Built, entry: &str, args: &[Value]) -> Result<Value, String> {
    let def = m
        .def(entry)
        .ok_or_else(|| format!("no definition `{entry}`"))?;
    let want = semantics::eval_def(m, def, args);
    let got = run_both(built, entry, args);
    match (want, got) {
        (Ok(w), Ok(g)) => {
            if w.approx_eq(&g, REL, ABS) {
                Ok(g)
            } else {
                Err(format!(
                    "`{entry}`: evaluator {}, C backend {}",
                    short(&w.to_string()),
                    short(&g.to_string())
                ))
            }
        }
        (Err(w), Err(codegen::Error::Eval(g))) if w == g => Err(format!("both failed: {w}")),
        (w, g) => Err(format!(
            "`{entry}`: evaluator {:?}, C backend {:?}",
            w.map(|v| v.to_string()),
            g.map(|v| v.to_string())
        )),
    }
}

/// Like [`agree`], but an error both agree on is fine too.
pub fn agree_or_same_error(
    m: &Module,
    built: &Built,
    entry: &str,
    args: &[Value],
) -> Result<(), String> {
    match agree(m, built, entry, args) {
        Ok(_) => Ok(()),
        Err(e) if e.starts_with("both failed") => Ok(()),
        Err(e) => Err(e),
    }
}

/// Reads a value of the type of parameter `param` of `entry`.
pub fn arg(m: &Module, entry: &str, param: usize, text: &str) -> Value {
    let def = m.def(entry).expect("entry");
    let ty = def.params[param].ty.as_ref().expect("typed");
    semantics::parse_value(text, ty).unwrap_or_else(|e| panic!("{text}: {e}"))
}

/// The arguments of `entry` from literal texts, one per parameter.
pub fn args(m: &Module, entry: &str, texts: &[&str]) -> Vec<Value> {
    texts
        .iter()
        .enumerate()
        .map(|(k, t)| arg(m, entry, k, t))
        .collect()
}

/// `Config::parallel`, parallel from two iterations on, so that small test
/// inputs take the parallel loops and chunked reductions (on a machine with
/// more than one core).
pub fn parallel_from_two() -> Config {
    Config {
        parallel: true,
        parallel_min: 2,
        ..Config::default()
    }
}
