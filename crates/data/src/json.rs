//! JSON in and out (docs/data.md, "JSON"), with serde_json.
//!
//! A value of type `T` is JSON as follows, read by the expected type:
//! `R` a number, or one of the strings `"NaN"`, `"Infinity"`,
//! `"-Infinity"` (JSON has no non-finite numbers); `Int` an integer
//! number (no fraction or exponent) in i64; `Bool` `true`/`false`; `[n]T`
//! an array of n elements; a tuple `(T1, ..., Tk)` an array of k elements,
//! the unit value `()` the empty array. Output uses the same mapping, reals
//! in the shortest form that reads back to the same f64 (serde_json's,
//! ryu), `-0` as `-0.0`.

use std::borrow::Cow;
use std::io::Write;

use semantics::{Value, ValueError, describe};
use syntax::Ty;

use crate::dense::{Buffer, Data, Dense, Dtype, array_nest, prefix};
use crate::error::DataError;

/// A JSON value not yet typed (read from a file; typed by
/// [`Json::to_data`] once the parameter's type is known).
#[derive(Debug, Clone, PartialEq)]
pub struct Json(serde_json::Value);

/// Reads a JSON document (one value); `file` names it in messages.
pub fn read_json(bytes: &[u8], file: &str) -> Result<Json, DataError> {
    let text = utf8(bytes, file)?;
    serde_json::from_str(text)
        .map(Json)
        .map_err(|e| DataError::file(file, format!("not JSON: {e}")))
}

/// Reads an inputs file: a JSON object of named values, in the file's
/// order. A name given twice is an error.
pub fn read_json_object(bytes: &[u8], file: &str) -> Result<Vec<(String, Json)>, DataError> {
    let text = utf8(bytes, file)?;
    let entries: Entries = serde_json::from_str(text).map_err(|e| {
        let m = if e.is_data() {
            format!("not a JSON object of named values: {e}")
        } else {
            format!("not JSON: {e}")
        };
        DataError::file(file, m)
    })?;
    let mut out: Vec<(String, Json)> = Vec::with_capacity(entries.0.len());
    for (name, v) in entries.0 {
        if out.iter().any(|(n, _)| *n == name) {
            return Err(DataError::file(file, format!("`{name}` is given twice")));
        }
        out.push((name, Json(v)));
    }
    Ok(out)
}

fn utf8<'b>(bytes: &'b [u8], file: &str) -> Result<&'b str, DataError> {
    std::str::from_utf8(bytes).map_err(|e| {
        DataError::file(
            file,
            format!(
                "not UTF-8 text (byte {} is not part of a character)",
                e.valid_up_to() + 1
            ),
        )
    })
}

/// The members of a JSON object in order, duplicates kept (serde_json's
/// map would keep only the last).
struct Entries(Vec<(String, serde_json::Value)>);

impl<'de> serde::Deserialize<'de> for Entries {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Entries, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = Entries;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an object of named values")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut m: A,
            ) -> Result<Entries, A::Error> {
                let mut out = Vec::new();
                while let Some(entry) = m.next_entry::<String, serde_json::Value>()? {
                    out.push(entry);
                }
                Ok(Entries(out))
            }
        }
        d.deserialize_map(V)
    }
}

impl Json {
    /// The value as data of type `ty`: dense for arrays of a scalar (one
    /// flat buffer, no per-element value), a tuple of parts for tuples,
    /// a value otherwise. Errors say where inside (`.2[3]`), what was
    /// expected and what was found; size variables are checked later,
    /// across parameters ([`crate::check_args`]).
    pub fn to_data(&self, ty: &Ty) -> Result<Data<'static>, ValueError> {
        to_data(&self.0, ty)
    }
}

fn to_data(j: &serde_json::Value, ty: &Ty) -> Result<Data<'static>, ValueError> {
    syntax::stack::guard(|| {
        if let Some((dims, dtype)) = array_nest(ty) {
            return dense(j, dims.len(), dtype, ty).map(Data::Dense);
        }
        match (ty, j) {
            (Ty::Tuple(tys), serde_json::Value::Array(items)) if tys.len() == items.len() => items
                .iter()
                .zip(tys)
                .enumerate()
                .map(|(i, (j, t))| to_data(j, t).map_err(|e| prefix(e, &format!(".{}", i + 1))))
                .collect::<Result<Vec<_>, _>>()
                .map(Data::Tuple),
            _ => to_value(j, ty).map(Data::Value),
        }
    })
}

/// `j` as a dense array of `depth` levels of `dtype`; rows must agree.
fn dense(
    j: &serde_json::Value,
    depth: usize,
    dtype: Dtype,
    ty: &Ty,
) -> Result<Dense<'static>, ValueError> {
    let mut shape: Vec<Option<usize>> = vec![None; depth];
    let mut buffer = match dtype {
        Dtype::Real => Buffer::Real(Cow::Owned(Vec::new())),
        Dtype::Int => Buffer::Int(Cow::Owned(Vec::new())),
        Dtype::Bool => Buffer::Bool(Cow::Owned(Vec::new())),
    };
    let mut path = String::new();
    fill(j, ty, 0, &mut shape, &mut buffer, &mut path)?;
    let shape = shape.into_iter().map(|s| s.unwrap_or(0)).collect();
    Ok(Dense::new(shape, buffer).expect("invariant: a rectangular fill"))
}

fn fill(
    j: &serde_json::Value,
    ty: &Ty,
    depth: usize,
    shape: &mut [Option<usize>],
    out: &mut Buffer<'static>,
    path: &mut String,
) -> Result<(), ValueError> {
    let err = |path: &str, message: String| ValueError::Value {
        path: path.to_string(),
        message,
    };
    if depth == shape.len() {
        match out {
            Buffer::Real(b) => b.to_mut().push(real(j).map_err(|m| err(path, m))?),
            Buffer::Int(b) => b.to_mut().push(int(j).map_err(|m| err(path, m))?),
            Buffer::Bool(b) => b.to_mut().push(boolean(j).map_err(|m| err(path, m))?),
        }
        return Ok(());
    }
    let Ty::Array(_, elem) = ty else {
        // `depth` counts the array levels of `ty`, so this is not reached.
        return Err(err(
            path,
            format!("expected {}, found {}", describe(ty), kind(j)),
        ));
    };
    let serde_json::Value::Array(items) = j else {
        return Err(err(
            path,
            format!("expected {}, found {}", describe(ty), kind(j)),
        ));
    };
    match shape[depth] {
        None => shape[depth] = Some(items.len()),
        Some(n) if n == items.len() => {}
        Some(n) => {
            return Err(err(
                path,
                format!(
                    "expected an array of {n} elements like the rows before it, found {} (rows of different lengths)",
                    items.len()
                ),
            ));
        }
    }
    let at = path.len();
    for (i, it) in items.iter().enumerate() {
        path.truncate(at);
        path.push_str(&format!("[{i}]"));
        fill(it, elem, depth + 1, shape, out, path)?;
    }
    path.truncate(at);
    Ok(())
}

/// `j` as a value of type `ty` (arrays of tuples and what else has no
/// dense form).
fn to_value(j: &serde_json::Value, ty: &Ty) -> Result<Value, ValueError> {
    syntax::stack::guard(|| {
        let err = |message: String| ValueError::Value {
            path: String::new(),
            message,
        };
        match (ty, j) {
            (Ty::Real, _) => real(j).map(Value::Real).map_err(err),
            (Ty::Int, _) => int(j).map(Value::Int).map_err(err),
            (Ty::Bool, _) => boolean(j).map(Value::Bool).map_err(err),
            (Ty::Array(_, elem), serde_json::Value::Array(items)) => items
                .iter()
                .enumerate()
                .map(|(i, j)| to_value(j, elem).map_err(|e| prefix(e, &format!("[{i}]"))))
                .collect::<Result<Vec<_>, _>>()
                .map(Value::array),
            (Ty::Tuple(tys), serde_json::Value::Array(items)) if tys.len() == items.len() => items
                .iter()
                .zip(tys)
                .enumerate()
                .map(|(i, (j, t))| to_value(j, t).map_err(|e| prefix(e, &format!(".{}", i + 1))))
                .collect::<Result<Vec<_>, _>>()
                .map(Value::tuple),
            _ => Err(err(format!("expected {}, found {}", describe(ty), kind(j)))),
        }
    })
}

fn real(j: &serde_json::Value) -> Result<f64, String> {
    match j {
        // Integers too large for i64/u64 are parsed as f64 by serde_json;
        // i64 -> f64 rounds to nearest, as reading the decimal would.
        serde_json::Value::Number(n) => n
            .as_f64()
            .ok_or_else(|| format!("expected a real, found {n}")),
        serde_json::Value::String(s) => match s.as_str() {
            "NaN" => Ok(f64::NAN),
            "Infinity" => Ok(f64::INFINITY),
            "-Infinity" => Ok(f64::NEG_INFINITY),
            _ => Err(format!(
                "expected a real, found the string {j} (non-finite reals are \"NaN\", \"Infinity\", \"-Infinity\")"
            )),
        },
        _ => Err(format!("expected a real, found {}", kind(j))),
    }
}

fn int(j: &serde_json::Value) -> Result<i64, String> {
    match j {
        serde_json::Value::Number(n) => n.as_i64().ok_or_else(|| {
            if n.is_f64() {
                format!("expected an integer, found {n} (an integer has no fraction or exponent)")
            } else {
                format!("expected an integer, found {n}, which does not fit in 64 bits")
            }
        }),
        _ => Err(format!("expected an integer, found {}", kind(j))),
    }
}

fn boolean(j: &serde_json::Value) -> Result<bool, String> {
    match j {
        serde_json::Value::Bool(b) => Ok(*b),
        _ => Err(format!("expected a boolean, found {}", kind(j))),
    }
}

/// What a JSON value is, for messages.
fn kind(j: &serde_json::Value) -> String {
    match j {
        serde_json::Value::Null => "null".into(),
        serde_json::Value::Bool(b) => format!("`{b}`"),
        serde_json::Value::Number(n) => format!("the number {n}"),
        serde_json::Value::String(_) => format!("the string {j}"),
        serde_json::Value::Array(items) if items.len() == 1 => "an array of 1 element".into(),
        serde_json::Value::Array(items) => format!("an array of {} elements", items.len()),
        serde_json::Value::Object(_) => "an object".into(),
    }
}

/// Writes named results as one JSON object, one name per line, in the
/// given order (see the module doc for the mapping).
pub fn write_json<W: Write>(mut w: W, results: &[(&str, &Data<'_>)]) -> std::io::Result<()> {
    w.write_all(b"{")?;
    for (i, (name, data)) in results.iter().enumerate() {
        w.write_all(if i == 0 { b"\n  " } else { b",\n  " })?;
        serde_json::to_writer(&mut w, name)?;
        w.write_all(b": ")?;
        write_data(&mut w, data)?;
    }
    w.write_all(if results.is_empty() { b"}\n" } else { b"\n}\n" })
}

/// One value as JSON (no trailing newline).
pub fn write_json_value<W: Write>(mut w: W, data: &Data<'_>) -> std::io::Result<()> {
    write_data(&mut w, data)
}

fn write_data<W: Write>(w: &mut W, data: &Data<'_>) -> std::io::Result<()> {
    match data {
        Data::Dense(d) => write_dense(w, d, 0, 0),
        Data::Tuple(items) => {
            w.write_all(b"[")?;
            for (i, it) in items.iter().enumerate() {
                if i > 0 {
                    w.write_all(b", ")?;
                }
                write_data(w, it)?;
            }
            w.write_all(b"]")
        }
        Data::Value(v) => write_value(w, v),
    }
}

fn write_dense<W: Write>(
    w: &mut W,
    d: &Dense<'_>,
    depth: usize,
    offset: usize,
) -> std::io::Result<()> {
    if depth == d.shape().len() {
        return match d.buffer() {
            Buffer::Real(x) => write_real(w, x[offset]),
            Buffer::Int(x) => write!(w, "{}", x[offset]),
            Buffer::Bool(x) => write!(w, "{}", x[offset]),
        };
    }
    let stride: usize = d.shape()[depth + 1..].iter().product();
    w.write_all(b"[")?;
    for i in 0..d.shape()[depth] {
        if i > 0 {
            w.write_all(b", ")?;
        }
        write_dense(w, d, depth + 1, offset + i * stride)?;
    }
    w.write_all(b"]")
}

fn write_value<W: Write>(w: &mut W, v: &Value) -> std::io::Result<()> {
    syntax::stack::guard(|| match v {
        Value::Real(x) => write_real(w, *x),
        Value::Int(i) => write!(w, "{i}"),
        Value::Bool(b) => write!(w, "{b}"),
        Value::Tuple(items) | Value::Array(items) => {
            w.write_all(b"[")?;
            for (i, it) in items.iter().enumerate() {
                if i > 0 {
                    w.write_all(b", ")?;
                }
                write_value(w, it)?;
            }
            w.write_all(b"]")
        }
        Value::Closure(_) => Err(std::io::Error::other("a function value has no JSON form")),
    })
}

fn write_real<W: Write>(w: &mut W, x: f64) -> std::io::Result<()> {
    if x.is_nan() {
        w.write_all(b"\"NaN\"")
    } else if x.is_infinite() {
        w.write_all(if x > 0.0 {
            b"\"Infinity\""
        } else {
            b"\"-Infinity\""
        })
    } else {
        serde_json::to_writer(w, &x).map_err(std::io::Error::other)
    }
}
