//! The gradient routes as library functions: reverse mode through UNF,
//! the direct macro, forward mode, held against the fixture's `-- grad`
//! lines, each other, finite differences and `check-grad`.

use super::Env;
use crate::fixture::Fixture;
use crate::options::Route;
use crate::stages::{differentiable, read_term, term_ron};
use crate::values::{items, reals, with_reals};
use semantics::Value;
use syntax::{Def, Module, TARGET_IR};

/// Panics unless `result` is an error whose message has the refusal's
/// words; `true` when the route refuses (the caller stops there).
fn refused<T, E: std::fmt::Display>(f: &Fixture, route: Route, result: &Result<T, E>) -> bool {
    let Some(because) = f.options.refusal(route) else {
        return false;
    };
    match result {
        Err(e) => assert!(
            e.to_string().contains(because),
            "{}: {} refuses with `{e}`, not for {because}",
            f.name,
            route.name()
        ),
        Ok(_) => panic!(
            "{}: {} takes the program, but options.ron says it refuses it ({because})",
            f.name,
            route.name()
        ),
    }
    true
}

fn verified(f: &Fixture, m: &Module, what: &str) {
    if let Err(errs) = syntax::verify(m) {
        panic!(
            "{}: {what} does not verify: {errs:?}\n{}",
            f.name,
            syntax::print::module(m)
        );
    }
}

/// The `-- grad` lines against `(value, g_1, ...)`; the `-- value` too.
fn stated(f: &Fixture, m: &Module, def: &Def, out: &[Value], what: &str) {
    let exp = f.expectations();
    let name = &f.name;
    if let Some(v) = exp.value(m, def) {
        let v = v.expect("the `-- value` reads");
        assert!(
            out[0].approx_eq_default(&v),
            "{name} {what}: value {}, expected {v}",
            out[0]
        );
    }
    for (p, _) in &exp.grads {
        let want = exp.grad(def, p).expect("a grad line").expect("typed");
        let i = def
            .params
            .iter()
            .position(|q| q.name.as_str() == p)
            .unwrap_or_else(|| panic!("{name}: `-- grad {p}` names no parameter"));
        assert!(
            out[i + 1].approx_eq_default(&want),
            "{name} {what}: grad {p} = {}, expected {want}",
            out[i + 1]
        );
    }
}

/// The UNF route on the program every route takes (derivative constructs
/// expanded, specialised to first order): each stage's output verifies and
/// its RON file round-trips byte for byte; the gradient gives the `-- value`
/// and `-- grad` lines and forward mode's gradient; Source UNF evaluated
/// directly and raised back (the ANF program) gives the Source value, and
/// Target UNF evaluated directly gives the gradient program's result.
pub fn unf(f: &Fixture, _: &Env) {
    let name = &f.name;
    let m = differentiable(&f.entry_module());
    let def = m.defs.last().expect("an entry").clone();
    let lowered = unf::lower(&m, &def);
    if refused(f, Route::Unf, &lowered) {
        return;
    }
    let s = lowered.unwrap_or_else(|e| panic!("{name}: lower: {e}"));
    unf::verify(&s).expect("source-unf verifies");
    let s_text = unf::to_ron(&s).expect("the module writes as RON");
    let s_back = unf::from_ron(&s_text, unf::Kind::Source).expect("read");
    assert_eq!(
        unf::to_ron(&s_back).expect("the module writes as RON"),
        s_text,
        "{name}: source-unf round trip"
    );
    let t = reverse::reverse(&s, &reverse::Config::default()).expect("reverse");
    unf::verify(&t).expect("target-unf verifies");
    let t_text = unf::to_ron(&t).expect("the module writes as RON");
    let t_back = unf::from_ron(&t_text, unf::Kind::Target).expect("read");
    assert_eq!(
        unf::to_ron(&t_back).expect("the module writes as RON"),
        t_text,
        "{name}: target-unf round trip"
    );
    let g = unf::raise(&t).expect("raise");
    verified(f, &g, "the gradient program");
    read_term(
        TARGET_IR,
        &term_ron(TARGET_IR, &g),
        "the gradient program's file",
    );

    let inputs = f.inputs(&def);
    let out = items(&semantics::eval_entry(&g, None, &inputs).expect("run the gradient"));
    assert_eq!(
        out.len(),
        def.params.len() + 1,
        "{name}: (value, gradients...)"
    );
    stated(f, &m, &def, &out, "unf");
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
    verified(f, &anf, "the ANF program");
    let at_anf = semantics::eval_entry(&anf, None, &inputs).expect("run the ANF program");
    assert!(
        at_anf.approx_eq_default(&value),
        "{name}: the ANF program gives {at_anf}"
    );
    let fwd = forward::grad_program(&m, &def, None).expect("forward mode");
    let fwd_out = items(&semantics::eval_entry(&fwd, None, &inputs).expect("run forward mode"));
    for (i, (a, b)) in out.iter().zip(&fwd_out).enumerate() {
        assert!(
            a.approx_eq_default(b),
            "{name}: component {i}: reverse {a}, forward {b}"
        );
    }
}

/// At eight random points within 0.5 of the `-- at` inputs (the shared
/// generator, a fixed seed), the UNF gradient agrees with forward mode
/// (rel 1e-9) and with central finite differences of the Source program
/// (step 1e-6, rel 1e-5); points where the program is not finite are
/// skipped, and at least one must remain.
pub fn finite_differences(f: &Fixture, _: &Env) {
    let name = &f.name;
    let m = differentiable(&f.entry_module());
    let def = m.defs.last().expect("an entry").clone();
    let g = reverse::gradient(&m, &def, &reverse::Config::default()).expect("reverse mode");
    let fwd = forward::grad_program(&m, &def, None).expect("forward mode");
    let inputs = f.inputs(&def);
    let shape: Vec<Value> = inputs.iter().map(|(_, v)| v.clone()).collect();
    let names: Vec<String> = inputs.iter().map(|(n, _)| n.clone()).collect();
    let base: Vec<f64> = shape.iter().flat_map(reals).collect();
    let at = |x: &[f64]| -> Vec<(String, Value)> {
        let mut k = 0;
        let values = shape.iter().map(|v| with_reals(v, x, &mut k));
        names.iter().cloned().zip(values).collect()
    };
    let real = |v: Value| {
        v.as_real()
            .unwrap_or_else(|| panic!("{name}: not a real: {v}"))
    };
    let value = |x: &[f64]| real(semantics::eval_entry(&m, None, &at(x)).expect("run the source"));
    let mut rng = crate::Rng::new(0x9e37_79b9_7f4a_7c15);
    let mut checked = 0;
    for _ in 0..8 {
        let x: Vec<f64> = base.iter().map(|b| b + rng.range(-0.5, 0.5)).collect();
        if !value(&x).is_finite() {
            continue;
        }
        checked += 1;
        let out = items(&semantics::eval_entry(&g, None, &at(&x)).expect("run the gradient"));
        let grad: Vec<f64> = out[1..].iter().flat_map(reals).collect();
        let fout = items(&semantics::eval_entry(&fwd, None, &at(&x)).expect("run forward mode"));
        let fgrad: Vec<f64> = fout[1..].iter().flat_map(reals).collect();
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
            let fd = (value(&up) - value(&down)) / (2.0 * h);
            assert!(
                (grad[i] - fd).abs() <= 1e-5 * (1.0 + fd.abs()),
                "{name}: component {i} at {x:?}: reverse {} vs finite differences {fd}",
                grad[i]
            );
        }
    }
    assert!(checked >= 1, "{name}: no point where the program is finite");
}

/// The lines `cargo xtask grad` prints: `value = ...`, `grad p = ...`.
fn lines(def: &Def, out: &[Value]) -> Vec<String> {
    let mut v = vec![format!("value = {}", out[0])];
    for (p, g) in def.params.iter().zip(&out[1..]) {
        v.push(format!("grad {} = {g}", p.name));
    }
    v
}

/// The direct macro (Fig. 5): refused as the options say, or a verified,
/// typed gradient program of one definition `<entry>_grad` (the snapshot
/// `41.direct.ron`) giving the `-- value` and `-- grad` lines and the UNF
/// route's result (rel 1e-12; the same printed digits unless the options
/// say the sums associate otherwise).
pub fn direct(f: &Fixture, _: &Env) {
    let name = &f.name;
    let m = differentiable(&f.entry_module());
    let def = m.defs.last().expect("an entry").clone();
    let got = reverse::reverse_direct(&m, &def, &reverse::Config::default());
    if refused(f, Route::Direct, &got) {
        f.no_snapshot("41.direct.ron", "the direct macro refuses the program");
        return;
    }
    let direct = got.unwrap_or_else(|e| panic!("{name}: the direct macro refuses: {e}"));
    verified(f, &direct, "the direct macro's output");
    assert!(direct.is_typed(), "{name}: output is typed");
    assert_eq!(direct.defs.len(), 1, "{name}: one definition");
    assert_eq!(direct.defs[0].name.as_str(), format!("{}_grad", def.name));
    let text = term_ron(TARGET_IR, &direct);
    f.snapshot("41.direct.ron", &text);
    read_term(TARGET_IR, &text, "41.direct.ron");
    let inputs = f.inputs(&def);
    let out = items(&semantics::eval_entry(&direct, None, &inputs).expect("it runs"));
    assert_eq!(out.len(), def.params.len() + 1, "{name}");
    stated(f, &m, &def, &out, "direct");
    let g = reverse::gradient(&m, &def, &reverse::Config::default()).expect("the UNF route");
    let other = items(&semantics::eval_entry(&g, None, &inputs).expect("it runs"));
    for (a, b) in out.iter().zip(&other) {
        assert!(
            a.approx_eq(b, 1e-12, 1e-12),
            "{name}: direct {a} vs unf {b}"
        );
    }
    if f.options.same_digits {
        assert_eq!(
            lines(&def, &out),
            lines(&def, &other),
            "{name}: printed digits"
        );
    }
}

/// `v` with every real multiplied by `k`.
fn scale(v: &Value, k: f64) -> Value {
    let mut at = 0;
    let scaled: Vec<f64> = reals(v).iter().map(|x| x * k).collect();
    with_reals(v, &scaled, &mut at)
}

fn dot(a: &Value, b: &Value) -> f64 {
    reals(a).iter().zip(reals(b)).map(|(x, y)| x * y).sum()
}

/// Forward mode on the program as written: its `-- value` once the
/// derivative constructs are expanded; the `-- grad` lines through
/// `grad_program` by both seedings (one pass per input scalar, vectorised);
/// `jvp` along the stated gradient, whose tangent is the gradient's squared
/// norm. Every output verifies; the gradient program is the snapshot
/// `42.forward.ron`.
pub fn forward(f: &Fixture, _: &Env) {
    let name = &f.name;
    let m = f.entry_module();
    let ex = f.expectations();
    let entry = m.defs.last().expect("a definition").clone();
    let inputs = f.inputs(&entry);
    let expanded =
        adrev::passes::expand(&m).unwrap_or_else(|e| panic!("{name}: expand: {}", e.message()));
    verified(f, &expanded, "the expansion");
    let value = semantics::eval_entry(&expanded, None, &inputs)
        .unwrap_or_else(|e| panic!("{name}: eval: {e}"));
    if let Some(want) = ex.value(&m, &entry) {
        let want = want.expect("the expected value reads");
        assert!(
            value.approx_eq_default(&want),
            "{name}: value {value}, expected {want}"
        );
    }
    // On the expanded program: forward mode alone cannot expand `grad_rev`.
    let expanded_entry = expanded.defs.last().expect("a definition").clone();
    let whole = forward::grad_program(&expanded, &expanded_entry, None)
        .unwrap_or_else(|e| panic!("{name}: grad_program: {e}"));
    verified(f, &whole, "forward mode's gradient program");
    let text = term_ron(TARGET_IR, &whole);
    f.snapshot("42.forward.ron", &text);
    read_term(TARGET_IR, &text, "42.forward.ron");
    if ex.grads.is_empty() {
        return;
    }
    let wrt: Vec<String> = ex.grads.iter().map(|(n, _)| n.clone()).collect();
    let expected: Vec<Value> = wrt
        .iter()
        .map(|n| ex.grad(&entry, n).expect("listed").expect("reads"))
        .collect();
    for mode in [forward::Mode::Passes, forward::Mode::Vectorised] {
        let cfg = forward::Config {
            mode,
            ..forward::Config::default()
        };
        let g = forward::grad_program_with(&expanded, &expanded_entry, Some(&wrt), &cfg)
            .unwrap_or_else(|e| panic!("{name} ({mode:?}): grad_program: {e}"));
        verified(f, &g, "forward mode's gradient program");
        assert_eq!(g.defs.len(), 1);
        assert_eq!(g.defs[0].name.as_str(), format!("{}_grad", entry.name));
        let out = semantics::eval_entry(&g, None, &inputs)
            .unwrap_or_else(|e| panic!("{name} ({mode:?}): eval: {e}"));
        let items = items(&out);
        assert_eq!(items.len(), wrt.len() + 1, "{name}: {out}");
        assert!(
            items[0].approx_eq_default(&value),
            "{name} ({mode:?}): value {}",
            items[0]
        );
        for ((n, want), got) in wrt.iter().zip(&expected).zip(&items[1..]) {
            assert!(
                got.approx_eq_default(want),
                "{name} ({mode:?}): grad {n} = {got}, expected {want}"
            );
        }
    }
    let j = forward::jvp(&expanded, &expanded_entry).unwrap_or_else(|e| panic!("{name}: jvp: {e}"));
    verified(f, &j, "jvp");
    let jdef = &j.defs[0];
    let n = entry.params.len();
    let mut jin = inputs.clone();
    let mut norm2 = 0.0;
    for (p, tp) in entry.params.iter().zip(&jdef.params[n..]) {
        let at = &inputs
            .iter()
            .find(|(q, _)| q == p.name.as_str())
            .expect("an input per parameter")
            .1;
        let dir = match wrt.iter().position(|w| w == p.name.as_str()) {
            Some(i) => expected[i].clone(),
            None => scale(at, 0.0),
        };
        norm2 += dot(&dir, &dir);
        jin.push((tp.name.to_string(), dir));
    }
    let out = semantics::eval_entry(&j, None, &jin).unwrap_or_else(|e| panic!("{name}: jvp: {e}"));
    let pair = items(&out);
    assert!(
        pair[0].approx_eq_default(&value),
        "{name}: jvp value {}",
        pair[0]
    );
    let t = pair[1].as_real().expect("a real tangent");
    assert!(
        semantics::reals_close(t, norm2, 1e-9, 1e-12),
        "{name}: jvp tangent {t}, expected |grad|^2 = {norm2}"
    );
}

/// `check-grad` at the `-- at` inputs and nearby: every path (UNF with and
/// without the optimizer, direct, forward in both modes) agrees, and with
/// finite differences where they are conclusive.
pub fn check_grad(f: &Fixture, _: &Env) {
    let program = adrev::Program::from_text(&f.file_name(), f.text.clone())
        .unwrap_or_else(|e| panic!("{}: {}", f.name, e.message()));
    let report = difftest::check_grad(
        &program,
        None,
        &program.default_inputs(),
        &difftest::CheckConfig::default(),
    )
    .unwrap_or_else(|e| panic!("{}: {}", f.name, e.message()));
    assert!(report.ok(), "{}:\n{}", f.name, report.render());
}
