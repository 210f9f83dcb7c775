//! Helpers of the tests: the workspace's fixtures and comparisons.

use semantics::Value;
use std::path::PathBuf;

/// The workspace root.
pub fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The reals of a value, depth first.
pub fn reals(v: &Value) -> Vec<f64> {
    let mut out = Vec::new();
    fn walk(v: &Value, out: &mut Vec<f64>) {
        match v {
            Value::Real(x) => out.push(*x),
            Value::Array(items) | Value::Tuple(items) => items.iter().for_each(|i| walk(i, out)),
            _ => {}
        }
    }
    walk(v, &mut out);
    out
}

/// Whether two values have the same reals within `rel` (relative to the
/// largest component, so that sums in another order agree).
pub fn close(a: &Value, b: &Value, rel: f64) -> Result<(), String> {
    let (xs, ys) = (reals(a), reals(b));
    if xs.len() != ys.len() {
        return Err(format!("{} reals vs {}: {a} vs {b}", xs.len(), ys.len()));
    }
    let scale = xs.iter().chain(&ys).fold(1.0_f64, |m, x| m.max(x.abs()));
    for (i, (x, y)) in xs.iter().zip(&ys).enumerate() {
        if (x - y).abs() > rel * scale || x.is_nan() != y.is_nan() {
            return Err(format!("component {i}: {x} vs {y} ({a} vs {b})"));
        }
    }
    Ok(())
}
