//! The front end on a fixture: parsing and printing, elaboration, the
//! Source snapshot, and the evaluator's value.

use super::Env;
use crate::fixture::{Fixture, read};
use crate::modules::same_module;
use crate::stages::{differentiable, read_term, term_ron, uses_derivatives};
use syntax::{Expr, Prim, SOURCE_IR, SourceFile};

fn parse_text(f: &Fixture, text: &str) -> syntax::Module {
    syntax::parse(SourceFile {
        name: f.file_name(),
        text: text.to_string(),
    })
    .unwrap_or_else(|e| panic!("{}: {e:?}\n{text}", f.name))
}

/// Print → parse gives the same module and printing is idempotent; the
/// program is written in the printer's layout (its body prints back
/// verbatim, comments aside); the RON envelope carries the parsed module
/// unchanged. Elaboration is stable (the printed core form elaborates to
/// itself), keeps the signature written in the program (an
/// oracle independent of inference), leaves core form, and specialisation
/// gives a verified program, first order unless a derivative construct
/// remains; the entry is first order as written unless the options say not.
fn parse_check(f: &Fixture) {
    let name = &f.name;
    let m = parse_text(f, &f.text);
    assert!(!m.defs.is_empty(), "{name}: no definition");
    let printed = syntax::print::module(&m);
    let back = parse_text(f, &printed);
    assert_eq!(same_module(&m, &back), Ok(()), "{name} printed:\n{printed}");
    assert_eq!(
        syntax::print::module(&back),
        printed,
        "{name}: printing is idempotent"
    );
    let code: String = f
        .text
        .lines()
        .filter(|l| !l.trim_start().starts_with("--"))
        .map(|l| format!("{l}\n"))
        .collect();
    assert_eq!(
        printed, code,
        "{name}: the program is not in the printer's layout"
    );
    let ron = term_ron(SOURCE_IR, &m);
    let read: syntax::Module = syntax::from_ron(SOURCE_IR, syntax::FORMAT_VERSION, &ron)
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    assert_eq!(read, m, "{name}: the envelope changes the parsed module");

    let core = f.compile();
    syntax::verify(&core).unwrap_or_else(|e| panic!("{name}: the compiled module fails: {e:?}"));
    // Core form is also surface form: elaborating the printed program
    // again gives the same program.
    let printed = syntax::print::module(&core);
    let again = syntax::compile(SourceFile {
        name: f.file_name(),
        text: printed.clone(),
    })
    .unwrap_or_else(|e| panic!("{name}: the printed core form does not compile: {e}"));
    assert_eq!(
        syntax::print::module(&again),
        printed,
        "{name}: elaboration is not stable"
    );
    let (want, got) = (
        m.defs.last().expect("a definition"),
        core.defs.last().expect("a definition"),
    );
    assert_eq!(got.name, want.name, "{name}");
    assert_eq!(got.params.len(), want.params.len(), "{name}");
    for (g, w) in got.params.iter().zip(&want.params) {
        assert_eq!(g.name, w.name, "{name}");
        assert_eq!(g.ty, w.ty, "{name}: parameter {}", w.name);
    }
    assert_eq!(got.ret, want.ret, "{name}: result");
    for e in &core.exprs {
        assert!(
            !matches!(e, Expr::Section(_)),
            "{name}: a section in core form"
        );
        if let Expr::Var(x) = e {
            assert!(
                Prim::from_name(x.as_str()).is_none(),
                "{name}: {x} unresolved"
            );
            assert!(core.def(x.as_str()).is_none(), "{name}: {x} not inlined");
        }
    }
    let s = syntax::specialize(&core).unwrap_or_else(|e| panic!("{name}: {e:?}"));
    syntax::verify(&s)
        .unwrap_or_else(|e| panic!("{name}: the specialised program does not verify: {e:?}"));
    let entry = s.defs.last().expect("a definition");
    assert_eq!(
        syntax::check_first_order(&s, entry).is_ok(),
        !uses_derivatives(&core),
        "{name}: specialised, first order exactly without derivative constructs"
    );
    let entry = core.defs.last().expect("a definition");
    assert_eq!(
        syntax::check_first_order(&core, entry).is_ok(),
        f.options.first_order,
        "{name}: first order as written (options.ron `first_order`)"
    );
}

pub fn parse(f: &Fixture, _: &Env) {
    parse_check(f)
}

/// `10.source.ron`: the compiled program's snapshot; the file reads back
/// through its envelope, verified, equal and byte-stable.
pub fn source(f: &Fixture, _: &Env) {
    let m = f.compile_calls();
    let ron = term_ron(SOURCE_IR, &m);
    f.snapshot("10.source.ron", &ron);
    let text = read(&f.path("10.source.ron"));
    let back = read_term(SOURCE_IR, &text, "10.source.ron");
    assert_eq!(back, m, "{}: 10.source.ron is stale", f.name);
    assert_eq!(
        term_ron(SOURCE_IR, &back),
        text,
        "{}: not byte-stable",
        f.name
    );
}

/// The evaluator at the `-- at` inputs gives the `-- value` (rel 1e-9, abs
/// 1e-12). A program with a derivative construct is refused by the
/// evaluator, naming it, and evaluates once forward mode expands it.
pub fn eval(f: &Fixture, _: &Env) {
    let name = &f.name;
    let m = f.compile();
    let def = m.entry(None).expect("a definition");
    let inputs = f.inputs(def);
    let want = f
        .expectations()
        .value(&m, def)
        .unwrap_or_else(|| panic!("{name}: states no `-- value`"))
        .unwrap_or_else(|e| panic!("{name}: bad `-- value`: {e}"));
    let run = if uses_derivatives(&m) {
        let err = semantics::eval_entry(&m, None, &inputs)
            .expect_err("`diff` cannot be evaluated before expansion");
        assert!(
            err.to_string()
                .contains("must be expanded before evaluation"),
            "{name}: {err}"
        );
        let x =
            adrev::passes::expand(&m).unwrap_or_else(|e| panic!("{name}: expand: {}", e.message()));
        syntax::verify(&x).unwrap_or_else(|e| panic!("{name}: the expansion fails: {e:?}"));
        x
    } else {
        m.clone()
    };
    let got = semantics::eval_entry(&run, None, &inputs)
        .unwrap_or_else(|e| panic!("{name}: evaluation failed: {e}"));
    assert!(
        got.approx_eq_default(&want),
        "{name}: got {got}, expected {want}"
    );
    // The program every route differentiates computes the same.
    let d = differentiable(&m);
    let again = semantics::eval_entry(&d, None, &inputs).expect("the first-order program runs");
    assert!(
        again.approx_eq_default(&want),
        "{name}: specialised {again}, expected {want}"
    );
}
