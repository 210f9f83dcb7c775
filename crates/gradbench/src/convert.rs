//! GradBench's JSON to the programs' values and back. Inputs are read
//! field by field against what the eval's README promises, and every error
//! says where (`input.data.points[3][1]`) and what was expected; outputs
//! are written with reals in serde_json's shortest round-trip form.

use semantics::Value;
use serde_json::Value as Json;

use crate::protocol::describe;

/// A part of an evaluate message's input, with the path that names it in
/// errors.
#[derive(Debug, Clone)]
pub struct Input<'a> {
    json: &'a Json,
    path: String,
}

/// A conversion error: where and what.
pub type Result<T> = std::result::Result<T, String>;

impl<'a> Input<'a> {
    /// The whole input of a message.
    pub fn root(json: &'a Json) -> Input<'a> {
        Input {
            json,
            path: "input".to_string(),
        }
    }

    /// The JSON itself.
    pub fn json(&self) -> &'a Json {
        self.json
    }

    /// Member `name` of an object (an error if there is none).
    pub fn field(&self, name: &str) -> Result<Input<'a>> {
        let Json::Object(obj) = self.json else {
            return Err(format!(
                "{} must be an object, not {}",
                self.path,
                describe(self.json)
            ));
        };
        let path = format!("{}.{name}", self.path);
        match obj.get(name) {
            Some(json) => Ok(Input { json, path }),
            None => Err(format!("{path} is missing")),
        }
    }

    /// Member `name`, if present.
    pub fn has(&self, name: &str) -> bool {
        matches!(self.json, Json::Object(obj) if obj.contains_key(name))
    }

    /// A number.
    pub fn real(&self) -> Result<f64> {
        real_at(self.json, &self.path)
    }

    /// An integer number.
    pub fn int(&self) -> Result<i64> {
        int_at(self.json, &self.path)
    }

    /// A boolean.
    pub fn bool(&self) -> Result<bool> {
        match self.json {
            Json::Bool(b) => Ok(*b),
            other => Err(format!(
                "{} must be true or false, not {}",
                self.path,
                describe(other)
            )),
        }
    }

    /// An array of numbers.
    pub fn reals(&self) -> Result<Vec<f64>> {
        self.items()?
            .iter()
            .enumerate()
            .map(|(i, j)| real_at(j, &format!("{}[{i}]", self.path)))
            .collect()
    }

    /// An array of integers.
    pub fn ints(&self) -> Result<Vec<i64>> {
        self.items()?
            .iter()
            .enumerate()
            .map(|(i, j)| int_at(j, &format!("{}[{i}]", self.path)))
            .collect()
    }

    /// An array of arrays of numbers, all rows of one length.
    pub fn matrix(&self) -> Result<Vec<Vec<f64>>> {
        let rows = self.rows(|row| row.reals())?;
        same_lengths(&rows, &self.path)?;
        Ok(rows)
    }

    /// An array of arrays of integers, all rows of one length.
    pub fn int_matrix(&self) -> Result<Vec<Vec<i64>>> {
        let rows = self.rows(|row| row.ints())?;
        same_lengths(&rows, &self.path)?;
        Ok(rows)
    }

    /// An array of matrices (all of one shape).
    pub fn matrices(&self) -> Result<Vec<Vec<Vec<f64>>>> {
        let ms = self.rows(|m| m.matrix())?;
        let shape = |m: &Vec<Vec<f64>>| (m.len(), m.first().map_or(0, Vec::len));
        if let Some(first) = ms.first()
            && let Some(i) = ms.iter().position(|m| shape(m) != shape(first))
        {
            return Err(format!(
                "{}[{i}] is {}x{}, but {}[0] is {}x{}",
                self.path,
                shape(&ms[i]).0,
                shape(&ms[i]).1,
                self.path,
                shape(first).0,
                shape(first).1
            ));
        }
        Ok(ms)
    }

    fn items(&self) -> Result<&'a [Json]> {
        match self.json {
            Json::Array(items) => Ok(items),
            other => Err(format!(
                "{} must be an array, not {}",
                self.path,
                describe(other)
            )),
        }
    }

    fn rows<T>(&self, each: impl Fn(Input<'_>) -> Result<T>) -> Result<Vec<T>> {
        self.items()?
            .iter()
            .enumerate()
            .map(|(i, json)| {
                let path = format!("{}[{i}]", self.path);
                each(Input { json, path })
            })
            .collect()
    }
}

fn real_at(j: &Json, path: &str) -> Result<f64> {
    j.as_f64()
        .ok_or_else(|| format!("{path} must be a number, not {}", describe(j)))
}

fn int_at(j: &Json, path: &str) -> Result<i64> {
    j.as_i64()
        .ok_or_else(|| format!("{path} must be an integer, not {}", describe_number(j)))
}

fn describe_number(j: &Json) -> String {
    match j {
        Json::Number(n) => format!("the number {n}"),
        other => describe(other).to_string(),
    }
}

fn same_lengths<T>(rows: &[Vec<T>], path: &str) -> Result<()> {
    if let Some(first) = rows.first()
        && let Some(i) = rows.iter().position(|r| r.len() != first.len())
    {
        return Err(format!(
            "{path}[{i}] has {} elements, but {path}[0] has {}",
            rows[i].len(),
            first.len()
        ));
    }
    Ok(())
}

/// `[n]R`.
pub fn reals(xs: &[f64]) -> Value {
    Value::reals(xs)
}

/// `[n]Int`.
pub fn ints(xs: &[i64]) -> Value {
    Value::array(xs.iter().map(|&i| Value::Int(i)).collect())
}

/// `[n][m]R`.
pub fn matrix(rows: &[Vec<f64>]) -> Value {
    Value::array(rows.iter().map(|r| Value::reals(r)).collect())
}

/// `[n][m]Int`.
pub fn int_matrix(rows: &[Vec<i64>]) -> Value {
    Value::array(rows.iter().map(|r| ints(r)).collect())
}

/// A result as JSON: reals as numbers, arrays and tuples as arrays. A
/// non-finite real has no JSON form: an error naming where it is.
pub fn to_json(v: &Value) -> Result<Json> {
    to_json_at(v, &mut String::from("the result"))
}

fn to_json_at(v: &Value, path: &mut String) -> Result<Json> {
    match v {
        Value::Real(x) => serde_json::Number::from_f64(*x)
            .map(Json::Number)
            .ok_or_else(|| format!("{path} is {x}, which JSON cannot hold")),
        Value::Int(i) => Ok(Json::from(*i)),
        Value::Bool(b) => Ok(Json::Bool(*b)),
        Value::Array(items) | Value::Tuple(items) => {
            let mut out = Vec::with_capacity(items.len());
            for (i, item) in items.iter().enumerate() {
                let len = path.len();
                path.push_str(&format!("[{i}]"));
                out.push(to_json_at(item, path)?);
                path.truncate(len);
            }
            Ok(Json::Array(out))
        }
        Value::Closure(_) => Err(format!("{path} is a function")),
    }
}

/// The reals of a value in row-major order (arrays and tuples flattened).
pub fn flat_reals(v: &Value) -> Result<Vec<f64>> {
    let mut out = Vec::new();
    flatten(v, &mut out)?;
    Ok(out)
}

fn flatten(v: &Value, out: &mut Vec<f64>) -> Result<()> {
    match v {
        Value::Real(x) => {
            out.push(*x);
            Ok(())
        }
        Value::Array(items) | Value::Tuple(items) => {
            items.iter().try_for_each(|item| flatten(item, out))
        }
        other => Err(format!(
            "expected reals in the result, found {}",
            other.kind()
        )),
    }
}

/// A real result.
pub fn real_of(v: &Value, what: &str) -> Result<f64> {
    v.as_real()
        .ok_or_else(|| format!("{what} is {}, not a real", v.kind()))
}

/// An array result.
pub fn array_of<'v>(v: &'v Value, what: &str) -> Result<&'v [Value]> {
    v.as_array()
        .ok_or_else(|| format!("{what} is {}, not an array", v.kind()))
}

/// A tuple result of `k` components.
pub fn tuple_of<'v>(v: &'v Value, k: usize, what: &str) -> Result<&'v [Value]> {
    match v.as_tuple() {
        Some(items) if items.len() == k => Ok(items),
        _ => Err(format!("{what} is {}, not a {k}-tuple", v.kind())),
    }
}
