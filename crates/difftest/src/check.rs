//! `check-grad`: every gradient path on one program at one point and at a
//! few random nearby points, as a table with the largest relative
//! differences between the paths (JAX's `check_grads`, as a command).
//!
//! The paths: `unf` (reverse mode through UNF, optimized: what `grad`
//! runs), `unf-noopt` (the same, unoptimized), `direct` (the direct macro
//! of Fig. 5, where it takes the program), `forward` and `forward-vec`
//! (forward mode, one pass per direction and vectorised), `c` (the
//! optimized UNF gradient program built by the C backend, when asked
//! for), and `fd` (central finite differences of the Source program). A
//! path that refuses the program (a construct outside its language) is
//! listed as refused; the check fails when two AD paths that ran disagree,
//! when a path's value differs from the Source program's, or when an AD
//! path differs from finite differences beyond their estimated error.

use crate::paths::{
    FiniteDiff, Gradient, ad_agree, fd_agree, finite_differences, flat, inconclusive, max_rel_diff,
    one_line, source_value, unflatten,
};
use crate::rng::Rng;
use adrev::{Backend, Compiled, Inputs, Kind, Program, Request, Route, Wrt};
use semantics::Value;
use syntax::{Def, Module};

/// Options of [`check_grad`].
#[derive(Debug, Clone, PartialEq)]
pub struct CheckConfig {
    /// How many random points near the given one to check as well.
    pub nearby: usize,
    /// The seed of those points.
    pub seed: u64,
    /// The parameters to differentiate with respect to.
    pub wrt: Wrt,
    /// Also build the optimized UNF gradient program with the C backend
    /// (the system C compiler, with these options) and run it at every point.
    pub c: Option<codegen::Config>,
    /// Use the deliberately broken forward macro of Exercise 182.8
    /// (`forward::Config::mutant_first_summand_only`) for the forward
    /// paths: how the tests show that a disagreement between AD paths is
    /// reported. Never set it elsewhere.
    #[doc(hidden)]
    pub mutant_forward: bool,
}

impl Default for CheckConfig {
    /// Three nearby points from seed 0, every parameter, no C backend.
    fn default() -> CheckConfig {
        CheckConfig {
            nearby: 3,
            seed: 0,
            wrt: Wrt::All,
            c: None,
            mutant_forward: false,
        }
    }
}

/// One path at one point.
#[derive(Debug, Clone, PartialEq)]
pub struct PathResult {
    /// `unf`, `unf-noopt`, `direct`, `forward`, `forward-vec`, `c` or `fd`.
    pub path: String,
    /// What it computed, or why it could not.
    pub outcome: Result<Gradient, String>,
}

/// Every path at one point.
#[derive(Debug, Clone, PartialEq)]
pub struct PointReport {
    /// The inputs.
    pub inputs: Vec<(String, Value)>,
    /// The Source program's value there.
    pub value: f64,
    /// One row per path, `fd` last.
    pub paths: Vec<PathResult>,
    /// The largest relative difference of each path's gradient to the
    /// first AD path's.
    pub diffs: Vec<(String, f64)>,
    /// Remarks that are no disagreement (inconclusive finite differences).
    pub notes: Vec<String>,
    /// What disagrees (empty when all agree).
    pub problems: Vec<String>,
}

/// The result of [`check_grad`].
#[derive(Debug, Clone, PartialEq)]
pub struct CheckReport {
    /// The entry checked.
    pub entry: String,
    /// The parameters differentiated.
    pub wrt: Vec<String>,
    /// The given point first, then the nearby ones.
    pub points: Vec<PointReport>,
}

impl CheckReport {
    /// Whether every path agrees at every point.
    pub fn ok(&self) -> bool {
        self.points.iter().all(|p| p.problems.is_empty())
    }

    /// The report as a table per point.
    pub fn render(&self) -> String {
        let mut out = String::new();
        for (i, pt) in self.points.iter().enumerate() {
            let at: Vec<String> = pt
                .inputs
                .iter()
                .map(|(n, v)| format!("{n} = {v}"))
                .collect();
            let which = if i == 0 {
                "at".to_string()
            } else {
                format!("nearby point {i}:")
            };
            out.push_str(&format!("{} {which} {}\n", self.entry, at.join(", ")));
            let mut header = vec!["path".to_string(), "value".to_string()];
            header.extend(self.wrt.iter().map(|w| format!("grad {w}")));
            let mut rows = vec![header];
            let mut refused = Vec::new();
            for r in &pt.paths {
                match &r.outcome {
                    Ok(g) => {
                        let mut row = vec![r.path.clone(), semantics::format_real(g.value)];
                        row.extend(g.grads.iter().map(|v| v.to_string()));
                        rows.push(row);
                    }
                    Err(e) => refused.push(format!("  {} refused: {e}\n", r.path)),
                }
            }
            out.push_str(&table(&rows));
            refused.iter().for_each(|r| out.push_str(r));
            if !pt.diffs.is_empty() {
                let d: Vec<String> = pt
                    .diffs
                    .iter()
                    .map(|(p, x)| format!("{p} {x:.1e}"))
                    .collect();
                out.push_str(&format!(
                    "  largest relative difference to {}: {}\n",
                    reference(pt),
                    d.join(", ")
                ));
            }
            for n in &pt.notes {
                out.push_str(&format!("  note: {n}\n"));
            }
            for p in &pt.problems {
                out.push_str(&format!("  DISAGREE: {p}\n"));
            }
        }
        out.push_str(if self.ok() {
            "all paths agree\n"
        } else {
            "the paths disagree\n"
        });
        out
    }
}

/// The first AD path that ran at a point: the reference of the
/// differences.
fn reference(pt: &PointReport) -> String {
    pt.paths
        .iter()
        .find(|r| r.outcome.is_ok() && r.path != "fd")
        .map(|r| r.path.clone())
        .unwrap_or_default()
}

/// The finite-difference gradient with inconclusive components as NaN.
fn conclusive(fd: &FiniteDiff) -> Vec<Value> {
    fd.grads
        .iter()
        .zip(&fd.errors)
        .map(|(g, e)| {
            let (gs, es) = (flat(std::slice::from_ref(g)), flat(std::slice::from_ref(e)));
            let xs: Vec<f64> = gs
                .iter()
                .zip(&es)
                .map(|(g, e)| if e.is_finite() { *g } else { f64::NAN })
                .collect();
            unflatten(g, &xs, &mut 0)
        })
        .collect()
}

fn table(rows: &[Vec<String>]) -> String {
    let cols = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..cols)
        .map(|c| {
            rows.iter()
                .filter_map(|r| r.get(c))
                .map(String::len)
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for r in rows {
        let mut line = " ".to_string();
        for (c, cell) in r.iter().enumerate() {
            line.push_str(&format!(" {cell:<w$}", w = widths[c]));
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// The comparisons at one point: every AD path's value against the
/// Source program's `value`, every AD path's gradient against the first
/// one's (the reference) and against finite differences `fd`. Returns the
/// largest relative differences to the reference, the notes and the
/// problems (disagreements) found.
pub fn compare_paths(
    value: f64,
    paths: &[PathResult],
    fd: Option<&FiniteDiff>,
) -> (Vec<(String, f64)>, Vec<String>, Vec<String>) {
    let (mut diffs, mut notes, mut problems) = (Vec::new(), Vec::new(), Vec::new());
    let ad: Vec<(&str, &Gradient)> = paths
        .iter()
        .filter(|r| r.path != "fd")
        .filter_map(|r| r.outcome.as_ref().ok().map(|g| (r.path.as_str(), g)))
        .collect();
    for (name, g) in &ad {
        if (g.value - value).abs() > 1e-9 * g.value.abs().max(value.abs()) + 1e-12 {
            problems.push(format!(
                "{name} computes the value {} but the program's is {value}",
                g.value
            ));
        }
    }
    let Some((ref_name, reference)) = ad.first() else {
        return (diffs, notes, problems);
    };
    for (name, g) in &ad[1..] {
        diffs.push((
            name.to_string(),
            max_rel_diff(&g.grads, &reference.grads, 1e-12),
        ));
        if let Err(e) = ad_agree(&g.grads, &reference.grads) {
            problems.push(format!("{name} vs {ref_name}: {e}"));
        }
    }
    if let Some(fd) = fd {
        diffs.push((
            "fd".to_string(),
            max_rel_diff(&conclusive(fd), &reference.grads, 1e-12),
        ));
        let n = inconclusive(fd);
        if n > 0 {
            notes.push(format!(
                "fd: {n} component(s) too ill-conditioned for finite differences (shown as nan)"
            ));
        }
        for (name, g) in &ad {
            if let Err(e) = fd_agree(&g.grads, fd) {
                problems.push(format!("{name} vs finite differences: {e}"));
            }
        }
    }
    (diffs, notes, problems)
}

/// How one path computes a gradient at a point: a compiled request of
/// the library, or why the path does not take the program.
type Runner = Result<Compiled, String>;

fn run(runner: &Runner, inputs: &[(String, Value)]) -> Result<Gradient, String> {
    let compiled = runner.as_ref().map_err(Clone::clone)?;
    let out = compiled
        .call(&Inputs::from_values(inputs.iter().cloned()))
        .map_err(|e| one_line(&e))?;
    let value = out
        .value
        .as_real()
        .ok_or_else(|| format!("the program returned {}, not a real", out.value))?;
    Ok(Gradient {
        value,
        grads: out.gradients.into_iter().map(|(_, g)| g).collect(),
    })
}

/// Every path's compiled gradient for `entry`.
fn runners(program: &Program, entry: &str, cfg: &CheckConfig) -> Vec<(&'static str, Runner)> {
    let base = Request::new(Kind::ValueAndGrad)
        .entry(entry)
        .wrt(cfg.wrt.clone());
    let fcfg = |mode| forward::Config {
        mode,
        mutant_first_summand_only: cfg.mutant_forward,
    };
    let forward = |mode| Request {
        forward: fcfg(mode),
        ..base.clone().route(Route::Forward)
    };
    let mut requests = vec![
        ("unf", base.clone()),
        ("unf-noopt", base.clone().optimize(false)),
        ("direct", base.clone().route(Route::Direct)),
        ("forward", forward(forward::Mode::Passes)),
        ("forward-vec", forward(forward::Mode::Vectorised)),
    ];
    if let Some(c) = &cfg.c {
        requests.push(("c", base.clone().backend(Backend::C(c.clone()))));
    }
    requests
        .into_iter()
        .map(|(name, req)| (name, program.compile(&req).map_err(|e| one_line(&e))))
        .collect()
}

/// Runs every path on the entry of `program` (`entry`, or the last
/// definition) at `at` and at `cfg.nearby` random points near it.
pub fn check_grad(
    program: &Program,
    entry: Option<&str>,
    at: &Inputs,
    cfg: &CheckConfig,
) -> adrev::Result<CheckReport> {
    let value = program.compile(&Request {
        entry: entry.map(str::to_string),
        ..Request::new(Kind::Value)
    })?;
    let m = value
        .module()
        .ok_or_else(|| adrev::Error::user("check-grad takes a term-language program"))?;
    let def = value.entry().clone();
    let wrt: Vec<usize> = cfg.wrt.positions(&def)?.iter().map(|i| i + 1).collect();
    let at = at.resolve(&def)?;
    let runners = runners(program, def.name.as_str(), cfg);
    let points = check_points(m, &def, &at, cfg, &wrt, &runners).map_err(adrev::Error::user)?;
    Ok(CheckReport {
        entry: def.name.to_string(),
        wrt: wrt
            .iter()
            .map(|&i| def.params[i - 1].name.to_string())
            .collect(),
        points,
    })
}

/// What a disagreement with finite differences means in a program with
/// derivative rules (docs/derivatives.md, "Custom derivative rules").
pub const WRONG_RULE: &str = "a derivative rule is wrong: the AD paths use the `with jvp` / `with vjp` rules, finite differences differentiate the body of the function, and they disagree";

fn check_points(
    m: &Module,
    def: &Def,
    at: &[(String, Value)],
    cfg: &CheckConfig,
    wrt: &[usize],
    runners: &[(&'static str, Runner)],
) -> Result<Vec<PointReport>, String> {
    if runners.iter().all(|(_, r)| r.is_err()) {
        let why: Vec<String> = runners
            .iter()
            .filter_map(|(n, r)| r.as_ref().err().map(|e| format!("{n}: {e}")))
            .collect();
        return Err(format!("no path takes this program ({})", why.join("; ")));
    }
    let mut rng = Rng::new(cfg.seed);
    let mut points = vec![at.to_vec()];
    for _ in 0..cfg.nearby {
        points.push(
            at.iter()
                .map(|(n, v)| {
                    let xs: Vec<f64> = flat(std::slice::from_ref(v))
                        .into_iter()
                        .map(|x| x + rng.range(-0.05, 0.05) * x.abs().max(1.0))
                        .collect();
                    (n.clone(), unflatten(v, &xs, &mut 0))
                })
                .collect(),
        );
    }
    let mut reports = Vec::new();
    for inputs in points {
        let value = source_value(m, def, &inputs)?;
        let mut paths: Vec<PathResult> = runners
            .iter()
            .map(|(name, r)| PathResult {
                path: name.to_string(),
                outcome: run(r, &inputs),
            })
            .collect();
        let fd = finite_differences(m, def, &inputs, wrt);
        let (diffs, notes, mut problems) = compare_paths(value, &paths, fd.as_ref().ok());
        if syntax::rules::any(m) && problems.iter().any(|p| p.contains("finite differences")) {
            // The AD paths read the rules, finite differences the body.
            problems.insert(0, WRONG_RULE.to_string());
        }
        paths.push(PathResult {
            path: "fd".to_string(),
            outcome: fd.map(|fd| Gradient {
                value,
                grads: conclusive(&fd),
            }),
        });
        reports.push(PointReport {
            inputs,
            value,
            paths,
            diffs,
            notes,
            problems,
        });
    }
    Ok(reports)
}
