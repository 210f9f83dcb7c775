//! Helpers shared by the codegen tests: compiling program text, building
//! it into a directory of its own, and comparing the C backend with the
//! evaluator (the independent oracle) at a relative tolerance of 1e-12.

#![allow(dead_code)]

pub mod generator;

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
                (l.contains("omp parallel for") || l.contains("ad_max_threads() > 1"))
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

thread_local! {
    /// The libraries opened by [`in_process`], by shared-library path and
    /// source (a rebuilt program is opened anew).
    static LIBRARIES: std::cell::RefCell<Vec<(PathBuf, String, std::rc::Rc<codegen::Library>)>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

/// The built program loaded in process (opened once per thread and build).
pub fn in_process(built: &Built) -> std::rc::Rc<codegen::Library> {
    let path = built
        .shared_library
        .clone()
        .expect("test builds have a shared library");
    LIBRARIES.with(|libs| {
        let mut libs = libs.borrow_mut();
        if let Some((_, _, lib)) = libs
            .iter()
            .find(|(p, s, _)| *p == path && *s == built.program.source)
        {
            return lib.clone();
        }
        let lib = std::rc::Rc::new(
            codegen::Library::open(built)
                .unwrap_or_else(|e| panic!("open {}: {e}", path.display())),
        );
        libs.push((path, built.program.source.clone(), lib.clone()));
        lib
    })
}

/// Runs an entry through the driver process and, unless the build is
/// sanitized, in process through [`codegen::Library`]; the two must agree
/// bit for bit (the printed values: reals in their shortest round-trip
/// form), or fail with the same error.
pub fn run_both(built: &Built, entry: &str, args: &[Value]) -> Result<Value, codegen::Error> {
    let process = codegen::run(built, entry, args);
    if built.sanitized {
        return process;
    }
    let library = in_process(built).call_values(entry, args);
    same(entry, process, library)
}

/// The driver process's result, after checking that the library's is the
/// same (printed values, or equal errors).
fn same(
    entry: &str,
    process: Result<Value, codegen::Error>,
    library: Result<Value, codegen::Error>,
) -> Result<Value, codegen::Error> {
    match (&process, &library) {
        (Ok(p), Ok(l)) if p.to_string() == l.to_string() => {}
        (Err(p), Err(l)) if p == l => {}
        _ => panic!(
            "`{entry}`: the driver process gave {:?}, the library {:?}",
            process.as_ref().map(|v| short(&v.to_string())),
            library.as_ref().map(|v| short(&v.to_string()))
        ),
    }
    process
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

/// At most 400 characters of a printed value.
fn short(s: &str) -> String {
    if s.len() <= 400 {
        s.to_string()
    } else {
        let cut = (0..=400)
            .rev()
            .find(|&i| s.is_char_boundary(i))
            .unwrap_or(0);
        format!("{}...", &s[..cut])
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

/// [`run_both`] on inputs by name (`codegen::run_entry` and
/// `Library::call_entry`).
pub fn run_entry_both(
    built: &Built,
    entry: Option<&str>,
    inputs: &[(String, Value)],
) -> Result<Value, codegen::Error> {
    let process = codegen::run_entry(built, entry, inputs);
    let named: Vec<(String, data::Data<'_>)> = inputs
        .iter()
        .map(|(n, v)| (n.clone(), data::Data::Value(v.clone())))
        .collect();
    let library = in_process(built)
        .call_entry(entry, &named)
        .map(|d| d.to_value());
    same(entry.unwrap_or("the last definition"), process, library)
}
