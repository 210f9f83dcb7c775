//! Values for an entry's parameters: `--at NAME=VALUE` on the command line,
//! or else the `-- at` expectation comments of the program text.

use crate::diag::CliError;
use semantics::{SizeEnv, Value};
use syntax::{Def, Module};

/// Splits `NAME=VALUE` at the first `=`.
pub fn split_binding(arg: &str) -> Result<(String, String), CliError> {
    match arg.split_once('=') {
        Some((name, value)) if !name.trim().is_empty() => {
            Ok((name.trim().to_string(), value.trim().to_string()))
        }
        _ => Err(CliError::user(format!(
            "`{arg}` is not of the form NAME=VALUE"
        ))),
    }
}

fn no_such_param(entry: &Def, name: &str) -> CliError {
    let known: Vec<_> = entry
        .params
        .iter()
        .map(|p| format!("`{}`", p.name))
        .collect();
    CliError::user(format!(
        "`{}` has no parameter `{name}` (its parameters: {})",
        entry.name,
        if known.is_empty() {
            "none".to_string()
        } else {
            known.join(", ")
        }
    ))
}

/// Reads `NAME=VALUE` bindings against the parameters of `entry` and
/// returns one value per parameter, in the parameters' order. Sizes named
/// in the parameter types are bound consistently across all values. `what`
/// names the flag in messages (`--at`, `--tangent`).
pub fn bind(
    entry: &Def,
    bindings: &[(String, String)],
    what: &str,
) -> Result<Vec<Value>, CliError> {
    for (i, (name, _)) in bindings.iter().enumerate() {
        if !entry.params.iter().any(|p| p.name.as_str() == name) {
            return Err(no_such_param(entry, name));
        }
        if bindings[..i].iter().any(|(n, _)| n == name) {
            return Err(CliError::user(format!(
                "`{name}` is given twice with {what}"
            )));
        }
    }
    let mut sizes = SizeEnv::new();
    let mut out = Vec::new();
    for p in &entry.params {
        let Some((_, text)) = bindings.iter().find(|(n, _)| n == p.name.as_str()) else {
            return Err(CliError::user(format!(
                "no value for the parameter `{}` of `{}`: give {what} {}=VALUE",
                p.name, entry.name, p.name
            )));
        };
        let ty =
            p.ty.as_ref()
                .ok_or_else(|| CliError::user(format!("parameter `{}` has no type", p.name)))?;
        let value = semantics::parse_input(text, ty, &mut sizes, Some(p.name.as_str()))
            .map_err(|e| CliError::user(format!("in the value of `{}` (`{text}`): {e}", p.name)))?;
        out.push(value);
    }
    Ok(out)
}

/// The inputs of `entry`, one per parameter in order: those given with
/// `--at`, or when none is given, the `-- at` lines of the program's text.
pub fn entry_args(m: &Module, entry: &Def, at: &[String]) -> Result<Vec<Value>, CliError> {
    let bindings: Vec<(String, String)> = if at.is_empty() {
        semantics::Expectations::parse(&m.file.text).at
    } else {
        at.iter()
            .map(|a| split_binding(a))
            .collect::<Result<_, _>>()?
    };
    bind(entry, &bindings, "--at")
}

/// Picks the entry definition.
pub fn entry<'m>(m: &'m Module, name: Option<&str>) -> Result<&'m Def, CliError> {
    m.entry(name).ok_or_else(|| match name {
        Some(n) => {
            let defs: Vec<_> = m.defs.iter().map(|d| format!("`{}`", d.name)).collect();
            CliError::user(format!(
                "no definition named `{n}` (the program defines {})",
                defs.join(", ")
            ))
        }
        None => CliError::user("the program has no definition"),
    })
}

/// Splits a `--wrt a,b` list; `None` when not given.
pub fn wrt_list(entry: &Def, wrt: Option<&str>) -> Result<Option<Vec<String>>, CliError> {
    let Some(list) = wrt else { return Ok(None) };
    let names: Vec<String> = list
        .split(',')
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect();
    if names.is_empty() {
        return Err(CliError::user("--wrt needs at least one parameter name"));
    }
    for (i, n) in names.iter().enumerate() {
        if !entry.params.iter().any(|p| p.name.as_str() == n) {
            return Err(no_such_param(entry, n));
        }
        if names[..i].contains(n) {
            return Err(CliError::user(format!("`{n}` is named twice in --wrt")));
        }
    }
    Ok(Some(names))
}
