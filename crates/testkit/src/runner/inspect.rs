//! The `inspect` crate on a fixture: the stored residuals, activity and
//! NaN hazards (snapshots `60.residuals.txt`, `61.activity.txt`,
//! `62.nan-hazards.txt`), each held against what the gradient computes,
//! and a picture of every boundary.

use super::Env;
use super::boundaries::args;
use crate::fixture::Fixture;
use crate::stages::{self, differentiable};
use crate::values::leaf_reals;
use inspect::activity::{self, Status};
use semantics::Value;
use std::collections::BTreeSet;

/// The program the reports are about (as the commands load it).
fn program(f: &Fixture) -> syntax::Module {
    differentiable(&f.entry_module())
}

/// The `-- at` inputs in parameter order; `None` without any.
fn at(f: &Fixture, m: &syntax::Module) -> Option<Vec<Value>> {
    let def = m.defs.last().expect("a definition");
    if f.expectations().at.is_empty() {
        return None;
    }
    Some(args(def, &f.inputs(def)))
}

fn residuals_of(
    f: &Fixture,
) -> Option<(inspect::residuals::Report, syntax::Module, syntax::Module)> {
    let b = stages::boundaries(f)?;
    let source = program(f);
    let def = source.defs.last().expect("a definition");
    let gdef = b.opt.defs.last().expect("the gradient definition");
    let a = at(f, &source);
    let r = inspect::residuals::residuals(&b.opt, gdef, def.params.len(), a.as_deref())
        .unwrap_or_else(|e| panic!("{}: {e}", f.name));
    Some((r, source, b.opt))
}

/// What `cargo xtask residuals` prints, where there is a gradient program.
pub fn residuals_report(f: &Fixture) -> Option<String> {
    residuals_of(f).map(|(r, _, _)| r.to_string())
}

/// Each residual's formula, evaluated at the sizes of the inputs, is the
/// number of scalars counted on the value the program computes; a
/// residual is a parameter exactly when it has no forward binding.
pub fn residuals(f: &Fixture, _: &Env) {
    let Some((r, source, g)) = residuals_of(f) else {
        f.no_snapshot("60.residuals.txt", "there is no gradient program");
        return;
    };
    let name = &f.name;
    let gdef = g.defs.last().expect("the gradient definition");
    if let Some(a) = at(f, &source) {
        let sizes = semantics::cost::sizes_at(gdef, &a).expect("the inputs fit");
        for res in &r.residuals {
            let counted = res.at_inputs.expect("measured at the inputs");
            if let Some(p) = &res.formula {
                assert_eq!(
                    p.eval(&sizes),
                    Some(counted as i64),
                    "{name}: {} : {} is {p}",
                    res.name,
                    syntax::print::ty(&res.ty)
                );
            }
        }
    }
    for res in &r.residuals {
        let is_param = gdef.params.iter().any(|p| p.name == res.name);
        assert_eq!(is_param, res.value.is_none(), "{name}: {}", res.name);
    }
    f.snapshot("60.residuals.txt", &r.to_string());
}

fn activity_of(f: &Fixture) -> (activity::Report, syntax::Module, Option<Vec<Value>>) {
    let m = program(f);
    let def = m.defs.last().expect("a definition").clone();
    let a = at(f, &m);
    let report = match &a {
        Some(a) => activity::analyze_at(&m, &def, a).expect("the fixture runs"),
        None => activity::analyze(&m, &def),
    };
    (report, m, a)
}

/// What `cargo xtask activity` prints.
pub fn activity_report(f: &Fixture) -> String {
    activity_of(f).0.to_string()
}

/// A parameter reported structurally zero (for every input, or at the
/// inputs) has a gradient of exact zeros, computed by reverse mode.
pub fn activity(f: &Fixture, _: &Env) {
    let (report, m, a) = activity_of(f);
    let def = m.defs.last().expect("a definition");
    if let Some(a) = a.filter(|_| !def.params.is_empty()) {
        let g = reverse::gradient(&m, def, &reverse::Config { wrt: None }).expect("reverse mode");
        let g = optimize::optimize(&g, &optimize::Config::default()).expect("the optimizer");
        let gdef = g.defs.last().expect("the gradient definition");
        let out = semantics::eval_def(&g, gdef, &a).expect("the gradient runs");
        let grads = crate::values::items(&out);
        let zero = |s: &Status| !matches!(s, Status::Active);
        for e in &report.entries {
            let g = leaf_reals(&grads[e.origin.param + 1], &e.origin.path);
            let at = e.at_inputs.as_ref().unwrap_or(&e.status);
            assert!(
                !((zero(&e.status) || zero(at)) && g.iter().any(|x| *x != 0.0)),
                "{}: {}: reported {:?} / {at:?} but its gradient is {g:?}",
                f.name,
                e.name,
                e.status
            );
        }
    }
    f.snapshot("61.activity.txt", &report.to_string());
}

/// What `cargo xtask nan-hazards` prints.
pub fn hazards_report(f: &Fixture) -> String {
    let m = program(f);
    let def = m.defs.last().expect("a definition");
    inspect::hazards::lint(&m, def).to_string()
}

/// The lint's report (its findings are held against reverse mode by the
/// `inspect` crate's own tests).
pub fn hazards(f: &Fixture, _: &Env) {
    f.snapshot("62.nan-hazards.txt", &hazards_report(f));
}

/// The problems of a DOT text: an edge naming an undeclared vertex,
/// unbalanced braces.
fn problems(dot: &str) -> Vec<String> {
    let mut declared = BTreeSet::new();
    let mut used = BTreeSet::new();
    let mut depth = 0i64;
    for line in dot.lines() {
        let l = line.trim();
        let (first, rest) = l.split_once(' ').unwrap_or((l, ""));
        let vertex = first.len() > 1
            && first.starts_with('n')
            && first[1..].bytes().all(|b| b.is_ascii_digit());
        if vertex && let Some(rest) = rest.strip_prefix("-> ") {
            used.insert(first.to_string());
            let to = rest.split([' ', ';']).next().unwrap_or("");
            used.insert(to.to_string());
        } else if vertex && rest.starts_with("[label=") {
            declared.insert(first.to_string());
        }
        if !vertex {
            depth += l.matches('{').count() as i64 - l.matches('}').count() as i64;
        }
    }
    let mut out: Vec<String> = used
        .difference(&declared)
        .map(|v| format!("edge to undeclared vertex {v}"))
        .collect();
    if depth != 0 {
        out.push(format!("braces unbalanced by {depth}"));
    }
    out
}

/// The fixtures whose pictures Graphviz renders (a tenth of a second a
/// picture): a sample with every kind of construct.
const RENDERED: [&str; 6] = [
    "prod",
    "untaken_branch",
    "clip",
    "horner",
    "fuzz_fd_kink",
    "pair_chain",
];

fn render(what: &str, dot: &str) {
    use std::io::Write as _;
    let Ok(mut child) = std::process::Command::new("dot")
        .arg("-Tsvg")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
    else {
        return; // Graphviz is not installed: the text checks stand alone.
    };
    child
        .stdin
        .take()
        .expect("a pipe")
        .write_all(dot.as_bytes())
        .expect("dot reads");
    let out = child.wait_with_output().expect("dot ends");
    assert!(
        out.status.success(),
        "{what}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The picture of the Source program and of every boundary names only
/// vertices it declares; a sample renders with Graphviz when installed.
pub fn dot(f: &Fixture, _: &Env) {
    let mut pictures = vec![(
        "10.source",
        inspect::dot::term(&f.compile_calls(), syntax::SOURCE_IR),
    )];
    if let Some(b) = stages::boundaries(f) {
        for (what, m) in [
            ("20.source-unf", &b.source_unf),
            ("30.target-unf", &b.target_unf),
        ] {
            let checked = unf::check(m).expect("verifies");
            pictures.push((what, inspect::dot::string_diagram(m, &checked)));
        }
        pictures.push((
            "40.target",
            inspect::dot::term(&b.target, syntax::TARGET_IR),
        ));
        pictures.push(("50.opt", inspect::dot::term(&b.opt, syntax::TARGET_IR)));
    }
    for (what, dot) in pictures {
        let p = problems(&dot);
        assert!(p.is_empty(), "{} {what}: {p:?}", f.name);
        if RENDERED.contains(&f.name.as_str()) {
            render(&format!("{} {what}", f.name), &dot);
        }
    }
}
