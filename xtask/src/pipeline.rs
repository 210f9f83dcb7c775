//! The stages of the bottom row of Figure 1 as commands, and `pipeline`,
//! which chains them, writes every boundary file, and can hand any stage to
//! an external program (the stage contract of architecture.md).

use crate::diag::CliError;
use crate::load::{self, Program};
use adrev::Wrt;
use adrev::passes::{self, Context, Flow, Pass};
use std::path::{Path, PathBuf};
use syntax::Module;

/// A stage of the pipeline, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// Text → Source (`syntax::compile`).
    Parse,
    /// Source → Source UNF (Fig. 9).
    Unf,
    /// Source UNF → Target UNF (Fig. 8).
    Reverse,
    /// Target UNF → Target (Fig. 10).
    UnfInverse,
    /// Target → Target: partial evaluation and Fig. 12.
    Optimize,
}

impl Stage {
    /// Every stage, in pipeline order.
    pub const ALL: [Stage; 5] = [
        Stage::Parse,
        Stage::Unf,
        Stage::Reverse,
        Stage::UnfInverse,
        Stage::Optimize,
    ];

    /// The stage's command name.
    pub fn name(self) -> &'static str {
        match self {
            Stage::Parse => "parse",
            Stage::Unf => "unf",
            Stage::Reverse => "reverse",
            Stage::UnfInverse => "unf-inverse",
            Stage::Optimize => "optimize",
        }
    }

    /// The file a pipeline writes for the stage's output.
    pub fn output_file(self) -> &'static str {
        match self {
            Stage::Parse => "10.source.ron",
            Stage::Unf => "20.source-unf.ron",
            Stage::Reverse => "30.target-unf.ron",
            Stage::UnfInverse => "40.target.ron",
            Stage::Optimize => "50.opt.ron",
        }
    }

    fn from_name(name: &str) -> Option<Stage> {
        Stage::ALL.into_iter().find(|s| s.name() == name)
    }
}

/// Options shared by the stages.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// The entry definition (default: the last).
    pub entry: Option<String>,
    /// `--wrt a,b` for the reverse stage.
    pub wrt: Option<String>,
    /// `--checkpoint sqrt` for the unf-inverse stage.
    pub checkpoint: adrev::Checkpoint,
}

/// The passes' context for `opts` on a module whose entry is `def`.
fn context(def: &syntax::Def, opts: &Options) -> Result<Context, CliError> {
    Ok(Context {
        wrt: Wrt::parse(opts.wrt.as_deref())?.for_crates(def)?,
        checkpoint: opts.checkpoint,
        ..Context::new(def.name.as_str())
    })
}

/// Runs `list` on `flow` and returns the term-language module it ends on.
fn run_to_module(list: &[Pass], flow: Flow, cx: &Context) -> Result<Module, CliError> {
    passes::run(list, flow, cx)?.into_module()
}

fn source_of(path: &Path, stage: Stage) -> Result<Module, CliError> {
    match load::load(path)? {
        Program::Source(m) => Ok(m),
        other => Err(wrong_input(
            path,
            stage,
            &other,
            "a `.ad` program or a `source` file",
        )),
    }
}

/// A verified UNF input of the given kind, with what its verifier
/// computed (so that the stage does not check it again).
fn unf_of(
    path: &Path,
    stage: Stage,
    kind: unf::Kind,
) -> Result<(unf::Module, unf::Checked), CliError> {
    match load::load_unf(path, kind)? {
        Ok(checked) => Ok(checked),
        Err(other) => Err(wrong_input(
            path,
            stage,
            &other,
            &format!("a `{}` file", kind.ir_name()),
        )),
    }
}

fn wrong_input(path: &Path, stage: Stage, got: &Program, wanted: &str) -> CliError {
    let ir = match got {
        Program::Source(_) => "source",
        Program::Target(_) => "target",
        Program::Unf(m) => m.kind.ir_name(),
    };
    CliError::user(format!(
        "stage `{}` takes {wanted}, but `{}` holds the `{ir}` IR",
        stage.name(),
        path.display()
    ))
}

/// Runs one built-in stage from file to file.
pub fn run_stage(
    stage: Stage,
    input: &Path,
    output: &Path,
    opts: &Options,
) -> Result<(), CliError> {
    let text = match stage {
        Stage::Parse => {
            let text = load::read_text(input)?;
            let m = load::compile_text(&input.display().to_string(), text)?;
            syntax::to_ron(syntax::SOURCE_IR, syntax::FORMAT_VERSION, &m)
        }
        // Each input is dropped as soon as its output exists.
        Stage::Unf => {
            let m = source_of(input, stage)?;
            let def = adrev::program::entry(&m, opts.entry.as_deref())?;
            let cx = context(def, opts)?;
            let list = [Pass::Expand, Pass::FirstOrder, Pass::Lower];
            match passes::run(&list, Flow::Source(m), &cx)? {
                Flow::SourceUnf(out, _) => unf::to_ron(&out),
                _ => return Err(CliError::internal("lowering gave no Source UNF module")),
            }
        }
        Stage::Reverse => {
            let (m, checked) = unf_of(input, stage, unf::Kind::Source)?;
            let def = adrev::program::entry(&m.source, Some(m.entry.as_str()))?;
            let cx = context(def, opts)?;
            match passes::run(&[Pass::Reverse], Flow::SourceUnf(m, Some(checked)), &cx)? {
                Flow::TargetUnf(out, _) => unf::to_ron(&out),
                _ => return Err(CliError::internal("D_rho gave no Target UNF module")),
            }
        }
        Stage::UnfInverse => {
            let (m, checked) = unf_of(input, stage, unf::Kind::Target)?;
            let cx = Context {
                checkpoint: opts.checkpoint,
                ..Context::new(m.entry.as_str())
            };
            let out = run_to_module(&[Pass::Raise], Flow::TargetUnf(m, Some(checked)), &cx)?;
            syntax::to_ron(syntax::TARGET_IR, syntax::FORMAT_VERSION, &out)
        }
        Stage::Optimize => {
            let m = match load::load(input)? {
                Program::Target(m) | Program::Source(m) => m,
                other => return Err(wrong_input(input, stage, &other, "a `target` file")),
            };
            let out = run_to_module(&[Pass::Optimize], Flow::Target(m), &Context::new(""))?;
            syntax::to_ron(syntax::TARGET_IR, syntax::FORMAT_VERSION, &out)
        }
    };
    load::write_ron(output, text)
}

/// Parses `STAGE=COMMAND` of `--replace`.
pub fn parse_replacement(arg: &str) -> Result<(Stage, String), CliError> {
    let (name, command) = arg
        .split_once('=')
        .ok_or_else(|| CliError::user(format!("--replace takes STAGE=COMMAND, not `{arg}`")))?;
    let stage = Stage::from_name(name.trim()).ok_or_else(|| {
        let names: Vec<_> = Stage::ALL
            .iter()
            .map(|s| format!("`{}`", s.name()))
            .collect();
        CliError::user(format!(
            "no stage named `{name}` (the stages: {})",
            names.join(", ")
        ))
    })?;
    if command.trim().is_empty() {
        return Err(CliError::user(format!("--replace {name}= needs a command")));
    }
    Ok((stage, command.trim().to_string()))
}

/// Runs an external program in place of a stage: `COMMAND IN OUT`. Its
/// output is then read and verified like a built-in stage's.
fn run_external(stage: Stage, command: &str, input: &Path, output: &Path) -> Result<(), CliError> {
    let mut words = command.split_whitespace();
    let program = words
        .next()
        .ok_or_else(|| CliError::user("an empty --replace command"))?;
    let status = std::process::Command::new(program)
        .args(words)
        .arg(input)
        .arg(output)
        .status()
        .map_err(|e| {
            CliError::user(format!(
                "cannot run `{command}` for stage `{}`: {e}",
                stage.name()
            ))
        })?;
    if !status.success() {
        return Err(CliError::user(format!(
            "the replacement of stage `{}` (`{command}`) failed with {status}",
            stage.name()
        )));
    }
    // The stage contract: what comes out of a stage is verified, whoever
    // wrote it.
    let loaded = load::load(output).map_err(|e| match e {
        CliError::User(msg) => CliError::User(format!(
            "the replacement of stage `{}` (`{command}`) wrote an unusable file:\n{msg}",
            stage.name()
        )),
        other => other,
    })?;
    let expected = match stage {
        Stage::Parse => "source",
        Stage::Unf => unf::SOURCE_UNF_IR,
        Stage::Reverse => unf::TARGET_UNF_IR,
        Stage::UnfInverse | Stage::Optimize => "target",
    };
    let got = match &loaded {
        Program::Source(_) => "source",
        Program::Target(_) => "target",
        Program::Unf(m) => m.kind.ir_name(),
    };
    if got != expected {
        return Err(CliError::user(format!(
            "the replacement of stage `{}` wrote a `{got}` file, not `{expected}`",
            stage.name()
        )));
    }
    Ok(())
}

/// `cargo xtask pipeline`: every stage from the program text to Target,
/// each boundary written into `dir`.
pub fn pipeline(
    file: &Path,
    dir: &Path,
    replace: &[String],
    opts: &Options,
) -> Result<(), CliError> {
    let replacements: Vec<(Stage, String)> = replace
        .iter()
        .map(|r| parse_replacement(r))
        .collect::<Result<_, _>>()?;
    std::fs::create_dir_all(dir)
        .map_err(|e| CliError::user(format!("cannot create `{}`: {e}", dir.display())))?;
    if replacements.is_empty() {
        // Every boundary from the library in one go (`Program::stages`).
        let program = adrev::Program::load(file)?;
        let wrt = Wrt::parse(opts.wrt.as_deref())?;
        for s in program.stages(opts.entry.as_deref(), &wrt)? {
            let output = dir.join(s.file);
            load::write_text(&output, &s.ron)?;
            println!("{:<12} {}", s.stage, output.display());
        }
        return Ok(());
    }
    let mut input: PathBuf = file.to_path_buf();
    for stage in Stage::ALL {
        let output = dir.join(stage.output_file());
        match replacements.iter().find(|(s, _)| *s == stage) {
            Some((_, command)) => run_external(stage, command, &input, &output)?,
            None => run_stage(stage, &input, &output, opts)?,
        }
        println!("{:<12} {}", stage.name(), output.display());
        input = output;
    }
    Ok(())
}
