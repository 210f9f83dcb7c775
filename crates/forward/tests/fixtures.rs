//! Every fixture program (`fixtures/*/program.ad`) through forward mode:
//! its `-- value` after expanding the derivative constructs, its `-- grad`
//! lines through `grad_program` (one pass per input scalar, and the
//! vectorised form), and `jvp` along the expected gradient, whose tangent
//! must be the squared norm of that gradient. The expected values are the
//! files' own comments; every output must pass `syntax::verify`.

use crate::common;

use std::path::PathBuf;

use common::{compile, verified};
use forward::{Config, Mode};
use semantics::{Expectations, Value};
use syntax::Module;

fn fixture_programs() -> Vec<(String, String)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fixtures");
    let mut out = Vec::new();
    for entry in std::fs::read_dir(&dir).expect("the fixtures directory") {
        let path = entry.expect("a directory entry").path().join("program.ad");
        if let Ok(text) = std::fs::read_to_string(&path) {
            let case = path
                .parent()
                .and_then(|p| p.file_name())
                .map(|n| n.to_string_lossy().to_string())
                .unwrap_or_default();
            out.push((case, text));
        }
    }
    out.sort();
    assert!(out.len() >= 10, "found only {} fixtures", out.len());
    out
}

fn eval(m: &Module, inputs: &[(String, Value)]) -> Result<Value, String> {
    semantics::eval_entry(m, None, inputs).map_err(|e| format!("{e}\n{}", syntax::print::module(m)))
}

/// `v` with every real multiplied by `k`.
fn scale(v: &Value, k: f64) -> Value {
    if let Some(x) = v.as_real() {
        Value::Real(x * k)
    } else if let Some(items) = v.as_array() {
        Value::array(items.iter().map(|i| scale(i, k)).collect())
    } else if let Some(items) = v.as_tuple() {
        Value::tuple(items.iter().map(|i| scale(i, k)).collect())
    } else {
        v.clone()
    }
}

fn dot(a: &Value, b: &Value) -> f64 {
    common::reals(a)
        .iter()
        .zip(common::reals(b))
        .map(|(x, y)| x * y)
        .sum()
}

/// Checks one fixture; returns the failures.
fn check(case: &str, text: &str) -> Vec<String> {
    let mut fails = Vec::new();
    let m = compile(text);
    let ex = Expectations::parse(text);
    let entry = m.defs.last().expect("a definition").clone();
    let inputs = match ex.inputs(&entry) {
        Ok(i) => i,
        Err(e) => return vec![format!("{case}: inputs: {e}")],
    };
    // The value, with any derivative construct expanded.
    let expanded = match forward::expand(&m) {
        Ok(x) => x,
        Err(e) => return vec![format!("{case}: expand: {e}")],
    };
    verified(&expanded);
    let value = match eval(&expanded, &inputs) {
        Ok(v) => v,
        Err(e) => return vec![format!("{case}: eval: {e}")],
    };
    if let Some(expected) = ex.value(&m, &entry) {
        let expected = expected.expect("the expected value reads");
        if !value.approx_eq_default(&expected) {
            fails.push(format!("{case}: value {value}, expected {expected}"));
        }
    }
    if ex.grads.is_empty() {
        return fails;
    }
    // The gradients through forward mode, both ways of seeding.
    let wrt: Vec<String> = ex.grads.iter().map(|(n, _)| n.clone()).collect();
    let expected: Vec<Value> = wrt
        .iter()
        .map(|n| ex.grad(&entry, n).expect("listed").expect("reads"))
        .collect();
    for mode in [Mode::Passes, Mode::Vectorised] {
        let cfg = Config {
            mode,
            ..Config::default()
        };
        let g = match forward::grad_program_with(&m, &entry, Some(&wrt), &cfg) {
            Ok(g) => g,
            Err(e) => {
                fails.push(format!("{case} ({mode:?}): grad_program: {e}"));
                continue;
            }
        };
        verified(&g);
        assert_eq!(g.defs.len(), 1);
        assert_eq!(g.defs[0].name.as_str(), format!("{}_grad", entry.name));
        let out = match eval(&g, &inputs) {
            Ok(v) => v,
            Err(e) => {
                fails.push(format!("{case} ({mode:?}): eval: {e}"));
                continue;
            }
        };
        let items = out.as_tuple().expect("(value, g1, ..., gk)").to_vec();
        assert_eq!(items.len(), wrt.len() + 1, "{case}: {out}");
        if !items[0].approx_eq_default(&value) {
            fails.push(format!(
                "{case} ({mode:?}): value {}, expected {value}",
                items[0]
            ));
        }
        for ((name, want), got) in wrt.iter().zip(&expected).zip(&items[1..]) {
            if !got.approx_eq_default(want) {
                fails.push(format!(
                    "{case} ({mode:?}): grad {name} = {got}, expected {want}"
                ));
            }
        }
    }
    // jvp along the expected gradient (zero along parameters without one).
    let j = match forward::jvp(&m, &entry) {
        Ok(j) => j,
        Err(e) => return vec![format!("{case}: jvp: {e}")],
    };
    verified(&j);
    let jdef = &j.defs[0];
    let n = entry.params.len();
    let mut jin = inputs.clone();
    let mut norm2 = 0.0;
    for (p, tp) in entry.params.iter().zip(&jdef.params[n..]) {
        let at = &inputs
            .iter()
            .find(|(name, _)| name == p.name.as_str())
            .expect("an input per parameter")
            .1;
        let dir = match wrt.iter().position(|w| w == p.name.as_str()) {
            Some(i) => expected[i].clone(),
            None => scale(at, 0.0),
        };
        norm2 += dot(&dir, &dir);
        jin.push((tp.name.to_string(), dir));
    }
    match eval(&j, &jin) {
        Ok(out) => {
            let pair = out.as_tuple().expect("(value, tangent)").to_vec();
            if !pair[0].approx_eq_default(&value) {
                fails.push(format!("{case}: jvp value {}, expected {value}", pair[0]));
            }
            let t = pair[1].as_real().expect("a real tangent");
            if !semantics::reals_close(t, norm2, 1e-9, 1e-12) {
                fails.push(format!(
                    "{case}: jvp tangent {t}, expected |grad|^2 = {norm2}"
                ));
            }
        }
        Err(e) => fails.push(format!("{case}: jvp eval: {e}")),
    }
    fails
}

/// Whether the module uses `grad_rev` or `vjp_rev`.
fn uses_reverse_constructs(m: &Module) -> bool {
    m.exprs.iter().any(|e| {
        matches!(
            e,
            syntax::Expr::Prim {
                op: syntax::Prim::GradRev | syntax::Prim::VjpRev,
                ..
            }
        )
    })
}

#[test]
fn every_fixture_through_forward_mode() {
    let mut fails = Vec::new();
    let mut with_grads = 0;
    for (case, text) in fixture_programs() {
        // Reverse mode inside the language needs the driver's pipeline
        // (crates/adrev/tests/inlang.rs and routes.rs check those).
        if uses_reverse_constructs(&compile(&text)) {
            continue;
        }
        if !Expectations::parse(&text).grads.is_empty() {
            with_grads += 1;
        }
        fails.extend(check(&case, &text));
    }
    assert!(
        with_grads >= 10,
        "only {with_grads} fixtures state gradients"
    );
    assert!(fails.is_empty(), "{}", fails.join("\n"));
}
