//! Values to Python objects, shaped like the program's types: `R` a
//! `float`, `Int` an `int`, `Bool` a `bool`, tuples Python tuples, arrays
//! of scalars one NumPy array (float64, int64 or bool) with a dimension per
//! `[..]`, other arrays (of tuples) lists.
//!
//! The type, where known, decides the dtype and the trailing dimensions of
//! an empty array (`[0][3]R` is a `(0, 3)` float64 array); without it
//! (Jacobian and Hessian blocks) an empty array is float64 of the shape the
//! value shows.

use numpy::IntoPyArray;
use numpy::ndarray::{ArrayD, IxDyn};
use pyo3::prelude::*;
use pyo3::types::{PyList, PyTuple};
use semantics::{SizeEnv, Value};
use syntax::{Size, Ty};

use crate::errors::{Class, raise};
use crate::to_value::scalar_leaf;

/// The scalar type of a dense array.
#[derive(Clone, Copy, PartialEq)]
enum Scalar {
    Real,
    Int,
    Bool,
}

/// `v` as a Python object; `ty` is its type if known, `sizes` the sizes
/// the call's inputs bound (for the inner dimensions of empty arrays).
pub fn object<'py>(
    py: Python<'py>,
    v: &Value,
    ty: Option<&Ty>,
    sizes: &SizeEnv,
) -> PyResult<Bound<'py, PyAny>> {
    Ok(match v {
        Value::Real(x) => x.into_pyobject(py)?.into_any(),
        Value::Int(n) => n.into_pyobject(py)?.into_any(),
        Value::Bool(b) => b.into_pyobject(py)?.to_owned().into_any(),
        Value::Tuple(items) => {
            let tys = match ty {
                Some(Ty::Tuple(t)) if t.len() == items.len() => Some(t),
                _ => None,
            };
            let objs = items
                .iter()
                .enumerate()
                .map(|(i, it)| object(py, it, tys.map(|t| &t[i]), sizes))
                .collect::<PyResult<Vec<_>>>()?;
            PyTuple::new(py, objs)?.into_any()
        }
        Value::Array(items) => {
            let leaf = match ty {
                Some(t) => scalar_leaf(t).map(|(_, l)| scalar_of(l)),
                None => dense_leaf(v),
            };
            match leaf.and_then(|s| Some((s, dense_shape(v, ty, sizes)?))) {
                Some((scalar, shape)) => ndarray(py, v, scalar, shape)?,
                None => {
                    let elem = match ty {
                        Some(Ty::Array(_, e)) => Some(e.as_ref()),
                        _ => None,
                    };
                    let objs = items
                        .iter()
                        .map(|it| object(py, it, elem, sizes))
                        .collect::<PyResult<Vec<_>>>()?;
                    PyList::new(py, objs)?.into_any()
                }
            }
        }
        Value::Closure(_) => {
            return Err(raise(
                Class::Run,
                "the result is a function, which cannot be returned to Python",
            ));
        }
    })
}

fn scalar_of(t: &Ty) -> Scalar {
    match t {
        Ty::Int => Scalar::Int,
        Ty::Bool => Scalar::Bool,
        _ => Scalar::Real,
    }
}

/// The scalar type of an array value whose elements are (arrays of)
/// scalars, found at its first element; an empty array counts as reals.
fn dense_leaf(v: &Value) -> Option<Scalar> {
    match v {
        Value::Real(_) => Some(Scalar::Real),
        Value::Int(_) => Some(Scalar::Int),
        Value::Bool(_) => Some(Scalar::Bool),
        Value::Array(items) => items.first().map_or(Some(Scalar::Real), dense_leaf),
        _ => None,
    }
}

/// The shape of a rectangular array of scalars (`None` if ragged or not
/// of scalars). Below an empty array the dimensions come from the type.
fn dense_shape(v: &Value, ty: Option<&Ty>, sizes: &SizeEnv) -> Option<Vec<usize>> {
    let mut shape = Vec::new();
    let mut cur = v;
    let mut t = ty;
    while let Value::Array(items) = cur {
        shape.push(items.len());
        let elem = match t {
            Some(Ty::Array(_, e)) => Some(e.as_ref()),
            _ => None,
        };
        match items.first() {
            Some(first) => cur = first,
            None => {
                let mut rest = elem;
                while let Some(Ty::Array(size, e)) = rest {
                    shape.push(known_len(size, sizes)?);
                    rest = Some(e.as_ref());
                }
                return Some(shape);
            }
        }
        t = elem;
    }
    if !matches!(cur, Value::Real(_) | Value::Int(_) | Value::Bool(_)) {
        return None;
    }
    let total: usize = shape.iter().product();
    let mut count = 0;
    rectangular(v, &shape, &mut count)
        .then_some(shape)
        .filter(|_| count == total)
}

fn known_len(size: &Size, sizes: &SizeEnv) -> Option<usize> {
    match size {
        Size::Lit(k) => usize::try_from(*k).ok(),
        Size::Var(name, offset) => {
            let n = i128::from(sizes.get(name)?) + i128::from(*offset);
            usize::try_from(n).ok()
        }
        Size::Dyn => Some(0),
    }
}

/// Whether `v` has exactly `shape`, counting its scalars.
fn rectangular(v: &Value, shape: &[usize], count: &mut usize) -> bool {
    match (v, shape) {
        (Value::Array(items), [n, rest @ ..]) => {
            items.len() == *n && items.iter().all(|it| rectangular(it, rest, count))
        }
        (Value::Real(_) | Value::Int(_) | Value::Bool(_), []) => {
            *count += 1;
            true
        }
        _ => false,
    }
}

fn ndarray<'py>(
    py: Python<'py>,
    v: &Value,
    scalar: Scalar,
    shape: Vec<usize>,
) -> PyResult<Bound<'py, PyAny>> {
    let mut reals = Vec::new();
    let mut ints = Vec::new();
    let mut bools = Vec::new();
    flatten(v, &mut |x| match x {
        Value::Real(r) => reals.push(*r),
        Value::Int(n) => ints.push(*n),
        Value::Bool(b) => bools.push(*b),
        _ => {}
    });
    let shaped = |e: numpy::ndarray::ShapeError| {
        raise(Class::Internal, format!("a result of shape {shape:?}: {e}"))
    };
    let dim = IxDyn(&shape);
    Ok(match scalar {
        Scalar::Real => ArrayD::from_shape_vec(dim, reals)
            .map_err(shaped)?
            .into_pyarray(py)
            .into_any(),
        Scalar::Int => ArrayD::from_shape_vec(dim, ints)
            .map_err(shaped)?
            .into_pyarray(py)
            .into_any(),
        Scalar::Bool => ArrayD::from_shape_vec(dim, bools)
            .map_err(shaped)?
            .into_pyarray(py)
            .into_any(),
    })
}

fn flatten(v: &Value, out: &mut impl FnMut(&Value)) {
    match v {
        Value::Array(items) => items.iter().for_each(|it| flatten(it, out)),
        scalar => out(scalar),
    }
}
