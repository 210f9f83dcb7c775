//! `adrev-gradbench`: the GradBench tool. Reads the eval's messages, one
//! JSON object a line, on stdin and answers each on stdout
//! (docs/gradbench.md). `--opt-level 0..3` lowers the C compiler's
//! optimisation from the default `-O3` (the tests use 1: a build at -O1
//! takes a quarter of the time).

use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let config = match args.as_slice() {
        [] => Ok(gradbench::engine::default_config()),
        [flag, level] if flag == "--opt-level" => gradbench::config_with_opt_level(level),
        other => Err(format!(
            "unexpected arguments {other:?} (usage: adrev-gradbench [--opt-level 0..3])"
        )),
    };
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
