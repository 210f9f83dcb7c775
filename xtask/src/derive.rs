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
    /// The direct reverse macro of Fig. 5 (the top arrow of Figure 1).
    Direct,
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
    /// Where the gradient program runs.
    pub backend: crate::native::Backend,
    /// Keep the raw output of the route (no partial evaluation).
    pub no_opt: bool,
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
        Via::Direct => direct(m, entry, wrt),
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
    let mut program = gradient_program(&m, entry, wrt.as_deref(), req.via)?;
    if !req.no_opt {
        program = crate::pipeline::optimize(&program)?;
    }
    let out = crate::native::run(
        &program,
        &format!("{}_grad", entry.name),
        &args,
        req.backend,
    )?;
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

/// The direct macro of Fig. 5, for a first-order Source program.
pub fn direct(m: &Module, entry: &Def, wrt: Option<&[String]>) -> Result<Module, CliError> {
    let m = crate::pipeline::first_order(m, entry.name.as_str())?;
    let entry = inputs::entry(&m, Some(entry.name.as_str()))?;
    let cfg = reverse::Config {
        wrt: wrt.map(<[String]>::to_vec),
    };
    let out = reverse::reverse_direct(&m, entry, &cfg)
        .map_err(|e| diag::at(&m.file, e.span(), &e.to_string()))?;
    stage::verified("reverse-direct", out)
}

/// `cargo xtask check-grad`: every route at one point and a few nearby
/// points; exit status 1 where they disagree. `cfg.wrt` is taken from
/// `wrt` (`--wrt a,b`).
pub fn check_grad(
    file: &Path,
    entry: Option<&str>,
    at: &[String],
    cfg: difftest::CheckConfig,
    wrt: Option<&str>,
) -> Result<(), CliError> {
    let m = load_source(file, "check-grad")?;
    let def = inputs::entry(&m, entry)?;
    // Reverse mode takes the program specialised to first order, as `grad`
    // does (`pipeline::first_order`).
    let m = crate::pipeline::first_order(&m, def.name.as_str())?;
    let def = inputs::entry(&m, Some(def.name.as_str()))?;
    let wrt = inputs::wrt_list(def, wrt)?;
    let args = inputs::entry_args(&m, def, at)?;
    let named: Vec<(String, semantics::Value)> = def
        .params
        .iter()
        .map(|p| p.name.to_string())
        .zip(args)
        .collect();
    let cfg = difftest::CheckConfig { wrt, ..cfg };
    let report =
        difftest::check_grad(&m, Some(def.name.as_str()), &named, &cfg).map_err(CliError::user)?;
    print!("{}", report.render());
    if report.ok() {
        Ok(())
    } else {
        Err(CliError::user("the routes disagree (see the table above)"))
    }
}

/// `cargo xtask cost`: the cost of the program and of its optimized
/// gradient (Fig. 11), statically and counted in an evaluation, with
/// Theorem 5.4's bound.
pub fn cost(file: &Path, entry: Option<&str>, at: &[String], no_opt: bool) -> Result<(), CliError> {
    let m = load_source(file, "cost")?;
    let def = inputs::entry(&m, entry)?;
    let args = inputs::entry_args(&m, def, at)?;
    let mut g = gradient_program(&m, def, None, Via::Unf)?;
    if !no_opt {
        g = crate::pipeline::optimize(&g)?;
    }
    let gname = format!("{}_grad", def.name);
    let gdef = inputs::entry(&g, Some(gname.as_str()))?;
    let report = semantics::cost::report(&m, def, &g, gdef, &args)
        .map_err(|e| diag::at(&m.file, e.span(), &e.to_string()))?;
    print!("{report}");
    Ok(())
}
