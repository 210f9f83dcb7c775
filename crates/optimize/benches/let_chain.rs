//! Benchmark: optimizing the reverse-mode output of a chain of 5,000,
//! 10,000 and 20,000 `let`s (`cargo bench -p optimize`, release). Prints
//! the best of five runs for each length, wall-clock and CPU time of the
//! thread (Linux; the wall clock elsewhere), and the time per `let`. It
//! fails if 20,000 takes a second of CPU or more, or if the CPU time per
//! `let` grows more than 2.5 times from 5,000 to 20,000 (linear growth
//! keeps it flat; a quadratic pass would make it 4). CPU time rather than
//! wall-clock, because the machines this runs on are shared.

use std::time::{Duration, Instant};

use optimize::{Config, optimize};
use syntax::SourceFile;

#[path = "../tests/common/chain.rs"]
mod chain;

/// The CPU time this thread has used, if the system says.
fn cpu_time() -> Option<Duration> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let ns: u64 = text.split_whitespace().next()?.parse().ok()?;
    Some(Duration::from_nanos(ns))
}

/// Wall-clock and CPU time of one optimization (without the verification
/// of the output, which the stage command does once at the boundary).
fn run(m: &syntax::Module) -> (Duration, Duration) {
    let cfg = Config {
        verify: false,
        ..Config::default()
    };
    let (wall, cpu) = (Instant::now(), cpu_time());
    let out = optimize(m, &cfg).expect("optimizes");
    let wall = wall.elapsed();
    let cpu = match (cpu, cpu_time()) {
        (Some(a), Some(b)) => b.saturating_sub(a),
        _ => wall,
    };
    drop(out);
    (wall, cpu)
}

fn main() {
    let mut per_let = Vec::new();
    for n in [5_000, 10_000, 20_000] {
        let file = SourceFile {
            name: format!("chain{n}.ad"),
            text: chain::let_chain_grad(n),
        };
        let m = syntax::compile(file).expect("the chain compiles");
        let runs: Vec<(Duration, Duration)> = (0..5).map(|_| run(&m)).collect();
        let wall = runs.iter().map(|r| r.0).min().unwrap_or(Duration::ZERO);
        let cpu = runs.iter().map(|r| r.1).min().unwrap_or(Duration::ZERO);
        let us = cpu.as_secs_f64() * 1e6 / n as f64;
        println!(
            "let chain {n:>6}: wall {:>8.1} ms, cpu {:>8.1} ms ({us:.2} us per let)",
            wall.as_secs_f64() * 1e3,
            cpu.as_secs_f64() * 1e3
        );
        per_let.push(us);
        if n == 20_000 {
            assert!(
                cpu < Duration::from_secs(1),
                "20,000 lets took {cpu:?} of CPU"
            );
        }
    }
    assert!(
        per_let[2] < 2.5 * per_let[0],
        "time per let grew from {:.2} to {:.2} us",
        per_let[0],
        per_let[2]
    );
}
