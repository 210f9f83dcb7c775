//! `check-grad`: every gradient path on one program at one point and at a
//! few random nearby points, as a table with the largest relative
//! differences between the paths (JAX's `check_grads`, as a command).
//!
//! A path that refuses the program (a construct it does not cover) is
//! listed as refused; the program fails the check when two paths that ran
//! disagree, when a path's value differs from the Source program's, or when
//! an AD path differs from finite differences beyond their estimated error.

use crate::paths::{
    FiniteDiff, Gradient, ad_agree, direct_program, fd_agree, finite_differences, flat,
    inconclusive, max_rel_diff, run_gradient, source_value, unf_program, unflatten,
};
use crate::rng::Rng;
use semantics::Value;
use syntax::Module;

/// Options of [`check_grad`].
#[derive(Debug, Clone, PartialEq)]
pub struct CheckConfig {
    /// How many random points near the given one to check as well.
    pub nearby: usize,
    /// The seed of those points.
    pub seed: u64,
    /// The parameters to differentiate with respect to (all when `None`).
    pub wrt: Option<Vec<String>>,
}

impl Default for CheckConfig {
    fn default() -> CheckConfig {
        CheckConfig {
            nearby: 3,
            seed: 0,
            wrt: None,
        }
    }
}

/// One path at one point.
#[derive(Debug, Clone, PartialEq)]
pub struct PathResult {
    /// `direct`, `unf` or `fd`.
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
    /// One row per path.
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
            for r in &pt.paths {
                let mut row = vec![r.path.clone()];
                match &r.outcome {
                    Ok(g) => {
                        row.push(semantics::format_real(g.value));
                        row.extend(g.grads.iter().map(|v| v.to_string()));
                    }
                    Err(e) => row.push(format!("refused: {e}")),
                }
                rows.push(row);
            }
            out.push_str(&table(&rows));
            if !pt.diffs.is_empty() {
                let d: Vec<String> = pt
                    .diffs
                    .iter()
                    .map(|(p, x)| format!("{p} {x:.1e}"))
                    .collect();
                out.push_str(&format!(
                    "  largest relative difference to {}: {}\n",
                    self.reference(pt),
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

    fn reference(&self, pt: &PointReport) -> String {
        pt.paths
            .iter()
            .find(|r| r.outcome.is_ok() && r.path != "fd")
            .map(|r| r.path.clone())
            .unwrap_or_default()
    }
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
        out.push(' ');
        for (c, cell) in r.iter().enumerate() {
            out.push_str(&format!(" {cell:<w$}", w = widths[c]));
        }
        out.push('\n');
    }
    out
}

/// Runs every path on the entry of `m` (`entry`, or the last definition) at
/// `at` and at `cfg.nearby` random points near it.
pub fn check_grad(
    m: &Module,
    entry: Option<&str>,
    at: &[(String, Value)],
    cfg: &CheckConfig,
) -> Result<CheckReport, String> {
    let def = m
        .entry(entry)
        .ok_or_else(|| format!("no definition `{}`", entry.unwrap_or("")))?
        .clone();
    let rcfg = reverse::Config {
        wrt: cfg.wrt.clone(),
    };
    let wrt: Vec<usize> = match &cfg.wrt {
        None => (1..=def.params.len()).collect(),
        Some(names) => names
            .iter()
            .map(|n| {
                def.params
                    .iter()
                    .position(|p| p.name.as_str() == n)
                    .map(|i| i + 1)
                    .ok_or_else(|| format!("`{n}` is not a parameter of `{}`", def.name))
            })
            .collect::<Result<_, _>>()?,
    };
    let programs = [
        ("direct", direct_program(m, &def, &rcfg)),
        ("unf", unf_program(m, &def, &rcfg)),
    ];
    if programs.iter().all(|(_, p)| p.is_err()) {
        let why: Vec<String> = programs
            .iter()
            .filter_map(|(n, p)| p.as_ref().err().map(|e| format!("{n}: {e}")))
            .collect();
        return Err(format!(
            "no reverse-mode path takes this program ({})",
            why.join("; ")
        ));
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
        let value = source_value(m, &def, &inputs)?;
        let mut paths = Vec::new();
        let mut problems = Vec::new();
        for (name, prog) in &programs {
            let outcome = match prog {
                Ok(g) => run_gradient(g, &inputs),
                Err(e) => Err(e.clone()),
            };
            if let Ok(g) = &outcome
                && (g.value - value).abs() > 1e-9 * g.value.abs().max(value.abs()) + 1e-12
            {
                problems.push(format!(
                    "{name} computes the value {} but the program's is {value}",
                    g.value
                ));
            }
            paths.push(PathResult {
                path: name.to_string(),
                outcome,
            });
        }
        let fd = finite_differences(m, &def, &inputs, &wrt);
        let ad: Vec<(String, Gradient)> = paths
            .iter()
            .filter_map(|r| r.outcome.clone().ok().map(|g| (r.path.clone(), g)))
            .collect();
        let mut diffs = Vec::new();
        let mut notes = Vec::new();
        if let Some((ref_name, reference)) = ad.first() {
            for (name, g) in &ad[1..] {
                diffs.push((
                    name.clone(),
                    max_rel_diff(&g.grads, &reference.grads, 1e-12),
                ));
                if let Err(e) = ad_agree(&g.grads, &reference.grads) {
                    problems.push(format!("{name} vs {ref_name}: {e}"));
                }
            }
            if let Ok(fd) = &fd {
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
    Ok(CheckReport {
        entry: def.name.to_string(),
        wrt: wrt
            .iter()
            .map(|&i| def.params[i - 1].name.to_string())
            .collect(),
        points: reports,
    })
}
