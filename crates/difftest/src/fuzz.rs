//! The differential test of one generated case, the fuzzing loop over many
//! cases ([`fuzz`]), and the shrinker that turns a failing case into a small
//! program file ready to become a fixture.
//!
//! Per case: the program text compiles; the reference evaluator agrees
//! with the generator's evaluator; every stage boundary (Source UNF raised
//! back, the UNF gradient program, the direct gradient program, their RON
//! round trips) gives the Source program's value; the direct and UNF
//! gradients agree (Prop. 6.14); the direct gradient agrees with finite
//! differences; the optimized gradient programs (direct and UNF) agree
//! with the unoptimized ones; a gradient with respect to a subset of the
//! parameters is the matching part of the whole gradient.

use crate::ast::{GExpr, GVal, Program};
use crate::generate::{Features, admissible_inputs, gen_program, gen_vector_program, value_at};
use crate::paths::optimized;
use crate::paths::{
    ad_agree, direct_program, fd_agree, finite_differences, flat, forward_program, inconclusive,
    run_gradient, source_value, unf_program,
};
use crate::rng::Rng;
use semantics::Value;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// A check that failed on a case.
#[derive(Debug, Clone, PartialEq)]
pub struct Disagreement {
    /// Which comparison.
    pub check: String,
    /// What differed.
    pub detail: String,
    /// The best available gradient (for the fixture's `-- grad` lines).
    pub expected: Option<Vec<Value>>,
}

impl Disagreement {
    /// A disagreement found by `check`, with no expected gradient.
    pub fn new(check: &str, detail: impl Into<String>) -> Disagreement {
        Disagreement {
            check: check.to_string(),
            detail: detail.into(),
            expected: None,
        }
    }
}

fn fail(check: &str, detail: impl Into<String>) -> Disagreement {
    Disagreement::new(check, detail)
}

/// What one passing case exercised.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CaseInfo {
    /// Whether the UNF path took the program (it refused open `reduce`
    /// before Section 7.1 landed there; a refusal of it is still allowed).
    pub unf: bool,
    /// Gradient components too ill-conditioned for finite differences at
    /// the point (compared between the AD paths only).
    pub fd_inconclusive: usize,
}

/// Runs every check on `p` at `inputs`; `subset` also checks a gradient
/// with respect to a subset of the parameters (every other one).
pub fn check_case(p: &Program, inputs: &[GVal], subset: bool) -> Result<CaseInfo, Disagreement> {
    let m = p.compile().map_err(|e| {
        fail(
            "front end",
            format!("a generated program does not compile: {e}"),
        )
    })?;
    let def = m
        .defs
        .last()
        .ok_or_else(|| fail("front end", "no definition"))?
        .clone();
    let named = p.named_inputs(inputs);
    let v = source_value(&m, &def, &named).map_err(|e| fail("source evaluation", e))?;
    let mine = value_at(p, inputs).ok_or_else(|| fail("generator", "inputs not admissible"))?;
    close_value("reference evaluator vs generator's evaluator", v, mine)?;
    let all = reverse::Config::default();
    let direct = direct_program(&m, &def, &all).map_err(|e| fail("direct", e))?;
    roundtrip(&direct).map_err(|e| fail("direct RON", e))?;
    let gd = run_gradient(&direct, &named).map_err(|e| fail("direct evaluation", e))?;
    close_value("direct value vs source", gd.value, v)?;
    let wrt: Vec<usize> = (1..=def.params.len()).collect();
    let fd =
        finite_differences(&m, &def, &named, &wrt).map_err(|e| fail("finite differences", e))?;
    let mut info = CaseInfo {
        fd_inconclusive: inconclusive(&fd),
        ..CaseInfo::default()
    };
    let unf = match unf::lower(&m, &def) {
        Err(unf::Error::Unsupported { .. }) if has_open_reduce(&p.body) => None,
        Err(e) => return Err(fail("unf lower", e.to_string())),
        Ok(s) => {
            let raised = unf::raise(&s).map_err(|e| fail("source-unf raise", e.to_string()))?;
            let back = semantics::eval_entry(&raised, None, &named)
                .map_err(|e| fail("source-unf evaluation", e.to_string()))?;
            close_value(
                "source-unf boundary vs source",
                back.as_real().unwrap_or(f64::NAN),
                v,
            )?;
            let text = unf::to_ron(&s);
            let again = unf::from_ron(&text, unf::Kind::Source)
                .map_err(|e| fail("source-unf RON", e.to_string()))?;
            if again != s {
                return Err(fail("source-unf RON", "the round trip changed the module"));
            }
            let g = unf_program(&m, &def, &all).map_err(|e| fail("unf", e))?;
            let gu = run_gradient(&g, &named).map_err(|e| fail("unf evaluation", e))?;
            close_value("unf value vs source", gu.value, v)?;
            info.unf = true;
            Some(gu)
        }
    };
    if let Err(e) = fd_agree(&gd.grads, &fd) {
        let mut d = fail("direct vs finite differences", e);
        if let Some(gu) = &unf
            && fd_agree(&gu.grads, &fd).is_ok()
        {
            d.expected = Some(gu.grads.clone());
        } else {
            d.expected = Some(fd.grads.clone());
        }
        return Err(d);
    }
    if let Some(gu) = &unf
        && let Err(e) = ad_agree(&gd.grads, &gu.grads)
    {
        let mut d = fail("direct vs unf (Prop. 6.14)", e);
        d.expected = Some(gd.grads.clone());
        return Err(d);
    }
    let opt = optimized(&direct).map_err(|e| fail("optimize (direct)", e))?;
    let go = run_gradient(&opt, &named).map_err(|e| fail("optimized direct evaluation", e))?;
    close_value("optimized direct value vs source", go.value, v)?;
    ad_agree(&go.grads, &gd.grads).map_err(|e| fail("optimized vs unoptimized (direct)", e))?;
    if let Some(gu) = &unf {
        let g = unf_program(&m, &def, &all).map_err(|e| fail("unf", e))?;
        let opt = optimized(&g).map_err(|e| fail("optimize (unf)", e))?;
        let go = run_gradient(&opt, &named).map_err(|e| fail("optimized unf evaluation", e))?;
        ad_agree(&go.grads, &gu.grads).map_err(|e| fail("optimized vs unoptimized (unf)", e))?;
    }
    let fwd = forward_program(&m, &def, None).map_err(|e| fail("forward", e))?;
    let gf = run_gradient(&fwd, &named).map_err(|e| fail("forward evaluation", e))?;
    close_value("forward value vs source", gf.value, v)?;
    if let Err(e) = ad_agree(&gd.grads, &gf.grads) {
        let mut d = fail("reverse (direct) vs forward", e);
        d.expected = Some(fd.grads.clone());
        return Err(d);
    }
    if subset && def.params.len() >= 2 {
        let names: Vec<String> = def
            .params
            .iter()
            .step_by(2)
            .map(|p| p.name.to_string())
            .collect();
        let cfg = reverse::Config {
            wrt: Some(names.clone()),
        };
        let want: Vec<Value> = gd.grads.iter().step_by(2).cloned().collect();
        let part = direct_program(&m, &def, &cfg).map_err(|e| fail("direct wrt", e))?;
        let got = run_gradient(&part, &named).map_err(|e| fail("direct wrt evaluation", e))?;
        ad_agree(&got.grads, &want).map_err(|e| fail("direct wrt subset vs whole", e))?;
        if unf.is_some() {
            let part = unf_program(&m, &def, &cfg).map_err(|e| fail("unf wrt", e))?;
            let got = run_gradient(&part, &named).map_err(|e| fail("unf wrt evaluation", e))?;
            ad_agree(&got.grads, &want).map_err(|e| fail("unf wrt subset vs direct", e))?;
        }
    }
    Ok(info)
}

/// The dot-product identity `<ybar, J v> = <J^T ybar, v>` on a program
/// `q` returning an array: `J v` from forward mode's jvp, `J^T ybar` from
/// reverse mode (direct, and UNF when it takes the program) applied to
/// `<ybar, q(x)>`, for random tangents `v` and cotangents `ybar`.
pub fn check_dot(q: &Program, inputs: &[GVal], rng: &mut Rng) -> Result<CaseInfo, Disagreement> {
    let m = q.compile().map_err(|e| {
        fail(
            "front end",
            format!("a generated program does not compile: {e}"),
        )
    })?;
    let def = m
        .defs
        .last()
        .ok_or_else(|| fail("front end", "no definition"))?
        .clone();
    let named = q.named_inputs(inputs);
    let args: Vec<Value> = named.iter().map(|(_, v)| v.clone()).collect();
    let y = semantics::eval_def(&m, &def, &args)
        .map_err(|e| fail("source evaluation", e.to_string()))?;
    let jm = forward::jvp(&m, &def).map_err(|e| fail("forward jvp", e.to_string()))?;
    syntax::verify(&jm)
        .map_err(|es| fail("forward jvp", format!("output does not verify: {}", es[0])))?;
    let tangents: Vec<Value> = args.iter().map(|a| random_like(a, rng)).collect();
    let mut jargs = args.clone();
    jargs.extend(tangents.iter().cloned());
    let jdef = jm
        .defs
        .last()
        .ok_or_else(|| fail("forward jvp", "no definition"))?;
    let out = semantics::eval_def(&jm, jdef, &jargs)
        .map_err(|e| fail("forward jvp evaluation", e.to_string()))?;
    let parts = out
        .as_tuple()
        .ok_or_else(|| fail("forward jvp", "not a pair"))?;
    if !parts[0].approx_eq(&y, 1e-9, 1e-12) {
        return Err(fail("jvp value vs source", format!("{} vs {y}", parts[0])));
    }
    let jv = flat(&parts[1..2]);
    let ybar_val = random_like(&y, rng);
    let ybar = flat(std::slice::from_ref(&ybar_val));
    // <ybar, q(x)> as a program of the same parameters and ybar.
    let (s, t, u, w, yb) = ("s0", "t0", "u0", "w0", "ybar0");
    let var = |n: &str| Box::new(GExpr::Var(n.to_string()));
    let mut wrapped = q.clone();
    wrapped
        .params
        .push((yb.to_string(), crate::ast::GTy::Array(0)));
    wrapped.ret = crate::ast::GTy::Real;
    wrapped.body = GExpr::Reduce(
        s.to_string(),
        t.to_string(),
        Box::new(GExpr::Op2(syntax::Prim::Add, var(s), var(t))),
        Box::new(GExpr::Const(0.0)),
        Box::new(GExpr::Map2(
            u.to_string(),
            w.to_string(),
            Box::new(GExpr::Op2(syntax::Prim::Mul, var(u), var(w))),
            var(yb),
            Box::new(q.body.clone()),
        )),
    );
    let wm = wrapped.compile().map_err(|e| {
        fail(
            "front end",
            format!("the wrapped program does not compile: {e}"),
        )
    })?;
    let wdef = wm
        .defs
        .last()
        .ok_or_else(|| fail("front end", "no definition"))?
        .clone();
    let cfg = reverse::Config {
        wrt: Some(q.params.iter().map(|(n, _)| n.clone()).collect()),
    };
    let mut wnamed = named.clone();
    wnamed.push((yb.to_string(), ybar_val));
    let lhs: f64 = ybar.iter().zip(&jv).map(|(a, b)| a * b).sum();
    let lhs_scale: f64 = ybar.iter().zip(&jv).map(|(a, b)| (a * b).abs()).sum();
    let v = flat(&tangents);
    let mut paths = vec![("direct", direct_program(&wm, &wdef, &cfg))];
    let mut info = CaseInfo::default();
    if !has_open_reduce(&q.body) {
        paths.push(("unf", unf_program(&wm, &wdef, &cfg)));
        info.unf = true;
    }
    for (name, prog) in paths {
        let g = prog.map_err(|e| fail(name, e))?;
        let gr = run_gradient(&g, &wnamed).map_err(|e| fail(name, e))?;
        let jt = flat(&gr.grads);
        let rhs: f64 = jt.iter().zip(&v).map(|(a, b)| a * b).sum();
        let rhs_scale: f64 = jt.iter().zip(&v).map(|(a, b)| (a * b).abs()).sum();
        let tol = 1e-8 * lhs_scale.max(rhs_scale) + 1e-12;
        if (lhs - rhs).abs() > tol || lhs.is_nan() != rhs.is_nan() {
            return Err(fail(
                "dot product <ybar, J v> = <J^T ybar, v>",
                format!("forward jvp gives {lhs}, {name} vjp gives {rhs}"),
            ));
        }
    }
    Ok(info)
}

/// A value shaped like `v` with reals uniform in [-1, 1].
fn random_like(v: &Value, rng: &mut Rng) -> Value {
    let xs: Vec<f64> = flat(std::slice::from_ref(v))
        .iter()
        .map(|_| rng.range(-1.0, 1.0))
        .collect();
    crate::paths::unflatten(v, &xs, &mut 0)
}

fn close_value(check: &str, a: f64, b: f64) -> Result<(), Disagreement> {
    if (a - b).abs() <= 1e-9 * a.abs().max(b.abs()) + 1e-12 {
        Ok(())
    } else {
        Err(fail(check, format!("{a} vs {b}")))
    }
}

fn roundtrip(g: &syntax::Module) -> Result<(), String> {
    let text = syntax::to_ron(syntax::TARGET_IR, syntax::FORMAT_VERSION, g);
    let back: syntax::Module = syntax::from_ron(syntax::TARGET_IR, syntax::FORMAT_VERSION, &text)
        .map_err(|e| e.to_string())?;
    if syntax::to_ron(syntax::TARGET_IR, syntax::FORMAT_VERSION, &back) != text {
        return Err("the round trip changed the module".to_string());
    }
    Ok(())
}

fn has_open_reduce(e: &GExpr) -> bool {
    match e {
        GExpr::Reduce(x, y, body, init, a) => {
            !closed(body, &[x, y]) || !closed(init, &[]) || has_open_reduce(a)
        }
        _ => e.children().iter().any(|c| has_open_reduce(c)),
    }
}

/// Whether `e` reads no variable but `allowed` and those it binds.
fn closed(e: &GExpr, allowed: &[&String]) -> bool {
    let mut bound: Vec<String> = allowed.iter().map(|s| s.to_string()).collect();
    collect_binders(e, &mut bound);
    uses(e).iter().all(|u| bound.contains(u))
}

fn collect_binders(e: &GExpr, out: &mut Vec<String>) {
    match e {
        GExpr::Let(x, ..) | GExpr::Map(x, ..) => out.push(x.clone()),
        GExpr::LetTuple(xs, ..) => out.extend(xs.iter().cloned()),
        GExpr::Map2(x, y, ..) | GExpr::Reduce(x, y, ..) => out.extend([x.clone(), y.clone()]),
        _ => {}
    }
    e.children().iter().for_each(|c| collect_binders(c, out));
}

fn uses(e: &GExpr) -> Vec<String> {
    match e {
        GExpr::Var(n) => vec![n.clone()],
        _ => e.children().iter().flat_map(|c| uses(c)).collect(),
    }
}

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

/// What a fuzzing run did.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FuzzReport {
    /// The seed of the run.
    pub seed: u64,
    /// Cases generated.
    pub cases: u64,
    /// Cases that passed every check.
    pub passed: u64,
    /// Of those, the ones the UNF path also took.
    pub unf_cases: u64,
    /// Cases that also checked the dot-product identity on a program
    /// returning an array.
    pub dot_cases: u64,
    /// Cases for which no admissible inputs were found (not run).
    pub rejected: u64,
    /// Gradient components too ill-conditioned for finite differences
    /// (compared between the AD paths only).
    pub fd_inconclusive: u64,
    /// How often each construct occurs in the programs that were run.
    pub coverage: BTreeMap<String, u64>,
    /// Programs by their depth of nested array operations (NAO), index = depth.
    pub nao: Vec<u64>,
    /// The first failure, shrunk; the run stops there.
    pub failure: Option<Failure>,
    /// Wall-clock time.
    pub elapsed: Duration,
}

impl FuzzReport {
    /// The deepest NAO reached.
    pub fn max_nao(&self) -> usize {
        self.nao.iter().rposition(|&c| c > 0).unwrap_or(0)
    }

    /// The report as the `fuzz-diff` command prints it.
    pub fn render(&self) -> String {
        let mut out = format!(
            "fuzz-diff: seed {}, {} cases in {:.1} s: {} passed ({} also through UNF, {} with a dot-product test), {} without admissible inputs\n",
            self.seed,
            self.cases,
            self.elapsed.as_secs_f64(),
            self.passed,
            self.unf_cases,
            self.dot_cases,
            self.rejected
        );
        out.push_str(&format!(
            "{} gradient components too ill-conditioned for finite differences (compared between AD paths only)\n",
            self.fd_inconclusive
        ));
        out.push_str("coverage (occurrences in the programs run):\n");
        for (name, count) in &self.coverage {
            out.push_str(&format!("  {name:<10} {count}\n"));
        }
        out.push_str("nested array operations (programs by NAO):\n");
        for (depth, count) in self.nao.iter().enumerate() {
            out.push_str(&format!("  NAO {depth}     {count}\n"));
        }
        match &self.failure {
            None => out.push_str("no disagreement\n"),
            Some(f) => {
                out.push_str(&format!(
                    "DISAGREEMENT at case {}: {}: {}\nshrunk from {} to {} nodes; as a fixture:\n\n{}",
                    f.case,
                    f.disagreement.check,
                    f.disagreement.detail,
                    f.sizes.0,
                    f.sizes.1,
                    f.fixture
                ));
            }
        }
        out
    }
}

/// The features of case `case`: one case in four may use open `reduce`.
fn features(rng: &mut Rng) -> Features {
    Features {
        max_nao: 3,
        open_reduce: rng.chance(0.25),
    }
}

/// Runs `cases` generated cases from `seed`, stopping at the first
/// disagreement (shrunk). `on_progress` is called after each case with the
/// number done and the report so far.
pub fn fuzz(cases: u64, seed: u64, mut on_progress: impl FnMut(u64, &FuzzReport)) -> FuzzReport {
    let start = Instant::now();
    let mut report = FuzzReport {
        seed,
        nao: vec![0; 4],
        ..FuzzReport::default()
    };
    for case in 0..cases {
        report.cases += 1;
        let mut rng = Rng::for_case(seed, case);
        let feat = features(&mut rng);
        // A program with admissible inputs: up to five programs, twenty
        // draws of inputs each.
        let found = (0..5).find_map(|_| {
            let size = 3 + rng.below(45);
            let p = gen_program(&mut rng, size, &feat);
            admissible_inputs(&mut rng, &p, 20).map(|(inputs, _)| (p, inputs))
        });
        let Some((p, inputs)) = found else {
            report.rejected += 1;
            on_progress(case + 1, &report);
            continue;
        };
        let depth = p.body.count(&mut report.coverage) as usize;
        if report.nao.len() <= depth {
            report.nao.resize(depth + 1, 0);
        }
        report.nao[depth] += 1;
        let subset = rng.chance(0.25);
        let mut outcome =
            check_case(&p, &inputs, subset).map(|info| (p.clone(), inputs.clone(), info));
        if let Ok((_, _, first)) = outcome.clone()
            && rng.chance(0.3)
        {
            let size = 3 + rng.below(30);
            let q = gen_vector_program(&mut rng, size, &feat);
            if let Some((qin, _)) = admissible_inputs(&mut rng, &q, 20) {
                q.body.count(&mut report.coverage);
                report.dot_cases += 1;
                let mut dot_rng = rng.clone();
                outcome = check_dot(&q, &qin, &mut dot_rng).map(|_| {
                    let info = CaseInfo {
                        unf: first.unf,
                        fd_inconclusive: first.fd_inconclusive,
                    };
                    (q, qin, info)
                });
            }
        }
        match outcome {
            Ok((_, _, info)) => {
                report.passed += 1;
                report.unf_cases += u64::from(info.unf);
                report.fd_inconclusive += info.fd_inconclusive as u64;
            }
            Err(d) => {
                let original = p.body.size();
                let (p, inputs, d) = crate::shrink::shrink(p, inputs, d, subset);
                report.failure = Some(Failure {
                    case,
                    sizes: (original, p.body.size()),
                    fixture: fixture_text(&p, &inputs, &d, seed, case),
                    disagreement: d,
                });
                on_progress(case + 1, &report);
                break;
            }
        }
        on_progress(case + 1, &report);
    }
    report.elapsed = start.elapsed();
    report
}

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
    if let Some(v) = value_at(p, inputs) {
        out.push_str(&format!("-- value = {}\n", semantics::format_real(v)));
    }
    if let Some(grads) = &d.expected {
        for ((name, _), g) in p.params.iter().zip(grads) {
            out.push_str(&format!("-- grad {name} = {g}\n"));
        }
    }
    out.push_str(&p.printed());
    out
}
