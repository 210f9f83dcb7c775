//! The C backend's benchmark harness behind `cargo xtask bench codegen`:
//! for each kernel and size, the primal and the gradient of the generated
//! code, of the hand-written C baseline (`baseline/kernels.c`),
//! of the generated code with parallel loops, and of JAX and PyTorch when
//! a Python with them is available, all on the same input file in one run.
//! Times are medians of at least five timed calls made inside each
//! process (no process start-up, no input reading); [`Report::markdown`]
//! and [`Report::svg`] write docs/performance.md and its plot.
//!
//! No test asserts anything about times: the test of this module runs the
//! harness on tiny inputs and checks that every tool computes the same
//! values.

use std::path::{Path, PathBuf};
use std::process::Command;

use syntax::{Module, SourceFile, Span};

use codegen::{Built, Config, Error, Kind, Layout};

/// The hand-written baseline (primal and gradient of every kernel, with a
/// timing `main`), compiled with the flags of the generated code.
pub const BASELINE_C: &str = include_str!("../baseline/kernels.c");

/// The files `BASELINE_C` includes, written next to it: det and ba.
pub const BASELINE_PARTS: [(&str, &str); 2] = [
    ("det.c", include_str!("../baseline/det.c")),
    ("ba.c", include_str!("../baseline/ba.c")),
];

/// The script that times JAX and PyTorch on the same input files.
pub const PEERS_PY: &str = include_str!("../peers/bench_peers.py");

/// How a kernel's inputs are made for a size `n`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Inputs {
    /// This many arrays of `n` reals ([`inputs`]).
    Reals(usize),
    /// The GMM objective's inputs at `n` points of dimension `d` and `k`
    /// components ([`gmm_inputs`]).
    Gmm {
        /// The dimension.
        d: usize,
        /// The number of components.
        k: usize,
    },
    /// GradBench's kmeans at `n` points of dimension `d` and `k`
    /// centroids ([`kmeans_inputs`]).
    Kmeans {
        /// The dimension.
        d: usize,
        /// The number of centroids.
        k: usize,
    },
    /// GradBench's det: an `n` x `n` matrix ([`crate::det_inputs`]).
    Det,
    /// GradBench's ba on this ADBench file's text ([`crate::BaFile`]);
    /// `n` is its number of observations.
    Ba(&'static str),
}

/// One benchmark: a primal and a gradient program, their inputs.
#[derive(Debug, Clone)]
pub struct Kernel {
    /// The kernel's name (also its name in the baseline and the script).
    pub name: String,
    /// The module holding the primal.
    pub primal: Module,
    /// The primal's definition.
    pub primal_entry: String,
    /// The module holding the gradient program (value and gradient).
    pub grad: Module,
    /// The gradient's definition.
    pub grad_entry: String,
    /// How its inputs are made.
    pub inputs: Inputs,
    /// Its sizes (empty: [`BenchConfig::sizes`]).
    pub sizes: Vec<usize>,
    /// Where the gradient program comes from, for the report.
    pub grad_origin: String,
    /// Other gradient programs to time as well (single thread, default
    /// configuration), each as a tool of its own: (tool name, where the
    /// program comes from, module, definition). `cargo xtask bench` adds
    /// the pipeline's output here.
    pub variants: Vec<(String, String, Module, String)>,
}

/// The built-in kernels: the programs in `benches/programs/`, whose
/// gradients are hand-written first-order Target programs in the shape
/// reverse mode and the optimizer produce. `cargo xtask bench` may
/// replace each `grad` with the pipeline's output.
pub fn kernels() -> Result<Vec<Kernel>, Error> {
    let programs: [(&str, &str, &str, &str, usize); 5] = [
        (
            "sum",
            include_str!("../programs/sum.ad"),
            "sum_",
            "sum_grad",
            1,
        ),
        (
            "prod",
            include_str!("../programs/prod.ad"),
            "prod_",
            "prod_grad",
            1,
        ),
        (
            "dot",
            include_str!("../programs/dot.ad"),
            "dot_",
            "dot_grad",
            2,
        ),
        (
            "sinexp",
            include_str!("../programs/sinexp.ad"),
            "sinexp",
            "sinexp_grad",
            1,
        ),
        (
            "logsumexp",
            include_str!("../programs/logsumexp.ad"),
            "logsumexp",
            "logsumexp_grad",
            1,
        ),
    ];
    programs
        .iter()
        .map(|(name, text, primal, grad, arrays)| {
            let m = syntax::compile(SourceFile {
                name: format!("benches/programs/{name}.ad"),
                text: text.to_string(),
            })
            .map_err(|e| Error::core(e.span(), format!("benchmark `{name}`: {e}")))?;
            Ok(Kernel {
                name: name.to_string(),
                primal: m.clone(),
                primal_entry: primal.to_string(),
                grad: m,
                grad_entry: grad.to_string(),
                inputs: Inputs::Reals(*arrays),
                sizes: Vec::new(),
                grad_origin: "hand-written first-order Target".to_string(),
                variants: Vec::new(),
            })
        })
        .collect()
}

/// The tool name of the pipeline's own gradient program.
pub const PIPELINE: &str = "adrev-c-pipeline";

/// Makes a gradient program: given a module, the definition to
/// differentiate and the parameters to differentiate with respect to
/// (`None`: all), returns reverse mode's gradient program and the same
/// after the optimizer (either may fail with a message); the benchmark's
/// is [`gradient_programs`].
pub type Differentiate<'a> =
    dyn Fn(&Module, &str, Option<&[&str]>) -> (Result<Module, String>, Result<Module, String>) + 'a;

/// The [`Differentiate`] of `cargo xtask bench` and of this crate's tests:
/// reverse mode's gradient program of `entry` (UNF route, through the
/// library's gradient request, which inlines the entry's helpers first)
/// and the same optimized.
pub fn gradient_programs(
    m: &Module,
    entry: &str,
    wrt: Option<&[&str]>,
) -> (Result<Module, String>, Result<Module, String>) {
    let program = adrev::Program::from_ir(adrev::Ir::Source(m.clone()));
    let wrt = wrt.map_or(adrev::Wrt::All, |w| adrev::Wrt::names(w.iter().copied()));
    let build = |optimize: bool| {
        let req = adrev::Request::new(adrev::Kind::ValueAndGrad)
            .entry(entry)
            .wrt(wrt.clone())
            .optimize(optimize);
        program
            .compile(&req)
            .and_then(|c| {
                c.module()
                    .cloned()
                    .ok_or_else(|| adrev::Error::internal("a gradient without its program"))
            })
            .map_err(|e| e.message().trim_end().to_string())
    };
    (build(false), build(true))
}

/// The whole suite: the built-in kernels ([`kernels`]), each with the
/// pipeline's own gradient programs as variants (`adrev-c-pipeline`:
/// reverse mode and the optimizer; `adrev-c-reverse`: reverse mode
/// alone), and GMM (`gmm_text`, the text of `fixtures/gmm/program.ad`,
/// at `gmm_n` points, d = 10, K = 25), whose gradient with respect to
/// alphas, means and icf comes from the pipeline. Problems with one
/// program are returned as messages; the others are still measured.
pub fn suite(
    gmm_text: &str,
    gmm_n: usize,
    diff: &Differentiate<'_>,
) -> Result<(Vec<Kernel>, Vec<String>), Error> {
    let mut kernels = kernels()?;
    let mut notes = Vec::new();
    let last = |m: &Module| {
        m.entry(None)
            .map(|d| d.name.to_string())
            .unwrap_or_default()
    };
    for k in &mut kernels {
        let (rev, opt) = diff(&k.primal, &k.primal_entry, None);
        match opt {
            Ok(o) => k.variants.push((
                PIPELINE.to_string(),
                "reverse mode (UNF, D_rho, UNF^-1) and the optimizer".to_string(),
                o.clone(),
                last(&o),
            )),
            Err(e) => notes.push(format!("{}: no optimized pipeline gradient: {e}", k.name)),
        }
        match rev {
            Ok(g) => k.variants.push((
                "adrev-c-reverse".to_string(),
                "reverse mode (UNF, D_rho, UNF^-1), not optimized".to_string(),
                g.clone(),
                last(&g),
            )),
            Err(e) => notes.push(format!("{}: no pipeline gradient: {e}", k.name)),
        }
    }
    let gmm = (|| -> Result<Kernel, String> {
        let m = syntax::compile(SourceFile {
            name: "fixtures/gmm/program.ad".into(),
            text: gmm_text.to_string(),
        })
        .map_err(|e| e.to_string())?;
        let (_, opt) = diff(&m, "gmm", Some(&["alphas", "means", "icf"]));
        let grad = opt?;
        let grad_entry = last(&grad);
        Ok(Kernel {
            name: "gmm".into(),
            primal: m,
            primal_entry: "gmm".into(),
            grad,
            grad_entry,
            inputs: Inputs::Gmm { d: 10, k: 25 },
            sizes: vec![gmm_n],
            grad_origin: "reverse mode (UNF, D_rho, UNF^-1) and the optimizer, with respect to alphas, means, icf".into(),
            variants: Vec::new(),
        })
    })();
    match gmm {
        Ok(k) => kernels.push(k),
        Err(e) => notes.push(format!("gmm: {e}")),
    }
    match kmeans_kernel(diff, gmm_n, 16, 100) {
        Ok(k) => kernels.push(k),
        Err(e) => notes.push(format!("kmeans: {e}")),
    }
    // GradBench's default det sizes.
    match crate::det_kernel(diff, &(5..=11).collect::<Vec<_>>()) {
        Ok(k) => kernels.push(k),
        Err(e) => notes.push(format!("det: {e}")),
    }
    match crate::ba_kernel(include_str!("../data/ba1_n49_m7776_p31843.txt")) {
        Ok(k) => kernels.push(k),
        Err(e) => notes.push(format!("ba: {e}")),
    }
    Ok((kernels, notes))
}

/// GradBench's kmeans (`gradbench/kmeans.ad`, its `kmeans` entry) at `n`
/// points of dimension `d` and `k` centroids, its gradient with respect to
/// the centroids from `diff` (the pipeline), against the hand-derived one
/// of baseline/kernels.c.
pub fn kmeans_kernel(
    diff: &Differentiate<'_>,
    n: usize,
    d: usize,
    k: usize,
) -> Result<Kernel, String> {
    let eval = gradbench::evals::eval("kmeans").ok_or("no kmeans eval")?;
    let mut m = syntax::compile(SourceFile {
        name: eval.file.into(),
        text: eval.program.to_string(),
    })
    .map_err(|e| e.to_string())?;
    // The primal alone (the C backend compiles every definition, and
    // `kmeans_dir`'s derivative constructs are expanded by the tool).
    m.defs.retain(|d| d.name.as_str() == "kmeans");
    m.compact();
    let (_, opt) = diff(&m, "kmeans", Some(&["centroids"]));
    let grad = opt?;
    let grad_entry = grad
        .entry(None)
        .map(|d| d.name.to_string())
        .unwrap_or_default();
    Ok(Kernel {
        name: "kmeans".into(),
        primal: m,
        primal_entry: "kmeans".into(),
        grad,
        grad_entry,
        inputs: Inputs::Kmeans { d, k },
        sizes: vec![n],
        grad_origin:
            "reverse mode (UNF, D_rho, UNF^-1) and the optimizer, with respect to the centroids"
                .into(),
        variants: Vec::new(),
    })
}

/// What to measure.
#[derive(Debug, Clone)]
pub struct BenchConfig {
    /// The array lengths.
    pub sizes: Vec<usize>,
    /// Timed calls per process (at least 5).
    pub reps: usize,
    /// Rounds: every tool runs once per round, the tools interleaved, and
    /// the median is over all rounds' calls (so that a change of load
    /// during the run affects every tool alike).
    pub rounds: usize,
    /// Where programs and inputs are written.
    pub dir: PathBuf,
    /// How the generated code (and the baseline, with the same flags) is built.
    pub codegen: Config,
    /// Thread counts for runs of the generated code with parallel loops
    /// (empty: none).
    pub threads: Vec<usize>,
    /// A Python with `jax` and/or `torch` (default: `$ADREV_PEERS_PYTHON`).
    pub python: Option<PathBuf>,
    /// Only these kernels (empty: all).
    pub only: Vec<String>,
    /// Also time the `adrev-c-fast` build.
    pub fast: bool,
}

impl Default for BenchConfig {
    fn default() -> BenchConfig {
        BenchConfig {
            sizes: vec![1_000_000, 10_000_000],
            reps: 11,
            rounds: 3,
            dir: std::env::temp_dir().join("adrev-bench"),
            codegen: Config::default(),
            threads: vec![1, 2],
            python: std::env::var_os("ADREV_PEERS_PYTHON").map(PathBuf::from),
            only: Vec::new(),
            fast: true,
        }
    }
}

/// What a run computed, to check that every tool agrees.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Check {
    /// The value.
    pub value: f64,
    /// The sum of the gradient's entries.
    pub grad_sum: f64,
    /// The sum of their absolute values.
    pub grad_abs: f64,
}

/// One tool on one kernel at one size.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// The kernel.
    pub kernel: String,
    /// The array length.
    pub n: usize,
    /// The tool (`adrev-c`, `baseline-c`, `adrev-c-par2`, `jax-1t`, `torch-1t`).
    pub tool: String,
    /// The reported primal time in nanoseconds: the median CPU time for
    /// single-thread tools (a busy machine inflates it less than wall
    /// time), the median wall-clock time for parallel ones.
    pub primal_ns: f64,
    /// The reported gradient time, chosen the same way.
    pub grad_ns: f64,
    /// Median wall-clock primal time.
    pub primal_wall_ns: f64,
    /// Median wall-clock gradient time.
    pub grad_wall_ns: f64,
    /// Spread of the gradient times, (max - min) / median.
    pub grad_spread: f64,
    /// How many timed calls each median is over.
    pub calls: usize,
    /// What the gradient call computed.
    pub check: Option<Check>,
}

/// Raw times of one tool, gathered over the rounds.
#[derive(Debug, Clone, Default)]
struct Samples {
    primal_wall: Vec<f64>,
    primal_cpu: Vec<f64>,
    grad_wall: Vec<f64>,
    grad_cpu: Vec<f64>,
    check: Option<Check>,
}

impl Samples {
    fn add(&mut self, other: Samples) {
        self.primal_wall.extend(other.primal_wall);
        self.primal_cpu.extend(other.primal_cpu);
        self.grad_wall.extend(other.grad_wall);
        self.grad_cpu.extend(other.grad_cpu);
        self.check = self.check.or(other.check);
    }

    fn row(&self, kernel: &str, n: usize, tool: &str, parallel: bool) -> Row {
        let (p, g) = if parallel || self.primal_cpu.is_empty() {
            (&self.primal_wall, &self.grad_wall)
        } else {
            (&self.primal_cpu, &self.grad_cpu)
        };
        Row {
            kernel: kernel.to_string(),
            n,
            tool: tool.to_string(),
            primal_ns: median(p),
            grad_ns: median(g),
            primal_wall_ns: median(&self.primal_wall),
            grad_wall_ns: median(&self.grad_wall),
            grad_spread: spread(g),
            calls: g.len(),
            check: self.check,
        }
    }
}

/// The results of a run.
#[derive(Debug, Clone, Default)]
pub struct Report {
    /// One row per tool, kernel and size.
    pub rows: Vec<Row>,
    /// The C compiler command line used for the generated code and the baseline.
    pub flags: String,
    /// Where each kernel's gradient program came from.
    pub origins: Vec<(String, String)>,
    /// What was found about the Python peers.
    pub peers: String,
    /// The machine: CPU model, cores, load when the run started.
    pub machine: String,
    /// Repetitions per measurement.
    pub reps: usize,
}

/// Runs the benchmarks; `log` receives a line per measurement.
pub fn run(
    kernels: &[Kernel],
    cfg: &BenchConfig,
    log: &mut dyn FnMut(&str),
) -> Result<Report, Error> {
    std::fs::create_dir_all(&cfg.dir).map_err(|e| Error::io("create", &cfg.dir, e))?;
    let reps = cfg.reps.max(5);
    let mut report = Report {
        flags: format!("{} {}", cfg.codegen.cc, cfg.codegen.flags().join(" ")),
        machine: machine(),
        reps,
        ..Report::default()
    };
    let baseline = build_baseline(&cfg.dir, &cfg.codegen)?;
    let python = cfg.python.clone();
    let script = cfg.dir.join("bench_peers.py");
    std::fs::write(&script, PEERS_PY).map_err(|e| Error::io("write", &script, e))?;
    let peers = python
        .as_ref()
        .map(|py| available_peers(py, &script))
        .unwrap_or_default();
    report.peers = match &python {
        None => "no Python given (set ADREV_PEERS_PYTHON to a Python with jax and/or torch)".into(),
        Some(py) if peers.is_empty() => format!("{} has neither jax nor torch", py.display()),
        Some(py) => format!("{}: {}", py.display(), peers.join(", ")),
    };
    for k in kernels
        .iter()
        .filter(|k| cfg.only.is_empty() || cfg.only.contains(&k.name))
    {
        report.origins.push((k.name.clone(), k.grad_origin.clone()));
        let dir = cfg.dir.join(&k.name);
        log(&format!("{}: building", k.name));
        let seq = build_pair(k, &dir.join("seq"), &cfg.codegen)?;
        let fast_cfg = Config {
            reassociate: true,
            vector_math: true,
            native: true,
            ..cfg.codegen.clone()
        };
        let fast = if cfg.fast {
            Some(build_pair(k, &dir.join("fast"), &fast_cfg)?)
        } else {
            None
        };
        let mut variants = Vec::new();
        for (tool, origin, module, entry) in &k.variants {
            report
                .origins
                .push((format!("{} ({tool})", k.name), origin.clone()));
            let built = codegen::build(
                &codegen::emit(module, &cfg.codegen)?,
                &dir.join(tool),
                &cfg.codegen,
            )?;
            variants.push((tool.clone(), built, entry.clone(), &seq.primal));
            // The pipeline's gradient in the fast configuration too, so
            // that the comparison with JAX and PyTorch (which vectorize
            // their math functions) can take the best build of it.
            if cfg.fast && tool == PIPELINE {
                let fast_tool = format!("{tool}-fast");
                report.origins.push((
                    format!("{} ({fast_tool})", k.name),
                    format!("{origin}, built `fast` (and timed against the `fast` primal)"),
                ));
                let built = codegen::build(
                    &codegen::emit(module, &fast_cfg)?,
                    &dir.join(&fast_tool),
                    &fast_cfg,
                )?;
                // Its primal is the fast build's too, so that its
                // grad / primal compares like with like.
                let primal = fast.as_ref().map_or(&seq.primal, |f| &f.primal);
                variants.push((fast_tool, built, entry.clone(), primal));
            }
        }
        let par = if cfg.threads.is_empty() {
            None
        } else {
            let pcfg = Config {
                parallel: true,
                ..cfg.codegen.clone()
            };
            Some(build_pair(k, &dir.join("par"), &pcfg)?)
        };
        let sizes = if k.sizes.is_empty() {
            &cfg.sizes
        } else {
            &k.sizes
        };
        for &n in sizes {
            let input = dir.join(format!("input_{n}.bin"));
            match k.inputs {
                Inputs::Reals(arrays) => write_input(&input, &inputs(&k.name, arrays, n))?,
                _ => {
                    let values = kernel_inputs(k.inputs, n)?;
                    let entry = seq
                        .primal
                        .program
                        .entry(Some(&seq.primal_entry))
                        .ok_or_else(|| Error::NoSuchEntry {
                            span: Span::GENERATED,
                            name: Some(seq.primal_entry.clone()),
                        })?;
                    let (bytes, _) = codegen::encode_args(entry, &values)?;
                    std::fs::write(&input, bytes).map_err(|e| Error::io("write", &input, e))?;
                }
            }
            let mut tools: Vec<(String, Samples, bool)> = Vec::new();
            let mut add = |tool: &str, s: Samples, parallel: bool| match tools
                .iter_mut()
                .find(|t| t.0 == tool)
            {
                Some(t) => t.1.add(s),
                None => tools.push((tool.to_string(), s, parallel)),
            };
            for round in 0..cfg.rounds.max(1) {
                log(&format!("{} n={n}: round {}", k.name, round + 1));
                add("adrev-c", ours(&seq, &input, reps, &[])?, false);
                if let Some(fast) = &fast {
                    add("adrev-c-fast", ours(fast, &input, reps, &[])?, false);
                }
                for (tool, built, entry, primal) in &variants {
                    let pair = Pair {
                        primal: (*primal).clone(),
                        grad: built.clone(),
                        primal_entry: seq.primal_entry.clone(),
                        grad_entry: entry.clone(),
                    };
                    add(tool, ours(&pair, &input, reps, &[])?, false);
                }
                add(
                    "baseline-c",
                    run_baseline(&baseline, k, &input, reps)?,
                    false,
                );
                if let Some(par) = &par {
                    for &t in &cfg.threads {
                        let env = [("OMP_NUM_THREADS", t.to_string())];
                        add(
                            &format!("adrev-c-par{t}"),
                            ours(par, &input, reps, &env)?,
                            true,
                        );
                    }
                }
                // The peers' script knows the vector kernels and GMM.
                let known = matches!(k.inputs, Inputs::Reals(_)) || k.name == "gmm";
                if let (Some(py), true) = (&python, known) {
                    for tool in &peers {
                        match run_peer(py, &script, tool, k, &input, reps) {
                            Ok(s) => add(&format!("{tool}-1t"), s, false),
                            Err(e) => log(&format!("{tool} on {} failed: {e}", k.name)),
                        }
                    }
                }
            }
            for (tool, samples, parallel) in tools {
                let row = samples.row(&k.name, n, &tool, parallel);
                log(&format!(
                    "{:<10} n={:<9} {:<13} primal {:>10.3} ms  grad {:>10.3} ms",
                    row.kernel,
                    row.n,
                    row.tool,
                    row.primal_ns / 1e6,
                    row.grad_ns / 1e6
                ));
                report.rows.push(row);
            }
            let _ = std::fs::remove_file(&input);
        }
    }
    report.machine = format!("{}, {} when it ended", report.machine, load_average());
    Ok(report)
}

/// The arguments of a kernel whose inputs are not arrays of reals, at `n`.
pub fn kernel_inputs(inputs: Inputs, n: usize) -> Result<Vec<semantics::Value>, Error> {
    Ok(match inputs {
        Inputs::Gmm { d, k } => gmm_inputs(d, k, n),
        Inputs::Kmeans { d, k } => kmeans_inputs(d, k, n),
        Inputs::Det => crate::det_inputs(n),
        Inputs::Ba(text) => crate::BaFile::parse(text)
            .map_err(|message| Error::Internal {
                span: Span::GENERATED,
                message,
            })?
            .inputs(),
        Inputs::Reals(_) => Vec::new(),
    })
}

/// The generated code for a kernel's primal and gradient.
struct Pair {
    primal: Built,
    grad: Built,
    primal_entry: String,
    grad_entry: String,
}

fn build_pair(k: &Kernel, dir: &Path, cfg: &Config) -> Result<Pair, Error> {
    let primal = codegen::build(&codegen::emit(&k.primal, cfg)?, &dir.join("primal"), cfg)?;
    let grad = codegen::build(&codegen::emit(&k.grad, cfg)?, &dir.join("grad"), cfg)?;
    Ok(Pair {
        primal,
        grad,
        primal_entry: k.primal_entry.clone(),
        grad_entry: k.grad_entry.clone(),
    })
}

fn ours(p: &Pair, input: &Path, reps: usize, env: &[(&str, String)]) -> Result<Samples, Error> {
    let (_, tp) = codegen::run_file(&p.primal, &p.primal_entry, input, reps, env)?;
    let (bytes, tg) = codegen::run_file(&p.grad, &p.grad_entry, input, reps, env)?;
    let entry = p
        .grad
        .program
        .entry(Some(&p.grad_entry))
        .ok_or_else(|| Error::NoSuchEntry {
            span: Span::GENERATED,
            name: Some(p.grad_entry.clone()),
        })?;
    Ok(Samples {
        primal_wall: tp.wall_ns,
        primal_cpu: tp.cpu_ns,
        grad_wall: tg.wall_ns,
        grad_cpu: tg.cpu_ns,
        check: raw_check(&bytes, &entry.ret_layout),
    })
}

/// The median of some times (NaN for none).
pub fn median(ts: &[f64]) -> f64 {
    let mut v: Vec<f64> = ts.iter().copied().filter(|t| t.is_finite()).collect();
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    let m = v.len() / 2;
    if v.len() % 2 == 1 {
        v[m]
    } else {
        (v[m - 1] + v[m]) / 2.0
    }
}

fn spread(ts: &[f64]) -> f64 {
    let lo = ts.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = ts.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    (hi - lo) / median(ts)
}

/// The check of a gradient program's result: its first real scalar is
/// the value (0 if it has none: ba's Jacobian), every real in a buffer an
/// entry of the gradient.
fn raw_check(bytes: &[u8], layout: &Layout) -> Option<Check> {
    let mut pos = 8 * layout.dims;
    let dims: Vec<usize> = bytes
        .get(..pos)?
        .chunks_exact(8)
        .map(|c| i64::from_le_bytes(c.try_into().unwrap_or([0; 8])).max(0) as usize)
        .collect();
    let mut value = None;
    let (mut gs, mut ga) = (0.0, 0.0);
    for leaf in &layout.leaves {
        let count: usize = leaf.under.iter().map(|&d| dims[d]).product();
        let len = count * leaf.kind.wire_size();
        let data = bytes.get(pos..pos + len)?;
        pos += len;
        if leaf.kind != Kind::Real {
            continue;
        }
        let reals = data
            .chunks_exact(8)
            .map(|c| f64::from_le_bytes(c.try_into().unwrap_or([0; 8])));
        if leaf.under.is_empty() && value.is_none() {
            value = reals.clone().next();
        } else {
            for x in reals {
                gs += x;
                ga += x.abs();
            }
        }
    }
    Some(Check {
        value: value.unwrap_or(0.0),
        grad_sum: gs,
        grad_abs: ga,
    })
}

/// The inputs of a kernel: `arrays` arrays of `n` reals, deterministic
/// (splitmix64 from fixed seeds; uniform in [-1, 1), and for `prod` in
/// 1 ± 1e-3 so that the product neither overflows nor underflows). The
/// same distributions as the peers' `gen_data.py`, not the same numbers.
pub fn inputs(kernel: &str, arrays: usize, n: usize) -> Vec<Vec<f64>> {
    (0..arrays)
        .map(|a| {
            let mut rng = difftest::Rng::new(0x5EED_0000 + a as u64);
            (0..n)
                .map(|_| {
                    let u = rng.unit();
                    if kernel == "prod" {
                        1.0 + (2.0 * u - 1.0) * 1e-3
                    } else {
                        2.0 * u - 1.0
                    }
                })
                .collect()
        })
        .collect()
}

/// The inputs of GradBench's kmeans at `n` points of dimension `d`, `k`
/// centroids: points uniform in [0, 1) from a fixed seed, the centroids the
/// last `k` points (as the eval's generator, evals/kmeans run.py).
pub fn kmeans_inputs(d: usize, k: usize, n: usize) -> Vec<semantics::Value> {
    use semantics::Value;
    let mut rng = difftest::Rng::new(0x4B3E_A115);
    let mut uniform = move || rng.unit();
    let rows: Vec<Value> = (0..n)
        .map(|_| Value::reals(&(0..d).map(|_| uniform()).collect::<Vec<_>>()))
        .collect();
    let centroids = rows[n.saturating_sub(k)..].to_vec();
    vec![Value::array(rows), Value::array(centroids)]
}

/// The inputs of `fixtures/gmm/program.ad` (ADBench's GMM) at `n` points
/// of dimension `d` and `k` components, with the distributions of the
/// peers' `gen_data.py` (alphas normal, means, icf and x uniform in [0, 1);
/// Wishart gamma 1, m 0), from fixed seeds: the seven parameters in order.
pub fn gmm_inputs(d: usize, k: usize, n: usize) -> Vec<semantics::Value> {
    use semantics::Value;
    let mut rng = difftest::Rng::new(0x6A11_0000);
    let mut uniform = move || rng.unit();
    let t = d * (d + 1) / 2;
    let matrix = |rows: usize, cols: usize, u: &mut dyn FnMut() -> f64| {
        Value::array(
            (0..rows)
                .map(|_| Value::reals(&(0..cols).map(|_| u()).collect::<Vec<_>>()))
                .collect(),
        )
    };
    // Box-Muller for the normal weights.
    let alphas: Vec<f64> = (0..k)
        .map(|_| {
            let (u1, u2) = (uniform().max(1e-300), uniform());
            (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
        })
        .collect();
    let means = matrix(k, d, &mut uniform);
    let icf = matrix(k, t, &mut uniform);
    let x = matrix(n, d, &mut uniform);
    // sum_{j=1..d} lgamma((d + m + 1) / 2 + (1 - j) / 2) with m = 0: the
    // arguments are multiples of 1/2, whose gamma is exact by recurrence.
    let lgamma_sum: f64 = (1..=d)
        .map(|j| {
            let halves = d + 2 - j; // twice the argument
            let mut g = if halves.is_multiple_of(2) {
                1.0
            } else {
                std::f64::consts::PI.sqrt()
            };
            let mut h = if halves.is_multiple_of(2) { 2 } else { 1 };
            while h < halves {
                g *= h as f64 / 2.0;
                h += 2;
            }
            g.ln()
        })
        .sum();
    vec![
        Value::reals(&alphas),
        means,
        icf,
        x,
        Value::Real(1.0),
        Value::Real(0.0),
        Value::Real(lgamma_sum),
    ]
}

/// Writes arrays in the driver's format (each: its length, then its reals).
fn write_input(path: &Path, arrays: &[Vec<f64>]) -> Result<(), Error> {
    let mut bytes = Vec::with_capacity(arrays.iter().map(|a| 8 + 8 * a.len()).sum());
    for a in arrays {
        bytes.extend_from_slice(&(a.len() as i64).to_le_bytes());
        for x in a {
            bytes.extend_from_slice(&x.to_le_bytes());
        }
    }
    std::fs::write(path, bytes).map_err(|e| Error::io("write", path, e))
}

/// Writes the baseline's sources into `dir` and builds them with `cfg`'s
/// flags (single thread); returns the executable (usage: baseline/kernels.c).
pub fn build_baseline(dir: &Path, cfg: &Config) -> Result<PathBuf, Error> {
    let src = dir.join("kernels.c");
    std::fs::write(&src, BASELINE_C).map_err(|e| Error::io("write", &src, e))?;
    for (name, text) in BASELINE_PARTS {
        let part = dir.join(name);
        std::fs::write(&part, text).map_err(|e| Error::io("write", &part, e))?;
    }
    let exe = dir.join("kernels");
    let mut args = Config {
        parallel: false,
        ..cfg.clone()
    }
    .flags();
    args.extend([
        "-o".into(),
        exe.display().to_string(),
        src.display().to_string(),
        "-lm".into(),
    ]);
    let out = Command::new(&cfg.cc)
        .args(&args)
        .output()
        .map_err(|e| Error::Compiler {
            span: Span::GENERATED,
            message: format!("cannot run `{}`: {e}", cfg.cc),
        })?;
    if !out.status.success() {
        return Err(Error::Compiler {
            span: Span::GENERATED,
            message: format!(
                "the baseline does not build:\n{}",
                String::from_utf8_lossy(&out.stderr)
            ),
        });
    }
    Ok(exe)
}

fn run_baseline(exe: &Path, k: &Kernel, input: &Path, reps: usize) -> Result<Samples, Error> {
    let out = Command::new(exe)
        .arg(&k.name)
        .arg(input)
        .arg(reps.to_string())
        .output()
        .map_err(|e| Error::io("run", exe, e))?;
    parse_timings(&String::from_utf8_lossy(&out.stdout)).ok_or_else(|| Error::Internal {
        span: Span::GENERATED,
        message: format!(
            "the baseline printed no timings for `{}`: {}",
            k.name,
            String::from_utf8_lossy(&out.stderr)
        ),
    })
}

/// Reads `primal_ns ...`, `grad_ns ...`, `primal_cpu_ns ...`,
/// `grad_cpu_ns ...` and `check V S A` lines.
fn parse_timings(text: &str) -> Option<Samples> {
    let nums = |key: &str| -> Option<Vec<f64>> {
        let line = text.lines().find(|l| l.starts_with(key))?;
        Some(
            line[key.len()..]
                .split_whitespace()
                .filter_map(|x| x.parse().ok())
                .collect(),
        )
    };
    let check = nums("check ").and_then(|c| match c.as_slice() {
        [v, s, a] => Some(Check {
            value: *v,
            grad_sum: *s,
            grad_abs: *a,
        }),
        _ => None,
    });
    Some(Samples {
        primal_wall: nums("primal_ns ")?,
        grad_wall: nums("grad_ns ")?,
        primal_cpu: nums("primal_cpu_ns ").unwrap_or_default(),
        grad_cpu: nums("grad_cpu_ns ").unwrap_or_default(),
        check,
    })
}

/// Which of `jax`, `torch` the Python can import.
fn available_peers(py: &Path, script: &Path) -> Vec<String> {
    let Ok(out) = Command::new(py).arg(script).arg("probe").output() else {
        return Vec::new();
    };
    String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .filter(|t| *t == "jax" || *t == "torch")
        .map(str::to_string)
        .collect()
}

fn run_peer(
    py: &Path,
    script: &Path,
    tool: &str,
    k: &Kernel,
    input: &Path,
    reps: usize,
) -> Result<Samples, Error> {
    let out = Command::new(py)
        .arg(script)
        .arg(tool)
        .arg(&k.name)
        .arg(input)
        .arg(reps.to_string())
        .env(
            "XLA_FLAGS",
            "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1",
        )
        .env("OMP_NUM_THREADS", "1")
        .output()
        .map_err(|e| Error::io("run", py, e))?;
    parse_timings(&String::from_utf8_lossy(&out.stdout)).ok_or_else(|| Error::Internal {
        span: Span::GENERATED,
        message: format!("{tool}: {}", String::from_utf8_lossy(&out.stderr)),
    })
}

/// The CPU, the number of cores and the load average.
fn machine() -> String {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, m)| m.trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".into());
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    format!(
        "{cpu}, {cores} cores, load average {} when the run started",
        load_average()
    )
}

/// The one-minute load average.
fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|s| s.split_whitespace().next().map(str::to_string))
        .unwrap_or_else(|| "?".into())
}
