//! adrev as a GradBench tool (gradbench/gradbench, CONTRIBUTING.md
//! "Protocol"): the messages ([`protocol`]), one session answering them
//! ([`Session`]), and every eval's functions ([`evals`]): which program of
//! `gradbench/` computes each, what the compiler is asked for, and how
//! GradBench's JSON input and output map to the program's parameters and
//! result ([`convert`]). docs/gradbench.md describes the protocol and every
//! eval with their sources.

pub mod convert;
pub mod engine;
pub mod evals;
pub mod protocol;
mod session;

pub use session::{Session, read_input};

use std::io::{BufRead, Write};

/// Answers every line of `input` on `output` until the input ends (or the
/// output is closed: the eval has gone). An input that is not UTF-8 is an
/// error.
pub fn serve(
    input: impl BufRead,
    mut output: impl Write,
    config: codegen::Config,
) -> Result<(), String> {
    let mut session = Session::new(config);
    for line in input.lines() {
        let line = line.map_err(|e| format!("reading the eval's messages: {e}"))?;
        if line.trim().is_empty() {
            continue;
        }
        let answer = session.answer(&line);
        if writeln!(output, "{answer}")
            .and_then(|()| output.flush())
            .is_err()
        {
            return Ok(());
        }
    }
    Ok(())
}

/// The configuration the command line asks for: `--opt-level LEVEL` (0
/// to 3) lowers the C compiler's optimisation from the default `-O3`;
/// `--sanitize` builds every program with AddressSanitizer and
/// UndefinedBehaviorSanitizer, run in a process of its own so that a
/// report is an error answer, not the end of the tool (the debug mode).
pub fn tool_config(opt_level: Option<&str>, sanitize: bool) -> Result<codegen::Config, String> {
    let mut config = engine::default_config();
    if let Some(level) = opt_level {
        config.opt_level = match level {
            "0" => codegen::OptLevel::O0,
            "1" => codegen::OptLevel::O1,
            "2" => codegen::OptLevel::O2,
            "3" => codegen::OptLevel::O3,
            other => return Err(format!("--opt-level takes 0, 1, 2 or 3, not `{other}`")),
        };
    }
    config.sanitize = sanitize;
    Ok(config)
}
