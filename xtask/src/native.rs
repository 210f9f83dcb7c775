//! The C backend from the command line: `codegen`, `compile`, and the
//! `--backend c` (with `--parallel`, `--fast`, `--sanitize`) of every
//! command that runs a program.

use crate::diag::CliError;
use adrev::{Kind, Program, Request, Wrt};
use std::path::Path;

/// Where a program is evaluated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Backend {
    /// The reference evaluator (`semantics`).
    #[default]
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
    /// The backend's configuration.
    pub fn config(self) -> codegen::Config {
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

/// `--backend` and the C options of a command that runs a program.
#[derive(Debug, Clone, Copy, Default, clap::Args)]
pub struct BackendArgs {
    /// Where to run: the reference evaluator or generated C.
    #[arg(long, value_enum, default_value = "eval")]
    pub backend: Backend,
    /// The C build's options (with `--backend c`).
    #[command(flatten)]
    pub c: COptions,
}

impl BackendArgs {
    /// The library's backend; a C option without `--backend c` is an error
    /// (the evaluator has no such option).
    pub fn backend(self) -> Result<adrev::Backend, CliError> {
        let asked = [
            (self.c.parallel, "--parallel"),
            (self.c.fast, "--fast"),
            (self.c.sanitize, "--sanitize"),
        ];
        match self.backend {
            Backend::C => Ok(adrev::Backend::C(self.c.config())),
            Backend::Eval => match asked.iter().find(|(on, _)| *on) {
                Some((_, flag)) => Err(CliError::user(format!(
                    "{flag} is an option of the C backend: add --backend c"
                ))),
                None => Ok(adrev::Backend::Eval),
            },
        }
    }
}

fn codegen_error(m: &syntax::Module, e: &codegen::Error) -> CliError {
    adrev::diag::at(&m.file, e.span(), &e.to_string())
}

/// `cargo xtask codegen IN -o OUT.c`: the C source and, beside it, the
/// header `OUT.h` that the source includes.
pub fn codegen_cmd(
    input: &Path,
    output: &Path,
    loop_ir: Option<&Path>,
    options: COptions,
) -> Result<(), CliError> {
    let program = Program::load(input)?;
    // Every definition, each with its calls inlined: C has a function per
    // definition and none calls another.
    let loaded = program.module()?;
    let m = &syntax::inline_all(loaded)
        .map_err(|e| adrev::diag::at(&loaded.file, e.span(), &e.to_string()))?;
    let stem = output
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .filter(|s| !s.is_empty())
        .ok_or_else(|| CliError::user(format!("`{}` names no C file", output.display())))?;
    let c = codegen::emit_named(m, &options.config(), &stem).map_err(|e| codegen_error(m, &e))?;
    crate::load::write_text(output, &c.source)?;
    let header = output.with_extension("h");
    crate::load::write_text(&header, &c.header)?;
    println!("wrote {} and {}", output.display(), header.display());
    if let Some(path) = loop_ir {
        crate::load::write_ron(path, codegen::imp::to_ron(&c.loop_ir))?;
        println!("wrote {}", path.display());
    }
    Ok(())
}

/// `cargo xtask compile FILE [--grad [--wrt A,B]] -o DIR`: C source,
/// header, driver and shared library of the primal, or of the gradient
/// program `grad` runs (the UNF route, optimized).
pub fn compile(
    file: &Path,
    grad: bool,
    entry: Option<&str>,
    wrt: Option<&str>,
    dir: &Path,
    options: COptions,
) -> Result<(), CliError> {
    let program = Program::load(file)?;
    let kind = if grad {
        Kind::ValueAndGrad
    } else {
        Kind::Value
    };
    if !grad && wrt.is_some() {
        return Err(CliError::user("--wrt is for `compile --grad`"));
    }
    let mut req = Request::new(kind).wrt(Wrt::parse(wrt)?);
    req.entry = entry.map(str::to_string);
    let compiled = program.compile(&req)?;
    let m = compiled
        .module()
        .ok_or_else(|| CliError::user("`compile` takes a term-language program, not a UNF file"))?;
    let cfg = codegen::Config {
        shared_library: true,
        ..options.config()
    };
    let c = codegen::emit(m, &cfg).map_err(|e| codegen_error(m, &e))?;
    let built = codegen::build(&c, dir, &cfg).map_err(|e| codegen_error(m, &e))?;
    println!("source          {}", built.source.display());
    println!("header          {}", built.header.display());
    if let Some(driver) = &built.driver {
        println!("driver          {}", driver.display());
    }
    if let Some(lib) = &built.shared_library {
        println!("shared library  {}", lib.display());
    }
    for command in &built.commands {
        println!("$ {command}");
    }
    Ok(())
}
