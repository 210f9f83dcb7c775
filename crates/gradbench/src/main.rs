//! `adrev-gradbench`: the GradBench tool. Reads the eval's messages, one
//! JSON object a line, on stdin and answers each on stdout
//! (docs/gradbench.md). `--opt-level 0..3` lowers the C compiler's
//! optimisation from the default `-O3` (the tests use 1: a build at -O1
//! takes a quarter of the time); `--sanitize` builds every program with
//! the sanitizers (the debug mode).

use std::process::ExitCode;

fn main() -> ExitCode {
    let config = parse_args(std::env::args().skip(1))
        .and_then(|(level, sanitize)| gradbench::tool_config(level.as_deref(), sanitize));
    let result = config.and_then(|config| {
        gradbench::serve(std::io::stdin().lock(), std::io::stdout().lock(), config)
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("adrev-gradbench: {e}");
            ExitCode::from(1)
        }
    }
}

/// `[--opt-level 0..3] [--sanitize]`, in any order.
fn parse_args(args: impl Iterator<Item = String>) -> Result<(Option<String>, bool), String> {
    const USAGE: &str = "usage: adrev-gradbench [--opt-level 0..3] [--sanitize]";
    let (mut level, mut sanitize) = (None, false);
    let mut args = args.peekable();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--opt-level" => {
                level = Some(
                    args.next()
                        .ok_or_else(|| format!("--opt-level needs a level ({USAGE})"))?,
                );
            }
            "--sanitize" => sanitize = true,
            other => return Err(format!("unexpected argument `{other}` ({USAGE})")),
        }
    }
    Ok((level, sanitize))
}
