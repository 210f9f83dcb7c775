//! `cargo bench -p codegen`: runs the benchmark harness (`codegen::bench`)
//! and writes docs/performance.md and docs/performance.svg.
//!
//! Environment: `ADREV_BENCH_SIZES` (comma-separated lengths, default
//! `1000000,10000000`), `ADREV_BENCH_REPS` (default 11),
//! `ADREV_BENCH_KERNELS` (comma-separated names, default all),
//! `ADREV_BENCH_NATIVE=1` (`-march=native` for generated and baseline code),
//! `ADREV_PEERS_PYTHON` (a Python with jax and/or torch).

use std::path::PathBuf;

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
    cfg.dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/adrev-bench");
    let mut kernels = match codegen::bench::kernels() {
        Ok(k) => k,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    };
    // The gradient programs reverse mode produces today (no optimizer
    // yet), timed as a variant of each kernel.
    for k in &mut kernels {
        let Some(def) = k.primal.def(&k.primal_entry) else {
            continue;
        };
        match reverse::gradient(&k.primal, def, &reverse::Config::default()) {
            Ok(g) => {
                let entry = g
                    .entry(None)
                    .map(|d| d.name.to_string())
                    .unwrap_or_default();
                k.variants.push((
                    "adrev-c-reverse".to_string(),
                    "reverse mode as it stands (UNF, D_rho, UNF^-1), not optimized".to_string(),
                    g,
                    entry,
                ));
            }
            Err(e) => eprintln!("{}: reverse mode refused it: {e}", k.name),
        }
    }
    let report = match codegen::bench::run(&kernels, &cfg, &mut |line| eprintln!("{line}")) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    };
    let docs = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs");
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
