//! The C backend from the command line: `codegen`, `compile`, and the
//! `--backend c` of `eval` and `grad`, which must print exactly what the
//! evaluator prints.

use crate::diag::{self, CliError};
use semantics::Value;
use std::path::{Path, PathBuf};
use syntax::Module;

/// Where a program is evaluated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Backend {
    /// The reference evaluator (`semantics`).
    Eval,
    /// Generated C, built with the system compiler (`codegen`).
    C,
}

/// How `codegen` and `compile` configure the backend. The default build
/// computes the evaluator's bits; each option trades that for speed.
#[derive(Debug, Clone, Copy, Default, clap::Args)]
pub struct COptions {
    /// OpenMP loops for large maps and reductions (built with -fopenmp); a
    /// parallel reduction adds in another order than the evaluator.
    #[arg(long)]
    pub parallel: bool,
    /// Reassociated reductions, glibc's vector math and -march=native:
    /// results within a few ulp of the evaluator's.
    #[arg(long)]
    pub fast: bool,
    /// Build with AddressSanitizer and UndefinedBehaviorSanitizer.
    #[arg(long)]
    pub sanitize: bool,
}

impl COptions {
    fn config(self) -> codegen::Config {
        codegen::Config {
            parallel: self.parallel,
            reassociate: self.fast,
            vector_math: self.fast,
            native: self.fast,
            sanitize: self.sanitize,
            ..codegen::Config::default()
        }
    }
}

fn codegen_error(m: &Module, e: &codegen::Error) -> CliError {
    diag::at(&m.file, e.span(), &e.to_string())
}

/// A fresh build directory for one command.
fn scratch() -> PathBuf {
    std::env::temp_dir().join(format!("adrev-c-{}", std::process::id()))
}

/// Runs definition `name` of `m` on `args` with the chosen backend.
pub fn run(m: &Module, name: &str, args: &[Value], backend: Backend) -> Result<Value, CliError> {
    match backend {
        Backend::Eval => crate::stage::run(m, name, args),
        Backend::C => {
            let def = m.def(name).ok_or_else(|| {
                CliError::Internal(format!("the module has no definition `{name}`\n"))
            })?;
            let named: Vec<(String, Value)> = def
                .params
                .iter()
                .map(|p| p.name.to_string())
                .zip(args.iter().cloned())
                .collect();
            let dir = scratch();
            let out = codegen::eval_entry(m, Some(name), &named, &codegen::Config::default(), &dir);
            let _ = std::fs::remove_dir_all(&dir);
            out.map_err(|e| codegen_error(m, &e))
        }
    }
}

/// `cargo xtask codegen IN -o OUT.c`: the C source (and its header beside
/// it) of a first-order Target or Source program.
pub fn codegen_cmd(input: &Path, output: &Path, options: COptions) -> Result<(), CliError> {
    let program = crate::load::load(input)?;
    let m = program.module("codegen")?;
    let c = codegen::emit(m, &options.config()).map_err(|e| codegen_error(m, &e))?;
    crate::load::write_text(output, &c.source)?;
    let header = output.with_extension("h");
    crate::load::write_text(&header, &c.header)?;
    println!("wrote {} and {}", output.display(), header.display());
    Ok(())
}

/// `cargo xtask compile FILE [--grad] -o DIR`: C source, header and shared
/// library of the primal (or of its gradient program).
pub fn compile(
    file: &Path,
    grad: bool,
    entry: Option<&str>,
    dir: &Path,
    options: COptions,
) -> Result<(), CliError> {
    let m = crate::derive::load_source(file, "compile")?;
    let m = if grad {
        let def = crate::inputs::entry(&m, entry)?;
        crate::derive::gradient_program(&m, def, None, crate::derive::Via::Unf)?
    } else {
        m
    };
    let cfg = codegen::Config {
        shared_library: true,
        ..options.config()
    };
    let c = codegen::emit(&m, &cfg).map_err(|e| codegen_error(&m, &e))?;
    let built = codegen::build(&c, dir, &cfg).map_err(|e| codegen_error(&m, &e))?;
    println!("source          {}", built.source.display());
    println!("header          {}", built.header.display());
    println!("driver          {}", built.driver.display());
    if let Some(lib) = &built.shared_library {
        println!("shared library  {}", lib.display());
    }
    for command in &built.commands {
        println!("$ {command}");
    }
    Ok(())
}
