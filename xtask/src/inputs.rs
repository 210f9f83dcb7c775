//! Values for an entry's parameters: `--at NAME=VALUE` on the command line,
//! or else the `-- at` expectation comments of the program text.

use crate::diag::CliError;
use semantics::Value;
use syntax::{Def, Module};

/// Splits `NAME=VALUE` at the first `=`.
pub fn split_binding(arg: &str) -> Result<(String, String), CliError> {
    match arg.split_once('=') {
        Some((name, value)) if !name.trim().is_empty() => Ok((name.trim().to_string(), value.trim().to_string())),
        _ => Err(CliError::user(format!("`{arg}` is not of the form NAME=VALUE"))),
    }
}

/// The inputs of `entry`: those given with `--at`, or when none is given,
/// the `-- at` lines of the program's text. Each value is read against the
/// parameter's type.
pub fn entry_inputs(m: &Module, entry: &Def, at: &[String]) -> Result<Vec<(String, Value)>, CliError> {
    let bindings: Vec<(String, String)> = if at.is_empty() {
        semantics::Expectations::parse(&m.file.text).at
    } else {
        at.iter().map(|a| split_binding(a)).collect::<Result<_, _>>()?
    };
    let mut out = Vec::new();
    for (name, text) in bindings {
        let Some(param) = entry.params.iter().find(|p| p.name.as_str() == name) else {
            let known: Vec<_> = entry.params.iter().map(|p| format!("`{}`", p.name)).collect();
            return Err(CliError::user(format!(
                "`{}` has no parameter `{name}` (its parameters: {})",
                entry.name,
                if known.is_empty() { "none".to_string() } else { known.join(", ") }
            )));
        };
        let ty = param.ty.as_ref().ok_or_else(|| CliError::user(format!("parameter `{name}` has no type")))?;
        let value = semantics::parse_value(&text, ty)
            .map_err(|e| CliError::user(format!("in the value of `{name}` (`{text}`): {e}")))?;
        out.push((name, value));
    }
    Ok(out)
}

/// Picks the entry definition.
pub fn entry<'m>(m: &'m Module, name: Option<&str>) -> Result<&'m Def, CliError> {
    m.entry(name).ok_or_else(|| match name {
        Some(n) => {
            let defs: Vec<_> = m.defs.iter().map(|d| format!("`{}`", d.name)).collect();
            CliError::user(format!("no definition named `{n}` (the program defines {})", defs.join(", ")))
        }
        None => CliError::user("the program has no definition"),
    })
}
