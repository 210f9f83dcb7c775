//! Every first-order fixture: the gradient computed through
//! compile → lower → reverse → raise → evaluator matches the `-- grad`
//! lines of the program, forward mode (`forward::grad_program`) and
//! central finite differences at random points; each stage's output passes
//! its verifier; the RON files round-trip byte for byte; the Source UNF and
//! Target UNF boundaries, evaluated directly, agree with the Source
//! program. Every fixture with `-- grad` lines is checked here.

use crate::common;

use common::{Value, items, r, reals_of, with_reals};
use semantics::Expectations;
use std::path::PathBuf;

fn fixture(name: &str) -> (String, syntax::Module) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures")
        .join(name)
        .join("program.ad");
    let text = std::fs::read_to_string(&path).expect("fixture exists");
    let file = syntax::SourceFile {
        name: path.display().to_string(),
        text: text.clone(),
    };
    let m = syntax::compile(file).expect("fixture compiles");
    (text, m)
}

fn check(name: &str, specialise: bool) {
    let (text, m) = fixture(name);
    // Derivative constructs are expanded first (forward mode; a no-op when
    // there are none), as the command line does before reverse mode.
    let mut m = forward::expand(&m).expect("expand the derivative constructs");
    if specialise {
        m = syntax::specialize(&m).expect("specialise");
    }
    let def = m.defs.last().expect("an entry").clone();
    // The three stages, each output verified and round-tripped.
    let s = unf::lower(&m, &def).expect("lower");
    unf::verify(&s).expect("source-unf verifies");
    let s_text = unf::to_ron(&s);
    let s_back = unf::from_ron(&s_text, unf::Kind::Source).expect("read");
    assert_eq!(unf::to_ron(&s_back), s_text);
    let t = reverse::reverse(&s, &reverse::Config::default()).expect("reverse");
    unf::verify(&t).expect("target-unf verifies");
    let t_text = unf::to_ron(&t);
    let t_back = unf::from_ron(&t_text, unf::Kind::Target).expect("read");
    assert_eq!(unf::to_ron(&t_back), t_text);
    let g = unf::raise(&t).expect("raise");
    if let Err(errs) = syntax::verify(&g) {
        panic!(
            "{name}: the gradient program does not verify: {errs:?}\n{}",
            syntax::print::module(&g)
        );
    }
    // The expected value and gradients.
    let exp = Expectations::parse(&text);
    let inputs = exp.inputs(&def).expect("inputs");
    let out = semantics::eval_entry(&g, None, &inputs).expect("run the gradient");
    let out = items(&out);
    if let Some(v) = exp.value(&m, &def) {
        let v = v.expect("value");
        assert!(
            out[0].approx_eq_default(&v),
            "{name}: value {}, expected {v}",
            out[0]
        );
    }
    assert!(!exp.grads.is_empty(), "{name}: no grad lines");
    for (p, _) in &exp.grads {
        let expected = exp.grad(&def, p).expect("a grad line").expect("typed");
        let i = def
            .params
            .iter()
            .position(|q| q.name.as_str() == p)
            .expect("a parameter");
        assert!(
            out[i + 1].approx_eq_default(&expected),
            "{name}: grad {p} = {}, expected {expected}",
            out[i + 1]
        );
    }
    // Every boundary computes the Source program's value.
    let value = semantics::eval_entry(&m, None, &inputs).expect("run the source");
    let at_s = semantics::eval_unf(&s, &inputs).expect("run source-unf");
    assert!(
        at_s.approx_eq_default(&value),
        "{name}: source-unf gives {at_s}, source {value}"
    );
    let at_t = items(&semantics::eval_unf(&t, &inputs).expect("run target-unf"));
    for (a, b) in at_t.iter().zip(&out) {
        assert!(
            a.approx_eq_default(b),
            "{name}: target-unf gives {a}, the gradient program {b}"
        );
    }
    let anf = unf::raise(&s).expect("raise source-unf");
    syntax::verify(&anf).expect("the ANF program verifies");
    let at_anf = semantics::eval_entry(&anf, None, &inputs).expect("run the ANF program");
    assert!(
        at_anf.approx_eq_default(&value),
        "{name}: the ANF program gives {at_anf}"
    );
    let shape: Vec<Value> = inputs.iter().map(|(_, v)| v.clone()).collect();
    let names: Vec<String> = inputs.iter().map(|(n, _)| n.clone()).collect();
    let fwd = forward::grad_program(&m, &def, None).expect("forward mode");
    let fwd_out = items(&semantics::eval_entry(&fwd, None, &inputs).expect("run forward mode"));
    for (i, (a, b)) in out.iter().zip(&fwd_out).enumerate() {
        assert!(
            a.approx_eq_default(b),
            "{name}: component {i}: reverse {a}, forward {b}"
        );
    }
    // The fuzz fixtures are where finite differences are known not to
    // resolve (their comments): forward mode is their oracle.
    if !name.starts_with("fuzz_") {
        finite_differences(name, &m, &g, &fwd, &names, &shape);
    }
}

/// Rebuilds values of the shapes of `shape` from a flat vector of reals.
fn unflatten(shape: &[Value], flat: &[f64]) -> Vec<Value> {
    let mut at = 0;
    shape.iter().map(|v| with_reals(v, flat, &mut at)).collect()
}

/// At a few pseudo-random points near the fixture's inputs, the gradient
/// agrees with forward mode and with central finite differences of the
/// Source program (points where the program is not finite are skipped:
/// `pow` of a negative base, say).
fn finite_differences(
    name: &str,
    m: &syntax::Module,
    g: &syntax::Module,
    fwd: &syntax::Module,
    names: &[String],
    shape: &[Value],
) {
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move || {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((seed >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
    };
    let base: Vec<f64> = shape.iter().flat_map(reals_of).collect();
    let at = |x: &[f64]| -> Vec<(String, Value)> {
        names.iter().cloned().zip(unflatten(shape, x)).collect()
    };
    let mut checked = 0;
    for _ in 0..8 {
        let x: Vec<f64> = base.iter().map(|b| b + 0.5 * next()).collect();
        let f = |x: &[f64]| r(&semantics::eval_entry(m, None, &at(x)).expect("run the source"));
        if !f(&x).is_finite() {
            continue;
        }
        checked += 1;
        let out = items(&semantics::eval_entry(g, None, &at(&x)).expect("run the gradient"));
        let grad: Vec<f64> = out[1..].iter().flat_map(reals_of).collect();
        let fout = items(&semantics::eval_entry(fwd, None, &at(&x)).expect("run forward mode"));
        let fgrad: Vec<f64> = fout[1..].iter().flat_map(reals_of).collect();
        for i in 0..x.len() {
            assert!(
                semantics::reals_close(grad[i], fgrad[i], 1e-9, 1e-12),
                "{name}: component {i} at {x:?}: reverse {} vs forward {}",
                grad[i],
                fgrad[i]
            );
            let h = 1e-6 * x[i].abs().max(1.0);
            let (mut up, mut down) = (x.clone(), x.clone());
            up[i] += h;
            down[i] -= h;
            let fd = (f(&up) - f(&down)) / (2.0 * h);
            assert!(
                (grad[i] - fd).abs() <= 1e-5 * (1.0 + fd.abs()),
                "{name}: component {i} at {x:?}: reverse {} vs finite differences {fd}",
                grad[i]
            );
        }
    }
    // `pow x y` of a negative base is NaN at every non-integral y.
    assert!(
        checked >= 1 || name == "pow_negative_base",
        "{name}: no point where the program is finite"
    );
}

/// The fixtures with `-- grad` lines, each checked by a test below.
const CHECKED: &[&str] = &[
    "clip",
    "diff_pow_abs",
    "dot",
    "ex1_1",
    "ex4_1",
    "exp_cos",
    "fuzz_build_size",
    "fuzz_fd_kink",
    "fuzz_fd_plateau",
    "fuzz_fd_rounding",
    "fuzz_fold_in_init",
    "fuzz_pow_tan",
    "fuzz_tan_pole",
    "fwd_182_8",
    "gmm",
    "higher_order_182_9",
    "ho_diff_helper",
    "ho_twice",
    "ho_unused_helper",
    "horner",
    "int_rounding",
    "kinks",
    "log_or_square",
    "logsumexp",
    "pair_chain",
    "pow_negative_base",
    "prod",
    "relu_abs",
    "relu_at_zero",
    "relu_max",
    "relu_sum",
    "sin_exp",
    "special_functions",
    "sum",
    "untaken_branch",
];

/// The fixtures with `-- grad` lines that use reverse mode inside the
/// language (`grad_rev`, `vjp_rev`): only the driver can expand those (it
/// supplies this pipeline to forward mode's expansion), so
/// crates/adrev/tests/routes.rs checks their `-- grad` lines on every route.
const IN_LANGUAGE_REVERSE: &[&str] = &["hvp_rev", "vjp_rev_map"];

#[test]
fn every_fixture_with_grad_lines_is_checked() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fixtures");
    let mut found = Vec::new();
    for entry in std::fs::read_dir(&dir).expect("fixtures") {
        let path = entry.expect("an entry").path().join("program.ad");
        if let Ok(text) = std::fs::read_to_string(&path)
            && !Expectations::parse(&text).grads.is_empty()
        {
            let name = path
                .parent()
                .and_then(|p| p.file_name())
                .map(|n| n.to_string_lossy().to_string())
                .expect("a name");
            found.push(name);
        }
    }
    found.sort();
    found.retain(|n| !IN_LANGUAGE_REVERSE.contains(&n.as_str()));
    assert_eq!(found, CHECKED);
}

#[test]
fn ex1_1() {
    check("ex1_1", false);
}
#[test]
fn prod() {
    check("prod", false);
}
#[test]
fn sum() {
    check("sum", false);
}
#[test]
fn dot() {
    check("dot", false);
}
#[test]
fn exp_cos() {
    check("exp_cos", false);
}
#[test]
fn sin_exp() {
    check("sin_exp", false);
}
#[test]
fn logsumexp() {
    check("logsumexp", false);
}
#[test]
fn pair_chain() {
    check("pair_chain", false);
}
#[test]
fn fwd_182_8() {
    check("fwd_182_8", false);
}
#[test]
fn higher_order_182_9() {
    check("higher_order_182_9", true);
}
#[test]
fn ho_twice() {
    check("ho_twice", true);
}
#[test]
fn ho_diff_helper() {
    check("ho_diff_helper", true);
}
#[test]
fn ho_unused_helper() {
    check("ho_unused_helper", true);
}
#[test]
fn diff_pow_abs() {
    check("diff_pow_abs", true);
}

#[test]
fn prod_with_zeros_is_exact() {
    // The scan-based J^T reduce divides by nothing: zeros give the exact
    // gradient, never NaN.
    let (_, m) = fixture("prod");
    let def = m.defs.last().expect("an entry");
    let s = unf::lower(&m, def).expect("lower");
    let t = reverse::reverse(&s, &reverse::Config::default()).expect("reverse");
    let g = unf::raise(&t).expect("raise");
    for (a, grad) in [
        (vec![1.0, 0.0, 3.0, 4.0], vec![0.0, 12.0, 0.0, 0.0]),
        (vec![0.0, 2.0, 0.0, 4.0], vec![0.0, 0.0, 0.0, 0.0]),
        (vec![0.0], vec![1.0]),
        (vec![], vec![]),
    ] {
        let inputs = vec![("A".to_string(), Value::reals(&a))];
        let out = items(&semantics::eval_entry(&g, None, &inputs).expect("run"));
        assert_eq!(reals_of(&out[1]), grad, "at {a:?}");
        let direct = items(&semantics::eval_unf(&t, &inputs).expect("run target-unf"));
        assert_eq!(reals_of(&direct[1]), grad, "target-unf at {a:?}");
    }
}

#[test]
fn relu_sum() {
    check("relu_sum", false);
}
#[test]
fn horner() {
    check("horner", false);
}
#[test]
fn relu_max() {
    check("relu_max", false);
}
#[test]
fn relu_abs() {
    check("relu_abs", false);
}
#[test]
fn relu_at_zero() {
    check("relu_at_zero", false);
}
#[test]
fn log_or_square() {
    check("log_or_square", false);
}
#[test]
fn untaken_branch() {
    check("untaken_branch", false);
}
#[test]
fn clip() {
    check("clip", false);
}
#[test]
fn kinks() {
    check("kinks", false);
}
#[test]
fn pow_negative_base() {
    check("pow_negative_base", false);
}
#[test]
fn ex4_1() {
    check("ex4_1", false);
}
#[test]
fn fuzz_fd_plateau() {
    check("fuzz_fd_plateau", false);
}
#[test]
fn fuzz_fd_rounding() {
    check("fuzz_fd_rounding", false);
}
#[test]
fn fuzz_pow_tan() {
    check("fuzz_pow_tan", false);
}
#[test]
fn fuzz_build_size() {
    check("fuzz_build_size", false);
}
#[test]
fn fuzz_fold_in_init() {
    check("fuzz_fold_in_init", false);
}
#[test]
fn fuzz_fd_kink() {
    check("fuzz_fd_kink", false);
}
#[test]
fn fuzz_tan_pole() {
    check("fuzz_tan_pole", false);
}
#[test]
fn gmm() {
    check("gmm", false);
}
#[test]
fn special_functions() {
    check("special_functions", false);
}
#[test]
fn int_rounding() {
    check("int_rounding", false);
}
