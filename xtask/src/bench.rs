//! `cargo xtask bench`: measurements reported as tables and ratios, never
//! asserted (these machines are shared and noisy; see docs/performance.md).
//!
//! `codegen` runs the C backend's suite (`codegen::bench::suite`: the
//! vector kernels and GMM, generated code against the hand-written C
//! baseline and, given a Python with them, JAX and PyTorch) and writes
//! docs/performance.md and its plot. `jacobian` times dF~'s vectorised
//! Jacobian against n forward passes (`forward::bench`) with the
//! reference evaluator.
//!
//! `scale` times every stage of the reverse-mode pipeline on `let` chains
//! of growing length, with the size of every boundary file, so that linear
//! growth shows as a ratio close to 2 between a chain and one twice as long.

use crate::diag::CliError;
use std::path::PathBuf;
use std::time::Instant;
use syntax::{Module, SourceFile};

/// A chain of `n` lets, each using the previous variable twice (sharing)
/// and two operations with derivatives: the shape of issue 2's and 3's
/// scale requirements.
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

/// One row of the scale table.
struct Row {
    n: usize,
    secs: Vec<f64>,
    bytes: Vec<usize>,
}

fn timed<T>(f: impl FnOnce() -> T) -> (T, f64) {
    let start = Instant::now();
    let out = f();
    (out, start.elapsed().as_secs_f64())
}

fn internal(stage: &str, e: impl std::fmt::Display) -> CliError {
    CliError::Internal(format!("benchmark stage `{stage}` failed: {e}\n"))
}

fn measure(n: usize) -> Result<Row, CliError> {
    let text = let_chain(n);
    let file = SourceFile {
        name: format!("chain{n}.ad"),
        text,
    };
    let (m, t_parse) = timed(|| syntax::compile(file));
    let m = m.map_err(|e| internal("parse", e))?;
    let entry = m
        .defs
        .last()
        .expect("invariant: the chain has one definition")
        .clone();
    let (src_ron, t_src_ron) =
        timed(|| syntax::to_ron(syntax::SOURCE_IR, syntax::FORMAT_VERSION, &m));
    let (s, t_lower) = timed(|| unf::lower(&m, &entry));
    let s = s.map_err(|e| internal("unf", e))?;
    let (s_ron, t_s_ron) = timed(|| unf::to_ron(&s));
    let (t, t_reverse) = timed(|| reverse::reverse(&s, &reverse::Config::default()));
    let t = t.map_err(|e| internal("reverse", e))?;
    let (t_ron, t_t_ron) = timed(|| unf::to_ron(&t));
    let (g, t_raise) = timed(|| unf::raise(&t));
    let g = g.map_err(|e| internal("unf-inverse", e))?;
    let (g_ron, t_g_ron) = timed(|| syntax::to_ron(syntax::TARGET_IR, syntax::FORMAT_VERSION, &g));
    let (back, t_read) = timed(|| unf::from_ron(&t_ron, unf::Kind::Target));
    back.map_err(|e| internal("read target-unf", e))?;
    let (ok, t_verify) = timed(|| syntax::verify(&g));
    ok.map_err(|e| internal("verify", format!("{} errors", e.len())))?;
    Ok(Row {
        n,
        secs: vec![
            t_parse,
            t_lower,
            t_reverse,
            t_raise,
            t_src_ron + t_s_ron + t_t_ron + t_g_ron,
            t_read,
            t_verify,
        ],
        bytes: vec![src_ron.len(), s_ron.len(), t_ron.len(), g_ron.len()],
    })
}

/// `cargo xtask bench scale`.
pub fn scale(sizes: &[usize]) -> Result<(), CliError> {
    let heads = [
        "parse+type",
        "unf",
        "reverse",
        "unf^-1",
        "write RON",
        "read t-unf",
        "verify",
    ];
    println!(
        "Stage times in seconds (release build recommended: `cargo xtask bench` builds in dev mode"
    );
    println!("unless run as `cargo run --release -p xtask -- bench scale`).\n");
    println!(
        "| lets | {} | total | source KB | s-unf KB | t-unf KB | target KB |",
        heads.join(" | ")
    );
    println!("|{}", "---|".repeat(heads.len() + 6));
    let mut rows = Vec::new();
    for &n in sizes {
        let row = measure(n)?;
        let total: f64 = row.secs.iter().sum();
        let secs: Vec<String> = row.secs.iter().map(|s| format!("{s:.3}")).collect();
        let kb: Vec<String> = row.bytes.iter().map(|b| format!("{}", b / 1024)).collect();
        println!(
            "| {} | {} | {total:.3} | {} |",
            row.n,
            secs.join(" | "),
            kb.join(" | ")
        );
        rows.push(row);
    }
    for pair in rows.windows(2) {
        let (a, b) = (&pair[0], &pair[1]);
        let ta: f64 = a.secs.iter().sum();
        let tb: f64 = b.secs.iter().sum();
        let bytes: Vec<String> = a
            .bytes
            .iter()
            .zip(&b.bytes)
            .map(|(x, y)| format!("{:.2}", *y as f64 / *x as f64))
            .collect();
        println!(
            "\n{} → {} lets ({:.1}x): time x{:.2}, file sizes x[{}]",
            a.n,
            b.n,
            b.n as f64 / a.n as f64,
            tb / ta,
            bytes.join(", ")
        );
    }
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

/// Reverse mode's gradient program of `entry` and the same optimized,
/// for `codegen::bench::suite`.
fn differentiate(
    m: &Module,
    entry: &str,
    wrt: Option<&[&str]>,
) -> (Result<Module, String>, Result<Module, String>) {
    let Some(def) = m.def(entry) else {
        let e = format!("no definition `{entry}`");
        return (Err(e.clone()), Err(e));
    };
    let cfg = reverse::Config {
        wrt: wrt.map(|w| w.iter().map(|s| s.to_string()).collect()),
    };
    match reverse::gradient(m, def, &cfg) {
        Ok(g) => {
            let o = optimize::optimize(&g, &optimize::Config::default()).map_err(|e| e.to_string());
            (Ok(g), o)
        }
        Err(e) => (Err(e.to_string()), Err(e.to_string())),
    }
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
        codegen::bench::suite(&gmm, gmm_n, &differentiate).map_err(|e| internal("codegen", e))?;
    for n in notes {
        eprintln!("{n}");
    }
    let mut cfg = codegen::bench::BenchConfig {
        dir: root.join("target/adrev-bench"),
        only: opts.kernels.clone(),
        ..codegen::bench::BenchConfig::default()
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
    let report = codegen::bench::run(&kernels, &cfg, &mut |line| eprintln!("{line}"))
        .map_err(|e| internal("codegen", e))?;
    let md = report.markdown();
    println!("{md}");
    if opts.write_docs {
        for (name, text) in [("performance.md", md), ("performance.svg", report.svg())] {
            let path = root.join("docs").join(name);
            std::fs::write(&path, text)
                .map_err(|e| CliError::user(format!("cannot write {}: {e}", path.display())))?;
            eprintln!("wrote {}", path.display());
        }
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
/// `forward::bench::PROGRAM` against n forward passes, by the evaluator.
pub fn jacobian(sizes: &[usize]) -> Result<(), CliError> {
    let m = syntax::compile(SourceFile {
        name: "jacobian_bench.ad".to_string(),
        text: forward::bench::PROGRAM.to_string(),
    })
    .map_err(|e| internal("parse", e))?;
    let programs = forward::bench::programs(&m).map_err(|e| internal("forward", e))?;
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
        forward::bench::PROGRAM
    );
    println!("| n | vectorised | n passes | passes / vectorised | max abs diff |");
    println!("|---:|---:|---:|---:|---:|");
    for &n in sizes {
        let r = forward::bench::jacobian_vs_passes(&programs, n, 3, eval)
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
