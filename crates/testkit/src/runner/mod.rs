//! The one data-driven fixture runner: a libtest-mimic harness with one
//! test per fixture and check, named `fixture::<name>::<check>` (so
//! `cargo nextest run -p xtask --test fixtures -E 'test(fixture::gmm::)'`
//! runs one fixture alone). What a fixture is checked for follows from its
//! program (derivative constructs, whether reverse mode takes it) and its
//! options file (`options.ron`; see [`crate::options`]); every stage is
//! recomputed from `program.ad`, so one run with `UPDATE_EXPECT=1`
//! (`cargo xtask bless`) rewrites every snapshot. docs/testing.md lists the
//! checks.

mod boundaries;
mod c;
mod cli;
mod front;
mod gradient;
mod inspect;
mod routes;

use crate::fixture::{self, Fixture};
use crate::options::{Backend, Route};
use libtest_mimic::{Arguments, Failed, Trial};
use std::path::PathBuf;
use std::sync::Arc;

/// What the checks need from the test binary that runs them.
#[derive(Debug, Clone)]
pub struct Env {
    /// The `xtask` executable (the command line's checks run it).
    pub xtask: PathBuf,
    /// A scratch directory for C builds.
    pub scratch: PathBuf,
}

/// A check of one fixture; it panics on a failure.
type Check = fn(&Fixture, &Env);

/// Runs the harness: lists or runs the tests the arguments select.
pub fn main(env: Env) -> ! {
    let args = Arguments::from_args();
    let env = Arc::new(env);
    let mut trials = vec![Trial::test("fixture::census", || {
        census().map_err(Failed::from)
    })];
    for name in fixture::names() {
        match Fixture::load(&name) {
            Ok(f) => trials.extend(trials_of(Arc::new(f), &env)),
            Err(e) => trials.push(Trial::test(
                format!("fixture::{name}::options"),
                move || Err(Failed::from(e.clone())),
            )),
        }
    }
    libtest_mimic::run(&args, trials).exit()
}

/// The checks that apply to a fixture, by name.
fn checks(f: &Fixture) -> Vec<(String, Check)> {
    let o = &f.options;
    let mut out: Vec<(String, Check)> = vec![
        ("parse".into(), front::parse),
        ("source".into(), front::source),
        ("eval".into(), front::eval),
        ("boundaries".into(), boundaries::boundaries),
        ("optimize".into(), boundaries::optimize),
        ("grad::unf".into(), gradient::unf),
        ("grad::direct".into(), gradient::direct),
        ("grad::forward".into(), gradient::forward),
        ("c::value".into(), c::value),
        ("c::grad".into(), c::grad),
        ("cli::eval".into(), cli::eval),
        ("cli::c".into(), cli::c_prints_as_the_evaluator),
        ("cli::inspect".into(), cli::inspect),
        ("inspect::residuals".into(), inspect::residuals),
        ("inspect::activity".into(), inspect::activity),
        ("inspect::hazards".into(), inspect::hazards),
        ("inspect::dot".into(), inspect::dot),
    ];
    if o.finite_differences {
        out.push(("grad::fd".into(), gradient::finite_differences));
    }
    if o.check_grad {
        out.push(("check_grad".into(), gradient::check_grad));
    }
    for route in Route::ALL {
        if !o.routes.contains(&route) && o.refusal(route).is_none() {
            continue;
        }
        let (via, no_opt): (Check, Check) = match route {
            Route::Unf => (cli::grad_unf, cli::no_opt_unf),
            Route::Direct => (cli::grad_direct, cli::no_opt_direct),
            Route::Forward => (cli::grad_forward, cli::no_opt_forward),
        };
        out.push((format!("cli::grad::{}", route.name()), via));
        if route != Route::Forward {
            // `--no-opt` of the reverse routes: their raw output.
            out.push((format!("cli::no_opt::{}", route.name()), no_opt));
        }
        for backend in Backend::ALL {
            if !o.backends.contains(&backend) {
                continue;
            }
            let check: Check = match (route, backend) {
                (Route::Unf, Backend::Eval) => routes::unf_eval,
                (Route::Unf, Backend::C) => routes::unf_c,
                (Route::Direct, Backend::Eval) => routes::direct_eval,
                (Route::Direct, Backend::C) => routes::direct_c,
                (Route::Forward, Backend::Eval) => routes::forward_eval,
                (Route::Forward, Backend::C) => routes::forward_c,
            };
            out.push((
                format!("route::{}::{}", route.name(), backend.name()),
                check,
            ));
        }
    }
    out
}

fn trials_of(f: Arc<Fixture>, env: &Arc<Env>) -> Vec<Trial> {
    checks(&f)
        .into_iter()
        .map(|(check_name, check)| {
            let (f, env) = (f.clone(), env.clone());
            Trial::test(format!("fixture::{}::{check_name}", f.name), move || {
                check(&f, &env);
                Ok(())
            })
        })
        .collect()
}

/// The fixtures as a whole: enough of them, each folder either a fixture
/// or a collection the other tests read (`err/`, `nonscalar/`), every
/// options file next to a program.
fn census() -> Result<(), String> {
    let names = fixture::names();
    if names.len() < 30 {
        return Err(format!("only {} fixtures", names.len()));
    }
    for entry in std::fs::read_dir(fixture::root()).map_err(|e| e.to_string())? {
        let dir = entry.map_err(|e| e.to_string())?.path();
        if !dir.is_dir() || dir.join("program.ad").is_file() {
            continue;
        }
        let name = dir.file_name().map(|n| n.to_string_lossy().into_owned());
        if !matches!(name.as_deref(), Some("err" | "nonscalar")) {
            return Err(format!("{}: a folder without program.ad", dir.display()));
        }
    }
    let with_grads = Fixture::all()
        .iter()
        .filter(|f| !f.expectations().grads.is_empty())
        .count();
    if with_grads < 30 {
        return Err(format!("only {with_grads} fixtures state gradients"));
    }
    Ok(())
}
