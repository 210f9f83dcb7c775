//! Helpers shared by the tests: compile program text, run a definition on
//! inputs written in the literal syntax, verify outputs.

#![allow(dead_code)]

use semantics::Value;
use syntax::{Module, SourceFile};

/// The typed core-form module of a program text.
pub fn compile(text: &str) -> Module {
    match syntax::compile(SourceFile {
        name: "test.ad".to_string(),
        text: text.to_string(),
    }) {
        Ok(m) => m,
        Err(e) => panic!("the test program does not compile: {e}\n{text}"),
    }
}

/// The typed core-form module of a Target program text (which may use the
/// Target-only derivative primitives, `d1pow`, ...).
pub fn compile_target(text: &str) -> Module {
    match syntax::compile_target(SourceFile {
        name: "test.ad".to_string(),
        text: text.to_string(),
    }) {
        Ok(m) => m,
        Err(e) => panic!("the test program does not compile: {e}\n{text}"),
    }
}

/// Panics with the printed module when `m` does not verify.
pub fn verified(m: &Module) {
    if let Err(errors) = syntax::verify(m) {
        let list: Vec<String> = errors.iter().map(|e| e.to_string()).collect();
        panic!(
            "the output does not verify:\n{}\n{}",
            list.join("\n"),
            syntax::print::module(m)
        );
    }
}

/// Runs definition `entry` (the last when `None`) of `m` on named inputs in
/// the literal syntax, typed by the parameters.
pub fn run(m: &Module, entry: Option<&str>, inputs: &[(&str, &str)]) -> Value {
    let def = m.entry(entry).expect("the entry exists");
    let mut args = Vec::new();
    for (name, text) in inputs {
        let p = def
            .params
            .iter()
            .find(|p| p.name.as_str() == *name)
            .unwrap_or_else(|| panic!("no parameter {name}"));
        let ty = p.ty.as_ref().expect("typed parameter");
        let v =
            semantics::parse_value(text, ty).unwrap_or_else(|e| panic!("bad input {text}: {e}"));
        args.push((name.to_string(), v));
    }
    match semantics::eval_entry(m, entry, &args) {
        Ok(v) => v,
        Err(e) => panic!("evaluation failed: {e}\n{}", syntax::print::module(m)),
    }
}

/// The reals of a value, flattened in order.
pub fn reals(v: &Value) -> Vec<f64> {
    let mut out = Vec::new();
    fn go(v: &Value, out: &mut Vec<f64>) {
        if let Some(x) = v.as_real() {
            out.push(x);
        } else if let Some(items) = v.as_array() {
            items.iter().for_each(|i| go(i, out));
        } else if let Some(items) = v.as_tuple() {
            items.iter().for_each(|i| go(i, out));
        }
    }
    go(v, &mut out);
    out
}

/// Whether two reals agree to the language's tolerance.
pub fn close(a: f64, b: f64) -> bool {
    semantics::reals_close(a, b, semantics::REL_TOL, semantics::ABS_TOL)
}

/// The number of reals in a value.
pub fn count_reals(v: &Value) -> usize {
    reals(v).len()
}

/// `v` with its k-th real (in order) increased by `h`.
pub fn perturb(v: &Value, k: usize, h: f64) -> Value {
    fn go(v: &Value, k: &mut Option<usize>, h: f64) -> Value {
        if let Some(x) = v.as_real() {
            return match k {
                Some(0) => {
                    *k = None;
                    Value::Real(x + h)
                }
                Some(n) => {
                    *n -= 1;
                    v.clone()
                }
                None => v.clone(),
            };
        }
        if let Some(items) = v.as_array() {
            return Value::array(items.iter().map(|i| go(i, k, h)).collect());
        }
        if let Some(items) = v.as_tuple() {
            return Value::tuple(items.iter().map(|i| go(i, k, h)).collect());
        }
        v.clone()
    }
    go(v, &mut Some(k), h)
}

/// Central differences of the reals of `entry`'s result with respect to
/// every real of input `wrt`: one row per input real, each the flattened
/// output derivative.
pub fn central(m: &Module, inputs: &[(String, Value)], wrt: &str) -> Vec<Vec<f64>> {
    let pos = inputs
        .iter()
        .position(|(n, _)| n == wrt)
        .expect("the input exists");
    let n = count_reals(&inputs[pos].1);
    let mut rows = Vec::with_capacity(n);
    for k in 0..n {
        let x = reals(&inputs[pos].1)[k];
        let h = 1e-6 * x.abs().max(1.0);
        let mut plus = inputs.to_vec();
        plus[pos].1 = perturb(&inputs[pos].1, k, h);
        let mut minus = inputs.to_vec();
        minus[pos].1 = perturb(&inputs[pos].1, k, -h);
        let fp = reals(&semantics::eval_entry(m, None, &plus).expect("evaluates"));
        let fm = reals(&semantics::eval_entry(m, None, &minus).expect("evaluates"));
        rows.push(
            fp.iter()
                .zip(&fm)
                .map(|(a, b)| (a - b) / (2.0 * h))
                .collect(),
        );
    }
    rows
}

/// Whether a derivative agrees with a central difference.
pub fn fd_close(ad: f64, fd: f64) -> bool {
    (ad - fd).abs() <= 1e-5 * 1.0f64.max(ad.abs()).max(fd.abs())
}

/// Inputs in the literal syntax, typed by `def`'s parameters.
pub fn inputs(m: &Module, entry: Option<&str>, named: &[(&str, &str)]) -> Vec<(String, Value)> {
    let def = m.entry(entry).expect("the entry exists");
    named
        .iter()
        .map(|(name, text)| {
            let p = def
                .params
                .iter()
                .find(|p| p.name.as_str() == *name)
                .unwrap_or_else(|| panic!("no parameter {name}"));
            let ty = p.ty.as_ref().expect("typed parameter");
            let v = semantics::parse_value(text, ty)
                .unwrap_or_else(|e| panic!("bad input {text}: {e}"));
            (name.to_string(), v)
        })
        .collect()
}
