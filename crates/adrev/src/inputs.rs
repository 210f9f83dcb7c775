//! The one [`Inputs`] type: named values for an entry's parameters (and
//! the tangents of a JVP, the cotangent of a VJP), given as values, as
//! literal text, as data (dense buffers, from `.npy`/`.npz`/`.json` files
//! through the `data` crate), checked against the parameter types when
//! they are bound to a compiled entry.

use crate::diag::{Error, Result};
use crate::request::no_such_param;
use data::Data;
use semantics::{SizeEnv, Value};
use std::path::{Path, PathBuf};
use syntax::{Def, Ty};

/// One input as given. `'a` is the life of borrowed data (a caller's
/// buffers, such as NumPy arrays, passed to the C backend in place);
/// owned inputs are `Given<'static>`.
#[derive(Debug, Clone, PartialEq)]
pub enum Given<'a> {
    /// A value.
    Value(Value),
    /// Literal text (`[1, 2, 3]`), read against the parameter's type.
    Text(String),
    /// Data, dense where the type allows (passed to the C backend in
    /// place, without a copy, borrowed or owned).
    Data(Data<'a>),
    /// A file holding the value (`.npy`, or `.json`, or the literal syntax
    /// in a `.txt`), read against the parameter's type: `--at NAME=@FILE`.
    File(PathBuf),
}

/// Named inputs of one call.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Inputs<'a> {
    values: Vec<(String, Given<'a>)>,
    tangents: Vec<(String, Given<'a>)>,
    cotangent: Option<Given<'a>>,
    /// What the inputs are called in messages (`--at`).
    what: Option<String>,
}

impl<'a> Inputs<'a> {
    /// No input yet.
    pub fn new() -> Inputs<'a> {
        Inputs::default()
    }

    /// Inputs from `(name, value)` pairs.
    pub fn from_values<S: Into<String>>(pairs: impl IntoIterator<Item = (S, Value)>) -> Inputs<'a> {
        let mut out = Inputs::new();
        for (n, v) in pairs {
            out.values.push((n.into(), Given::Value(v)));
        }
        out
    }

    /// Inputs from `(name, literal text)` pairs.
    pub fn from_literals<S: Into<String>, T: Into<String>>(
        pairs: impl IntoIterator<Item = (S, T)>,
    ) -> Inputs<'a> {
        let mut out = Inputs::new();
        for (n, t) in pairs {
            out.values.push((n.into(), Given::Text(t.into())));
        }
        out
    }

    /// Inputs from `NAME=VALUE` arguments (`--at`); `NAME=@FILE` reads
    /// the value from a file.
    pub fn from_bindings(args: &[String]) -> Result<Inputs<'a>> {
        let mut out = Inputs::new();
        for a in args {
            let (n, t) = split_binding(a)?;
            out.values.push((n, given_text(t)));
        }
        out.what = Some("--at".to_string());
        Ok(out)
    }

    /// The inputs file of `--inputs FILE` (a JSON object of named values,
    /// or an `.npz` of named arrays) for the parameters of `entry`: every
    /// name in the file must be a parameter; parameters it lacks may be
    /// given after, with [`Inputs::with`] or `--at` ([`Inputs::extend`]).
    pub fn read_file(path: &Path, entry: &Def) -> Result<Inputs<'a>> {
        let mut file = data::InputFile::read(path).map_err(data_error)?;
        let mut out = Inputs::new();
        for p in &entry.params {
            let ty =
                p.ty.as_ref()
                    .ok_or_else(|| Error::user(format!("parameter `{}` has no type", p.name)))?;
            if let Some(d) = file.take(p.name.as_str(), ty).map_err(data_error)? {
                out.values.push((p.name.to_string(), Given::Data(d)));
            }
        }
        if let Some(name) = file.names().first() {
            return Err(no_such_param(entry, name));
        }
        out.what = Some("--at".to_string());
        Ok(out)
    }

    /// These inputs, then `more`'s (a name given in both is an error when
    /// they are bound).
    pub fn extend(mut self, more: Inputs<'a>) -> Inputs<'a> {
        self.values.extend(more.values);
        self.tangents.extend(more.tangents);
        if more.cotangent.is_some() {
            self.cotangent = more.cotangent;
        }
        self
    }

    /// The same inputs and `name` = `value`.
    pub fn with(mut self, name: impl Into<String>, value: Value) -> Inputs<'a> {
        self.values.push((name.into(), Given::Value(value)));
        self
    }

    /// The same inputs and `name` = `data` (borrowed data is passed to the
    /// C backend in place: the Python package's NumPy arrays).
    pub fn with_data(mut self, name: impl Into<String>, data: Data<'a>) -> Inputs<'a> {
        self.values.push((name.into(), Given::Data(data)));
        self
    }

    /// The same inputs without the value of `name` (to give it anew).
    pub fn without(mut self, name: &str) -> Inputs<'a> {
        self.values.retain(|(n, _)| n != name);
        self
    }

    /// The same inputs and `name` = the literal `text`.
    pub fn with_text(mut self, name: impl Into<String>, text: impl Into<String>) -> Inputs<'a> {
        self.values.push((name.into(), Given::Text(text.into())));
        self
    }

    /// The same inputs and the tangent of parameter `name` (for a JVP).
    pub fn tangent(mut self, name: impl Into<String>, value: Given<'a>) -> Inputs<'a> {
        self.tangents.push((name.into(), value));
        self
    }

    /// The same inputs and tangents from `NAME=VALUE` arguments (`--tangent`).
    pub fn tangents_from_bindings(mut self, args: &[String]) -> Result<Inputs<'a>> {
        for a in args {
            let (n, t) = split_binding(a)?;
            self.tangents.push((n, given_text(t)));
        }
        Ok(self)
    }

    /// The same inputs and the cotangent of the result (for a VJP).
    pub fn cotangent(mut self, value: Given<'a>) -> Inputs<'a> {
        self.cotangent = Some(value);
        self
    }

    /// Whether no parameter value is given.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// The named values as given.
    pub fn values(&self) -> &[(String, Given<'a>)] {
        &self.values
    }

    /// The values for the parameters of `entry`, in its parameters' order,
    /// each read or checked against its type (text read, values checked),
    /// size variables consistent across them.
    pub fn resolve(&self, entry: &Def) -> Result<Vec<(String, Value)>> {
        Ok(self
            .resolve_data(entry)?
            .into_iter()
            .map(|(n, d)| (n, d.to_value()))
            .collect())
    }

    /// [`Inputs::resolve`], keeping dense data dense.
    pub fn resolve_data(&self, entry: &Def) -> Result<Vec<(String, Data<'static>)>> {
        let bound = self.bind(
            entry,
            Need {
                tangents: !self.tangents.is_empty(),
                cotangent: false,
            },
        )?;
        Ok(entry
            .params
            .iter()
            .map(|p| p.name.to_string())
            .zip(bound.args.into_iter().map(Data::into_owned))
            .collect())
    }

    /// Binds the values to the parameters of `entry`: one per parameter in
    /// order, each checked against its type, size variables consistent
    /// across all of them (and with the tangents and the cotangent).
    pub(crate) fn bind(&self, entry: &Def, need: Need) -> Result<Bound<'_>> {
        let what = self.what.as_deref().unwrap_or("--at");
        let mut sizes = SizeEnv::new();
        let args = bind_list(entry, &self.values, what, &mut sizes)?;
        let tangents = if need.tangents {
            bind_list(entry, &self.tangents, "--tangent", &mut sizes)?
                .iter()
                .map(Data::to_value)
                .collect()
        } else {
            if let Some((n, _)) = self.tangents.first() {
                return Err(Error::user(format!(
                    "a tangent (`{n}`) is given, but only a JVP takes tangents"
                )));
            }
            Vec::new()
        };
        let cotangent = match (&self.cotangent, need.cotangent) {
            (Some(g), true) => {
                let ty = entry.ret.as_ref().ok_or_else(|| {
                    Error::user(format!("the result of `{}` has no type", entry.name))
                })?;
                Some(read(g, ty, &mut sizes, "the cotangent", None)?.to_value())
            }
            (None, true) => {
                return Err(Error::user(format!(
                    "a VJP needs a cotangent shaped like the result of `{}` ({}): give --cotangent VALUE",
                    entry.name,
                    entry
                        .ret
                        .as_ref()
                        .map_or_else(|| "?".to_string(), semantics::describe)
                )));
            }
            (Some(_), false) => {
                return Err(Error::user(
                    "a cotangent is given, but only a VJP takes one",
                ));
            }
            (None, false) => None,
        };
        Ok(Bound {
            args,
            tangents,
            cotangent,
        })
    }
}

/// What a compiled derivative needs besides the parameters.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Need {
    pub tangents: bool,
    pub cotangent: bool,
}

/// Inputs bound to an entry's parameters, in order; dense data borrowed
/// from the [`Inputs`] they were bound from.
#[derive(Debug, Clone)]
pub(crate) struct Bound<'i> {
    pub args: Vec<Data<'i>>,
    pub tangents: Vec<Value>,
    pub cotangent: Option<Value>,
}

/// Splits `NAME=VALUE` at the first `=`.
pub fn split_binding(arg: &str) -> Result<(String, String)> {
    match arg.split_once('=') {
        Some((name, value)) if !name.trim().is_empty() => {
            Ok((name.trim().to_string(), value.trim().to_string()))
        }
        _ => Err(Error::user(format!(
            "`{arg}` is not of the form NAME=VALUE"
        ))),
    }
}

/// `@FILE` names a file; anything else is literal text.
fn given_text(t: String) -> Given<'static> {
    match t.strip_prefix('@') {
        Some(path) if !path.is_empty() => Given::File(PathBuf::from(path)),
        _ => Given::Text(t),
    }
}

/// A data crate error as the user's (its messages name the file or the
/// parameter and say what is wrong).
pub(crate) fn data_error(e: data::DataError) -> Error {
    Error::user(e.to_string())
}

fn read<'i>(
    given: &'i Given<'_>,
    ty: &Ty,
    sizes: &mut SizeEnv,
    what: &str,
    origin: Option<&str>,
) -> Result<Data<'i>> {
    let mismatch = |e: semantics::ValueError| {
        Error::user(format!("{what} should be {}: {e}", semantics::describe(ty)))
    };
    match given {
        Given::Text(text) => semantics::parse_input(text, ty, sizes, origin)
            .map(Data::Value)
            .map_err(|e| Error::user(format!("in the value of {what} (`{text}`): {e}"))),
        Given::Value(v) => {
            v.check_input(ty, sizes, origin).map_err(mismatch)?;
            Ok(Data::Value(v.clone()))
        }
        Given::Data(d) => {
            d.check(ty, sizes, origin).map_err(mismatch)?;
            Ok(d.view())
        }
        Given::File(path) => {
            let name = origin.unwrap_or("the value");
            let d = data::read_value_file(path, name, ty).map_err(data_error)?;
            d.check(ty, sizes, origin)
                .map_err(|e| Error::user(format!("{what} (from {}): {e}", path.display())))?;
            Ok(d)
        }
    }
}

fn bind_list<'i>(
    entry: &Def,
    given: &'i [(String, Given<'_>)],
    what: &str,
    sizes: &mut SizeEnv,
) -> Result<Vec<Data<'i>>> {
    for (i, (name, _)) in given.iter().enumerate() {
        if !entry.params.iter().any(|p| p.name.as_str() == name) {
            return Err(no_such_param(entry, name));
        }
        if given[..i].iter().any(|(n, _)| n == name) {
            return Err(Error::user(format!("`{name}` is given twice with {what}")));
        }
    }
    let mut out = Vec::with_capacity(entry.params.len());
    for p in &entry.params {
        let Some((_, g)) = given.iter().find(|(n, _)| n == p.name.as_str()) else {
            return Err(Error::user(format!(
                "no value for the parameter `{}` of `{}`: give {what} {}=VALUE",
                p.name, entry.name, p.name
            )));
        };
        let ty =
            p.ty.as_ref()
                .ok_or_else(|| Error::user(format!("parameter `{}` has no type", p.name)))?;
        let label = format!("`{}`", p.name);
        out.push(read(g, ty, sizes, &label, Some(p.name.as_str()))?);
    }
    Ok(out)
}
