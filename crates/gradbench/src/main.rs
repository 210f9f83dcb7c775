//! `adrev-gradbench`: the GradBench tool. Reads the eval's messages, one
//! JSON object a line, on stdin and answers each on stdout
//! (docs/gradbench.md).

use std::io::{BufRead, Write};
use std::process::ExitCode;

fn main() -> ExitCode {
    let stdin = std::io::stdin();
    let stdout = std::io::stdout();
    let mut session = gradbench::Session::new();
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
        if writeln!(out, "{answer}").and_then(|()| out.flush()).is_err() {
            return ExitCode::SUCCESS;
        }
    }
    ExitCode::SUCCESS
}
