//! Running stages the way the stage contract says: verify what comes out,
//! and call a verifier failure an internal error that names the stage.

use crate::diag::{self, CliError};
use semantics::Value;
use syntax::{Def, Module};

/// Checks a stage's output with the verifier of the term IR.
pub fn verified(stage: &str, m: Module) -> Result<Module, CliError> {
    match syntax::verify(&m) {
        Ok(()) => Ok(m),
        Err(errors) => {
            let mut out = format!("after stage `{stage}`, the output fails the verifier:\n");
            for e in errors.iter().take(5) {
                out.push_str(&format!("  {e}\n"));
            }
            Err(CliError::Internal(out))
        }
    }
}

/// Whether the module still contains `diff`, `grad`, `jvp`, `vjp` or `jacob`.
pub fn has_derivative_constructs(m: &Module) -> bool {
    m.exprs
        .iter()
        .any(|e| matches!(e, syntax::Expr::Prim { op, .. } if op.is_derivative_construct()))
}

/// Expands the derivative constructs by forward mode when there are any.
pub fn expanded(m: &Module) -> Result<Module, CliError> {
    if !has_derivative_constructs(m) {
        return Ok(m.clone());
    }
    let out = forward::expand(m).map_err(|e| diag::at(&m.file, e.span(), &e.to_string()))?;
    verified("forward (expand)", out)
}

/// Runs definition `name` of `m` on `args`.
pub fn run(m: &Module, name: &str, args: &[Value]) -> Result<Value, CliError> {
    let def = m.def(name).ok_or_else(|| {
        CliError::Internal(format!("the generated module has no definition `{name}`\n"))
    })?;
    semantics::eval_def(m, def, args).map_err(|e| diag::at(&m.file, e.span(), &e.to_string()))
}

/// Splits the flat `(value, g_1, ..., g_k)` tuple of a gradient program.
pub fn split_outputs(out: Value, k: usize) -> Result<(Value, Vec<Value>), CliError> {
    if k == 0 {
        return Ok((out, Vec::new()));
    }
    match out {
        Value::Tuple(items) if items.len() == k + 1 => Ok((items[0].clone(), items[1..].to_vec())),
        other => Err(CliError::Internal(format!(
            "a gradient program returned {other}, not a tuple of the value and {k} gradients\n"
        ))),
    }
}

/// The names of the parameters a gradient is taken with respect to.
pub fn wrt_names(entry: &Def, wrt: Option<&[String]>) -> Vec<String> {
    match wrt {
        Some(names) => names.to_vec(),
        None => entry.params.iter().map(|p| p.name.to_string()).collect(),
    }
}
