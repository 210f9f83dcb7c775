//! `cargo xtask bench gradbench`: the tool's primal and derivative times
//! on GradBench's workloads, through the same session the binary runs (in
//! this process: no JSON over pipes, the same compile and the same timed
//! runs), next to GradBench's published derivative / primal ratios.
//!
//! Inputs follow the evals' generators (gradbench/gradbench
//! python/gradbench/gradbench/evals/*/run.py): uniform reals for lse, llsq,
//! ode, det and kmeans (kmeans' centroids the last k points), GMM's normal and
//! uniform draws, LSTM's uniform parameters and sequence, and ADBench's
//! files for ba and ht (data/, SOURCES.md). The draws are this module's
//! own generator's, not NumPy's: the same distributions, other numbers.

use serde_json::{Value as Json, json};

use gradbench::Session;

/// One workload: an eval, its primal and derivative functions, an input.
pub struct Workload {
    /// The eval (module).
    pub eval: &'static str,
    /// GradBench's description of the workload (its sizes).
    pub description: String,
    /// The primal function.
    pub primal: &'static str,
    /// The derivative function.
    pub derivative: &'static str,
    /// The input (without `min_runs` / `min_seconds`).
    pub input: Json,
}

/// One eval's published derivative / primal ratios.
pub struct Published {
    /// The eval.
    pub eval: &'static str,
    /// The manual C++ tool's ratio.
    pub manual: f64,
    /// The best tool and its ratio, where given.
    pub best: Option<(&'static str, f64)>,
}

/// GradBench's nightly derivative / primal ratios (2026-03-14, as given
/// in issue 13): the manual C++ tool's, and the best tool's where given.
pub const PUBLISHED: &[Published] = &[
    Published {
        eval: "gmm",
        manual: 2.41,
        best: Some(("JAX", 3.03)),
    },
    Published {
        eval: "ba",
        manual: 7.68,
        best: Some(("Enzyme", 9.69)),
    },
    Published {
        eval: "ht",
        manual: 7.68,
        best: None,
    },
    Published {
        eval: "lstm",
        manual: 8.45,
        best: Some(("CoDiPack", 2.13)),
    },
    Published {
        eval: "kmeans",
        manual: 1.45,
        best: None,
    },
    Published {
        eval: "lse",
        manual: 1.12,
        best: None,
    },
    Published {
        eval: "llsq",
        manual: 2.05,
        best: None,
    },
    Published {
        eval: "det",
        manual: 7.74,
        best: None,
    },
];

/// Each eval's `define` time in seconds, or its error.
pub type Compiles = Vec<(String, Result<f64, String>)>;

/// Draws of the project's one RNG (`difftest::Rng`): uniform in [0, 1),
/// normal, and arrays of them.
struct Draws(difftest::Rng);

impl Draws {
    fn new(seed: u64) -> Draws {
        Draws(difftest::Rng::new(seed))
    }
    fn uniform(&mut self) -> f64 {
        self.0.unit()
    }
    fn normal(&mut self) -> f64 {
        // Box-Muller; 1 - u is in (0, 1].
        let (u, v) = (1.0 - self.uniform(), self.uniform());
        (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
    }
    fn uniforms(&mut self, n: usize) -> Vec<f64> {
        (0..n).map(|_| self.uniform()).collect()
    }
    fn normals(&mut self, n: usize) -> Vec<f64> {
        (0..n).map(|_| self.normal()).collect()
    }
    fn rows(&mut self, n: usize, d: usize, normal: bool) -> Vec<Vec<f64>> {
        (0..n)
            .map(|_| {
                if normal {
                    self.normals(d)
                } else {
                    self.uniforms(d)
                }
            })
            .collect()
    }
}

fn ba_input(text: &str) -> Json {
    let lines: Vec<Vec<f64>> = text
        .lines()
        .map(|l| {
            l.split_whitespace()
                .filter_map(|w| w.parse().ok())
                .collect()
        })
        .collect();
    json!({"n": lines[0][0] as i64, "m": lines[0][1] as i64, "p": lines[0][2] as i64,
           "cam": lines[1], "x": lines[2], "w": lines[3][0], "feat": lines[4]})
}

/// An ADBench hand instance (`npts ntheta`, the correspondences and points,
/// the us if complicated, theta) with ADBench's hand model.
fn ht_input(text: &str, complicated: bool) -> Json {
    let model: Json = serde_json::from_str(include_str!("../../gradbench/tests/data/ht_test.json"))
        .expect("invariant: the hand model is JSON");
    let mut lines = text.lines();
    let head: Vec<usize> = lines
        .next()
        .unwrap_or("")
        .split_whitespace()
        .filter_map(|w| w.parse().ok())
        .collect();
    let (npts, ntheta) = (head[0], head[1]);
    let nums = |l: &str| -> Vec<f64> {
        l.split_whitespace()
            .filter_map(|w| w.parse().ok())
            .collect()
    };
    let rows: Vec<Vec<f64>> = (&mut lines).take(npts).map(nums).collect();
    let us: Vec<Vec<f64>> = if complicated {
        (&mut lines).take(npts).map(nums).collect()
    } else {
        Vec::new()
    };
    let theta: Vec<f64> = lines.take(ntheta).flat_map(nums).collect();
    json!({
        "theta": theta,
        "us": us,
        "data": {
            "model": model["data"]["model"],
            "correspondences": rows.iter().map(|r| r[0] as i64).collect::<Vec<_>>(),
            "points": rows.iter().map(|r| r[1..].to_vec()).collect::<Vec<_>>(),
        }
    })
}

/// The workloads: for each eval, the largest of GradBench's default sizes
/// that fits this benchmark's time (a shared 2-core machine), and one
/// smaller one.
pub fn workloads() -> Vec<Workload> {
    let mut r = Draws::new(0x9e37_79b9_7f4a_7c15);
    let mut out = Vec::new();
    let mut push = |eval, description: String, primal, derivative, input| {
        out.push(Workload {
            eval,
            description,
            primal,
            derivative,
            input,
        })
    };
    for n in [80_000, 1_280_000] {
        push(
            "lse",
            format!("n={n}"),
            "primal",
            "gradient",
            json!({"x": r.uniforms(n)}),
        );
    }
    for n in [1024, 16392] {
        let m = 128;
        push(
            "llsq",
            format!("n={n},m={m}"),
            "primal",
            "gradient",
            json!({"x": r.uniforms(m), "n": n}),
        );
    }
    for (n, s) in [(10_000, 100), (100_000, 10)] {
        push(
            "ode",
            format!("n={n},s={s}"),
            "primal",
            "gradient",
            json!({"x": r.uniforms(n), "s": s}),
        );
    }
    // det draws from its own generator: the other evals' inputs stay those
    // of earlier runs.
    let mut det_draws = Draws::new(0x2545_f491_4f6c_dd1d);
    for ell in [5, 11] {
        push(
            "det",
            format!("ell={ell}"),
            "primal",
            "gradient",
            json!({"A": det_draws.uniforms(ell * ell), "ell": ell}),
        );
    }
    for (d, k) in [(10, 25), (64, 100)] {
        let n = 1000;
        let input = json!({"d": d, "k": k, "n": n, "m": 0, "gamma": 1.0,
            "x": r.rows(n, d, true), "mu": r.rows(k, d, false), "q": r.rows(k, d, true),
            "l": r.rows(k, d * (d - 1) / 2, true), "alpha": r.normals(k)});
        push(
            "gmm",
            format!("{d}_{k}_{n}"),
            "objective",
            "jacobian",
            input,
        );
    }
    for (k, n, d) in [(10, 10_000, 8), (100, 100_000, 16)] {
        let points = r.rows(n, d, false);
        let centroids = points[n - k..].to_vec();
        push(
            "kmeans",
            format!("k={k},n={n},d={d}"),
            "cost",
            "dir",
            json!({"points": points, "centroids": centroids}),
        );
    }
    for (l, c) in [(2, 1024), (4, 4096)] {
        let b = 14;
        let input = json!({"main_params": r.rows(2 * l, 4 * b, false), "extra_params": r.rows(3, b, false),
            "state": r.rows(2 * l, b, false), "sequence": r.rows(c, b, false)});
        push(
            "lstm",
            format!("lstm_l{l}_c{c}"),
            "objective",
            "jacobian",
            input,
        );
    }
    push(
        "ba",
        "ba1_n49_m7776_p31843".into(),
        "objective",
        "jacobian",
        ba_input(include_str!("../data/ba1_n49_m7776_p31843.txt")),
    );
    push(
        "ba",
        "ba5_n257_m65132_p225911".into(),
        "objective",
        "jacobian",
        ba_input(include_str!("../data/ba5_n257_m65132_p225911.txt")),
    );
    push(
        "ht",
        "simple_small/hand1_t26_c100".into(),
        "objective",
        "jacobian",
        ht_input(include_str!("../data/hand1_t26_c100_simple.txt"), false),
    );
    push(
        "ht",
        "complicated_small/hand1_t26_c100".into(),
        "objective",
        "jacobian",
        ht_input(include_str!("../data/hand1_t26_c100_complicated.txt"), true),
    );
    out
}

/// One measured workload.
pub struct Row {
    /// The eval.
    pub eval: &'static str,
    /// The workload.
    pub description: String,
    /// The fastest primal run's nanoseconds, or the error.
    pub primal: Result<f64, String>,
    /// The fastest derivative run's nanoseconds, or the error.
    pub derivative: Result<f64, String>,
    /// Runs of each.
    pub runs: (usize, usize),
}

/// The fastest run's nanoseconds in an evaluate answer, and the runs. The
/// machine is shared: runs are only ever slowed by others, so the least is
/// the least disturbed (medians moved by 2-10x between runs under a load
/// average of 19 on 2 cores).
fn fastest_ns(answer: &Json) -> Result<(f64, usize), String> {
    if answer["success"] != true {
        return Err(answer["error"].as_str().unwrap_or("failed").to_string());
    }
    let ns: Vec<f64> = answer["timings"]
        .as_array()
        .ok_or("no timings")?
        .iter()
        .filter_map(|t| t["nanoseconds"].as_f64())
        .collect();
    // The least run: the machine is shared, and others only ever slow a
    // run down.
    let fastest = ns.iter().copied().min_by(f64::total_cmp);
    fastest
        .map(|m| (m, ns.len()))
        .ok_or_else(|| "no timings".into())
}

/// How many times the primal and the derivative of a workload alternate.
const ROUNDS: usize = 3;

/// The faster of two (fastest run, runs) results, with the runs of both;
/// the first error stays.
fn fastest_of(
    a: Result<(f64, usize), String>,
    b: Result<(f64, usize), String>,
) -> Result<(f64, usize), String> {
    let (a, b) = (a?, b?);
    Ok((a.0.min(b.0), a.1 + b.1))
}

/// Runs every workload (of the evals in `only`, all if empty), each
/// function at least `min_runs` times per round and `min_seconds` long in
/// all, in [`ROUNDS`] rounds alternating with the other function; `log` gets
/// progress lines. Compile times are reported per eval.
pub fn run(
    only: &[String],
    min_runs: usize,
    min_seconds: f64,
    log: &mut dyn FnMut(&str),
) -> (Vec<Row>, Compiles) {
    run_filtered(only, "", min_runs, min_seconds, log)
}

/// [`run`] on the workloads whose description contains `matching` (all
/// when it is empty).
pub fn run_filtered(
    only: &[String],
    matching: &str,
    min_runs: usize,
    min_seconds: f64,
    log: &mut dyn FnMut(&str),
) -> (Vec<Row>, Compiles) {
    let mut session = Session::default();
    let mut rows = Vec::new();
    let mut compiles = Vec::new();
    let mut id = 0;
    let mut send = |session: &mut Session, mut message: Json| -> Json {
        message["id"] = json!(id);
        id += 1;
        serde_json::from_str(&session.answer(&message.to_string())).unwrap_or(Json::Null)
    };
    let mut defined: Vec<&str> = Vec::new();
    for w in workloads() {
        if !only.is_empty() && !only.iter().any(|o| o == w.eval)
            || !w.description.contains(matching)
        {
            continue;
        }
        if !defined.contains(&w.eval) {
            log(&format!("define {}", w.eval));
            let r = send(&mut session, json!({"kind": "define", "module": w.eval}));
            let t = if r["success"] == true {
                Ok(r["timings"][0]["nanoseconds"].as_f64().unwrap_or(f64::NAN) / 1e9)
            } else {
                Err(r["error"].as_str().unwrap_or("failed").to_string())
            };
            compiles.push((w.eval.to_string(), t));
            defined.push(w.eval);
        }
        let mut input = w.input;
        input["min_runs"] = json!(min_runs);
        input["min_seconds"] = json!(min_seconds / ROUNDS as f64);
        let mut time = |function: &str| {
            log(&format!("{} {} {}", w.eval, function, w.description));
            let r = send(
                &mut session,
                json!({"kind": "evaluate", "module": w.eval, "function": function, "input": input}),
            );
            fastest_ns(&r)
        };
        // The primal and the derivative alternate, ROUNDS times each, the
        // fastest run of each kept: a ratio of two figures measured
        // minutes apart moved by 1.5x on this shared machine (lse 1.00
        // and 1.86 in two runs of the whole table, 2026-12-03), as other
        // jobs came and went between the two.
        let (mut primal, mut derivative) = (Ok((f64::INFINITY, 0)), Ok((f64::INFINITY, 0)));
        for _ in 0..ROUNDS {
            primal = fastest_of(primal, time(w.primal));
            derivative = fastest_of(derivative, time(w.derivative));
        }
        rows.push(Row {
            eval: w.eval,
            description: w.description,
            runs: (
                primal.as_ref().map_or(0, |p| p.1),
                derivative.as_ref().map_or(0, |p| p.1),
            ),
            primal: primal.map(|p| p.0),
            derivative: derivative.map(|p| p.0),
        });
    }
    (rows, compiles)
}

/// The markdown section for docs/performance.md.
pub fn markdown(
    rows: &[Row],
    compiles: &[(String, Result<f64, String>)],
    machine: &str,
    min_seconds: f64,
) -> String {
    let mut s = String::new();
    s.push_str("## GradBench evals\n\n");
    s.push_str(
        "Generated by `cargo xtask bench gradbench` (crates/bench/src/gradbench.rs; rerun it rather than editing). \
         Each workload runs through the GradBench tool's session (`adrev-gradbench`, docs/gradbench.md): \
         the program compiled once by `define` with the C backend's fast configuration (single thread, \
         `-O3 -march=native`, reassociated reductions, vector math), then each function timed around the \
         generated function alone (in process, `codegen::Library::time`), ",
    );
    s.push_str(&format!(
        "for at least {min_seconds} s in all, in {ROUNDS} rounds that alternate the primal and the derivative (each \
         evaluation after one untimed call); the figure is the fastest run (the machine is shared: \
         others only ever slow a run down). \
         Derivatives: reverse mode (UNF, D_rho, UNF^-1, optimized) for gradients, reverse mode inside \
         the program for ba's Jacobian (a `vjp_rev` per row), forward mode inside ht's, forward over reverse for kmeans' Hessian diagonal.\n\n"
    ));
    s.push_str(&format!("- Machine: {machine}.\n"));
    s.push_str(
        "- Sizes: GradBench's default workloads, the largest of each eval that fits a shared 2-core machine \
         in this benchmark's time, and one smaller (det the smallest and the largest ell; gmm misses \
         d = 128 / k = 200 as GradBench's defaults do; kmeans runs k = 100 of k up to 1000; ba the first and fifth of ADBench's 20 files; ht the small hand \
         instances, c = 100).\n",
    );
    s.push_str(
        "- Published: GradBench's nightly derivative / primal ratios of 2026-03-14 (as quoted in issue 13): \
         the manual C++ tool, and the best tool where known.\n",
    );
    s.push_str("- Not run: particle and saddle (no primal to compare with: each function is a whole nested descent), hello (not a benchmark).\n\n");
    s.push_str("| eval | workload | primal ms | derivative ms | derivative / primal | manual C++ | best tool | runs |\n");
    s.push_str("|---|---|---:|---:|---:|---:|---|---:|\n");
    let ms = |r: &Result<f64, String>| match r {
        Ok(ns) => format!("{:.3}", ns / 1e6),
        Err(e) => format!("error: {}", e.lines().next().unwrap_or("")),
    };
    for row in rows {
        let ratio = match (&row.primal, &row.derivative) {
            (Ok(p), Ok(d)) if *p > 0.0 => format!("{:.2}", d / p),
            _ => "-".into(),
        };
        let (manual, best) = PUBLISHED
            .iter()
            .find(|p| p.eval == row.eval)
            .map(|p| {
                (
                    format!("{:.2}", p.manual),
                    p.best.map_or("-".into(), |(t, r)| format!("{t} {r:.2}")),
                )
            })
            .unwrap_or(("-".into(), "-".into()));
        s.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {} | {}, {} |\n",
            row.eval,
            row.description,
            ms(&row.primal),
            ms(&row.derivative),
            ratio,
            manual,
            best,
            row.runs.0,
            row.runs.1
        ));
    }
    s.push_str(
        "\nCompile time of each eval's `define` (all its functions, the compiler and cc):\n\n",
    );
    s.push_str("| eval | define s |\n|---|---:|\n");
    for (e, t) in compiles {
        let t = match t {
            Ok(t) => format!("{t:.1}"),
            Err(e) => format!("error: {e}"),
        };
        s.push_str(&format!("| {e} | {t} |\n"));
    }
    s
}
