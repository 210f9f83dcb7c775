//! `cargo xtask bench`: measurements reported as tables and ratios, never
//! asserted (these machines are shared and noisy; see docs/scale.md).
//!
//! `scale` runs the whole `pipeline` (parse → unf → reverse → unf-inverse
//! → optimize) in one process on `let` chains of growing length, the way
//! the CLI runs it from file to file: every stage's output is verified,
//! written as RON, read back and verified again as the next stage's input.
//! It times each of those steps and reports the size of every boundary
//! file, so that linear growth shows as a ratio close to 2 between a chain
//! and one twice as long. The verifications that a stage's function runs
//! itself (`unf::lower` and `reverse` on their output) count in the
//! stage's time; the others (every file read back, the outputs of `raise`
//! and `optimize`) in the `verify` column. As in the CLI, a UNF input is
//! checked once, on reading, and the stage takes the check's result
//! (`reverse_checked`, `raise_checked`).
//!
//! `codegen` runs the C backend's suite (`bench::suite`: the
//! vector kernels and GMM, generated code against the hand-written C
//! baseline and, given a Python with them, JAX and PyTorch) and writes
//! docs/performance.md and its plot. `jacobian` times dF~'s vectorised
//! Jacobian against n forward passes (`bench::jacobian`) with the
//! reference evaluator.

use crate::diag::CliError;
use std::path::PathBuf;
use std::time::Instant;
use syntax::{Module, SourceFile};

/// A chain of `n` lets, each using the previous variable twice (sharing)
/// and two operations with derivatives: the shape of the scale
/// requirements.
pub fn let_chain(n: usize) -> String {
    let mut text = String::from("def chain (x : R) : R =\n");
    let mut prev = "x".to_string();
    for i in 0..n {
        text.push_str(&format!("  let v{i} = {prev} * 1.0001 + sin {prev} in\n"));
        prev = format!("v{i}");
    }
    text.push_str(&format!("  {prev}\n"));
    text
}

/// The boundary files, in pipeline order.
const FILES: [&str; 5] = ["source", "source-unf", "target-unf", "target", "opt"];
/// The stages, in pipeline order (each writes the file of the same index).
const STAGES: [&str; 5] = ["parse", "unf", "reverse", "unf^-1", "optimize"];

/// One row of the scale table: per stage, the time of the stage itself;
/// per file, its size and the times to verify, write, read back.
#[derive(Default)]
struct Row {
    n: usize,
    run: [f64; 5],
    verify: [f64; 5],
    write: [f64; 5],
    read: [f64; 5],
    bytes: [usize; 5],
}

impl Row {
    fn total(&self) -> f64 {
        [self.run, self.verify, self.write, self.read]
            .iter()
            .flatten()
            .sum()
    }

    fn column(&self, which: usize) -> f64 {
        match which {
            0..5 => self.run[which],
            5 => self.verify.iter().sum(),
            6 => self.write.iter().sum(),
            7 => self.read.iter().sum(),
            _ => self.total(),
        }
    }
}

/// `later / earlier` for the ratio table, or `-` when `earlier` is under two
/// clock ticks: CPU time is counted in ticks of 10 ms, so a quick run's
/// small sizes read 0 and a ratio of them would be `inf` or `NaN`.
pub(crate) fn time_ratio(later: f64, earlier: f64) -> String {
    if earlier < 0.02 {
        "-".to_string()
    } else {
        format!("{:.2}", later / earlier)
    }
}

/// CPU seconds (user and system) the calling thread has used, from
/// `/proc/thread-self/stat` (in clock ticks, 100 a second on Linux): on a
/// shared machine this is steadier than wall-clock time. `None` elsewhere.
fn thread_cpu() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/thread-self/stat").ok()?;
    // The fields after the command name (in parentheses, which may hold
    // spaces): utime and stime are the 12th and 13th.
    let rest = &stat[stat.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let utime: f64 = fields.get(11)?.parse().ok()?;
    let stime: f64 = fields.get(12)?.parse().ok()?;
    Some((utime + stime) / 100.0)
}

/// Runs `f`, returning its result and the CPU seconds it took (wall-clock
/// seconds where the CPU time cannot be read).
pub(crate) fn timed<T>(f: impl FnOnce() -> T) -> (T, f64) {
    let (cpu, start) = (thread_cpu(), Instant::now());
    let out = f();
    let secs = match (cpu, thread_cpu()) {
        (Some(a), Some(b)) => b - a,
        _ => start.elapsed().as_secs_f64(),
    };
    (out, secs)
}

fn internal(stage: &str, e: impl std::fmt::Display) -> CliError {
    CliError::Internal(format!("benchmark stage `{stage}` failed: {e}\n"))
}

fn source_verify(stage: &str, m: &syntax::Module) -> Result<(), CliError> {
    syntax::verify(m).map_err(|e| internal(stage, format!("{} verifier errors", e.len())))
}

fn write_term(row: &mut Row, i: usize, m: &syntax::Module) -> Result<String, CliError> {
    let ir = if i == 0 {
        syntax::SOURCE_IR
    } else {
        syntax::TARGET_IR
    };
    let (text, t) = timed(|| syntax::to_ron(ir, syntax::FORMAT_VERSION, m));
    let text = text.map_err(|e| internal(FILES[i], e))?;
    row.write[i] = t;
    row.bytes[i] = text.len();
    Ok(text)
}

fn read_term(row: &mut Row, i: usize, text: &str) -> Result<syntax::Module, CliError> {
    let ir = if i == 0 {
        syntax::SOURCE_IR
    } else {
        syntax::TARGET_IR
    };
    let (m, t) = timed(|| syntax::from_ron::<syntax::Module>(ir, syntax::FORMAT_VERSION, text));
    row.read[i] = t;
    let m = m.map_err(|e| internal(FILES[i], e))?;
    let (ok, t) = timed(|| source_verify(FILES[i], &m));
    row.verify[i] += t;
    ok.map(|()| m)
}

fn write_unf(row: &mut Row, i: usize, m: &unf::Module) -> Result<String, CliError> {
    let (text, t) = timed(|| unf::to_ron(m));
    let text = text.map_err(|e| internal(FILES[i], e))?;
    row.write[i] = t;
    row.bytes[i] = text.len();
    Ok(text)
}

fn read_unf(
    row: &mut Row,
    i: usize,
    text: &str,
    kind: unf::Kind,
) -> Result<(unf::Module, unf::Checked), CliError> {
    let (m, t) = timed(|| unf::from_ron(text, kind));
    row.read[i] = t;
    let m = m.map_err(|e| internal(FILES[i], e))?;
    let (checked, t) = timed(|| unf::check(&m));
    row.verify[i] += t;
    let checked =
        checked.map_err(|e| internal(FILES[i], format!("{} verifier errors", e.len())))?;
    Ok((m, checked))
}

/// Runs the pipeline on a chain of `n` lets, the way `pipeline` does.
fn measure(n: usize) -> Result<Row, CliError> {
    let mut row = Row {
        n,
        ..Row::default()
    };
    let file = SourceFile {
        name: format!("chain{n}.ad"),
        text: let_chain(n),
    };
    // parse: text → source (typed by `compile`, which is its check).
    let (m, t) = timed(|| syntax::compile(file));
    row.run[0] = t;
    let m = m.map_err(|e| internal("parse", e))?;
    let text = write_term(&mut row, 0, &m)?;
    drop(m);

    // unf: source → source-unf.
    let m = read_term(&mut row, 0, &text)?;
    let entry = m
        .defs
        .last()
        .expect("invariant: the chain has one definition")
        .clone();
    // `lower` verifies its output.
    let (s, t) = timed(|| unf::lower(&m, &entry));
    row.run[1] = t;
    let s = s.map_err(|e| internal("unf", e))?;
    let text = write_unf(&mut row, 1, &s)?;
    drop((m, s));

    // reverse: source-unf → target-unf.
    // The input is checked on reading, and `reverse_checked` takes the
    // check's result; the output is verified.
    let (s, checked) = read_unf(&mut row, 1, &text, unf::Kind::Source)?;
    let (t_unf, t) = timed(|| reverse::reverse_checked(&s, checked, &reverse::Config::default()));
    row.run[2] = t;
    let t_unf = t_unf.map_err(|e| internal("reverse", e))?;
    let text = write_unf(&mut row, 2, &t_unf)?;
    drop((s, t_unf));

    // unf^-1: target-unf → target.
    let (t_unf, checked) = read_unf(&mut row, 2, &text, unf::Kind::Target)?;
    let (g, t) = timed(|| unf::raise_checked(&t_unf, checked));
    row.run[3] = t;
    let g = g.map_err(|e| internal("unf-inverse", e))?;
    let (ok, t) = timed(|| source_verify("unf-inverse", &g));
    row.verify[3] = t;
    ok?;
    let text = write_term(&mut row, 3, &g)?;
    drop((t_unf, g));

    // optimize: target → target.
    let g = read_term(&mut row, 3, &text)?;
    // Optimizing, then verifying the output (`Config::verify`, on by
    // default), timed apart.
    let cfg = optimize::Config {
        verify: false,
        ..optimize::Config::default()
    };
    let (o, t) = timed(|| optimize::optimize_owned(g, &cfg));
    row.run[4] = t;
    let o = o.map_err(|e| internal("optimize", e))?;
    let (ok, t) = timed(|| source_verify("optimize", &o));
    row.verify[4] = t;
    ok?;
    let text = write_term(&mut row, 4, &o)?;
    drop(o);
    read_term(&mut row, 4, &text)?;
    Ok(row)
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|s| s.split_whitespace().next().map(str::to_string))
        .unwrap_or_else(|| "unknown".to_string())
}

/// The best of `repeat` runs on a chain of `n` lets, step by step: the
/// least time each step took (the file sizes are the same every time).
fn best_of(n: usize, repeat: usize) -> Result<Row, CliError> {
    let mut best = measure(n)?;
    for _ in 1..repeat {
        let row = measure(n)?;
        for (b, r) in [
            (&mut best.run, &row.run),
            (&mut best.verify, &row.verify),
            (&mut best.write, &row.write),
            (&mut best.read, &row.read),
        ] {
            for (x, y) in b.iter_mut().zip(r) {
                *x = x.min(*y);
            }
        }
    }
    Ok(best)
}

/// `cargo xtask bench scale`: every size `repeat` times, the least time
/// of each step reported.
pub fn scale(sizes: &[usize], repeat: usize) -> Result<(), CliError> {
    let clock = if thread_cpu().is_some() {
        "CPU seconds (user + system, 10 ms resolution)"
    } else {
        "Wall-clock seconds"
    };
    println!(
        "{clock} per step, in one process, the least of {repeat} run(s) (build with `--release`: \
         `cargo run --release -p xtask -- bench scale`). Load average {} at the start.\n",
        load_average()
    );
    let wall = Instant::now();
    let mut heads: Vec<String> = STAGES.iter().map(|s| s.to_string()).collect();
    heads.extend(["verify", "write", "read", "total"].map(String::from));
    println!("| lets | {} |", heads.join(" | "));
    println!("|---:|{}", "---:|".repeat(heads.len()));
    let mut rows = Vec::new();
    for &n in sizes {
        let row = best_of(n, repeat.max(1))?;
        let cells: Vec<String> = (0..heads.len())
            .map(|c| format!("{:.3}", row.column(c)))
            .collect();
        println!("| {} | {} |", row.n, cells.join(" | "));
        rows.push(row);
    }
    println!("\nFile sizes in KB (and seconds to read each back, verifier included):\n");
    println!("| lets | {} |", FILES.join(" | "));
    println!("|---:|{}", "---:|".repeat(FILES.len()));
    for row in &rows {
        let cells: Vec<String> = (0..FILES.len())
            .map(|i| {
                format!(
                    "{} ({:.3})",
                    row.bytes[i] / 1024,
                    row.read[i] + row.verify[i]
                )
            })
            .collect();
        println!("| {} | {} |", row.n, cells.join(" | "));
    }
    println!(
        "\nRatios from one size to the next (`-`: the smaller size took under two clock ticks, \
         too little to divide by):\n"
    );
    println!(
        "| lets | {} | {} |",
        heads.join(" | "),
        FILES.map(|f| format!("{f} B")).join(" | ")
    );
    println!("|---|{}", "---:|".repeat(heads.len() + FILES.len()));
    for pair in rows.windows(2) {
        let (a, b) = (&pair[0], &pair[1]);
        let times = (0..heads.len()).map(|c| time_ratio(b.column(c), a.column(c)));
        let bytes =
            (0..FILES.len()).map(|i| format!("{:.2}", b.bytes[i] as f64 / a.bytes[i] as f64));
        let cells: Vec<String> = times.chain(bytes).collect();
        println!("| {} → {} | {} |", a.n, b.n, cells.join(" | "));
    }
    println!(
        "\nLoad average {} at the end; {:.1} s wall-clock in all.",
        load_average(),
        wall.elapsed().as_secs_f64()
    );
    Ok(())
}

/// The stages of [`in_memory`], in pipeline order.
const MEMORY_STAGES: [&str; 5] = ["parse", "unf", "reverse", "unf^-1", "optimize"];

/// Text to optimized gradient of a chain of `n` lets in one process with
/// no files, the way the library runs it: CPU seconds of each stage, each
/// with the checks it makes itself (`lower` and `reverse` verify their
/// outputs and hand the check on); `optimize` without its output's
/// verification, as in [`scale`]'s table.
fn in_memory(n: usize) -> Result<[f64; 5], CliError> {
    let mut t = [0.0; 5];
    let file = SourceFile {
        name: format!("chain{n}.ad"),
        text: let_chain(n),
    };
    let (m, s) = timed(|| syntax::compile(file));
    t[0] = s;
    let m = m.map_err(|e| internal("parse", e))?;
    let entry = m
        .defs
        .last()
        .expect("invariant: the chain has one definition")
        .clone();
    // Each UNF module is checked once, by the pass that builds it, and the
    // next pass takes the check (as `adrev`'s pass list does).
    let (su, s) = timed(|| unf::lower_checked(&m, &entry));
    t[1] = s;
    let (su, checked) = su.map_err(|e| internal("unf", e))?;
    drop(m);
    let (tu, s) =
        timed(|| reverse::reverse_checked_both(&su, checked, &reverse::Config::default()));
    t[2] = s;
    let (tu, checked) = tu.map_err(|e| internal("reverse", e))?;
    drop(su);
    let (g, s) = timed(|| unf::raise_checked(&tu, checked));
    t[3] = s;
    let g = g.map_err(|e| internal("unf-inverse", e))?;
    drop(tu);
    let cfg = optimize::Config {
        verify: false,
        ..optimize::Config::default()
    };
    let (o, s) = timed(|| optimize::optimize_owned(g, &cfg));
    t[4] = s;
    o.map_err(|e| internal("optimize", e))?;
    Ok(t)
}

/// `cargo xtask bench chain`: [`in_memory`] at every size, the least of
/// `repeat` runs per stage, with the total (issue 16's goal: under a
/// second at 20,000 lets) and its ratio from one size to the next.
pub fn chain(sizes: &[usize], repeat: usize) -> Result<(), CliError> {
    println!(
        "Text to optimized gradient in memory (no files), CPU seconds per stage, the least of \
         {repeat} run(s). Load average {} at the start.\n",
        load_average()
    );
    println!("| lets | {} | total | × |", MEMORY_STAGES.join(" | "));
    println!("|---:|{}", "---:|".repeat(MEMORY_STAGES.len() + 2));
    let mut last: Option<f64> = None;
    for &n in sizes {
        let mut best = in_memory(n)?;
        for _ in 1..repeat.max(1) {
            for (b, x) in best.iter_mut().zip(in_memory(n)?) {
                *b = b.min(x);
            }
        }
        let total: f64 = best.iter().sum();
        let cells: Vec<String> = best.iter().map(|x| format!("{x:.3}")).collect();
        let ratio = last.map_or(String::new(), |l| time_ratio(total, l));
        println!("| {n} | {} | {total:.3} | {ratio} |", cells.join(" | "));
        last = Some(total);
    }
    println!("\nLoad average {} at the end.", load_average());
    Ok(())
}

/// The options of `cargo xtask bench codegen`.
pub struct CodegenOpts {
    /// Small sizes, one round, five repetitions.
    pub quick: bool,
    /// Array lengths of the vector kernels.
    pub lengths: Option<Vec<usize>>,
    /// GMM's number of points.
    pub gmm_n: Option<usize>,
    /// Only these kernels (empty: all).
    pub kernels: Vec<String>,
    /// Timed calls per process.
    pub reps: Option<usize>,
    /// Rounds.
    pub rounds: Option<usize>,
    /// A Python with jax and/or torch.
    pub python: Option<PathBuf>,
    /// `-march=native`.
    pub native: bool,
    /// Write docs/performance.md and docs/performance.svg.
    pub write_docs: bool,
}

/// The workspace root (xtask lives one level below it).
fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// `cargo xtask bench codegen`.
pub fn codegen(opts: &CodegenOpts) -> Result<(), CliError> {
    let root = root();
    let gmm_path = root.join("fixtures/gmm/program.ad");
    let gmm = std::fs::read_to_string(&gmm_path)
        .map_err(|e| CliError::user(format!("{}: {e}", gmm_path.display())))?;
    let gmm_n = opts.gmm_n.unwrap_or(if opts.quick { 1000 } else { 10_000 });
    let (kernels, notes) =
        bench::suite(&gmm, gmm_n, &bench::gradient_programs).map_err(|e| internal("codegen", e))?;
    for n in notes {
        eprintln!("{n}");
    }
    let mut cfg = bench::BenchConfig {
        dir: root.join("target/adrev-bench"),
        only: opts.kernels.clone(),
        ..bench::BenchConfig::default()
    };
    if opts.quick {
        cfg.sizes = vec![10_000];
        cfg.reps = 5;
        cfg.rounds = 1;
    }
    if let Some(l) = &opts.lengths {
        cfg.sizes = l.clone();
    }
    if let Some(r) = opts.reps {
        cfg.reps = r;
    }
    if let Some(r) = opts.rounds {
        cfg.rounds = r;
    }
    if opts.python.is_some() {
        cfg.python = opts.python.clone();
    }
    cfg.codegen.native = opts.native;
    let report = bench::run(&kernels, &cfg, &mut |line| eprintln!("{line}"))
        .map_err(|e| internal("codegen", e))?;
    let md = report.markdown();
    println!("{md}");
    if opts.write_docs {
        // The GradBench section is `bench gradbench`'s: kept as it is.
        let md = md + &gradbench_section(&root.join("docs/performance.md"));
        let svg = report.svg().map_err(|e| internal("codegen", e))?;
        for (name, text) in [("performance.md", md), ("performance.svg", svg)] {
            let path = root.join("docs").join(name);
            std::fs::write(&path, text)
                .map_err(|e| CliError::user(format!("cannot write {}: {e}", path.display())))?;
            eprintln!("wrote {}", path.display());
        }
    }
    Ok(())
}

/// Where docs/performance.md's GradBench section starts.
const GRADBENCH_MARK: &str = "<!-- cargo xtask bench gradbench -->";

/// The GradBench section of `path` (from its mark to the end), or nothing.
fn gradbench_section(path: &std::path::Path) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    text.find(GRADBENCH_MARK)
        .map(|at| format!("\n{}", &text[at..]))
        .unwrap_or_default()
}

/// `cargo xtask bench gradbench`: GradBench's workloads through the tool's
/// session (crates/bench/src/gradbench.rs); `only` limits the evals. The
/// table replaces docs/performance.md's GradBench section.
pub fn gradbench(quick: bool, only: &[String], write_docs: bool) -> Result<(), CliError> {
    let (min_runs, min_seconds) = if quick { (1, 0.0) } else { (5, 0.5) };
    let load = |which: &str| {
        std::fs::read_to_string("/proc/loadavg")
            .ok()
            .and_then(|l| {
                l.split_whitespace()
                    .next()
                    .map(|s| format!("load average {s} when the run {which}"))
            })
            .unwrap_or_default()
    };
    let started = load("started");
    let (rows, compiles) =
        bench::gradbench::run(only, min_runs, min_seconds, &mut |l| eprintln!("{l}"));
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|c| {
            c.lines()
                .find(|l| l.starts_with("model name"))
                .map(|l| l.split(':').nth(1).unwrap_or("").trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".into());
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let machine = format!("{cpu}, {cores} cores, {started}, {}", load("ended"));
    let md = format!(
        "{GRADBENCH_MARK}\n{}",
        bench::gradbench::markdown(&rows, &compiles, &machine, min_seconds)
    );
    println!("{md}");
    if write_docs {
        let path = root().join("docs/performance.md");
        let text = std::fs::read_to_string(&path)
            .map_err(|e| CliError::user(format!("cannot read {}: {e}", path.display())))?;
        let head = text
            .find(GRADBENCH_MARK)
            .map_or(text.as_str(), |at| &text[..at]);
        let out = format!("{}\n{md}", head.trim_end());
        std::fs::write(&path, out)
            .map_err(|e| CliError::user(format!("cannot write {}: {e}", path.display())))?;
        eprintln!("wrote {}", path.display());
    }
    Ok(())
}

/// The reals of a value, flattened in order.
fn flatten(v: &semantics::Value, out: &mut Vec<f64>) {
    if let Some(x) = v.as_real() {
        out.push(x);
    } else if let Some(items) = v.as_array() {
        items.iter().for_each(|i| flatten(i, out));
    } else if let Some(items) = v.as_tuple() {
        items.iter().for_each(|i| flatten(i, out));
    }
}

/// `cargo xtask bench jacobian`: the vectorised Jacobian of
/// `bench::jacobian::PROGRAM` against n forward passes, by the evaluator.
pub fn jacobian(sizes: &[usize]) -> Result<(), CliError> {
    let m = syntax::compile(SourceFile {
        name: "jacobian_bench.ad".to_string(),
        text: bench::jacobian::PROGRAM.to_string(),
    })
    .map_err(|e| internal("parse", e))?;
    let programs = bench::jacobian::programs(&m).map_err(|e| internal("forward", e))?;
    let eval = |m: &Module, x: &str| -> Result<Vec<f64>, String> {
        let def = m.defs.last().ok_or("no definition")?;
        let ty = def.params[0].ty.as_ref().ok_or("untyped parameter")?;
        let x = semantics::parse_value(x, ty).map_err(|e| e.to_string())?;
        let v =
            semantics::eval_entry(m, None, &[("x".to_string(), x)]).map_err(|e| e.to_string())?;
        let mut out = Vec::new();
        flatten(&v, &mut out);
        Ok(out)
    };
    println!("## Jacobian: vectorised (dF~) against n forward passes\n");
    println!(
        "Best of 3, reference evaluator, on\n\n```\n{}```\n",
        bench::jacobian::PROGRAM
    );
    println!("| n | vectorised | n passes | passes / vectorised | max abs diff |");
    println!("|---:|---:|---:|---:|---:|");
    for &n in sizes {
        let r = bench::jacobian::jacobian_vs_passes(&programs, n, 3, eval)
            .map_err(|e| CliError::Internal(format!("jacobian benchmark at n = {n}: {e}\n")))?;
        println!(
            "| {n} | {:.3} ms | {:.3} ms | {:.2} | {:.1e} |",
            r.vectorised.as_secs_f64() * 1e3,
            r.passes.as_secs_f64() * 1e3,
            r.passes.as_secs_f64() / r.vectorised.as_secs_f64().max(1e-12),
            r.max_diff
        );
    }
    println!();
    Ok(())
}
