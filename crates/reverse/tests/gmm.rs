//! ADBench's Gaussian mixture model objective, written in the language
//! (fixtures/gmm/program.ad), evaluated and differentiated through the UNF
//! path and the reference evaluator: the value and the gradient with
//! respect to alphas, means and icf are ADBench's expected ones (relative
//! 1e-8), on ADBench's unit-test instance (d = 2, k = 3, n = 1) and on the
//! 1000-point instance d = 2, k = 10. The data files are read as they are
//! (ADBench's file format); the fixture's `-- at`/`-- grad` lines are
//! checked to be their transcription.

use semantics::{Expectations, Value};
use std::path::PathBuf;

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/gmm")
}

fn read(name: &str) -> String {
    std::fs::read_to_string(dir().join(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// An instance of ADBench's GMM file format: `d k n`, k alphas, k means of
/// d, k icf rows of d(d+1)/2, n points of d, then `gamma m`.
struct Instance {
    alphas: Vec<f64>,
    means: Vec<Vec<f64>>,
    icf: Vec<Vec<f64>>,
    x: Vec<Vec<f64>>,
    gamma: f64,
    m: f64,
    d: usize,
}

fn parse_instance(text: &str) -> Instance {
    let mut it = text.split_whitespace();
    let mut int = || -> usize { it.next().expect("a count").parse().expect("an integer") };
    let (d, k, n) = (int(), int(), int());
    let nums: Vec<f64> = text
        .split_whitespace()
        .skip(3)
        .map(|t| t.parse().expect("a number"))
        .collect();
    let mut at = 0;
    let mut take = |len: usize| {
        let v = nums[at..at + len].to_vec();
        at += len;
        v
    };
    let alphas = take(k);
    let means = (0..k).map(|_| take(d)).collect();
    let icf = (0..k).map(|_| take(d * (d + 1) / 2)).collect();
    let x = (0..n).map(|_| take(d)).collect();
    let w = take(2);
    Instance {
        alphas,
        means,
        icf,
        x,
        gamma: w[0],
        m: w[1],
        d,
    }
}

/// `log Gamma(h / 2)` for a positive integer h, from Gamma(1/2) = sqrt pi,
/// Gamma(1) = 1 and Gamma(z + 1) = z Gamma(z).
fn ln_gamma_half(h: u32) -> f64 {
    let (mut z, mut acc) = if h % 2 == 1 {
        (0.5, 0.5 * std::f64::consts::PI.ln())
    } else {
        (1.0, 0.0)
    };
    while z * 2.0 < f64::from(h) {
        acc += z.ln();
        z += 1.0;
    }
    acc
}

fn matrix(rows: &[Vec<f64>]) -> Value {
    Value::array(rows.iter().map(|r| Value::reals(r)).collect())
}

fn inputs(inst: &Instance) -> Vec<(String, Value)> {
    // sum_{j=1..d} lgamma((d + m + 1) / 2 + (1 - j) / 2), by halves.
    let nw2 = (inst.d as f64 + inst.m + 1.0) as u32;
    let lgamma_sum: f64 = (1..=inst.d as u32)
        .map(|j| ln_gamma_half(nw2 + 1 - j))
        .sum();
    vec![
        ("alphas".into(), Value::reals(&inst.alphas)),
        ("means".into(), matrix(&inst.means)),
        ("icf".into(), matrix(&inst.icf)),
        ("x".into(), matrix(&inst.x)),
        ("wishart_gamma".into(), Value::Real(inst.gamma)),
        ("wishart_m".into(), Value::Real(inst.m)),
        ("lgamma_sum".into(), Value::Real(lgamma_sum)),
    ]
}

fn program() -> (String, syntax::Module) {
    let text = read("program.ad");
    let m = syntax::compile(syntax::SourceFile {
        name: "fixtures/gmm/program.ad".into(),
        text: text.clone(),
    })
    .expect("the GMM program compiles");
    (text, m)
}

/// The value and the gradients (alphas, means, icf, flattened in that
/// order) through the UNF path.
fn value_and_gradient(m: &syntax::Module, inst: &Instance) -> (f64, Vec<f64>) {
    let def = m.defs.last().expect("gmm").clone();
    let cfg = reverse::Config {
        wrt: Some(vec!["alphas".into(), "means".into(), "icf".into()]),
    };
    let g = reverse::gradient(m, &def, &cfg).expect("reverse mode");
    syntax::verify(&g).expect("the gradient program verifies");
    let out = semantics::eval_entry(&g, None, &inputs(inst)).expect("runs");
    let items = out.as_tuple().expect("a tuple");
    let mut flat = Vec::new();
    for v in &items[1..] {
        flatten(v, &mut flat);
    }
    (items[0].as_real().expect("a real"), flat)
}

fn flatten(v: &Value, out: &mut Vec<f64>) {
    match v {
        Value::Real(x) => out.push(*x),
        Value::Array(items) => items.iter().for_each(|x| flatten(x, out)),
        _ => panic!("not reals: {v}"),
    }
}

fn close(got: f64, want: f64, what: &str) {
    assert!(
        (got - want).abs() <= 1e-8 * want.abs().max(1e-3),
        "{what}: {got}, expected {want}"
    );
}

#[test]
fn adbench_unit_test_instance() {
    let (_, m) = program();
    let inst = parse_instance(&read("gmm_test.txt"));
    let expected = read("gmm_test.expected.txt");
    let mut lines = expected.lines().filter(|l| !l.starts_with('#'));
    let objective: f64 = lines
        .next()
        .and_then(|l| l.strip_prefix("objective "))
        .expect("objective line")
        .parse()
        .expect("a number");
    let count: usize = lines
        .next()
        .and_then(|l| l.strip_prefix("gradient "))
        .expect("gradient line")
        .parse()
        .expect("a count");
    let grad: Vec<f64> = lines
        .flat_map(str::split_whitespace)
        .map(|t| t.parse().expect("a number"))
        .collect();
    assert_eq!(grad.len(), count);
    let (value, got) = value_and_gradient(&m, &inst);
    close(value, objective, "objective");
    assert_eq!(got.len(), count);
    for (i, (g, w)) in got.iter().zip(&grad).enumerate() {
        close(*g, *w, &format!("gradient {i}"));
    }
}

#[test]
fn adbench_1000_points_d2_k10() {
    let (_, m) = program();
    let inst = parse_instance(&read("gmm_d2_K10.txt"));
    assert_eq!(inst.x.len(), 1000);
    let expected = read("gmm_1k_d2_K10.expected.txt");
    let mut objective = None;
    let mut grad = Vec::new();
    let mut lines = expected.lines().filter(|l| !l.starts_with('#'));
    while let Some(line) = lines.next() {
        if let Some(v) = line.strip_prefix("objective ") {
            objective = Some(v.parse::<f64>().expect("a number"));
        } else if line.starts_with("d_") {
            let values = lines.next().expect("the values line");
            grad.extend(
                values
                    .split_whitespace()
                    .map(|t| t.parse::<f64>().expect("a number")),
            );
        }
    }
    let (value, got) = value_and_gradient(&m, &inst);
    // The objective is given to 10 digits.
    let objective = objective.expect("an objective");
    assert!(
        (value - objective).abs() <= 1e-9 * objective.abs(),
        "objective {value}, expected {objective}"
    );
    assert_eq!(got.len(), 10 + 20 + 30);
    assert_eq!(grad.len(), got.len());
    for (i, (g, w)) in got.iter().zip(&grad).enumerate() {
        close(*g, *w, &format!("gradient {i}"));
    }
}

#[test]
fn the_fixture_lines_transcribe_the_files() {
    let (text, m) = program();
    let def = m.defs.last().expect("gmm");
    let exp = Expectations::parse(&text);
    let inst = parse_instance(&read("gmm_test.txt"));
    let at = exp.inputs(def).expect("the -- at lines read");
    for ((name, given), (want_name, want)) in at.iter().zip(inputs(&inst)) {
        assert_eq!(*name, want_name);
        assert!(
            given.approx_eq(&want, 1e-15, 1e-15),
            "{name}: {given} vs {want}"
        );
    }
    let (value, flat) = value_and_gradient(&m, &inst);
    let v = exp.value(&m, def).expect("a value line").expect("reads");
    close(value, v.as_real().expect("a real"), "the -- value line");
    let mut lines = Vec::new();
    for p in ["alphas", "means", "icf"] {
        let g = exp.grad(def, p).expect("a grad line").expect("reads");
        flatten(&g, &mut lines);
    }
    for (i, (g, w)) in flat.iter().zip(&lines).enumerate() {
        close(*g, *w, &format!("the -- grad lines, entry {i}"));
    }
}
