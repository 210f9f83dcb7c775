//! Benchmark (`cargo bench -p optimize`, release): optimizing the gradient
//! of a chain of 5,000, 10,000 and 20,000 `let`s, in two shapes:
//! - `pipeline`: `let w_i = sin w_{i-1} * x` differentiated by the
//!   reverse-mode pipeline (UNF, D_ρ, UNF^-1), whose output is straight-line
//!   code (UNF^-1 inlines the continuations);
//! - `continuations`: the direct macro's shape, one continuation lambda per
//!   `let`, each called once from the next (`tests/common/chain.rs`), the
//!   hard case for the inliner (Lemma 5.1).
//!
//! For each, the best of five runs: wall-clock and CPU time of the thread
//! (Linux; the wall clock elsewhere), and the CPU time per `let`. It fails
//! if the CPU time per `let` grows more than 2.5 times from 5,000 to 20,000
//! `let`s (linear growth keeps it flat up to cache effects; a quadratic
//! pass would make it 4), and says whether 20,000 took under a second of
//! CPU, the goal (docs/optimize.md has the measurements; on a machine
//! shared with other builds the absolute times vary by a factor of two).

use std::time::{Duration, Instant};

use optimize::{Config, optimize};
use syntax::{Module, SourceFile};

#[path = "../tests/common/chain.rs"]
mod chain;

/// The allocator the `xtask` binary uses (docs/scale.md).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The CPU time this thread has used, if the system says: from
/// `/proc/thread-self/schedstat` (nanoseconds), or where that reads 0 (some
/// kernels do not keep it), from `/proc/thread-self/stat` (user and system
/// time in clock ticks, 100 a second).
fn cpu_time() -> Option<Duration> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let ns: u64 = text.split_whitespace().next()?.parse().ok()?;
    if ns > 0 {
        return Some(Duration::from_nanos(ns));
    }
    let stat = std::fs::read_to_string("/proc/thread-self/stat").ok()?;
    let fields: Vec<&str> = stat[stat.rfind(')')? + 1..].split_whitespace().collect();
    let ticks: u64 = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    Some(Duration::from_millis(ticks * 10))
}

/// Wall-clock and CPU time of one optimization (without the verification
/// of the output, which the stage command does once at the boundary).
fn run(m: &Module) -> (Duration, Duration) {
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

/// The pipeline's gradient of `let w_i = sin w_{i-1} * x`, n `let`s.
fn pipeline(n: usize) -> Module {
    let mut text = String::from("def chain (x : R) : R =\n");
    for i in 1..=n {
        let prev = if i == 1 {
            "x".to_string()
        } else {
            format!("w{}", i - 1)
        };
        text.push_str(&format!("  let w{i} = sin {prev} * x in\n"));
    }
    text.push_str(&format!("  w{n}\n"));
    let m = syntax::compile(SourceFile {
        name: format!("chain{n}.ad"),
        text,
    })
    .expect("the chain compiles");
    let def = m.defs.last().expect("a definition").clone();
    let lowered = unf::lower(&m, &def).expect("UNF");
    let target = reverse::reverse(&lowered, &reverse::Config::default()).expect("reverse");
    unf::raise(&target).expect("UNF^-1")
}

/// The direct macro's shape, n `let`s.
fn continuations(n: usize) -> Module {
    syntax::compile(SourceFile {
        name: format!("chain{n}.ad"),
        text: chain::let_chain_grad(n),
    })
    .expect("the chain compiles")
}

fn measure(shape: &str, build: fn(usize) -> Module) {
    let mut per_let = Vec::new();
    let mut at_20k = Duration::ZERO;
    for n in [5_000, 10_000, 20_000] {
        let m = build(n);
        let runs: Vec<(Duration, Duration)> = (0..5).map(|_| run(&m)).collect();
        let wall = runs.iter().map(|r| r.0).min().unwrap_or(Duration::ZERO);
        let cpu = runs.iter().map(|r| r.1).min().unwrap_or(Duration::ZERO);
        let us = cpu.as_secs_f64() * 1e6 / n as f64;
        println!(
            "{shape:>13} {n:>6} lets, {:>7} nodes: wall {:>7.1} ms, cpu {:>7.1} ms ({us:.2} us per let)",
            m.exprs.len(),
            wall.as_secs_f64() * 1e3,
            cpu.as_secs_f64() * 1e3
        );
        per_let.push(us);
        at_20k = cpu;
    }
    println!(
        "{shape:>13} 20,000 lets under a second of CPU: {}",
        if at_20k < Duration::from_secs(1) {
            "yes"
        } else {
            "NO"
        }
    );
    assert!(
        per_let[2] < 2.5 * per_let[0],
        "{shape}: the time per let grew from {:.2} to {:.2} us",
        per_let[0],
        per_let[2]
    );
}

fn main() {
    measure("pipeline", pipeline);
    measure("continuations", continuations);
}
