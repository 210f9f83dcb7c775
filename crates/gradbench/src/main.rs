//! `adrev-gradbench`: the GradBench tool. Reads the eval's messages, one
//! JSON object a line, on stdin and answers each on stdout
//! (docs/gradbench.md). `--opt-level 0..3` lowers the C compiler's
//! optimisation from the default `-O3` (the tests use it: a build at -O1
//! takes a quarter of the time).

use std::io::{BufRead, Write};
use std::process::ExitCode;

fn main() -> ExitCode {
    let stdin = std::io::stdin();
    let stdout = std::io::stdout();
    let mut config = gradbench::engine::default_config();
    match std::env::args().skip(1).collect::<Vec<_>>().as_slice() {
        [] => {}
        [flag, level] if flag == "--opt-level" => match level.as_str() {
            "0" => config.opt_level = codegen::OptLevel::O0,
            "1" => config.opt_level = codegen::OptLevel::O1,
            "2" => config.opt_level = codegen::OptLevel::O2,
            "3" => config.opt_level = codegen::OptLevel::O3,
            other => {
                eprintln!("adrev-gradbench: --opt-level takes 0, 1, 2 or 3, not `{other}`");
                return ExitCode::from(1);
            }
        },
        other => {
            eprintln!(
                "adrev-gradbench: unexpected arguments {other:?} (usage: adrev-gradbench [--opt-level 0..3])"
            );
            return ExitCode::from(1);
        }
    }
    let mut session = gradbench::Session::new(config);
    let mut out = stdout.lock();
    for line in stdin.lock().lines() {
        let Ok(line) = line else {
            eprintln!("adrev-gradbench: stdin is not UTF-8 text");
            return ExitCode::from(1);
        };
        if line.trim().is_empty() {
            continue;
        }
        let answer = session.answer(&line);
        // A closed stdout means the eval has gone: stop quietly.
        if writeln!(out, "{answer}")
            .and_then(|()| out.flush())
            .is_err()
        {
            return ExitCode::SUCCESS;
        }
    }
    ExitCode::SUCCESS
}
