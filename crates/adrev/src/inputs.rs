//! The one [`Inputs`] type: named values for an entry's parameters (and
//! the tangents of a JVP, the cotangent of a VJP), given as values or as
//! literal text, checked against the parameter types when they are bound
//! to a compiled entry.

use crate::diag::{Error, Result};
use crate::request::no_such_param;
use semantics::{SizeEnv, Value};
use syntax::{Def, Ty};

/// One input as given.
#[derive(Debug, Clone, PartialEq)]
pub enum Given {
    /// A value.
    Value(Value),
    /// Literal text (`[1, 2, 3]`), read against the parameter's type.
    Text(String),
}

/// Named inputs of one call.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Inputs {
    values: Vec<(String, Given)>,
    tangents: Vec<(String, Given)>,
    cotangent: Option<Given>,
    /// What the inputs are called in messages (`--at`).
    what: Option<String>,
}

impl Inputs {
    /// No input yet.
    pub fn new() -> Inputs {
        Inputs::default()
    }

    /// Inputs from `(name, value)` pairs.
    pub fn from_values<S: Into<String>>(pairs: impl IntoIterator<Item = (S, Value)>) -> Inputs {
        let mut out = Inputs::new();
        for (n, v) in pairs {
            out.values.push((n.into(), Given::Value(v)));
        }
        out
    }

    /// Inputs from `(name, literal text)` pairs.
    pub fn from_literals<S: Into<String>, T: Into<String>>(
        pairs: impl IntoIterator<Item = (S, T)>,
    ) -> Inputs {
        let mut out = Inputs::new();
        for (n, t) in pairs {
            out.values.push((n.into(), Given::Text(t.into())));
        }
        out
    }

    /// Inputs from `NAME=VALUE` arguments (`--at`).
    pub fn from_bindings(args: &[String]) -> Result<Inputs> {
        let mut out = Inputs::new();
        for a in args {
            let (n, t) = split_binding(a)?;
            out.values.push((n, Given::Text(t)));
        }
        out.what = Some("--at".to_string());
        Ok(out)
    }

    /// The same inputs and `name` = `value`.
    pub fn with(mut self, name: impl Into<String>, value: Value) -> Inputs {
        self.values.push((name.into(), Given::Value(value)));
        self
    }

    /// The same inputs and `name` = the literal `text`.
    pub fn with_text(mut self, name: impl Into<String>, text: impl Into<String>) -> Inputs {
        self.values.push((name.into(), Given::Text(text.into())));
        self
    }

    /// The same inputs and the tangent of parameter `name` (for a JVP).
    pub fn tangent(mut self, name: impl Into<String>, value: Given) -> Inputs {
        self.tangents.push((name.into(), value));
        self
    }

    /// The same inputs and tangents from `NAME=VALUE` arguments (`--tangent`).
    pub fn tangents_from_bindings(mut self, args: &[String]) -> Result<Inputs> {
        for a in args {
            let (n, t) = split_binding(a)?;
            self.tangents.push((n, Given::Text(t)));
        }
        Ok(self)
    }

    /// The same inputs and the cotangent of the result (for a VJP).
    pub fn cotangent(mut self, value: Given) -> Inputs {
        self.cotangent = Some(value);
        self
    }

    /// Whether no parameter value is given.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// The named values as given.
    pub fn values(&self) -> &[(String, Given)] {
        &self.values
    }

    /// The values for the parameters of `entry`, in its parameters' order,
    /// each read or checked against its type (text read, values checked),
    /// size variables consistent across them.
    pub fn resolve(&self, entry: &Def) -> Result<Vec<(String, Value)>> {
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
            .zip(bound.args)
            .collect())
    }

    /// Binds the values to the parameters of `entry`: one per parameter in
    /// order, each checked against its type, size variables consistent
    /// across all of them (and with the tangents and the cotangent).
    pub(crate) fn bind(&self, entry: &Def, need: Need) -> Result<Bound> {
        let what = self.what.as_deref().unwrap_or("--at");
        let mut sizes = SizeEnv::new();
        let args = bind_list(entry, &self.values, what, &mut sizes)?;
        let tangents = if need.tangents {
            bind_list(entry, &self.tangents, "--tangent", &mut sizes)?
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
                Some(read(g, ty, &mut sizes, "the cotangent", None)?)
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

/// Inputs bound to an entry's parameters, in order.
#[derive(Debug, Clone)]
pub(crate) struct Bound {
    pub args: Vec<Value>,
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

fn read(
    given: &Given,
    ty: &Ty,
    sizes: &mut SizeEnv,
    what: &str,
    origin: Option<&str>,
) -> Result<Value> {
    match given {
        Given::Text(text) => semantics::parse_input(text, ty, sizes, origin)
            .map_err(|e| Error::user(format!("in the value of {what} (`{text}`): {e}"))),
        Given::Value(v) => {
            v.check_input(ty, sizes, origin).map_err(|e| {
                Error::user(format!("{what} should be {}: {e}", semantics::describe(ty)))
            })?;
            Ok(v.clone())
        }
    }
}

fn bind_list(
    entry: &Def,
    given: &[(String, Given)],
    what: &str,
    sizes: &mut SizeEnv,
) -> Result<Vec<Value>> {
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
