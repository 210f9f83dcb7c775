//! Every fixture program through the C backend: its value at the inputs of
//! its `-- at` comments equals the evaluator's (relative 1e-12) and the
//! `-- value` comment. Fixtures that still contain a compile-time
//! derivative construct must be refused with an error naming it.

use crate::common;

use std::path::PathBuf;

use codegen::Config;

fn fixtures() -> Vec<PathBuf> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fixtures");
    let mut out: Vec<PathBuf> = std::fs::read_dir(&root)
        .expect("the fixtures directory")
        .filter_map(|e| e.ok().map(|e| e.path().join("program.ad")))
        .filter(|p| p.exists())
        .collect();
    out.sort();
    out
}

#[test]
fn every_fixture_runs_with_the_evaluators_value() {
    let cfg = Config::default();
    let mut compiled = 0;
    for path in fixtures() {
        let text = std::fs::read_to_string(&path).expect("fixture text");
        let name = path.display().to_string();
        let m = common::module(&name, &text);
        let def = m.entry(None).expect("an entry");
        let c = match codegen::emit(&m, &cfg) {
            Ok(c) => c,
            Err(codegen::Error::Unsupported { span, what }) => {
                let written = &text[span.lo as usize..span.hi as usize];
                assert!(
                    what.contains("expand it with the forward stage")
                        && written.starts_with("diff"),
                    "{name}: refused for {what} at `{written}`"
                );
                continue;
            }
            Err(e) => panic!("{name}: {e}"),
        };
        let tag = path
            .parent()
            .and_then(|p| p.file_name())
            .map(|s| s.to_string_lossy().to_string())
            .unwrap_or_default();
        let cfg = Config {
            shared_library: true,
            ..cfg.clone()
        };
        let built = codegen::build(&c, &common::dir(&format!("fixture-{tag}")), &cfg)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let ex = semantics::Expectations::parse(&text);
        let inputs = ex.inputs(def).expect("the fixture's inputs");
        let want = semantics::eval_entry(&m, None, &inputs).expect("the evaluator's value");
        let got =
            common::run_entry_both(&built, None, &inputs).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(
            want.approx_eq(&got, common::REL, common::ABS),
            "{name}: evaluator {want}, C backend {got}"
        );
        if let Some(stated) = ex.value(&m, def) {
            let stated = stated.expect("the fixture's stated value");
            assert!(
                stated.approx_eq_default(&got),
                "{name}: stated {stated}, C backend {got}"
            );
        }
        compiled += 1;
    }
    assert!(
        compiled >= 10,
        "only {compiled} fixtures ran through the C backend"
    );
}

#[test]
fn every_fixture_gradient_runs_with_the_evaluators_value() {
    // The gradient programs of reverse mode (UNF, D_rho, UNF^-1), as they
    // come and after the optimizer, compiled to C: the value and gradient
    // equal the evaluator's on the same program (relative 1e-12) and the
    // fixture's `-- grad` comments.
    let cfg = Config::default();
    let mut compiled = 0;
    for path in fixtures() {
        let text = std::fs::read_to_string(&path).expect("fixture text");
        let name = path.display().to_string();
        let m = common::module(&name, &text);
        let def = m.entry(None).expect("an entry");
        // Programs reverse mode does not take (derivative constructs,
        // higher-order code it does not specialise) are skipped here; the
        // first test covers them.
        let Ok(g) = reverse::gradient(&m, def, &reverse::Config::default()) else {
            continue;
        };
        let mut o = optimize::optimize(&g, &optimize::Config::default())
            .unwrap_or_else(|e| panic!("{name}: the optimizer failed: {e}"));
        let gname = g
            .entry(None)
            .expect("the gradient definition")
            .name
            .to_string();
        let oname = format!("{gname}_opt");
        if let Some(d) = o.defs.last_mut() {
            d.name = syntax::Name::new(oname.clone());
        }
        // Both programs in one module (printed and read back), one build.
        let both = format!(
            "{}\n{}",
            syntax::print::module(&g),
            syntax::print::module(&o)
        );
        let both = common::target_module(&format!("{name} (gradients)"), &both);
        let tag = path
            .parent()
            .and_then(|p| p.file_name())
            .map(|s| s.to_string_lossy().to_string())
            .unwrap_or_default();
        let built = common::build(&both, &cfg, &format!("fixture-grad-{tag}"));
        let ex = semantics::Expectations::parse(&text);
        let inputs = ex.inputs(def).expect("the fixture's inputs");
        for entry in [&gname, &oname] {
            let want = semantics::eval_entry(&both, Some(entry), &inputs)
                .expect("the evaluator's gradient");
            let got = common::run_entry_both(&built, Some(entry), &inputs)
                .unwrap_or_else(|e| panic!("{name} {entry}: {e}"));
            assert!(
                want.approx_eq(&got, common::REL, common::ABS),
                "{name} {entry}: evaluator {want}, C backend {got}"
            );
            // The stated gradients, in parameter order after the value.
            let parts = got.as_tuple().expect("a (value, gradients...) tuple");
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
        compiled += 1;
    }
    assert!(
        compiled >= 8,
        "only {compiled} fixture gradients ran through the C backend"
    );
}
