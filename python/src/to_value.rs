//! Python objects to values of a parameter's type, with the package's
//! typing rules (docs/python.md, "Inputs"):
//!
//! - `R`: a Python `float` (or `int`), a NumPy float64 scalar or 0-d array;
//! - `Int`: a Python `int` or NumPy integer scalar (never a `bool`);
//! - `Bool`: a Python or NumPy `bool`;
//! - an array of scalars `[n]...[m]S`: a NumPy array with one dimension per
//!   `[..]` and dtype float64 for `R`, a signed integer dtype for `Int`
//!   (or unsigned of at most 32 bits), bool for `Bool`;
//! - a tuple type: a Python tuple of as many components;
//! - any other array (of tuples): a Python list of its elements.
//!
//! Sizes (`[n]` shared between inputs) are checked afterwards, by the
//! evaluator's own check, over all inputs of the call together.

//!
//! An array of scalars is not copied: [`Held`] keeps a read-only borrow of
//! the NumPy array for the call and [`Held::data`] lends its buffer to the
//! library (`data::Dense`), which hands it to generated C in place. Only a
//! non-contiguous or unaligned array, or an integer array of another width
//! than 64 bits, is copied first (by `numpy.require`).

use data::{Buffer, Data, Dense};
use numpy::{
    PyArrayDescrMethods, PyArrayDyn, PyArrayMethods, PyReadonlyArrayDyn, PyUntypedArray,
    PyUntypedArrayMethods,
};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyFloat, PyInt, PyList, PyTuple};
use semantics::Value;
use std::borrow::Cow;
use syntax::Ty;

/// One input read against its type, holding the NumPy arrays its data
/// borrows for the length of the call.
pub enum Held<'py> {
    /// An array of reals.
    Real(PyReadonlyArrayDyn<'py, f64>),
    /// An array of integers.
    Int(PyReadonlyArrayDyn<'py, i64>),
    /// An array of booleans.
    Bool(PyReadonlyArrayDyn<'py, bool>),
    /// A tuple.
    Tuple(Vec<Held<'py>>),
    /// A scalar, or an array of tuples (a list), as a value.
    Value(Value),
}

impl Held<'_> {
    /// The data of this input, arrays borrowed.
    pub fn data(&self) -> Result<Data<'_>, String> {
        match self {
            Held::Real(a) => dense_data(
                a.shape(),
                a.as_slice().map(|s| Buffer::Real(Cow::Borrowed(s))),
            ),
            Held::Int(a) => dense_data(
                a.shape(),
                a.as_slice().map(|s| Buffer::Int(Cow::Borrowed(s))),
            ),
            Held::Bool(a) => dense_data(
                a.shape(),
                a.as_slice().map(|s| Buffer::Bool(Cow::Borrowed(s))),
            ),
            Held::Tuple(items) => items
                .iter()
                .map(Held::data)
                .collect::<Result<_, _>>()
                .map(Data::Tuple),
            Held::Value(v) => Ok(Data::Value(v.clone())),
        }
    }
}

fn dense_data<'a>(
    shape: &[usize],
    buffer: Result<Buffer<'a>, numpy::AsSliceError>,
) -> Result<Data<'a>, String> {
    let buffer =
        buffer.map_err(|e| format!("an array `numpy.require` made C-contiguous is not: {e}"))?;
    Dense::new(shape.to_vec(), buffer)
        .map(Data::Dense)
        .ok_or_else(|| format!("an array of shape {shape:?} holds another number of elements"))
}

/// Reads `obj` as an input of type `ty`, arrays of scalars held, not copied.
pub fn held<'py>(obj: &Bound<'py, PyAny>, ty: &Ty, path: &str) -> Result<Held<'py>, String> {
    match ty {
        Ty::Tuple(items) => {
            let t = tuple_of(obj, ty, items.len(), path)?;
            let mut out = Vec::with_capacity(items.len());
            for (i, (item, ity)) in t.iter().zip(items).enumerate() {
                out.push(held(&item, ity, &component(path, i))?);
            }
            Ok(Held::Tuple(out))
        }
        Ty::Array(..) => match scalar_leaf(ty) {
            Some((rank, leaf)) => dense(obj, ty, rank, leaf, path),
            None => value(obj, ty, path).map(Held::Value),
        },
        _ => value(obj, ty, path).map(Held::Value),
    }
}

/// `obj` as a tuple of `len` components.
fn tuple_of<'py>(
    obj: &Bound<'py, PyAny>,
    ty: &Ty,
    len: usize,
    path: &str,
) -> Result<Bound<'py, PyTuple>, String> {
    let Ok(t) = obj.cast::<PyTuple>() else {
        return Err(found(path, &expected_text(ty), obj));
    };
    if t.len() != len {
        return Err(format!(
            "`{path}`: expected a tuple of {len} components for {ty}, found a tuple of {}",
            t.len()
        ));
    }
    Ok(t.clone())
}

/// The path of component `i` (0-based) of a tuple: projections are
/// 1-based in the language (`p.1`).
fn component(path: &str, i: usize) -> String {
    format!("{path}.{}", i + 1)
}

/// Reads `obj` as a value of `ty` (a copy: the parts of an array of
/// tuples); the error says where inside (`path`, e.g. `x1.1` or
/// `pts[3]`) what was expected and what was found.
fn value(obj: &Bound<'_, PyAny>, ty: &Ty, path: &str) -> Result<Value, String> {
    match ty {
        Ty::Real => real(obj, path).map(Value::Real),
        Ty::Int => int(obj, path).map(Value::Int),
        Ty::Bool => boolean(obj, path).map(Value::Bool),
        Ty::Tuple(items) => {
            let t = tuple_of(obj, ty, items.len(), path)?;
            let mut out = Vec::with_capacity(items.len());
            for (i, (item, ity)) in t.iter().zip(items).enumerate() {
                out.push(value(&item, ity, &component(path, i))?);
            }
            Ok(Value::tuple(out))
        }
        Ty::Array(_, elem) => match scalar_leaf(ty) {
            Some((rank, leaf)) => Ok(dense(obj, ty, rank, leaf, path)?.data()?.to_value()),
            None => {
                let Ok(list) = obj.cast::<PyList>() else {
                    return Err(found(path, &expected_text(ty), obj));
                };
                let mut out = Vec::with_capacity(list.len());
                for (i, item) in list.iter().enumerate() {
                    out.push(value(&item, elem, &format!("{path}[{i}]"))?);
                }
                Ok(Value::array(out))
            }
        },
        Ty::Func(..) => Err(format!(
            "`{path}`: a function ({ty}) cannot be passed from Python"
        )),
    }
}

/// `(rank, scalar)` if `ty` is arrays of a scalar type, `rank` deep.
pub fn scalar_leaf(ty: &Ty) -> Option<(usize, &Ty)> {
    let mut rank = 0;
    let mut t = ty;
    while let Ty::Array(_, elem) = t {
        rank += 1;
        t = elem;
    }
    matches!(t, Ty::Real | Ty::Int | Ty::Bool).then_some((rank, t))
}

/// What the package takes for `ty`, for messages.
pub fn expected_text(ty: &Ty) -> String {
    match ty {
        Ty::Real => "a float (R)".to_string(),
        Ty::Int => "an int (Int)".to_string(),
        Ty::Bool => "a bool (Bool)".to_string(),
        Ty::Tuple(items) => format!("a tuple of {} components ({ty})", items.len()),
        Ty::Array(..) => match scalar_leaf(ty) {
            Some((rank, leaf)) => format!(
                "a NumPy {} array with {} ({ty})",
                dtype_name(leaf),
                dimensions(rank)
            ),
            None => format!("a list ({ty})"),
        },
        Ty::Func(..) => format!("a function ({ty})"),
    }
}

fn dtype_name(leaf: &Ty) -> &'static str {
    match leaf {
        Ty::Int => "int64",
        Ty::Bool => "bool",
        _ => "float64",
    }
}

fn dimensions(rank: usize) -> String {
    if rank == 1 {
        "1 dimension".to_string()
    } else {
        format!("{rank} dimensions")
    }
}

/// "`x`: expected ..., found a str".
fn found(path: &str, expected: &str, obj: &Bound<'_, PyAny>) -> String {
    format!("`{path}`: expected {expected}, found {}", describe(obj))
}

/// What a Python object is, for messages: its type, and for arrays its
/// dtype and shape.
fn describe(obj: &Bound<'_, PyAny>) -> String {
    if let Ok(a) = obj.cast::<PyUntypedArray>() {
        let dtype = a
            .dtype()
            .str()
            .map(|s| s.to_string())
            .unwrap_or_else(|_| "?".to_string());
        return format!(
            "a NumPy array of dtype {} and shape {}",
            dtype_str(&dtype),
            shape_text(a.shape())
        );
    }
    let name = obj
        .get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "?".to_string());
    format!("a {name}")
}

/// A shape as Python prints it: `(3,)`, `(2, 2)`.
fn shape_text(shape: &[usize]) -> String {
    match shape {
        [n] => format!("({n},)"),
        _ => {
            let dims: Vec<String> = shape.iter().map(usize::to_string).collect();
            format!("({})", dims.join(", "))
        }
    }
}

/// `<f8` as NumPy's name `float64` where it is one of the common ones.
fn dtype_str(s: &str) -> String {
    let name = match s.trim_start_matches(['<', '>', '=', '|']) {
        "f8" => "float64",
        "f4" => "float32",
        "f2" => "float16",
        "i8" => "int64",
        "i4" => "int32",
        "i2" => "int16",
        "i1" => "int8",
        "u8" => "uint64",
        "u4" => "uint32",
        "u2" => "uint16",
        "u1" => "uint8",
        "b1" => "bool",
        other => return other.to_string(),
    };
    name.to_string()
}

fn real(obj: &Bound<'_, PyAny>, path: &str) -> Result<f64, String> {
    if obj.is_instance_of::<PyBool>() {
        return Err(found(path, "a float (R)", obj));
    }
    if obj.is_instance_of::<PyFloat>() || obj.is_instance_of::<PyInt>() {
        return obj.extract::<f64>().map_err(|e| format!("`{path}`: {e}"));
    }
    if let Some(a) = zero_dim(obj)
        && a.dtype().kind() == b'f'
        && a.dtype().itemsize() == 8
    {
        return obj.extract::<f64>().map_err(|e| format!("`{path}`: {e}"));
    }
    Err(found(path, "a float (R)", obj))
}

fn int(obj: &Bound<'_, PyAny>, path: &str) -> Result<i64, String> {
    let is_int = !obj.is_instance_of::<PyBool>()
        && (obj.is_instance_of::<PyInt>()
            || zero_dim(obj).is_some_and(|a| matches!(a.dtype().kind(), b'i' | b'u')));
    if !is_int {
        return Err(found(path, "an int (Int)", obj));
    }
    obj.extract::<i64>()
        .map_err(|_| format!("`{path}`: {} does not fit in Int (64-bit)", repr(obj)))
}

fn boolean(obj: &Bound<'_, PyAny>, path: &str) -> Result<bool, String> {
    if obj.is_instance_of::<PyBool>() || zero_dim(obj).is_some_and(|a| a.dtype().kind() == b'b') {
        return obj.is_truthy().map_err(|e| format!("`{path}`: {e}"));
    }
    Err(found(path, "a bool (Bool)", obj))
}

fn repr(obj: &Bound<'_, PyAny>) -> String {
    obj.repr()
        .map(|r| r.to_string())
        .unwrap_or_else(|_| "the value".to_string())
}

/// A NumPy scalar or 0-d array as a 0-d array (NumPy scalars are
/// converted by `numpy.asarray`, which does not copy arrays).
fn zero_dim<'py>(obj: &Bound<'py, PyAny>) -> Option<Bound<'py, PyUntypedArray>> {
    let py = obj.py();
    let is_generic = py
        .import("numpy")
        .and_then(|np| np.getattr("generic"))
        .and_then(|g| obj.is_instance(&g))
        .unwrap_or(false);
    let arr = if is_generic {
        py.import("numpy")
            .and_then(|np| np.call_method1("asarray", (obj,)))
            .ok()?
    } else {
        obj.clone()
    };
    let a = arr.cast_into::<PyUntypedArray>().ok()?;
    (a.ndim() == 0).then_some(a)
}

/// A NumPy array of scalars of the dtype `leaf` asks for, held read-only
/// (made contiguous and aligned by `numpy.require` only if it is not).
fn dense<'py>(
    obj: &Bound<'py, PyAny>,
    ty: &Ty,
    rank: usize,
    leaf: &Ty,
    path: &str,
) -> Result<Held<'py>, String> {
    let Ok(a) = obj.cast::<PyUntypedArray>() else {
        let mut msg = found(path, &expected_text(ty), obj);
        if obj.is_instance_of::<PyList>() || obj.is_instance_of::<PyTuple>() {
            msg.push_str(&format!(
                " (convert it with numpy.asarray(..., dtype=numpy.{}))",
                dtype_name(leaf)
            ));
        }
        return Err(msg);
    };
    if a.ndim() != rank {
        return Err(format!(
            "`{path}`: expected {}, found an array with {} (shape {})",
            expected_text(ty),
            dimensions(a.ndim()),
            shape_text(a.shape())
        ));
    }
    let dtype = a.dtype();
    let (kind, size) = (dtype.kind(), dtype.itemsize());
    let accepted = match leaf {
        Ty::Real => kind == b'f' && size == 8,
        Ty::Int => kind == b'i' || (kind == b'u' && size <= 4),
        _ => kind == b'b',
    };
    if !accepted {
        return Err(format!(
            "`{path}`: expected {}, found {} (convert it with .astype(numpy.{}) if that is meant)",
            expected_text(ty),
            describe(obj),
            dtype_name(leaf)
        ));
    }
    let failed = |e: PyErr| format!("`{path}`: {e}");
    let ready = obj
        .py()
        .import("numpy")
        .and_then(|np| np.call_method1("require", (obj, dtype_name(leaf), "CA")))
        .map_err(failed)?;
    let borrowed = |e: numpy::BorrowError| format!("`{path}`: {e}");
    let cast = |e: pyo3::CastError<'_, '_>| format!("`{path}`: {e}");
    Ok(match leaf {
        Ty::Real => Held::Real(
            ready
                .cast::<PyArrayDyn<f64>>()
                .map_err(cast)?
                .try_readonly()
                .map_err(borrowed)?,
        ),
        Ty::Int => Held::Int(
            ready
                .cast::<PyArrayDyn<i64>>()
                .map_err(cast)?
                .try_readonly()
                .map_err(borrowed)?,
        ),
        _ => Held::Bool(
            ready
                .cast::<PyArrayDyn<bool>>()
                .map_err(cast)?
                .try_readonly()
                .map_err(borrowed)?,
        ),
    })
}
