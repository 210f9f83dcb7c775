//! The commands that differentiate: `grad`, `vjp`, `jvp`, `jacobian`,
//! `hessian`, `check-grad`, `cost`. Each reads its arguments into one
//! `adrev::Request`, lets the library compile and run it, and prints the
//! named outputs in the literal syntax.

use crate::diag::CliError;
use crate::native::BackendArgs;
use adrev::{Compiled, Inputs, JacobianMode, Kind, Outputs, Program, Request, Route, Wrt};
use std::path::{Path, PathBuf};

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

impl Via {
    /// The library's route.
    pub fn route(self) -> Route {
        match self {
            Via::Unf => Route::Unf,
            Via::Direct => Route::Direct,
            Via::Forward => Route::Forward,
        }
    }
}

/// How reverse mode writes the backward pass of a loop (`--checkpoint`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum CheckpointVia {
    /// Every state of a loop stored for the backward pass: O(n) memory.
    Off,
    /// √n checkpoints of every `foldl`, `ifold` and general `reduce`: O(√n)
    /// memory, the loop body recomputed (the same gradient to the bit).
    Sqrt,
}

impl CheckpointVia {
    /// The library's scheme.
    pub fn scheme(self) -> adrev::Checkpoint {
        match self {
            CheckpointVia::Off => adrev::Checkpoint::Off,
            CheckpointVia::Sqrt => adrev::Checkpoint::Sqrt,
        }
    }
}

/// How `jacobian` computes the Jacobian.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum JacobianVia {
    /// Forward mode, vectorised seeds (jacfwd).
    Forward,
    /// One reverse pass per output real (jacrev), through UNF.
    Reverse,
}

/// Data in and out: `--inputs FILE` and `--output json|FILE`.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct DataArgs {
    /// The inputs as a file: a JSON object of named values, or an `.npz`
    /// of named arrays (`--at` may give the parameters it lacks).
    #[arg(long, value_name = "FILE")]
    pub inputs: Option<PathBuf>,
    /// The results as data rather than lines: `json` (on stdout), or a
    /// `.json` or `.npz` file, every result named (`value`, `grad.X`, ...).
    #[arg(long, value_name = "json|FILE")]
    pub output: Option<String>,
}

/// The program, its entry and its inputs: the arguments of every command
/// that runs a program.
#[derive(Debug, Clone, clap::Args)]
pub struct ProgramArgs {
    /// A `.ad` program or an IR file (a Source one to differentiate).
    pub file: PathBuf,
    /// The definition to run or differentiate (default: the last).
    #[arg(long)]
    pub entry: Option<String>,
    /// An input, `NAME=VALUE` in the literal syntax or `NAME=@FILE` (a
    /// `.npy`, or a `.json` value); without any input, the file's `-- at`
    /// comments.
    #[arg(long = "at", value_name = "NAME=VALUE")]
    pub at: Vec<String>,
    #[command(flatten)]
    pub data: DataArgs,
}

/// What a command that runs a program was given.
pub struct Common<'a> {
    /// The program and its inputs.
    pub program: &'a ProgramArgs,
    /// `--wrt a,b`.
    pub wrt: Option<&'a str>,
    /// Where the program runs.
    pub backend: BackendArgs,
}

impl Common<'_> {
    /// The program and the request for `kind`.
    fn request(&self, kind: Kind) -> Result<(Program, Request), CliError> {
        let program = Program::load(&self.program.file)?;
        let mut req = Request::new(kind)
            .wrt(Wrt::parse(self.wrt)?)
            .backend(self.backend.backend()?);
        req.entry = self.program.entry.clone();
        Ok((program, req))
    }

    /// The inputs: `--inputs` and `--at`, or else the program's `-- at`
    /// lines.
    pub fn inputs(&self, program: &Program) -> Result<Inputs<'static>, CliError> {
        let args = self.program;
        let at = Inputs::from_bindings(&args.at)?;
        match &args.data.inputs {
            Some(path) => {
                let entry = program.entry(args.entry.as_deref())?;
                Ok(Inputs::read_file(path, entry)?.extend(at))
            }
            None if args.at.is_empty() => Ok(program.default_inputs()),
            None => Ok(at),
        }
    }

    /// Prints the results as lines, or writes them as `--output` asks.
    pub fn emit(&self, compiled: &Compiled, out: &Outputs) -> Result<(), CliError> {
        match self.program.data.output.as_deref() {
            None => {
                print!("{}", out.render());
                Ok(())
            }
            Some("json") => {
                let stdout = std::io::stdout();
                compiled.write_json(out, stdout.lock())
            }
            Some(path) => compiled.write_outputs(out, Path::new(path)),
        }
    }
}

/// `cargo xtask eval`: the entry's value (of a UNF file too).
pub fn eval(c: &Common<'_>) -> Result<(), CliError> {
    let (program, req) = c.request(Kind::Value)?;
    let compiled = program.compile(&req)?;
    let out = compiled.call(&c.inputs(&program)?)?;
    if c.program.data.output.is_some() {
        return c.emit(&compiled, &out);
    }
    println!("{}", out.value);
    Ok(())
}

/// `cargo xtask grad`.
pub fn grad(
    c: &Common<'_>,
    via: Via,
    no_opt: bool,
    checkpoint: CheckpointVia,
) -> Result<(), CliError> {
    let (program, req) = c.request(Kind::ValueAndGrad)?;
    let req = req
        .route(via.route())
        .optimize(!no_opt)
        .checkpoint(checkpoint.scheme());
    let compiled = program.compile(&req)?;
    let out = compiled.call(&c.inputs(&program)?)?;
    c.emit(&compiled, &out)
}

/// `cargo xtask vjp`: the value and the cotangent pulled back to each
/// parameter (reverse mode of a result of any type).
pub fn vjp(c: &Common<'_>, via: Via, cotangent: &str) -> Result<(), CliError> {
    let (program, req) = c.request(Kind::Vjp)?;
    let compiled = program.compile(&req.route(via.route()))?;
    let inputs = c
        .inputs(&program)?
        .cotangent(adrev::Given::Text(cotangent.to_string()));
    let out = compiled.call(&inputs)?;
    c.emit(&compiled, &out)
}

/// `cargo xtask jvp`: the value and the directional derivative along the
/// given tangents.
pub fn jvp(c: &Common<'_>, tangent: &[String]) -> Result<(), CliError> {
    let (program, req) = c.request(Kind::Jvp)?;
    let compiled = program.compile(&req)?;
    let inputs = c.inputs(&program)?.tangents_from_bindings(tangent)?;
    let out = compiled.call(&inputs)?;
    c.emit(&compiled, &out)
}

/// `cargo xtask jacobian`: by the mode asked for, or else the cheaper one
/// for the sizes at hand, which it names on a last line.
pub fn jacobian(c: &Common<'_>, via: Option<JacobianVia>) -> Result<(), CliError> {
    let mode = match via {
        Some(JacobianVia::Forward) => JacobianMode::Forward,
        Some(JacobianVia::Reverse) => JacobianMode::Reverse,
        None => JacobianMode::Auto,
    };
    let (program, req) = c.request(Kind::Jacobian { mode })?;
    let compiled = program.compile(&req)?;
    let out = compiled.call(&c.inputs(&program)?)?;
    c.emit(&compiled, &out)?;
    if via.is_none()
        && c.program.data.output.is_none()
        && let Some(m) = out.jacobian_mode
    {
        println!("mode = {}", m.name());
    }
    Ok(())
}

/// `cargo xtask hessian` (forward over forward).
pub fn hessian(c: &Common<'_>) -> Result<(), CliError> {
    let (program, req) = c.request(Kind::Hessian)?;
    let compiled = program.compile(&req)?;
    let out = compiled.call(&c.inputs(&program)?)?;
    c.emit(&compiled, &out)
}

/// `cargo xtask check-grad`: every route at one point and a few nearby
/// points; exit status 1 where they disagree.
pub fn check_grad(c: &Common<'_>, cfg: difftest::CheckConfig) -> Result<(), CliError> {
    if c.program.data.output.is_some() {
        return Err(CliError::user(
            "check-grad prints a table; --output is for the commands that compute results",
        ));
    }
    let program = Program::load(&c.program.file)?;
    let inputs = c.inputs(&program)?;
    let cfg = difftest::CheckConfig {
        wrt: Wrt::parse(c.wrt)?,
        c: match c.backend.backend()? {
            adrev::Backend::C(config) => Some(config),
            adrev::Backend::Eval => cfg.c.clone(),
        },
        ..cfg
    };
    let report = difftest::check_grad(&program, c.program.entry.as_deref(), &inputs, &cfg)?;
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
pub fn cost(c: &Common<'_>, no_opt: bool, checkpoint: CheckpointVia) -> Result<(), CliError> {
    let (program, req) = c.request(Kind::ValueAndGrad)?;
    let report = adrev::cost::report(
        &program,
        &req.optimize(!no_opt).checkpoint(checkpoint.scheme()),
        &c.inputs(&program)?,
    )?;
    print!("{report}");
    Ok(())
}
