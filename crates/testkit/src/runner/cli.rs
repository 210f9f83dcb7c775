//! The command line on a fixture, run as a user runs it from the
//! workspace root: `eval` prints the `-- value`, `grad --via ROUTE` (with
//! and without `--no-opt`) the `-- grad` lines, `--backend c` exactly what
//! the evaluator prints, and the inspection commands the reports of the
//! `inspect` crate. Printed values are read back against the entry's types
//! and compared with the language's tolerance (rel 1e-9, abs 1e-12).

use super::Env;
use crate::fixture::Fixture;
use crate::options::Route;
use semantics::Value;
use std::process::Command;

/// What a run printed and how it ended.
struct Run {
    stdout: String,
    stderr: String,
    code: Option<i32>,
}

fn xtask(env: &Env, args: &[&str]) -> Run {
    let out = Command::new(&env.xtask)
        .args(args)
        .current_dir(crate::workspace())
        .output()
        .expect("the xtask binary runs");
    Run {
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        code: out.status.code(),
    }
}

fn close(printed: &str, expected: &Value, ty: &syntax::Ty) -> Result<(), String> {
    let got = semantics::parse_value(printed, ty)
        .map_err(|e| format!("cannot read `{printed}` back: {e}"))?;
    if got.approx_eq(expected, semantics::REL_TOL, semantics::ABS_TOL) {
        Ok(())
    } else {
        Err(format!("printed {got}, expected {expected}"))
    }
}

pub fn eval(f: &Fixture, env: &Env) {
    let m = f.compile();
    let entry = m.defs.last().expect("a definition");
    let expected = f
        .expectations()
        .value(&m, entry)
        .unwrap_or_else(|| panic!("{}: no `-- value`", f.name))
        .expect("the -- value line reads");
    let run = xtask(env, &["eval", &f.file_name()]);
    assert_eq!(run.code, Some(0), "{}: {}", f.name, run.stderr);
    let ty = entry.ret.as_ref().expect("core form types the result");
    if let Err(e) = close(run.stdout.trim(), &expected, ty) {
        panic!("{}: {e}", f.name);
    }
}

/// `grad FILE --via ROUTE [extra]`: the value line, then one `grad p = ...`
/// line per parameter, each the stated one where there is one; a route
/// that refuses the program exits 1 saying why.
fn grad(f: &Fixture, env: &Env, route: Route, extra: &[&str]) {
    let name = &f.name;
    let file = f.file_name();
    let mut args = vec!["grad", file.as_str(), "--via", route.name()];
    args.extend_from_slice(extra);
    let run = xtask(env, &args);
    if let Some(because) = f.options.refusal(route) {
        assert_eq!(
            run.code,
            Some(1),
            "{name}: {args:?} should refuse: {}",
            run.stdout
        );
        assert!(run.stderr.contains(because), "{name}: {}", run.stderr);
        return;
    }
    assert_eq!(run.code, Some(0), "{name}: {args:?}: {}", run.stderr);
    let m = f.compile();
    let exp = f.expectations();
    let entry = m.defs.last().expect("a fixture has a definition");
    let mut lines = run.stdout.lines();
    let value_line = lines.next().unwrap_or_default();
    let v = value_line
        .strip_prefix("value = ")
        .unwrap_or_else(|| panic!("{name}: first line `{value_line}`"));
    if let Some(expected) = exp.value(&m, entry) {
        let ty = entry.ret.as_ref().expect("typed");
        if let Err(e) = close(v, &expected.expect("value reads"), ty) {
            panic!("{name}: value: {e}");
        }
    }
    for p in &entry.params {
        let line = lines.next().unwrap_or_default();
        let printed = line
            .strip_prefix(&format!("grad {} = ", p.name))
            .unwrap_or_else(|| panic!("{name}: expected `grad {} = ...`, got `{line}`", p.name));
        if let Some(expected) = exp.grad(entry, p.name.as_str()) {
            let ty = p.ty.as_ref().expect("typed");
            if let Err(e) = close(printed, &expected.expect("grad reads"), ty) {
                panic!("{name}: grad {}: {e}", p.name);
            }
        }
    }
    assert_eq!(lines.next(), None, "{name}: more lines than parameters");
}

pub fn grad_unf(f: &Fixture, env: &Env) {
    grad(f, env, Route::Unf, &[])
}
pub fn grad_direct(f: &Fixture, env: &Env) {
    grad(f, env, Route::Direct, &[])
}
pub fn grad_forward(f: &Fixture, env: &Env) {
    grad(f, env, Route::Forward, &[])
}
pub fn no_opt_unf(f: &Fixture, env: &Env) {
    grad(f, env, Route::Unf, &["--no-opt"])
}
pub fn no_opt_direct(f: &Fixture, env: &Env) {
    grad(f, env, Route::Direct, &["--no-opt"])
}
pub fn no_opt_forward(f: &Fixture, env: &Env) {
    grad(f, env, Route::Forward, &["--no-opt"])
}

/// `eval` and `grad` with `--backend c` print exactly what they print on
/// the evaluator.
pub fn c_prints_as_the_evaluator(f: &Fixture, env: &Env) {
    let file = f.file_name();
    let refused = f.options.refusal(Route::Unf).is_some();
    for command in ["eval", "grad"] {
        if command == "grad" && refused {
            continue;
        }
        let reference = xtask(env, &[command, &file]);
        assert_eq!(
            reference.code,
            Some(0),
            "{} {command}: {}",
            f.name,
            reference.stderr
        );
        let c = xtask(env, &[command, &file, "--backend", "c"]);
        assert!(
            c.code == Some(0) && c.stdout == reference.stdout,
            "{} {command}: evaluator printed\n{}C backend (exit {:?}) printed\n{}{}",
            f.name,
            reference.stdout,
            c.code,
            c.stdout,
            c.stderr
        );
    }
}

/// `residuals`, `activity` and `nan-hazards` print the reports the
/// `inspect` crate computes (the snapshots of [`super::inspect`]); `dot`
/// draws the program and every boundary file.
pub fn inspect(f: &Fixture, env: &Env) {
    let program = f.file_name();
    for (command, report) in [
        ("residuals", super::inspect::residuals_report(f)),
        ("activity", Some(super::inspect::activity_report(f))),
        ("nan-hazards", Some(super::inspect::hazards_report(f))),
    ] {
        let run = xtask(env, &[command, &program]);
        assert_eq!(run.code, Some(0), "{command} {}: {}", f.name, run.stderr);
        if let Some(report) = report {
            assert_eq!(run.stdout, report, "{command} {}", f.name);
        }
    }
    let dir = std::env::temp_dir().join(format!("adrev-fixture-{}-{}", f.name, std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let mut files = vec![program.clone()];
    if crate::stages::boundaries(f).is_some() {
        let dump = dir.to_string_lossy().into_owned();
        let run = xtask(env, &["pipeline", &program, "--dump", &dump]);
        assert_eq!(run.code, Some(0), "pipeline {}: {}", f.name, run.stderr);
        for file in &crate::stages::FILES[1..] {
            files.push(format!("{dump}/{file}"));
        }
    }
    for path in files {
        let run = xtask(env, &["dot", &path]);
        assert!(
            run.code == Some(0) && run.stdout.starts_with("digraph "),
            "dot {path}: exit {:?}: {}",
            run.code,
            run.stderr
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
