//! Independent oracles: the reference primals of GradBench's C++
//! (cpp/gradbench/evals/*.hpp, read through the search tool) written again
//! here in plain Rust, central finite differences through the tool's own
//! primal, ADBench's expected files, and GradBench's comparison.

use serde_json::Value as Json;

/// GradBench's check: |x - y| / max(1, |x| + |y|) <= tol, element by element.
pub fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() / 1f64.max(a.abs() + b.abs()) <= tol
}

/// Relative closeness for values far from 1 (the gradients of lstm are 1e-6).
pub fn rel_close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol * a.abs().max(b.abs()).max(1e-300)
}

/// Every real of a JSON value, in order.
pub fn reals(j: &Json) -> Vec<f64> {
    let mut out = Vec::new();
    walk(j, &mut out);
    out
}

fn walk(j: &Json, out: &mut Vec<f64>) {
    match j {
        Json::Number(n) => out.push(n.as_f64().expect("a finite number")),
        Json::Array(items) => items.iter().for_each(|i| walk(i, out)),
        other => panic!("expected numbers, found {other}"),
    }
}

/// Asserts `got` equals `want` element by element within `tol` by `cmp`.
pub fn assert_all(what: &str, got: &[f64], want: &[f64], tol: f64, cmp: fn(f64, f64, f64) -> bool) {
    assert_eq!(
        got.len(),
        want.len(),
        "{what}: {} reals, expected {}",
        got.len(),
        want.len()
    );
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(cmp(*g, *w, tol), "{what}[{i}]: {g}, expected {w}");
    }
}

/// The numbers after the line starting with `label` in an ADBench
/// expected file (which may run over several lines, until the next label
/// or comment).
pub fn expected(file: &str, label: &str) -> Vec<f64> {
    let mut out = Vec::new();
    let mut on = false;
    for line in file.lines() {
        let first = line.split_whitespace().next().unwrap_or("");
        if first.starts_with('#') {
            on = false;
            continue;
        }
        if first.parse::<f64>().is_err() && !first.is_empty() {
            on = first == label;
            // The label line may carry a count or sizes: skip them.
            continue;
        }
        if on {
            out.extend(
                line.split_whitespace()
                    .map(|w| w.parse::<f64>().expect("a number")),
            );
        }
    }
    assert!(!out.is_empty(), "no `{label}` in the expected file");
    out
}

/// The numbers on the line of `label` itself, after the label.
pub fn expected_line(file: &str, label: &str) -> Vec<f64> {
    let line = file
        .lines()
        .find(|l| l.split_whitespace().next() == Some(label))
        .unwrap_or_else(|| panic!("no `{label}` line in the expected file"));
    line.split_whitespace()
        .skip(1)
        .map(|w| w.parse::<f64>().expect("a number"))
        .collect()
}

/// The number after `key=` in an expected file's comments.
pub fn expected_key(file: &str, key: &str) -> f64 {
    let at = file
        .find(key)
        .unwrap_or_else(|| panic!("no `{key}` in the expected file"))
        + key.len();
    let rest = &file[at..];
    let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
    rest[..end].parse().expect("a number")
}

/// A test data file.
pub fn data(name: &str) -> String {
    let path = format!("{}/tests/data/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// lse.hpp's primal.
pub fn lse(x: &[f64]) -> f64 {
    let a = x.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    x.iter().map(|v| (v - a).exp()).sum::<f64>().ln() + a
}

/// llsq.hpp's primal, with its powers.
pub fn llsq(x: &[f64], n: usize) -> f64 {
    let mut sum = 0.0;
    for i in 0..n {
        let t = -1.0 + i as f64 * 2.0 / (n as f64 - 1.0);
        let s = if t > 0.0 {
            1.0
        } else if t < 0.0 {
            -1.0
        } else {
            0.0
        };
        let r = s - x
            .iter()
            .enumerate()
            .map(|(j, xj)| xj * t.powi(j as i32))
            .sum::<f64>();
        sum += r * r;
    }
    sum / 2.0
}

/// ode.hpp's primal: s Runge-Kutta steps to t = 2.
pub fn ode(x: &[f64], s: usize) -> Vec<f64> {
    let n = x.len();
    let f = |y: &[f64]| -> Vec<f64> {
        (0..n)
            .map(|i| if i == 0 { x[0] } else { x[i] * y[i - 1] })
            .collect()
    };
    let h = 2.0 / s as f64;
    let mut y = vec![0.0; n];
    for _ in 0..s {
        let k1 = f(&y);
        let y1: Vec<f64> = (0..n).map(|i| y[i] + h * k1[i] / 2.0).collect();
        let k2 = f(&y1);
        let y2: Vec<f64> = (0..n).map(|i| y[i] + h * k2[i] / 2.0).collect();
        let k3 = f(&y2);
        let y3: Vec<f64> = (0..n).map(|i| y[i] + h * k3[i]).collect();
        let k4 = f(&y3);
        for i in 0..n {
            y[i] += h * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i]) / 6.0;
        }
    }
    y
}

/// kmeans.hpp's cost, and the Newton direction in closed form: for each
/// centroid, the gradient sum_i 2 (c - p_i) over its points divided by
/// the Hessian's 2 |points|, that is c minus the mean of its points.
pub fn kmeans(points: &[Vec<f64>], centroids: &[Vec<f64>]) -> (f64, Vec<Vec<f64>>) {
    let d2 = |a: &[f64], b: &[f64]| a.iter().zip(b).map(|(u, v)| (u - v) * (u - v)).sum::<f64>();
    let mut cost = 0.0;
    let mut sums = vec![vec![0.0; centroids[0].len()]; centroids.len()];
    let mut counts = vec![0usize; centroids.len()];
    for p in points {
        let (j, best) = centroids
            .iter()
            .enumerate()
            .map(|(j, c)| (j, d2(p, c)))
            .fold((0, f64::INFINITY), |a, b| if b.1 < a.1 { b } else { a });
        cost += best;
        counts[j] += 1;
        sums[j].iter_mut().zip(p).for_each(|(s, v)| *s += v);
    }
    let dir = centroids
        .iter()
        .zip(sums.iter().zip(&counts))
        .map(|(c, (s, &k))| c.iter().zip(s).map(|(c, s)| c - s / k as f64).collect())
        .collect();
    (cost, dir)
}

/// det.hpp's determinant: expansion by minors along the first row (the
/// recursion det.hpp writes with its row and column lists).
pub fn det(a: &[Vec<f64>]) -> f64 {
    let n = a.len();
    if n == 0 {
        return 1.0;
    }
    (0..n)
        .map(|j| {
            let sign = if j % 2 == 0 { 1.0 } else { -1.0 };
            sign * a[0][j] * det(&minor(a, 0, j))
        })
        .sum()
}

/// `a` without row `i` and column `j`.
pub fn minor(a: &[Vec<f64>], i: usize, j: usize) -> Vec<Vec<f64>> {
    a.iter()
        .enumerate()
        .filter(|&(r, _)| r != i)
        .map(|(_, row)| {
            row.iter()
                .enumerate()
                .filter(|&(c, _)| c != j)
                .map(|(_, v)| *v)
                .collect()
        })
        .collect()
}

/// The gradient of the determinant in closed form: the cofactor matrix,
/// (-1)^(i+j) det(minor(i, j)), which is det(A) A^-T where A is invertible
/// and is right at singular matrices too.
pub fn cofactors(a: &[Vec<f64>]) -> Vec<Vec<f64>> {
    let n = a.len();
    (0..n)
        .map(|i| {
            (0..n)
                .map(|j| {
                    let sign = if (i + j) % 2 == 0 { 1.0 } else { -1.0 };
                    sign * det(&minor(a, i, j))
                })
                .collect()
        })
        .collect()
}
