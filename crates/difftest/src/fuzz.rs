//! The fuzzing loop over many generated cases ([`fuzz`]): per case a
//! program and admissible inputs, every check of [`check_case`], one case
//! in three also the dot-product identity on a program returning an array
//! ([`check_dot`]), optionally the C backend ([`check_c`]); coverage
//! counts of every construct and of the programs' NAO; the first failure
//! shrunk ([`crate::shrink()`]) into a program file ready to become a
//! fixture.

use crate::ast::{GVal, Program};
use crate::case::{CaseInfo, Disagreement, check_c, check_case, check_dot};
use crate::eval::{Probe, eval_probed};
use crate::generate::{Features, admissible_inputs, gen_program, gen_vector_program, result_at};
use crate::rng::Rng;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// Every construct the generator produces, as named in the coverage
/// table: the language's constructs, then properties of them (a loop
/// whose body reads variables of the program, values that are arrays of
/// arrays or of tuples, a conditional whose untaken branch is singular).
pub const CONSTRUCTS: &[&str] = &[
    "const",
    "var",
    "let",
    "let-tuple",
    "tuple",
    "proj",
    "neg",
    "sin",
    "cos",
    "tan",
    "exp",
    "log",
    "sqrt",
    "tanh",
    "abs",
    "+",
    "-",
    "*",
    "/",
    "pow",
    "max",
    "min",
    "<",
    "<=",
    ">",
    ">=",
    "==",
    "!=",
    "&&",
    "||",
    "not",
    "if",
    "index",
    "length",
    "shift1L",
    "shift1R",
    "map",
    "map2",
    "reduce",
    "foldl",
    "scanl",
    "scanr",
    "build",
    "ifold",
    "while",
    "with_rules",
    "diff",
    "grad",
    "grad_rev",
    "jvp",
    "vjp",
    "vjp_rev",
    "section",
    "map (free vars)",
    "map2 (free vars)",
    "reduce (free vars)",
    "foldl (free vars)",
    "scanl (free vars)",
    "scanr (free vars)",
    "build (free vars)",
    "ifold (free vars)",
    "array of arrays",
    "array of tuples",
    "if (untaken branch singular)",
];

/// The first failing case of a run, shrunk.
#[derive(Debug, Clone, PartialEq)]
pub struct Failure {
    /// The case number (replay with the same seed).
    pub case: u64,
    /// What failed on the shrunk program.
    pub disagreement: Disagreement,
    /// Nodes of the program as generated and after shrinking.
    pub sizes: (usize, usize),
    /// The shrunk program as a fixture file: prose, `-- at`, `-- value`,
    /// `-- grad` lines, then the definition.
    pub fixture: String,
}

/// Options of a fuzzing run.
#[derive(Debug, Clone, PartialEq)]
pub struct FuzzConfig {
    /// Cases to generate.
    pub cases: u64,
    /// The seed of the run.
    pub seed: u64,
    /// Run the C backend on one case in this many (0: never); each such
    /// case builds two C programs with the system compiler.
    pub c_every: u64,
    /// Go on after a failure (each one shrunk and reported) instead of
    /// stopping at the first.
    pub keep_going: bool,
}

/// What a fuzzing run did.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FuzzReport {
    /// The seed of the run.
    pub seed: u64,
    /// Cases generated.
    pub cases: u64,
    /// Cases that passed every check.
    pub passed: u64,
    /// Of those, the ones the direct path also took (its fragment).
    pub direct_cases: u64,
    /// Cases that also checked the dot-product identity on a program
    /// returning an array.
    pub dot_cases: u64,
    /// Cases also run through the C backend.
    pub c_cases: u64,
    /// Cases for which no admissible inputs were found (not run).
    pub rejected: u64,
    /// Gradient components too ill-conditioned for finite differences
    /// (compared between AD paths only).
    pub fd_inconclusive: u64,
    /// How often each construct occurs in the programs that were run.
    pub coverage: BTreeMap<String, u64>,
    /// Programs by their depth of nested array operations (NAO), index = depth.
    pub nao: Vec<u64>,
    /// The failures, shrunk: the first one only (the run stops there)
    /// unless [`FuzzConfig::keep_going`].
    pub failures: Vec<Failure>,
    /// Wall-clock time.
    pub elapsed: Duration,
}

impl FuzzReport {
    /// The deepest NAO reached.
    pub fn max_nao(&self) -> usize {
        self.nao.iter().rposition(|&c| c > 0).unwrap_or(0)
    }

    /// How often `construct` occurred.
    pub fn count(&self, construct: &str) -> u64 {
        self.coverage.get(construct).copied().unwrap_or(0)
    }

    /// The report as the `fuzz-diff` command prints it.
    pub fn render(&self) -> String {
        let mut out = format!(
            "fuzz-diff: seed {}, {} cases in {:.1} s: {} passed ({} also through the direct macro, {} with a dot-product test, {} through the C backend), {} without admissible inputs\n",
            self.seed,
            self.cases,
            self.elapsed.as_secs_f64(),
            self.passed,
            self.direct_cases,
            self.dot_cases,
            self.c_cases,
            self.rejected
        );
        out.push_str(&format!(
            "{} gradient components too ill-conditioned for finite differences (compared between AD paths only)\n",
            self.fd_inconclusive
        ));
        out.push_str("coverage (occurrences in the programs run):\n");
        let width = CONSTRUCTS.iter().map(|c| c.len()).max().unwrap_or(0);
        for name in CONSTRUCTS {
            let n = self.count(name);
            let mark = if n == 0 { "   <- never" } else { "" };
            out.push_str(&format!("  {name:<width$}  {n:>9}{mark}\n"));
        }
        for (name, n) in &self.coverage {
            if !CONSTRUCTS.contains(&name.as_str()) {
                out.push_str(&format!("  {name:<width$}  {n:>9}\n"));
            }
        }
        out.push_str("nested array operations (programs by NAO):\n");
        for (depth, count) in self.nao.iter().enumerate() {
            out.push_str(&format!("  NAO {depth}  {count:>9}\n"));
        }
        if self.failures.is_empty() {
            out.push_str("no disagreement\n");
        }
        for f in &self.failures {
            out.push_str(&format!(
                "DISAGREEMENT at case {}: {}: {}\nshrunk from {} to {} nodes; as a fixture:\n\n{}\n",
                f.case,
                f.disagreement.check,
                f.disagreement.detail,
                f.sizes.0,
                f.sizes.1,
                f.fixture
            ));
        }
        out
    }
}

/// The features of a case: three in ten stay in the direct macro's
/// fragment, one in four may use open `reduce`.
fn features(rng: &mut Rng) -> Features {
    Features {
        max_nao: 3,
        open_reduce: rng.chance(0.25),
        extended: rng.chance(0.7),
        arrays: true,
        ops: None,
        derivatives: rng.chance(0.35),
        counts: false,
        higher_order: false,
        redundant: false,
    }
}

/// The node budget of a case's program: 3 to 47, and one time in ten up
/// to 150.
fn program_size(rng: &mut Rng) -> usize {
    if rng.chance(0.1) {
        48 + rng.below(103)
    } else {
        3 + rng.below(45)
    }
}

/// Counts a program run at `inputs` into the report: its constructs, its
/// NAO, its conditionals whose untaken branch is singular.
fn cover(report: &mut FuzzReport, p: &Program, inputs: &[GVal]) -> usize {
    let depth = p.count(&mut report.coverage) as usize;
    let mut env: Vec<(String, GVal)> = p
        .params
        .iter()
        .map(|(n, _)| n.clone())
        .zip(inputs.iter().cloned())
        .collect();
    let mut probe = Probe {
        untaken: true,
        ..Probe::default()
    };
    let _ = eval_probed(&p.body, &mut env, &mut probe);
    *report
        .coverage
        .entry("if (untaken branch singular)".to_string())
        .or_insert(0) += probe.singular_untaken;
    depth
}

/// The coverage of `cases` cases of a run from `seed` without running
/// them: the constructs of the generated programs and of the vector
/// programs of the dot-product tests (as [`fuzz`] counts them), and the
/// programs by NAO.
pub fn sample_coverage(cases: u64, seed: u64) -> (BTreeMap<String, u64>, Vec<u64>) {
    let mut report = FuzzReport::default();
    let mut nao = vec![0; 4];
    for case in 0..cases {
        let mut rng = Rng::for_case(seed, case);
        let feat = features(&mut rng);
        let found = (0..5).find_map(|_| {
            let size = program_size(&mut rng);
            let p = gen_program(&mut rng, size, &feat);
            admissible_inputs(&mut rng, &p, 20).map(|(inputs, _)| (p, inputs))
        });
        let Some((p, inputs)) = found else { continue };
        let depth = cover(&mut report, &p, &inputs);
        if nao.len() <= depth {
            nao.resize(depth + 1, 0);
        }
        nao[depth] += 1;
        if rng.chance(0.3) {
            let size = 3 + rng.below(30);
            let q = gen_vector_program(&mut rng, size, &feat);
            if let Some((qin, _)) = admissible_inputs(&mut rng, &q, 20) {
                cover(&mut report, &q, &qin);
            }
        }
    }
    (report.coverage, nao)
}

/// Runs `cases` generated cases from `seed` (no C backend), stopping at
/// the first disagreement (shrunk, in [`FuzzReport::failures`]). `on_progress` is called after each
/// case with the number done and the report so far.
pub fn fuzz(cases: u64, seed: u64, on_progress: impl FnMut(u64, &FuzzReport)) -> FuzzReport {
    fuzz_with(
        &FuzzConfig {
            cases,
            seed,
            c_every: 0,
            keep_going: false,
        },
        on_progress,
    )
}

/// [`fuzz`] with options.
pub fn fuzz_with(cfg: &FuzzConfig, mut on_progress: impl FnMut(u64, &FuzzReport)) -> FuzzReport {
    let start = Instant::now();
    let seed = cfg.seed;
    let mut report = FuzzReport {
        seed,
        nao: vec![0; 4],
        ..FuzzReport::default()
    };
    for case in 0..cfg.cases {
        report.cases += 1;
        let mut rng = Rng::for_case(seed, case);
        let feat = features(&mut rng);
        // A program with admissible inputs: up to five programs, twenty
        // draws of inputs each.
        let found = (0..5).find_map(|_| {
            let size = program_size(&mut rng);
            let p = gen_program(&mut rng, size, &feat);
            admissible_inputs(&mut rng, &p, 20).map(|(inputs, _)| (p, inputs))
        });
        let Some((p, inputs)) = found else {
            report.rejected += 1;
            report.elapsed = start.elapsed();
            on_progress(case + 1, &report);
            continue;
        };
        let depth = cover(&mut report, &p, &inputs);
        if report.nao.len() <= depth {
            report.nao.resize(depth + 1, 0);
        }
        report.nao[depth] += 1;
        let subset = rng.chance(0.25);
        let mut outcome: Result<CaseInfo, Failing> = check_case(&p, &inputs, subset)
            .map_err(|d| (p.clone(), inputs.clone(), d, Kind::Case(subset)));
        if outcome.is_ok() && cfg.c_every > 0 && case % cfg.c_every == 0 {
            report.c_cases += 1;
            if let Err(d) = check_c(&p, &inputs) {
                outcome = Err((p.clone(), inputs.clone(), d, Kind::C));
            }
        }
        if let Ok(first) = outcome
            && rng.chance(0.3)
        {
            let size = 3 + rng.below(30);
            let q = gen_vector_program(&mut rng, size, &feat);
            if let Some((qin, _)) = admissible_inputs(&mut rng, &q, 20) {
                cover(&mut report, &q, &qin);
                report.dot_cases += 1;
                let dot_rng = rng.clone();
                outcome = check_dot(&q, &qin, &mut dot_rng.clone())
                    .map(|_| first)
                    .map_err(|d| (q, qin, d, Kind::Dot(dot_rng)));
            }
        }
        match outcome {
            Ok(info) => {
                report.passed += 1;
                report.direct_cases += u64::from(info.direct);
                report.fd_inconclusive += info.fd_inconclusive as u64;
            }
            Err((p, inputs, d, kind)) => {
                let original = p.body.size();
                let (p, inputs, d) = match kind {
                    Kind::Case(subset) => crate::shrink::shrink(p, inputs, d, subset),
                    Kind::C => crate::shrink::shrink_with(p, inputs, d, |p, i| check_c(p, i).err()),
                    Kind::Dot(r) => crate::shrink::shrink_with(p, inputs, d, |p, i| {
                        check_dot(p, i, &mut r.clone()).err()
                    }),
                };
                report.failures.push(Failure {
                    case,
                    sizes: (original, p.body.size()),
                    fixture: fixture_text(&p, &inputs, &d, seed, case),
                    disagreement: d,
                });
                if !cfg.keep_going {
                    report.elapsed = start.elapsed();
                    on_progress(case + 1, &report);
                    break;
                }
            }
        }
        report.elapsed = start.elapsed();
        on_progress(case + 1, &report);
    }
    report.elapsed = start.elapsed();
    report
}

/// Which test a failure came from, to shrink against the same one.
enum Kind {
    /// [`check_case`], with or without the `wrt` subset.
    Case(bool),
    /// [`check_c`].
    C,
    /// [`check_dot`], with the generator of its random vectors.
    Dot(Rng),
}

/// A failing program, its inputs, what failed and in which test.
type Failing = (Program, Vec<GVal>, Disagreement, Kind);

/// A program file for a failing case: `-- at` lines, the Source value and
/// the best available gradient as `-- grad` lines, then the definition in
/// the printer's layout (as every fixture is written).
pub fn fixture_text(
    p: &Program,
    inputs: &[GVal],
    d: &Disagreement,
    seed: u64,
    case: u64,
) -> String {
    let mut out = format!(
        "-- Found by `cargo xtask fuzz-diff --seed {seed}` (case {case}), shrunk:\n-- {}: {}\n",
        d.check, d.detail
    );
    for ((name, _), v) in p.params.iter().zip(inputs) {
        out.push_str(&format!("-- at {name} = {}\n", v.to_value()));
    }
    if let Some(v) = result_at(p, inputs) {
        out.push_str(&format!("-- value = {}\n", v.to_value()));
    }
    if let Some(grads) = &d.expected {
        for ((name, _), g) in p.params.iter().zip(grads) {
            out.push_str(&format!("-- grad {name} = {g}\n"));
        }
    }
    out.push_str(&p.printed());
    out
}
