//! The commands that differentiate: `grad`, `jvp`, `jacobian`, `hessian`.
//! Each builds a derivative program with one of the routes of Figure 1,
//! verifies it, runs it with the reference evaluator, and prints the
//! results in the literal syntax.

use crate::diag::{self, CliError};
use crate::inputs;
use crate::load::{self, Program};
use crate::stage;
use std::path::Path;
use syntax::{Def, Module};

/// Which route of Figure 1 computes a gradient.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Via {
    /// Reverse mode through Unary Normal Form: UNF (Fig. 9), D_rho (Fig. 8),
    /// UNF^-1 (Fig. 10).
    Unf,
    /// Forward mode, one pass per input direction (seeds/002, dF~).
    Forward,
}

/// What the user asked of `grad`.
pub struct GradRequest<'a> {
    /// The program.
    pub file: &'a Path,
    /// The entry's name, or the last definition.
    pub entry: Option<&'a str>,
    /// `--wrt a,b`.
    pub wrt: Option<&'a str>,
    /// `--at NAME=VALUE`.
    pub at: &'a [String],
    /// The route.
    pub via: Via,
}

/// Loads a Source program with its derivative constructs expanded.
pub fn load_source(file: &Path, command: &str) -> Result<Module, CliError> {
    match load::load(file)? {
        Program::Source(m) => stage::expanded(&m),
        Program::Target(_) | Program::Unf(_) => Err(CliError::user(format!(
            "`{command}` differentiates a Source program (a `.ad` file or a `source` file); `{}` holds another IR",
            file.display()
        ))),
    }
}

fn forward_error(m: &Module, e: forward::Error) -> CliError {
    diag::at(&m.file, e.span(), &e.to_string())
}

/// The gradient program of `entry` by the chosen route: one definition
/// `<entry>_grad` returning `(value, g_1, ..., g_k)`.
pub fn gradient_program(
    m: &Module,
    entry: &Def,
    wrt: Option<&[String]>,
    via: Via,
) -> Result<Module, CliError> {
    match via {
        Via::Unf => {
            let opts = crate::pipeline::Options {
                entry: Some(entry.name.to_string()),
                wrt: wrt.map(|w| w.join(",")),
            };
            let s = crate::pipeline::lower(m, &opts)?;
            let t = crate::pipeline::reverse(&s, &opts)?;
            crate::pipeline::raise(&t)
        }
        Via::Forward => {
            let out = forward::grad_program(m, entry, wrt).map_err(|e| forward_error(m, e))?;
            stage::verified("forward", out)
        }
    }
}

/// `cargo xtask grad`.
pub fn grad(req: &GradRequest<'_>) -> Result<(), CliError> {
    let m = load_source(req.file, "grad")?;
    let entry = inputs::entry(&m, req.entry)?;
    let wrt = inputs::wrt_list(entry, req.wrt)?;
    let args = inputs::entry_args(&m, entry, req.at)?;
    let program = gradient_program(&m, entry, wrt.as_deref(), req.via)?;
    let out = stage::run(&program, &format!("{}_grad", entry.name), &args)?;
    let names = stage::wrt_names(entry, wrt.as_deref());
    let (value, grads) = stage::split_outputs(out, names.len())?;
    println!("value = {value}");
    for (name, g) in names.iter().zip(grads) {
        println!("grad {name} = {g}");
    }
    Ok(())
}

/// `cargo xtask jvp`: the value and the directional derivative along the
/// given tangents.
pub fn jvp(
    file: &Path,
    entry: Option<&str>,
    at: &[String],
    tangent: &[String],
) -> Result<(), CliError> {
    let m = load_source(file, "jvp")?;
    let entry = inputs::entry(&m, entry)?;
    let mut args = inputs::entry_args(&m, entry, at)?;
    let tangents: Vec<(String, String)> = tangent
        .iter()
        .map(|t| inputs::split_binding(t))
        .collect::<Result<_, _>>()?;
    args.extend(inputs::bind(entry, &tangents, "--tangent")?);
    let program = forward::jvp(&m, entry).map_err(|e| forward_error(&m, e))?;
    let program = stage::verified("forward (jvp)", program)?;
    let out = stage::run(&program, &format!("{}_jvp", entry.name), &args)?;
    let (value, rest) = stage::split_outputs(out, 1)?;
    println!("value = {value}");
    println!("tangent = {}", rest[0]);
    Ok(())
}

/// `cargo xtask jacobian` (forward mode, jacfwd).
pub fn jacobian(
    file: &Path,
    entry: Option<&str>,
    wrt: Option<&str>,
    at: &[String],
) -> Result<(), CliError> {
    let m = load_source(file, "jacobian")?;
    let entry = inputs::entry(&m, entry)?;
    let wrt = inputs::wrt_list(entry, wrt)?;
    let args = inputs::entry_args(&m, entry, at)?;
    let cfg = forward::Config {
        mode: forward::Mode::Vectorised,
        ..forward::Config::default()
    };
    let program = forward::jacobian_program(&m, entry, wrt.as_deref(), &cfg)
        .map_err(|e| forward_error(&m, e))?;
    let program = stage::verified("forward (jacobian)", program)?;
    let out = stage::run(&program, &format!("{}_jacobian", entry.name), &args)?;
    let names = stage::wrt_names(entry, wrt.as_deref());
    let (value, blocks) = stage::split_outputs(out, names.len())?;
    println!("value = {value}");
    for (name, j) in names.iter().zip(blocks) {
        println!("jacobian {name} = {j}");
    }
    Ok(())
}

/// `cargo xtask hessian` (forward over forward).
pub fn hessian(
    file: &Path,
    entry: Option<&str>,
    wrt: Option<&str>,
    at: &[String],
) -> Result<(), CliError> {
    let m = load_source(file, "hessian")?;
    let entry = inputs::entry(&m, entry)?;
    let wrt = inputs::wrt_list(entry, wrt)?;
    let args = inputs::entry_args(&m, entry, at)?;
    let cfg = forward::Config::default();
    let program = forward::hessian_program(&m, entry, wrt.as_deref(), &cfg)
        .map_err(|e| forward_error(&m, e))?;
    let program = stage::verified("forward (hessian)", program)?;
    let out = stage::run(&program, &format!("{}_hessian", entry.name), &args)?;
    let names = stage::wrt_names(entry, wrt.as_deref());
    let k = names.len();
    let (value, rest) = stage::split_outputs(out, k + k * k)?;
    println!("value = {value}");
    for (name, g) in names.iter().zip(&rest[..k]) {
        println!("grad {name} = {g}");
    }
    for (i, a) in names.iter().enumerate() {
        for (j, b) in names.iter().enumerate() {
            println!("hessian {a} {b} = {}", rest[k + i * k + j]);
        }
    }
    Ok(())
}
