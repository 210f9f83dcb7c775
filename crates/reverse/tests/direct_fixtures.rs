//! The direct macro (Fig. 5) on every fixture: where the program is in the
//! language it covers, the gradient program is well formed (typed, verified,
//! in core form), and its value and gradients at the `-- at` inputs are the
//! `-- value` / `-- grad` lines and the UNF path's; everything else is
//! refused naming the construct.

use semantics::{Expectations, Value};
use std::path::PathBuf;

fn fixtures() -> Vec<(String, String)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fixtures");
    let mut out: Vec<(String, String)> = std::fs::read_dir(&dir)
        .expect("fixtures directory")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.join("program.ad").exists())
        .map(|p| {
            let name = p.file_name().expect("name").to_string_lossy().to_string();
            let text = std::fs::read_to_string(p.join("program.ad")).expect("readable");
            (name, text)
        })
        .collect();
    out.sort();
    out
}

fn compile(name: &str, text: &str) -> syntax::Module {
    syntax::compile(syntax::SourceFile {
        name: format!("{name}.ad"),
        text: text.to_string(),
    })
    .expect("fixture compiles")
}

/// `(value, g_1, ..., g_k)` of a gradient program at the fixture's inputs.
fn run(g: &syntax::Module, inputs: &[(String, Value)]) -> Vec<Value> {
    let out = semantics::eval_entry(g, None, inputs).expect("gradient program runs");
    out.as_tuple().expect("a tuple").to_vec()
}

/// The lines `cargo xtask grad` prints: `value = ...`, `grad p = ...`.
fn lines(def: &syntax::Def, out: &[Value]) -> Vec<String> {
    let mut v = vec![format!("value = {}", out[0])];
    for (p, g) in def.params.iter().zip(&out[1..]) {
        v.push(format!("grad {} = {g}", p.name));
    }
    v
}

#[test]
fn direct_gradients_match_the_fixtures_and_the_unf_path() {
    let mut checked = Vec::new();
    for (name, text) in fixtures() {
        let m = compile(&name, &text);
        // Higher-order programs are specialised to first order first, as
        // the CLI does before reverse mode.
        let m = syntax::specialize(&m).unwrap_or(m);
        let def = m.defs.last().expect("an entry").clone();
        let direct = match reverse::reverse_direct(&m, &def, &reverse::Config::default()) {
            Ok(g) => g,
            Err(_) => {
                // Outside the language of the direct macro; the UNF path
                // covers more (Section 7, Appendix A: tests/fixtures.rs).
                continue;
            }
        };
        syntax::verify(&direct).expect("output verifies");
        assert!(direct.is_typed(), "{name}: output is typed");
        assert_eq!(direct.defs.len(), 1);
        assert_eq!(direct.defs[0].name.as_str(), format!("{}_grad", def.name));
        let exp = Expectations::parse(&text);
        let inputs = exp.inputs(&def).expect("inputs");
        let got = run(&direct, &inputs);
        assert_eq!(got.len(), def.params.len() + 1, "{name}");
        if let Some(v) = exp.value(&m, &def) {
            let v = v.expect("value reads");
            assert!(
                got[0].approx_eq_default(&v),
                "{name}: value {} vs {v}",
                got[0]
            );
        }
        for (i, p) in def.params.iter().enumerate() {
            if let Some(g) = exp.grad(&def, p.name.as_str()) {
                let g = g.expect("grad reads");
                assert!(
                    got[i + 1].approx_eq_default(&g),
                    "{name}: grad {} = {} expected {g}",
                    p.name,
                    got[i + 1]
                );
            }
        }
        // The UNF path at the same point.
        let s = unf::lower(&m, &def).expect("UNF accepts what direct accepts");
        let t = reverse::reverse(&s, &reverse::Config::default()).expect("reverse");
        let via_unf = unf::raise(&t).expect("raise");
        let other = run(&via_unf, &inputs);
        for (a, b) in got.iter().zip(&other) {
            assert!(
                a.approx_eq(b, 1e-12, 1e-12),
                "{name}: direct {a} vs unf {b}"
            );
        }
        // `grad --via direct` prints what the default (UNF) path prints,
        // on the examples. The random programs the fuzzer found may
        // associate a sum the other way (one ulp, compared above).
        if !name.starts_with("fuzz_") {
            assert_eq!(lines(&def, &got), lines(&def, &other), "{name}");
        }
        checked.push(name);
    }
    for must in [
        "dot",
        "ex1_1",
        "fwd_182_8",
        "higher_order_182_9",
        "fuzz_tan_pole",
        "exp_cos",
        "logsumexp",
        "pair_chain",
        "prod",
        "sin_exp",
        "sum",
    ] {
        assert!(
            checked.iter().any(|c| c == must),
            "{must} was not differentiated: {checked:?}"
        );
    }
}
