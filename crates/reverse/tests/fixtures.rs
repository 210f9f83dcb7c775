//! Every first-order fixture: the gradient computed through
//! compile → lower → reverse → raise matches the `-- grad` lines of the
//! program, each stage's output passes its verifier, and the RON files
//! round-trip byte for byte. The constructs reverse mode does not support
//! yet are refused with their name and span.

#[path = "../../unf/tests/common/mod.rs"]
mod common;

use common::{V, run};
use std::path::PathBuf;

fn fixture(name: &str) -> (String, syntax::Module) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures")
        .join(name)
        .join("program.ad");
    let text = std::fs::read_to_string(&path).expect("fixture exists");
    let m = syntax::compile(syntax::SourceFile {
        name: path.display().to_string(),
        text: text.clone(),
    })
    .expect("fixture compiles");
    (text, m)
}

/// A literal: a real or an array of reals.
fn literal(s: &str) -> V {
    let s = s.trim();
    if let Some(inner) = s.strip_prefix('[').and_then(|r| r.strip_suffix(']')) {
        if inner.trim().is_empty() {
            return V::A(Vec::new());
        }
        return V::A(
            inner
                .split(',')
                .map(|x| V::R(x.trim().parse().expect("a real")))
                .collect(),
        );
    }
    V::R(s.parse().expect("a real"))
}

/// The `-- at`, `-- value` and `-- grad` lines.
type Named = Vec<(String, V)>;

fn expectations(text: &str) -> (Named, Option<V>, Named) {
    let (mut at, mut value, mut grad) = (Vec::new(), None, Vec::new());
    for line in text.lines() {
        let Some(rest) = line.strip_prefix("-- ") else {
            continue;
        };
        if let Some(r) = rest.strip_prefix("at ") {
            let (n, v) = r.split_once('=').expect("name = value");
            at.push((n.trim().to_string(), literal(v)));
        } else if let Some(r) = rest.strip_prefix("value =") {
            value = Some(literal(r));
        } else if let Some(r) = rest.strip_prefix("grad ") {
            let (n, v) = r.split_once('=').expect("name = value");
            grad.push((n.trim().to_string(), literal(v)));
        }
    }
    (at, value, grad)
}

fn close(a: &V, b: &V) -> bool {
    match (a, b) {
        (V::R(x), V::R(y)) => (x - y).abs() <= 1e-9 * x.abs().max(y.abs()) + 1e-12,
        (V::A(xs), V::A(ys)) => xs.len() == ys.len() && xs.iter().zip(ys).all(|(x, y)| close(x, y)),
        _ => false,
    }
}

fn check(name: &str, specialise: bool) {
    let (text, mut m) = fixture(name);
    if specialise {
        m = syntax::specialize(&m).expect("specialise");
    }
    let def = m.defs.last().expect("an entry").clone();
    let s = unf::lower(&m, &def).expect("lower");
    unf::verify(&s).expect("source-unf verifies");
    let s_text = unf::to_ron(&s);
    assert_eq!(
        unf::to_ron(&unf::from_ron(&s_text, unf::Kind::Source).expect("read")),
        s_text
    );
    let t = reverse::reverse(&s, &reverse::Config::default()).expect("reverse");
    unf::verify(&t).expect("target-unf verifies");
    let t_text = unf::to_ron(&t);
    assert_eq!(
        unf::to_ron(&unf::from_ron(&t_text, unf::Kind::Target).expect("read")),
        t_text
    );
    let g = unf::raise(&t).expect("raise");
    if let Err(errs) = syntax::verify(&g) {
        panic!(
            "{name}: the gradient program does not verify: {errs:?}\n{}",
            syntax::print::module(&g)
        );
    }
    let (at, value, grads) = expectations(&text);
    let args: Vec<V> = def
        .params
        .iter()
        .map(|p| {
            at.iter()
                .find(|(n, _)| n == p.name.as_str())
                .expect("an input per parameter")
                .1
                .clone()
        })
        .collect();
    let out = run(&g, &args);
    let V::T(items) = out else {
        panic!("{name}: not a tuple")
    };
    finite_differences(name, &m, &g, &args);
    if let Some(v) = value {
        assert!(
            close(&items[0], &v),
            "{name}: value {:?}, expected {v:?}",
            items[0]
        );
    }
    assert!(!grads.is_empty(), "{name}: no grad lines");
    for (p, expected) in grads {
        let i = def
            .params
            .iter()
            .position(|q| q.name.as_str() == p)
            .expect("a parameter");
        assert!(
            close(&items[i + 1], &expected),
            "{name}: grad {p} = {:?}, expected {expected:?}",
            items[i + 1]
        );
    }
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

/// Flattens the reals of some values, and rebuilds values of the same
/// shapes from a flat vector.
fn flatten(vs: &[V]) -> Vec<f64> {
    vs.iter().flat_map(|v| v.reals()).collect()
}

fn unflatten(shape: &[V], flat: &[f64]) -> Vec<V> {
    let mut i = 0;
    shape
        .iter()
        .map(|v| match v {
            V::R(_) => {
                i += 1;
                V::R(flat[i - 1])
            }
            V::A(xs) => {
                i += xs.len();
                V::A(flat[i - xs.len()..i].iter().map(|&x| V::R(x)).collect())
            }
            other => panic!("unexpected input {other:?}"),
        })
        .collect()
}

/// At a few pseudo-random points near the fixture's inputs, the gradient
/// agrees with central finite differences of the Source program.
fn finite_differences(name: &str, m: &syntax::Module, g: &syntax::Module, shape: &[V]) {
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move || {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((seed >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
    };
    let base = flatten(shape);
    for _ in 0..5 {
        let x: Vec<f64> = base.iter().map(|b| b + 0.5 * next()).collect();
        let f = |x: &[f64]| run(m, &unflatten(shape, x)).r();
        let V::T(items) = run(g, &unflatten(shape, &x)) else {
            panic!("{name}: not a tuple")
        };
        let grad = flatten(&items[1..]);
        for i in 0..x.len() {
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
}

fn refused(name: &str, construct: &str) {
    let (text, m) = fixture(name);
    let def = m.defs.last().expect("an entry");
    let err = unf::lower(&m, def).expect_err("not supported yet");
    assert!(
        err.to_string()
            .starts_with(&format!("not supported yet by reverse mode: `{construct}`")),
        "{name}: {err}"
    );
    let span = err.span();
    assert!(!span.is_generated(), "{name}: no span");
    let written = &text[span.lo as usize..span.hi as usize];
    assert!(
        written.contains(construct),
        "{name}: the span shows `{written}`"
    );
}

#[test]
fn relu_sum_is_refused() {
    refused("relu_sum", "if");
}
#[test]
fn horner_is_refused() {
    refused("horner", "foldl");
}
