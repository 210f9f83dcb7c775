//! The commands that show what a derivative does (docs/inspect.md):
//! `dot`, `residuals`, `activity`, `nan-hazards`. Each reads a program,
//! calls one pure function of the `inspect` crate and prints its report.

use crate::diag::CliError;
use crate::load::write_text;
use adrev::diag;
use adrev::load::{self, Ir};
use adrev::program::entry;
use adrev::{Inputs, Kind, Program, Request, Wrt};
use semantics::Value;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use syntax::{Def, Module};

/// The inspection commands, flattened into the command line's own.
#[derive(clap::Subcommand)]
pub enum Command {
    /// Draw any IR file (or a `.ad` program) as a Graphviz graph: Source
    /// and Target as term graphs with sharing, Source and Target UNF as
    /// string diagrams (contexts as wires, primitives as boxes).
    Dot {
        /// A `.ad` program or an IR file.
        file: PathBuf,
        /// Where to write the graph (default: standard output).
        #[arg(short, long)]
        output: Option<PathBuf>,
        /// Render SVG with Graphviz's `dot` program instead of writing DOT.
        #[arg(long)]
        svg: bool,
    },
    /// What the reverse pass of the gradient keeps from the forward pass:
    /// each stored value, its size in the input sizes and at the inputs,
    /// and where it comes from.
    Residuals {
        /// A `.ad` program or a Source IR file.
        file: PathBuf,
        /// The definition to differentiate (default: the last).
        #[arg(long)]
        entry: Option<String>,
        /// The parameters to differentiate with respect to (default: all).
        #[arg(long, value_name = "A,B,...")]
        wrt: Option<String>,
        /// An input, `NAME=VALUE`; without any, the file's `-- at` comments
        /// (and without those, sizes as formulas only).
        #[arg(long = "at", value_name = "NAME=VALUE")]
        at: Vec<String>,
    },
    /// For each parameter: whether the output depends on it, and if its
    /// gradient is structurally zero, why and where (also at the inputs).
    Activity {
        /// A `.ad` program or a Source IR file.
        file: PathBuf,
        /// The definition (default: the last).
        #[arg(long)]
        entry: Option<String>,
        /// An input, `NAME=VALUE`; without any, the file's `-- at` comments
        /// (and without those, the analysis for every input only).
        #[arg(long = "at", value_name = "NAME=VALUE")]
        at: Vec<String>,
    },
    /// Lint: `log`, `sqrt`, `/`, `pow` where a side that is not taken
    /// (a branch, a `max`/`min` operand) can make the gradient NaN, and
    /// whether reverse mode is safe there.
    NanHazards {
        /// A `.ad` program or a Source IR file.
        file: PathBuf,
        /// The definition (default: the last).
        #[arg(long)]
        entry: Option<String>,
    },
}

/// Runs one inspection command.
pub fn run(command: Command) -> Result<(), CliError> {
    match command {
        Command::Dot { file, output, svg } => dot(&file, output.as_deref(), svg),
        Command::Residuals {
            file,
            entry,
            wrt,
            at,
        } => residuals(&file, entry.as_deref(), wrt.as_deref(), &at),
        Command::Activity { file, entry, at } => activity(&file, entry.as_deref(), &at),
        Command::NanHazards { file, entry: name } => {
            let m = Program::load(&file)?.expanded("nan-hazards", name.as_deref())?;
            let (m, name) = first_order(m, name.as_deref())?;
            let def = entry(&m, Some(name.as_str()))?;
            print!("{}", inspect::hazards::lint(&m, def));
            Ok(())
        }
    }
}

fn dot(file: &Path, output: Option<&Path>, svg: bool) -> Result<(), CliError> {
    let text = match load::load(file)? {
        Ir::Source(m) => inspect::dot::term(&m, syntax::SOURCE_IR),
        Ir::Target(m) => inspect::dot::term(&m, syntax::TARGET_IR),
        Ir::Unf(m) => {
            let checked = unf::check(&m).map_err(|_| {
                CliError::internal("a UNF file verified on reading fails its verifier")
            })?;
            inspect::dot::string_diagram(&m, &checked)
        }
    };
    let text = if svg { render_svg(&text)? } else { text };
    match output {
        Some(path) => write_text(path, &text),
        None => {
            print!("{text}");
            Ok(())
        }
    }
}

/// DOT text → SVG with Graphviz's `dot`, or an error saying how to get it.
fn render_svg(text: &str) -> Result<String, CliError> {
    let child = std::process::Command::new("dot")
        .arg("-Tsvg")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn();
    let mut child = match child {
        Ok(c) => c,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(CliError::user(
                "`--svg` needs the `dot` program of Graphviz, which is not installed \
                 (Debian and Ubuntu: `apt-get install graphviz`); without `--svg` the \
                 command writes the DOT text, which any Graphviz viewer renders",
            ));
        }
        Err(e) => return Err(CliError::user(format!("cannot run `dot`: {e}"))),
    };
    if let Some(mut stdin) = child.stdin.take() {
        stdin
            .write_all(text.as_bytes())
            .map_err(|e| CliError::user(format!("cannot write to `dot`: {e}")))?;
    }
    let out = child
        .wait_with_output()
        .map_err(|e| CliError::user(format!("`dot` failed: {e}")))?;
    if !out.status.success() {
        return Err(CliError::Internal(format!(
            "`dot` refused the graph ({}): {}\n",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        )));
    }
    String::from_utf8(out.stdout)
        .map_err(|_| CliError::user("`dot` wrote something that is not UTF-8"))
}

/// The program the analyses read: specialised to first order when it can
/// be (as reverse mode sees it), else as it is.
fn first_order(m: Module, name: Option<&str>) -> Result<(Module, String), CliError> {
    let name = entry(&m, name)?.name.to_string();
    let m = match adrev::passes::first_order(m.clone(), &name) {
        Ok(specialised) => specialised,
        Err(_) => m,
    };
    Ok((m, name))
}

/// The inputs of `def`, or `None` when none are given and the program
/// has no `-- at` lines.
fn optional_args(m: &Module, def: &Def, at: &[String]) -> Result<Option<Vec<Value>>, CliError> {
    let inputs = if at.is_empty() {
        let lines = semantics::Expectations::parse(&m.file.text).at;
        if lines.is_empty() {
            return Ok(None);
        }
        Inputs::from_literals(lines)
    } else {
        Inputs::from_bindings(at)?
    };
    let bound = inputs.resolve(def)?;
    Ok(Some(bound.into_iter().map(|(_, v)| v).collect()))
}

fn residuals(
    file: &Path,
    name: Option<&str>,
    wrt: Option<&str>,
    at: &[String],
) -> Result<(), CliError> {
    let program = Program::load(file)?;
    let m = program.expanded("residuals", name)?;
    let def = entry(&m, name)?;
    let args = optional_args(&m, def, at)?;
    let mut req = Request::new(Kind::ValueAndGrad).wrt(Wrt::parse(wrt)?);
    req.entry = Some(def.name.to_string());
    let compiled = program.compile(&req)?;
    let g = compiled
        .module()
        .ok_or_else(|| CliError::internal("a gradient request compiled to no program"))?;
    let gname = format!("{}_grad", def.name);
    let gdef = entry(g, Some(gname.as_str()))?;
    let k = compiled.wrt().len();
    let report =
        inspect::residuals::residuals(g, gdef, k, args.as_deref()).map_err(|e| match e {
            inspect::residuals::Error::Eval(e) => diag::at(&g.file, e.span(), &e.to_string()),
            other => CliError::internal(format!("{other}")),
        })?;
    print!("{report}");
    Ok(())
}

fn activity(file: &Path, name: Option<&str>, at: &[String]) -> Result<(), CliError> {
    let m = Program::load(file)?.expanded("activity", name)?;
    let (m, name) = first_order(m, name)?;
    let def = entry(&m, Some(name.as_str()))?;
    let report = match optional_args(&m, def, at)? {
        Some(args) => inspect::activity::analyze_at(&m, def, &args)
            .map_err(|e| diag::at(&m.file, e.span(), &e.to_string()))?,
        None => inspect::activity::analyze(&m, def),
    };
    print!("{report}");
    Ok(())
}
