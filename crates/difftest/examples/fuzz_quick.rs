//! Runs a fuzzing session and prints the report, exiting 1 on a
//! disagreement: what `cargo xtask fuzz-diff --cases N --seed S` does, for
//! use before that command is wired (`cargo run -p difftest --example
//! fuzz_quick -- N S`).

use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    let cases = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(1_000);
    let seed = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(1);
    let report = difftest::fuzz(cases, seed, |done, _| {
        if done % 1000 == 0 {
            eprintln!("{done} cases");
        }
    });
    print!("{}", report.render());
    if report.failure.is_some() {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
