//! The C backend on a fixture's program and its gradient programs, held
//! against the evaluator (relative 1e-12) and the expectation comments;
//! every run goes through both the driver process and the library loaded
//! in process.

use super::Env;
use crate::c::run_entry_both;
use crate::fixture::Fixture;
use crate::stages::{self, uses_derivatives};
use codegen::Config;
use std::path::PathBuf;

/// The relative tolerance against the evaluator.
const REL: f64 = 1e-12;
/// The absolute tolerance near zero.
const ABS: f64 = 1e-300;

fn scratch(env: &Env, tag: &str) -> PathBuf {
    let d = env.scratch.join("fixtures").join(tag);
    let _ = std::fs::remove_dir_all(&d);
    d
}

/// The Source program through C: the evaluator's value and the `-- value`.
/// A program still holding a derivative construct is refused, naming it.
pub fn value(f: &Fixture, env: &Env) {
    let name = &f.name;
    let m = f.compile();
    let def = m.entry(None).expect("an entry");
    let cfg = Config::default();
    let c = match codegen::emit(&m, &cfg) {
        Ok(c) => c,
        Err(codegen::Error::Unsupported { span, what }) if uses_derivatives(&m) => {
            let written = f.text[span.lo as usize..span.hi as usize].trim_start_matches('(');
            assert!(
                what.contains("expand it with the forward stage")
                    && syntax::Prim::ALL
                        .iter()
                        .any(|op| op.is_derivative_construct() && written.starts_with(op.symbol())),
                "{name}: refused for {what} at `{written}`"
            );
            return;
        }
        Err(e) => panic!("{name}: {e}"),
    };
    assert!(
        !uses_derivatives(&m),
        "{name}: C took a derivative construct"
    );
    let cfg = Config {
        shared_library: true,
        ..cfg
    };
    let built = codegen::build(&c, &scratch(env, &format!("{name}-value")), &cfg)
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    let inputs = f.inputs(def);
    let want = semantics::eval_entry(&m, None, &inputs).expect("the evaluator's value");
    let got = run_entry_both(&built, None, &inputs).unwrap_or_else(|e| panic!("{name}: {e}"));
    assert!(
        want.approx_eq(&got, REL, ABS),
        "{name}: evaluator {want}, C backend {got}"
    );
    if let Some(stated) = f.expectations().value(&m, def) {
        let stated = stated.expect("the fixture's stated value");
        assert!(
            stated.approx_eq_default(&got),
            "{name}: stated {stated}, C backend {got}"
        );
    }
}

/// The generated C of a module, without the runtime prelude every program
/// shares (docs/codegen.md): what the snapshot `70.grad.c` holds.
fn own_code(c: &codegen::CProgram) -> String {
    let include = format!("#include \"{}.h\"\n", c.name);
    match c.source.split_once(&include) {
        Some((_, rest)) => rest.trim_start().to_string(),
        None => c.source.clone(),
    }
}

/// The UNF route's gradient program as it comes and after the optimizer,
/// built into one C program: both give the evaluator's result on the same
/// program and the `-- grad` lines. The optimized gradient's loop IR, as
/// C is printed from it, is the snapshot `65.grad.imp`, and its generated
/// C `70.grad.c`.
pub fn grad(f: &Fixture, env: &Env) {
    let name = &f.name;
    let Some(b) = stages::boundaries(f) else {
        f.no_snapshot("65.grad.imp", "UNF does not take the program");
        f.no_snapshot("70.grad.c", "UNF does not take the program");
        return;
    };
    let cfg = Config::default();
    let emitted = codegen::emit(&b.opt, &cfg).unwrap_or_else(|e| panic!("{name}: {e}"));
    f.snapshot(
        "65.grad.imp",
        &codegen::imp::print::program(&emitted.loop_ir),
    );
    f.snapshot("70.grad.c", &own_code(&emitted));
    let g = &b.target;
    let mut o = b.opt.clone();
    let gname = g.entry(None).expect("the gradient").name.to_string();
    let oname = format!("{gname}_opt");
    if let Some(d) = o.defs.last_mut() {
        d.name = syntax::Name::new(oname.clone());
    }
    // Both programs in one module (printed and read back), one build.
    let text = format!(
        "{}\n{}",
        syntax::print::module(g),
        syntax::print::module(&o)
    );
    let both = syntax::compile_target(syntax::SourceFile {
        name: format!("{name} (gradients)"),
        text,
    })
    .unwrap_or_else(|e| panic!("{name}: the printed gradients do not compile: {e}"));
    let c = codegen::emit(&both, &cfg).unwrap_or_else(|e| panic!("{name}: {e}"));
    let cfg = Config {
        shared_library: true,
        ..cfg
    };
    let built = codegen::build(&c, &scratch(env, &format!("{name}-grad")), &cfg)
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    let def = b.source.defs.last().expect("an entry");
    let ex = f.expectations();
    let inputs = f.inputs(def);
    for entry in [&gname, &oname] {
        let want = semantics::eval_entry(&both, Some(entry), &inputs).expect("the evaluator");
        let got = run_entry_both(&built, Some(entry), &inputs)
            .unwrap_or_else(|e| panic!("{name} {entry}: {e}"));
        assert!(
            want.approx_eq(&got, REL, ABS),
            "{name} {entry}: evaluator {want}, C {got}"
        );
        let parts = crate::values::items(&got);
        for (k, p) in def.params.iter().enumerate() {
            if let Some(stated) = ex.grad(def, p.name.as_str()) {
                let stated = stated.expect("the fixture's stated gradient");
                assert!(
                    stated.approx_eq_default(&parts[k + 1]),
                    "{name} {entry}: grad {} stated {stated}, C backend {}",
                    p.name,
                    parts[k + 1]
                );
            }
        }
    }
}
