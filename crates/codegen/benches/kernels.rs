//! `cargo bench -p codegen`: runs the benchmark harness (`codegen::bench`)
//! and writes docs/performance.md and docs/performance.svg. `cargo xtask
//! bench codegen` runs the same suite (and has a quick mode).
//!
//! Environment: `ADREV_BENCH_SIZES` (comma-separated lengths, default
//! `1000000,10000000`), `ADREV_BENCH_REPS` (default 11),
//! `ADREV_BENCH_KERNELS` (comma-separated names, default all),
//! `ADREV_BENCH_NATIVE=1` (`-march=native` for generated and baseline code),
//! `ADREV_PEERS_PYTHON` (a Python with jax and/or torch).

use std::path::PathBuf;

use syntax::Module;

fn list(var: &str) -> Vec<String> {
    std::env::var(var)
        .ok()
        .map(|s| {
            s.split(',')
                .map(|x| x.trim().to_string())
                .filter(|x| !x.is_empty())
                .collect()
        })
        .unwrap_or_default()
}

/// Reverse mode's gradient program of `entry`, and the same optimized.
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

fn main() {
    // `cargo bench` passes `--bench`; nothing else is expected.
    let mut cfg = codegen::bench::BenchConfig::default();
    let sizes: Vec<usize> = list("ADREV_BENCH_SIZES")
        .iter()
        .filter_map(|s| s.parse().ok())
        .collect();
    if !sizes.is_empty() {
        cfg.sizes = sizes;
    }
    if let Some(r) = std::env::var("ADREV_BENCH_REPS")
        .ok()
        .and_then(|s| s.parse().ok())
    {
        cfg.reps = r;
    }
    cfg.only = list("ADREV_BENCH_KERNELS");
    cfg.codegen.native = std::env::var("ADREV_BENCH_NATIVE").is_ok_and(|v| v == "1");
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    cfg.dir = root.join("target/adrev-bench");
    let gmm = match std::fs::read_to_string(root.join("fixtures/gmm/program.ad")) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("error: fixtures/gmm/program.ad: {e}");
            std::process::exit(1);
        }
    };
    let (kernels, notes) = match codegen::bench::suite(&gmm, 10_000, &differentiate) {
        Ok(k) => k,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    };
    for n in notes {
        eprintln!("{n}");
    }
    let report = match codegen::bench::run(&kernels, &cfg, &mut |line| eprintln!("{line}")) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    };
    let docs = root.join("docs");
    for (name, text) in [
        ("performance.md", report.markdown()),
        ("performance.svg", report.svg()),
    ] {
        let path = docs.join(name);
        if let Err(e) = std::fs::write(&path, text) {
            eprintln!("error: cannot write {}: {e}", path.display());
            std::process::exit(1);
        }
        eprintln!("wrote {}", path.display());
    }
}
