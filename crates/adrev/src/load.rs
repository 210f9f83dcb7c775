//! Reading the user's files: program text or any IR file, verified on the
//! way in (the stage contract: every stage verifies its input).

use crate::diag::{self, Error as CliError};
use std::path::Path;
use syntax::{EnvelopeError, Module, SourceFile};

/// A program read from disk, in whichever IR the file holds.
#[derive(Debug, Clone)]
pub enum Ir {
    /// A typed Source program (from `.ad` text or a `source` RON file).
    Source(Module),
    /// A Target program.
    Target(Module),
    /// A Source UNF or Target UNF module.
    Unf(unf::Module),
}

impl Ir {
    /// The envelope name of the IR.
    pub fn ir_name(&self) -> &'static str {
        match self {
            Ir::Source(_) => syntax::SOURCE_IR,
            Ir::Target(_) => syntax::TARGET_IR,
            Ir::Unf(m) => m.kind.ir_name(),
        }
    }

    /// The term-language module, or an error naming the IR the file holds
    /// for a command that takes only the term language.
    pub fn module(&self, command: &str) -> Result<&Module, CliError> {
        match self {
            Ir::Source(m) | Ir::Target(m) => Ok(m),
            Ir::Unf(u) => Err(CliError::user(format!(
                "`{command}` takes a program or a `source`/`target` file, not `{}`",
                u.kind.ir_name()
            ))),
        }
    }
}

/// Reads a file as text, with an error naming it.
pub fn read_text(path: &Path) -> Result<String, CliError> {
    std::fs::read(path)
        .map_err(|e| CliError::user(format!("cannot read `{}`: {e}", path.display())))
        .and_then(|bytes| {
            String::from_utf8(bytes).map_err(|e| {
                CliError::user(format!(
                    "`{}` is not UTF-8 text (invalid byte at offset {})",
                    path.display(),
                    e.utf8_error().valid_up_to()
                ))
            })
        })
}

/// Parses and elaborates program text into a typed Source module, whose
/// definitions call each other (`syntax::compile_calls`: each elaborated
/// once; a request inlines its entry, `Pass::Inline`).
pub fn compile_text(name: &str, text: String) -> Result<Module, CliError> {
    let file = SourceFile {
        name: name.to_string(),
        text,
    };
    syntax::compile_calls(file.clone()).map_err(|e| diag::at(&file, e.span(), &e.to_string()))
}

/// Explains a RON reading failure, naming the file.
pub fn envelope_error(path: &Path, err: EnvelopeError) -> CliError {
    match err {
        EnvelopeError::Malformed { line, col, message } => CliError::user(format!(
            "`{}` is not a valid IR file: {}:{line}:{col}: {message}",
            path.display(),
            path.display()
        )),
        other => CliError::user(format!("`{}`: {other}", path.display())),
    }
}

/// Checks a term-language module read from a RON file with the verifier
/// (`syntax::verify_source` for a `source` file: no Target primitive).
pub fn verify_input(path: &Path, m: &Module, source: bool) -> Result<(), CliError> {
    let checked = if source {
        syntax::verify_source(m)
    } else {
        syntax::verify(m)
    };
    checked.map_err(|errors| {
        let mut out = format!("error: `{}` does not pass the verifier:\n", path.display());
        for e in errors.iter().take(10) {
            out.push_str(&diag::render(&m.file, e.span, &e.to_string(), None));
        }
        if errors.len() > 10 {
            out.push_str(&format!("... and {} more\n", errors.len() - 10));
        }
        CliError::User(out)
    })
}

/// Loads a program: `.ad` text is compiled; anything else must be an IR
/// file whose envelope says which IR it holds.
pub fn load(path: &Path) -> Result<Ir, CliError> {
    let text = read_text(path)?;
    if path.extension().is_some_and(|e| e == "ad") {
        return Ok(Ir::Source(compile_text(&path.display().to_string(), text)?));
    }
    from_ir_text(path, text)
}

/// Reads the text of an IR file (named `path` in messages): its envelope
/// says which IR it holds; the module is verified.
pub fn from_ir_text(path: &Path, text: String) -> Result<Ir, CliError> {
    let header = syntax::read_header(&text).map_err(|e| envelope_error(path, e))?;
    match header.ir.as_str() {
        syntax::SOURCE_IR | syntax::TARGET_IR => {
            let m: Module = syntax::from_ron(&header.ir, syntax::FORMAT_VERSION, &text)
                .map_err(|e| envelope_error(path, e))?;
            verify_input(path, &m, header.ir == syntax::SOURCE_IR)?;
            Ok(if header.ir == syntax::SOURCE_IR {
                Ir::Source(m)
            } else {
                Ir::Target(m)
            })
        }
        unf::SOURCE_UNF_IR | unf::TARGET_UNF_IR => {
            let (m, _) = read_unf(path, &text, &header.ir)?;
            Ok(Ir::Unf(m))
        }
        other => Err(CliError::user(format!(
            "`{}` holds the `{other}` IR, which no command of this build reads",
            path.display()
        ))),
    }
}

/// Reads and verifies the UNF module of the envelope `ir` in `text`,
/// returning what the verifier computed with it.
fn read_unf(path: &Path, text: &str, ir: &str) -> Result<(unf::Module, unf::Checked), CliError> {
    let kind = if ir == unf::SOURCE_UNF_IR {
        unf::Kind::Source
    } else {
        unf::Kind::Target
    };
    let m = unf::from_ron(text, kind).map_err(|e| match e {
        unf::Error::Envelope { source } => envelope_error(path, source),
        other => CliError::user(format!("`{}`: {other}", path.display())),
    })?;
    let checked = verify_unf(path, &m)?;
    Ok((m, checked))
}

/// Loads a UNF file of the given kind, verified, with what the verifier
/// computed (the stages that take UNF need it: [`unf::raise_checked`],
/// `reverse::reverse_checked`); `None` when the file holds another IR.
pub fn load_unf(
    path: &Path,
    kind: unf::Kind,
) -> Result<Result<(unf::Module, unf::Checked), Ir>, CliError> {
    if path.extension().is_some_and(|e| e == "ad") {
        return load(path).map(Err);
    }
    let text = read_text(path)?;
    let header = syntax::read_header(&text).map_err(|e| envelope_error(path, e))?;
    if header.ir != kind.ir_name() {
        return load(path).map(Err);
    }
    read_unf(path, &text, &header.ir).map(Ok)
}

/// Checks a UNF module read from a RON file with its verifier.
pub fn verify_unf(path: &Path, m: &unf::Module) -> Result<unf::Checked, CliError> {
    unf::check(m).map_err(|errors| {
        let mut out = format!(
            "error: `{}` does not pass the {} verifier:\n",
            path.display(),
            m.kind.ir_name()
        );
        for e in errors.iter().take(10) {
            out.push_str(&diag::render(&m.source.file, e.span, &e.to_string(), None));
        }
        if errors.len() > 10 {
            out.push_str(&format!("... and {} more\n", errors.len() - 10));
        }
        CliError::User(out)
    })
}
