//! Dense arrays (a shape and one flat buffer of f64, i64 or bool in row-major
//! order), and [`Data`]: a value as the readers produce it and the backends
//! consume it, dense wherever its type allows.
//!
//! A `[n][m]R` of 10^7 reals is 80 MB as a [`Dense`]; as a
//! `semantics::Value` it is ~24 bytes per element plus an `Rc` per row.
//! The conversion to `Value` ([`Data::to_value`]) happens only where the
//! evaluator needs it; the C backend reads the buffer in place.
//!
//! Invariant: a `Dense`'s buffer has exactly the product of its shape's
//! elements ([`Dense::new`] refuses anything else), so code handing the
//! buffer to C can trust the shape.

use std::borrow::Cow;

use semantics::{SizeEnv, Value, ValueError, describe};
use syntax::Ty;

/// The scalar type of a dense array's elements.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Dtype {
    /// `R`: f64 (NumPy `<f8`).
    Real,
    /// `Int`: i64 (NumPy `<i8`).
    Int,
    /// `Bool`: one byte, 0 or 1 (NumPy `|b1`).
    Bool,
}

impl Dtype {
    /// The dtype of a scalar type, if it is one.
    pub fn of(ty: &Ty) -> Option<Dtype> {
        match ty {
            Ty::Real => Some(Dtype::Real),
            Ty::Int => Some(Dtype::Int),
            Ty::Bool => Some(Dtype::Bool),
            _ => None,
        }
    }

    /// The language's name of the type (`R`, `Int`, `Bool`).
    pub fn name(self) -> &'static str {
        match self {
            Dtype::Real => "R",
            Dtype::Int => "Int",
            Dtype::Bool => "Bool",
        }
    }
}

/// A flat buffer of scalars, owned or borrowed.
#[derive(Debug, Clone, PartialEq)]
pub enum Buffer<'a> {
    /// Reals.
    Real(Cow<'a, [f64]>),
    /// Integers.
    Int(Cow<'a, [i64]>),
    /// Booleans.
    Bool(Cow<'a, [bool]>),
}

impl Buffer<'_> {
    /// The number of scalars.
    pub fn len(&self) -> usize {
        match self {
            Buffer::Real(x) => x.len(),
            Buffer::Int(x) => x.len(),
            Buffer::Bool(x) => x.len(),
        }
    }

    /// Whether there are no scalars.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The element type.
    pub fn dtype(&self) -> Dtype {
        match self {
            Buffer::Real(_) => Dtype::Real,
            Buffer::Int(_) => Dtype::Int,
            Buffer::Bool(_) => Dtype::Bool,
        }
    }

    /// A borrowed view of the same scalars.
    pub fn view(&self) -> Buffer<'_> {
        match self {
            Buffer::Real(x) => Buffer::Real(Cow::Borrowed(x)),
            Buffer::Int(x) => Buffer::Int(Cow::Borrowed(x)),
            Buffer::Bool(x) => Buffer::Bool(Cow::Borrowed(x)),
        }
    }

    /// The same scalars, owned.
    pub fn into_owned(self) -> Buffer<'static> {
        match self {
            Buffer::Real(x) => Buffer::Real(Cow::Owned(x.into_owned())),
            Buffer::Int(x) => Buffer::Int(Cow::Owned(x.into_owned())),
            Buffer::Bool(x) => Buffer::Bool(Cow::Owned(x.into_owned())),
        }
    }

    /// Scalar `i` as a value.
    fn value(&self, i: usize) -> Value {
        match self {
            Buffer::Real(x) => Value::Real(x[i]),
            Buffer::Int(x) => Value::Int(x[i]),
            Buffer::Bool(x) => Value::Bool(x[i]),
        }
    }
}

/// A dense array: a shape (outermost first; empty for a single scalar) and
/// its scalars in row-major (C) order.
#[derive(Debug, Clone, PartialEq)]
pub struct Dense<'a> {
    shape: Vec<usize>,
    buffer: Buffer<'a>,
}

impl<'a> Dense<'a> {
    /// A dense array; `None` unless the buffer holds exactly the product of
    /// the shape's elements.
    pub fn new(shape: Vec<usize>, buffer: Buffer<'a>) -> Option<Dense<'a>> {
        let want = shape.iter().try_fold(1usize, |a, &d| a.checked_mul(d))?;
        (want == buffer.len()).then_some(Dense { shape, buffer })
    }

    /// An array of reals borrowing `data` (`None` if the sizes disagree).
    pub fn reals(shape: Vec<usize>, data: &'a [f64]) -> Option<Dense<'a>> {
        Dense::new(shape, Buffer::Real(Cow::Borrowed(data)))
    }

    /// A single scalar.
    pub fn scalar(v: &Value) -> Option<Dense<'static>> {
        let buffer = match v {
            Value::Real(x) => Buffer::Real(Cow::Owned(vec![*x])),
            Value::Int(x) => Buffer::Int(Cow::Owned(vec![*x])),
            Value::Bool(x) => Buffer::Bool(Cow::Owned(vec![*x])),
            _ => return None,
        };
        Some(Dense {
            shape: Vec::new(),
            buffer,
        })
    }

    /// The shape, outermost first.
    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    /// The scalars in row-major order.
    pub fn buffer(&self) -> &Buffer<'a> {
        &self.buffer
    }

    /// The element type.
    pub fn dtype(&self) -> Dtype {
        self.buffer.dtype()
    }

    /// A borrowed view (no copy).
    pub fn view(&self) -> Dense<'_> {
        Dense {
            shape: self.shape.clone(),
            buffer: self.buffer.view(),
        }
    }

    /// The same array, owning its scalars.
    pub fn into_owned(self) -> Dense<'static> {
        Dense {
            shape: self.shape,
            buffer: self.buffer.into_owned(),
        }
    }

    /// The array as a value (nested arrays; a scalar for an empty shape).
    pub fn to_value(&self) -> Value {
        fn go(d: &Dense<'_>, depth: usize, offset: usize) -> Value {
            if depth == d.shape.len() {
                return d.buffer.value(offset);
            }
            let stride: usize = d.shape[depth + 1..].iter().product();
            Value::array(
                (0..d.shape[depth])
                    .map(|i| go(d, depth + 1, offset + i * stride))
                    .collect(),
            )
        }
        go(self, 0, 0)
    }

    /// The dense form of a value of type `ty`, when `ty` is a scalar or
    /// arrays of a scalar (`[n][m]R`) and the value is rectangular; the
    /// dims of an empty array's elements come from `sizes` where the type
    /// names them, and are 0 otherwise. `None` for other types or a value
    /// that does not have the type.
    pub fn from_value(v: &Value, ty: &Ty, sizes: &SizeEnv) -> Option<Dense<'static>> {
        let (dims, dtype) = array_nest(ty)?;
        let mut shape: Vec<Option<usize>> = vec![None; dims.len()];
        let mut buffer = match dtype {
            Dtype::Real => Buffer::Real(Cow::Owned(Vec::new())),
            Dtype::Int => Buffer::Int(Cow::Owned(Vec::new())),
            Dtype::Bool => Buffer::Bool(Cow::Owned(Vec::new())),
        };
        flatten(v, 0, &mut shape, &mut buffer)?;
        let shape = shape
            .iter()
            .zip(&dims)
            .map(|(s, size)| s.unwrap_or_else(|| size_of(size, sizes).unwrap_or(0)))
            .collect();
        Dense::new(shape, buffer)
    }

    /// Checks this array against `ty`, binding and checking size variables
    /// in `sizes` (shared by the inputs of one call) with the evaluator's
    /// rules and messages. `origin` names the input.
    pub fn check(
        &self,
        ty: &Ty,
        sizes: &mut SizeEnv,
        origin: Option<&str>,
    ) -> Result<(), ValueError> {
        let mut ty = ty;
        let mut path = String::new();
        for &len in &self.shape {
            match ty {
                Ty::Array(size, elem) => {
                    sizes
                        .check_len(size, elem, len, origin)
                        .map_err(|message| ValueError::Value {
                            path: path.clone(),
                            message,
                        })?;
                    // An empty array has no rows, so, as for the
                    // evaluator's `[]`, the sizes inside it are not
                    // checked (the C backend leaves them 0).
                    if len == 0 {
                        return Ok(());
                    }
                    ty = elem;
                    path.push_str("[0]");
                }
                _ => {
                    return Err(ValueError::Value {
                        path,
                        message: format!(
                            "expected {}, found {}",
                            describe(ty),
                            elements(len, self.dtype())
                        ),
                    });
                }
            }
        }
        if Dtype::of(ty) == Some(self.dtype()) {
            return Ok(());
        }
        let found = match self.dtype() {
            Dtype::Real => "a real",
            Dtype::Int => "an integer",
            Dtype::Bool => "a boolean",
        };
        Err(ValueError::Value {
            path,
            message: format!("expected {}, found {found}", describe(ty)),
        })
    }
}

/// `an array of 3 reals`, for messages about a dense array's level.
fn elements(len: usize, dtype: Dtype) -> String {
    format!("an array of {len} elements (of {})", dtype.name())
}

/// The sizes of the array levels and the scalar of `[s1]...[sk]S`, or
/// `None` for any other type.
pub(crate) fn array_nest(ty: &Ty) -> Option<(Vec<syntax::Size>, Dtype)> {
    let mut dims = Vec::new();
    let mut ty = ty;
    while let Ty::Array(size, elem) = ty {
        dims.push(size.clone());
        ty = elem;
    }
    Some((dims, Dtype::of(ty)?))
}

/// The length a size stands for, if known.
fn size_of(size: &syntax::Size, sizes: &SizeEnv) -> Option<usize> {
    match size {
        syntax::Size::Lit(k) => usize::try_from(*k).ok(),
        syntax::Size::Var(name, off) => {
            usize::try_from(sizes.get(name)? as i128 + *off as i128).ok()
        }
        syntax::Size::Dyn => None,
    }
}

fn flatten(
    v: &Value,
    depth: usize,
    shape: &mut [Option<usize>],
    out: &mut Buffer<'_>,
) -> Option<()> {
    if depth == shape.len() {
        match (v, out) {
            (Value::Real(x), Buffer::Real(b)) => b.to_mut().push(*x),
            (Value::Int(x), Buffer::Int(b)) => b.to_mut().push(*x),
            (Value::Bool(x), Buffer::Bool(b)) => b.to_mut().push(*x),
            _ => return None,
        }
        return Some(());
    }
    let items = v.as_array()?;
    match shape[depth] {
        None => shape[depth] = Some(items.len()),
        Some(n) if n == items.len() => {}
        Some(_) => return None,
    }
    items
        .iter()
        .try_for_each(|it| flatten(it, depth + 1, shape, out))
}

/// A value as read from a file or handed to a backend: dense where its
/// type is arrays of a scalar, a tuple of such parts, or a general value
/// (arrays of tuples, which have no single dense buffer).
#[derive(Debug, Clone, PartialEq)]
pub enum Data<'a> {
    /// A scalar or a rectangular array of scalars.
    Dense(Dense<'a>),
    /// A tuple (the unit value is the empty tuple).
    Tuple(Vec<Data<'a>>),
    /// Anything else, as the evaluator represents it.
    Value(Value),
}

impl Data<'_> {
    /// The value (copies dense arrays into nested values).
    pub fn to_value(&self) -> Value {
        match self {
            Data::Dense(d) => d.to_value(),
            Data::Tuple(items) => Value::tuple(items.iter().map(Data::to_value).collect()),
            Data::Value(v) => v.clone(),
        }
    }

    /// A value in the densest form its type allows: [`Data::Dense`] for
    /// arrays of a scalar, [`Data::Tuple`] for tuples, the value itself
    /// otherwise (or where it does not have the type). `sizes` gives the
    /// dims of empty arrays' elements (see [`Dense::from_value`]).
    pub fn from_value(v: &Value, ty: &Ty, sizes: &SizeEnv) -> Data<'static> {
        if let Some(d) = Dense::from_value(v, ty, sizes) {
            return Data::Dense(d);
        }
        match (ty, v) {
            (Ty::Tuple(tys), Value::Tuple(items)) if tys.len() == items.len() => Data::Tuple(
                items
                    .iter()
                    .zip(tys)
                    .map(|(v, t)| Data::from_value(v, t, sizes))
                    .collect(),
            ),
            _ => Data::Value(v.clone()),
        }
    }

    /// A borrowed view (dense buffers are not copied).
    pub fn view(&self) -> Data<'_> {
        match self {
            Data::Dense(d) => Data::Dense(d.view()),
            Data::Tuple(items) => Data::Tuple(items.iter().map(Data::view).collect()),
            Data::Value(v) => Data::Value(v.clone()),
        }
    }

    /// The same data, owning every buffer.
    pub fn into_owned(self) -> Data<'static> {
        match self {
            Data::Dense(d) => Data::Dense(d.into_owned()),
            Data::Tuple(items) => Data::Tuple(items.into_iter().map(Data::into_owned).collect()),
            Data::Value(v) => Data::Value(v),
        }
    }

    /// Checks this data against `ty` with the evaluator's rules, binding
    /// size variables in `sizes`; errors say where inside (`.2[0]`).
    pub fn check(
        &self,
        ty: &Ty,
        sizes: &mut SizeEnv,
        origin: Option<&str>,
    ) -> Result<(), ValueError> {
        match (self, ty) {
            (Data::Dense(d), _) => d.check(ty, sizes, origin),
            (Data::Value(v), _) => v.check_input(ty, sizes, origin),
            (Data::Tuple(items), Ty::Tuple(tys)) if items.len() == tys.len() => {
                for (i, (item, t)) in items.iter().zip(tys).enumerate() {
                    item.check(t, sizes, origin)
                        .map_err(|e| prefix(e, &format!(".{}", i + 1)))?;
                }
                Ok(())
            }
            (Data::Tuple(items), _) => Err(ValueError::Value {
                path: String::new(),
                message: format!(
                    "expected {}, found {}",
                    describe(ty),
                    match items.len() {
                        0 => "the unit value `()`".to_string(),
                        k => format!("a {k}-tuple"),
                    }
                ),
            }),
        }
    }
}

/// The error with `step` put in front of its path.
pub(crate) fn prefix(e: ValueError, step: &str) -> ValueError {
    match e {
        ValueError::Value { path, message } => ValueError::Value {
            path: format!("{step}{path}"),
            message,
        },
        other => other,
    }
}
