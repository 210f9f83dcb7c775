//! Comparing values the way the fixtures' oracles do.

use semantics::Value;

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

/// `v` with its reals replaced, in order, by `flat[*at..]`.
pub fn with_reals(v: &Value, flat: &[f64], at: &mut usize) -> Value {
    match v {
        Value::Real(_) => {
            *at += 1;
            Value::Real(flat[*at - 1])
        }
        Value::Array(items) => {
            Value::array(items.iter().map(|i| with_reals(i, flat, at)).collect())
        }
        Value::Tuple(items) => {
            Value::tuple(items.iter().map(|i| with_reals(i, flat, at)).collect())
        }
        other => other.clone(),
    }
}

/// Whether two values have the same reals within `rel` relative to the
/// largest component (so that sums in another order agree), with the same
/// NaNs.
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

/// The components of a gradient program's result: `(value, g_1, ...)`,
/// or the value alone for an entry without parameters.
pub fn items(v: &Value) -> Vec<Value> {
    match v.as_tuple() {
        Some(items) => items.to_vec(),
        None => vec![v.clone()],
    }
}

/// The leaf at `path` (tuple components; arrays are walked through).
pub fn leaf_reals(v: &Value, path: &[u32]) -> Vec<f64> {
    match (v, path.split_first()) {
        (Value::Array(items), _) => items.iter().flat_map(|i| leaf_reals(i, path)).collect(),
        (Value::Tuple(items), Some((first, rest))) => items
            .get(*first as usize - 1)
            .map(|i| leaf_reals(i, rest))
            .unwrap_or_default(),
        _ => reals(v),
    }
}
