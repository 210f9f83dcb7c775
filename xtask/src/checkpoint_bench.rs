//! `cargo xtask bench checkpoint`: the memory and the time of the gradient
//! of a long scalar loop (issue 19's `ifold (fun (a, i) -> sin a * x +
//! 0.5) x n`) with every state stored and with √n checkpoints
//! (`--checkpoint sqrt`), on the evaluator and in C, at each n. Each
//! measurement runs in a process of its own, so that its peak resident
//! memory (`VmHWM`) is its own; the program is compiled before the clock
//! starts, and the call is timed in CPU seconds of the thread. Nothing is
//! asserted (docs/scale.md, "Checkpointing").

use crate::diag::CliError;
use adrev::{Backend, Checkpoint, Inputs, Kind, Program, Request};

/// The loop.
const LOOP: &str = "def f (x : R) (n : Int) : R =\n  ifold (fun (a, i) -> sin a * x + 0.5) x n\n";

/// The environment variable that makes the benchmark measure one case
/// (`BACKEND:SCHEME:N`) in this process and print `seconds peak_kb`.
const ONE: &str = "ADREV_BENCH_CHECKPOINT";

const BACKENDS: [&str; 2] = ["eval", "c"];

fn backend(name: &str) -> Backend {
    match name {
        "c" => Backend::C(codegen::Config::default()),
        _ => Backend::Eval,
    }
}

/// The gradient's value line, then the measurement.
fn measure_here(backend_name: &str, scheme: Checkpoint, n: usize) -> Result<(), CliError> {
    let program = Program::from_text("loop.ad", LOOP)?;
    let req = Request::new(Kind::ValueAndGrad)
        .checkpoint(scheme)
        .backend(backend(backend_name));
    let compiled = program.compile(&req)?;
    let inputs = Inputs::from_literals([("x", "0.3".to_string()), ("n", n.to_string())]);
    let (out, seconds) = crate::bench::timed(|| compiled.call(&inputs));
    let out = out?;
    let grad = out
        .gradient("x")
        .map(ToString::to_string)
        .unwrap_or_default();
    println!("{seconds} {} {grad}", crate::shapes::peak_kb().unwrap_or(0));
    Ok(())
}

/// What one child process measured: CPU seconds, peak MB and the
/// gradient, or why it failed (out of memory).
enum Measured {
    Ran {
        seconds: f64,
        peak_mb: f64,
        grad: String,
    },
    Failed(String),
}

fn measure(backend_name: &str, scheme: Checkpoint, n: usize) -> Result<Measured, CliError> {
    let exe = std::env::current_exe()
        .map_err(|e| CliError::Internal(format!("cannot find this program: {e}\n")))?;
    let out = std::process::Command::new(exe)
        .args(["bench", "checkpoint"])
        .env(ONE, format!("{backend_name}:{}:{n}", scheme.name()))
        .output()
        .map_err(|e| CliError::Internal(format!("cannot run a measurement: {e}\n")))?;
    let text = String::from_utf8_lossy(&out.stdout);
    let fields: Vec<&str> = text.split_whitespace().collect();
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        let first = err.lines().next().unwrap_or("failed").to_string();
        return Ok(Measured::Failed(first.replace('|', "/")));
    }
    match fields.as_slice() {
        [s, kb, grad] => match (s.parse::<f64>(), kb.parse::<f64>()) {
            (Ok(seconds), Ok(kb)) => Ok(Measured::Ran {
                seconds,
                peak_mb: kb / 1024.0,
                grad: grad.to_string(),
            }),
            _ => Err(CliError::Internal(format!(
                "a measurement printed `{text}`\n"
            ))),
        },
        _ => Err(CliError::Internal(format!(
            "a measurement printed `{text}`\n"
        ))),
    }
}

/// The child's side of [`measure`].
fn measure_one(spec: &str) -> Result<(), CliError> {
    let bad = || CliError::Internal(format!("{ONE}={spec}: expected BACKEND:SCHEME:N\n"));
    let parts: Vec<&str> = spec.split(':').collect();
    let [b, s, n] = parts.as_slice() else {
        return Err(bad());
    };
    let scheme = Checkpoint::from_name(s).ok_or_else(bad)?;
    let n = n.parse().map_err(|_| bad())?;
    measure_here(b, scheme, n)
}

/// `cargo xtask bench checkpoint [--sizes N,...]` (default 10^6, 10^7;
/// quick 10^4, 10^5).
pub fn checkpoint(sizes: &[usize]) -> Result<(), CliError> {
    if let Ok(spec) = std::env::var(ONE) {
        return measure_one(&spec);
    }
    println!(
        "The gradient of `ifold (fun (a, i) -> sin a * x + 0.5) x n` with every state \
         stored (`off`) and with √n checkpoints (`sqrt`): CPU seconds of the call, the peak \
         resident memory of the process (one per row; build with `--release`), and bytes \
         per step over the checkpointed run's peak.\n"
    );
    println!(
        "| backend | n | off s | sqrt s | time × | off MB | sqrt MB | off bytes/step | same gradient |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---|");
    for backend_name in BACKENDS {
        for &n in sizes {
            let off = measure(backend_name, Checkpoint::Off, n)?;
            let sqrt = measure(backend_name, Checkpoint::Sqrt, n)?;
            let cell = |m: &Measured, f: fn(f64, f64) -> String| match m {
                Measured::Ran {
                    seconds, peak_mb, ..
                } => f(*seconds, *peak_mb),
                Measured::Failed(why) => why.clone(),
            };
            let ratio = match (&off, &sqrt) {
                (Measured::Ran { seconds: a, .. }, Measured::Ran { seconds: b, .. }) => {
                    crate::bench::time_ratio(*b, *a)
                }
                _ => "-".into(),
            };
            let per_step = match (&off, &sqrt) {
                (Measured::Ran { peak_mb: a, .. }, Measured::Ran { peak_mb: b, .. }) => {
                    format!("{:.0}", (a - b) * 1024.0 * 1024.0 / n.max(1) as f64)
                }
                _ => "-".into(),
            };
            let same = match (&off, &sqrt) {
                (Measured::Ran { grad: a, .. }, Measured::Ran { grad: b, .. }) => {
                    if a == b { "yes" } else { "NO" }.to_string()
                }
                _ => "-".into(),
            };
            let off_s = cell(&off, |s, _| format!("{s:.3}"));
            let off_mb = match off {
                Measured::Ran { peak_mb, .. } => format!("{peak_mb:.0}"),
                Measured::Failed(_) => "-".into(),
            };
            let sqrt_s = cell(&sqrt, |s, _| format!("{s:.3}"));
            let sqrt_mb = cell(&sqrt, |_, p| format!("{p:.0}"));
            println!(
                "| {backend_name} | {n} | {off_s} | {sqrt_s} | {ratio} | {off_mb} | {sqrt_mb} | {per_step} | {same} |"
            );
        }
    }
    Ok(())
}
