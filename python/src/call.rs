//! The inputs of one call: the Python objects read against the entry's
//! types and held (NumPy arrays borrowed, not copied) for as long as the
//! call runs, then lent to the library as `adrev::Inputs`, their sizes
//! checked across all of them by the evaluator's rules (`Data::check`).

use data::{Buffer, Data, Dense};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};
use semantics::{SizeEnv, Value};
use std::borrow::Cow;
use syntax::{Def, Ty};

use crate::errors::{Class, from_adrev, raise};
use crate::to_value::{self, Held};

/// The inputs of one call, read and held.
pub struct CallInputs<'py> {
    /// One per parameter, in order.
    args: Vec<Held<'py>>,
    /// For a JVP, one per parameter (`None`: zero).
    tangents: Vec<Option<Held<'py>>>,
    /// For a VJP.
    cotangent: Option<Held<'py>>,
}

/// Reads the Python inputs of a call of `entry` for `kind`.
pub fn hold<'py>(
    entry: &Def,
    inputs: &Bound<'py, PyDict>,
    tangents: Option<&Bound<'py, PyDict>>,
    cotangent: Option<&Bound<'py, PyAny>>,
    kind: adrev::Kind,
) -> PyResult<CallInputs<'py>> {
    let given = known_names(entry, inputs, "inputs")?;
    let mut args = Vec::with_capacity(entry.params.len());
    for p in &entry.params {
        let name = p.name.as_str();
        let ty = param_ty(entry, name)?;
        let Some((_, obj)) = given.iter().find(|(n, _)| n == name) else {
            return Err(raise(
                Class::Input,
                format!(
                    "no value for the parameter `{name}` of `{}`: give {name}={}",
                    entry.name,
                    to_value::expected_text(ty)
                ),
            ));
        };
        args.push(read(obj, ty, name)?);
    }
    let mut held_tangents = Vec::new();
    if kind == adrev::Kind::Jvp {
        let given = match tangents {
            Some(t) => known_names(entry, t, "tangents")?,
            None => Vec::new(),
        };
        for p in &entry.params {
            let name = p.name.as_str();
            let ty = param_ty(entry, name)?;
            held_tangents.push(match given.iter().find(|(n, _)| n == name) {
                Some((_, obj)) => Some(read(obj, ty, &format!("tangent {name}"))?),
                None => None,
            });
        }
    }
    let held_cotangent = if kind == adrev::Kind::Vjp {
        let ty = entry.ret.as_ref().ok_or_else(|| untyped("the result"))?;
        let Some(obj) = cotangent else {
            return Err(raise(
                Class::Input,
                format!("a VJP needs a cotangent: {}", to_value::expected_text(ty)),
            ));
        };
        Some(read(obj, ty, "cotangent")?)
    } else {
        None
    };
    Ok(CallInputs {
        args,
        tangents: held_tangents,
        cotangent: held_cotangent,
    })
}

impl CallInputs<'_> {
    /// The inputs as the library takes them, borrowing the held arrays,
    /// and the sizes they bind.
    pub fn lend(&self, entry: &Def) -> PyResult<(adrev::Inputs<'_>, SizeEnv)> {
        let mut sizes = SizeEnv::new();
        let mut out = adrev::Inputs::new();
        let mut lent = Vec::with_capacity(self.args.len());
        for (p, h) in entry.params.iter().zip(&self.args) {
            let name = p.name.as_str();
            let d = checked(h, param_ty(entry, name)?, name, &mut sizes)?;
            out = out.with_data(name, d.clone());
            lent.push(d);
        }
        for ((p, t), arg) in entry.params.iter().zip(&self.tangents).zip(&lent) {
            let name = p.name.as_str();
            let d = match t {
                Some(h) => checked(
                    h,
                    param_ty(entry, name)?,
                    &format!("tangent {name}"),
                    &mut sizes,
                )?,
                None => zeros_like(arg)?,
            };
            out = out.tangent(name, adrev::Given::Data(d));
        }
        if let Some(h) = &self.cotangent {
            let ty = entry.ret.as_ref().ok_or_else(|| untyped("the result"))?;
            out = out.cotangent(adrev::Given::Data(checked(h, ty, "cotangent", &mut sizes)?));
        }
        Ok((out, sizes))
    }
}

/// Checks that every key of `dict` names a parameter of `entry` (the
/// library's own message for an unknown name).
fn known_names<'py>(
    entry: &Def,
    dict: &Bound<'py, PyDict>,
    what: &str,
) -> PyResult<Vec<(String, Bound<'py, PyAny>)>> {
    let mut out = Vec::with_capacity(dict.len());
    for (k, v) in dict.iter() {
        let Ok(name) = k.cast::<PyString>() else {
            return Err(raise(
                Class::Input,
                format!("{what} are named by strings, not by {}", k.repr()?),
            ));
        };
        let name = name.to_string();
        adrev::Wrt::Names(vec![name.clone()])
            .positions(entry)
            .map_err(|e| from_adrev(Class::Input, e))?;
        out.push((name, v));
    }
    Ok(out)
}

/// The type of parameter `name` of `entry`.
pub fn param_ty<'e>(entry: &'e Def, name: &str) -> PyResult<&'e Ty> {
    entry
        .params
        .iter()
        .find(|p| p.name.as_str() == name)
        .and_then(|p| p.ty.as_ref())
        .ok_or_else(|| untyped(name))
}

fn untyped(name: &str) -> PyErr {
    raise(
        Class::Internal,
        format!("`{name}` has no type after type checking"),
    )
}

fn read<'py>(obj: &Bound<'py, PyAny>, ty: &Ty, label: &str) -> PyResult<Held<'py>> {
    to_value::held(obj, ty, label).map_err(|m| raise(Class::Input, m))
}

/// The data of a held input, its sizes checked against the other inputs'.
fn checked<'h>(h: &'h Held<'_>, ty: &Ty, label: &str, sizes: &mut SizeEnv) -> PyResult<Data<'h>> {
    let d = h.data().map_err(|m| raise(Class::Internal, m))?;
    d.check(ty, sizes, Some(label))
        .map_err(|e| raise(Class::Input, format!("`{label}`: {e}")))?;
    Ok(d)
}

/// The zero tangent of an input: reals 0, integers and booleans as they
/// are (they have no tangent; the type keeps them).
fn zeros_like(d: &Data<'_>) -> PyResult<Data<'static>> {
    Ok(match d {
        Data::Dense(x) => match x.buffer() {
            Buffer::Real(r) => Dense::new(
                x.shape().to_vec(),
                Buffer::Real(Cow::Owned(vec![0.0; r.len()])),
            )
            .map(Data::Dense)
            .ok_or_else(|| raise(Class::Internal, "zeros of an array's shape do not fit it"))?,
            _ => Data::Dense(x.view().into_owned()),
        },
        Data::Tuple(items) => Data::Tuple(items.iter().map(zeros_like).collect::<PyResult<_>>()?),
        Data::Value(v) => Data::Value(zero_value(v)),
    })
}

fn zero_value(v: &Value) -> Value {
    match v {
        Value::Real(_) => Value::Real(0.0),
        Value::Tuple(items) => Value::tuple(items.iter().map(zero_value).collect()),
        Value::Array(items) => Value::array(items.iter().map(zero_value).collect()),
        other => other.clone(),
    }
}
