//! `cargo xtask bench`: measurements reported as tables and ratios, never
//! asserted (these machines are shared and noisy; see docs/performance.md).
//!
//! `scale` times every stage of the reverse-mode pipeline on `let` chains
//! of growing length, with the size of every boundary file, so that linear
//! growth shows as a ratio close to 2 between a chain and one twice as long.

use crate::diag::CliError;
use std::time::Instant;
use syntax::SourceFile;

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
