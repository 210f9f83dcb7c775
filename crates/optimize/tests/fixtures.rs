//! The optimize boundary of every fixture: `40.target.ron` (the gradient
//! program of reverse mode) → optimize → `50.opt.ron`, read back through
//! its envelope and verified as a user running the stage would, compared
//! with its snapshot, and round-tripped byte for byte. The optimized
//! gradient computes the value and the gradients the program states in
//! its `-- value` and `-- grad` comments, exactly as the unoptimized one
//! does; Lemma 5.3 holds on it; and its cost report (Fig. 11 costs of the
//! source and of the gradient, statically and counted, NAO, the ratio and
//! Theorem 5.4's bound, which must hold) is the snapshot `50.cost.txt`.
//! Theorem 5.4 must also hold on G, the gradient alone
//! (`optimize::gradient_only`), on every fixture.
//! Bless with `cargo xtask bless`.

use std::path::{Path, PathBuf};

use semantics::{Expectations, Value, cost};

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The fixtures reverse mode produces a gradient for.
fn fixtures() -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(workspace().join("fixtures"))
        .expect("the fixtures directory exists")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join("40.target.ron").is_file())
        .collect();
    out.sort();
    out
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The Source program of a fixture, specialised to first order when it is
/// higher-order only on the surface (as reverse mode sees it).
fn source(dir: &Path) -> syntax::Module {
    let m: syntax::Module = syntax::from_ron(
        syntax::SOURCE_IR,
        syntax::FORMAT_VERSION,
        &read(&dir.join("10.source.ron")),
    )
    .expect("the Source snapshot reads");
    let entry = m.defs.last().expect("a fixture has a definition").clone();
    if syntax::check_first_order(&m, &entry).is_ok() {
        return m;
    }
    syntax::specialize(&m).expect("reverse mode specialised this fixture")
}

/// The inputs of the entry in parameter order.
fn args(def: &syntax::Def, inputs: &[(String, Value)]) -> Vec<Value> {
    def.params
        .iter()
        .map(|p| {
            inputs
                .iter()
                .find(|(n, _)| n == p.name.as_str())
                .map(|(_, v)| v.clone())
                .unwrap_or_else(|| panic!("no `-- at` input for `{}`", p.name))
        })
        .collect()
}

fn check(dir: &Path) {
    let name = dir.display();
    let raw: syntax::Module = syntax::from_ron(
        syntax::TARGET_IR,
        syntax::FORMAT_VERSION,
        &read(&dir.join("40.target.ron")),
    )
    .expect("the Target snapshot reads");
    syntax::verify(&raw).unwrap_or_else(|e| panic!("{name}: 40.target.ron fails: {e:?}"));

    let out = optimize::optimize(&raw, &optimize::Config::default())
        .unwrap_or_else(|e| panic!("{name}: optimize fails: {e}"));
    let text = syntax::to_ron(syntax::TARGET_IR, syntax::FORMAT_VERSION, &out);
    expect_test::expect_file![dir.join("50.opt.ron")].assert_eq(&text);
    let back: syntax::Module = syntax::from_ron(
        syntax::TARGET_IR,
        syntax::FORMAT_VERSION,
        &read(&dir.join("50.opt.ron")),
    )
    .expect("the optimized snapshot reads");
    syntax::verify(&back).unwrap_or_else(|e| panic!("{name}: 50.opt.ron fails: {e:?}"));
    assert_eq!(
        syntax::to_ron(syntax::TARGET_IR, syntax::FORMAT_VERSION, &back),
        text,
        "{name}: 50.opt.ron does not round-trip"
    );

    // Values: the program's own statements, and the raw gradient.
    let src = source(dir);
    let src_def = src.defs.last().expect("a definition");
    let program = read(&dir.join("program.ad"));
    let exp = Expectations::parse(&program);
    let inputs = exp.inputs(src_def).expect("the `-- at` inputs read");
    let before = semantics::eval_entry(&raw, None, &inputs).expect("the raw gradient runs");
    let after = semantics::eval_entry(&back, None, &inputs).expect("the optimized gradient runs");
    assert!(
        after.approx_eq_default(&before),
        "{name}: optimized {after}, raw {before}"
    );
    let parts = after
        .as_tuple()
        .expect("a gradient program returns a tuple");
    if let Some(v) = exp.value(&src, src_def) {
        let v = v.expect("the `-- value` reads");
        assert!(
            parts[0].approx_eq_default(&v),
            "{name}: value {}, stated {v}",
            parts[0]
        );
    }
    for (p, _) in &exp.grads {
        let stated = exp
            .grad(src_def, p)
            .expect("a grad line")
            .expect("it reads");
        let i = src_def
            .params
            .iter()
            .position(|q| q.name.as_str() == p)
            .expect("a parameter");
        assert!(
            parts[i + 1].approx_eq_default(&stated),
            "{name}: grad {p} = {}, stated {stated}",
            parts[i + 1]
        );
    }

    // Lemma 5.1 on the raw gradient, Lemma 5.3 on the optimized one.
    let raw_def = raw.defs.last().expect("a definition");
    cost::check_lemma_5_1(&raw, raw_def).unwrap_or_else(|v| panic!("{name}: Lemma 5.1: {v:?}"));
    let def = back.defs.last().expect("a definition");
    cost::check_lemma_5_3(&back, def).unwrap_or_else(|v| panic!("{name}: Lemma 5.3: {v:?}"));

    // The cost report, Theorem 5.4.
    let report = cost::report(&src, src_def, &back, def, &args(src_def, &inputs))
        .unwrap_or_else(|e| panic!("{name}: no cost report: {e}"));
    // Theorem 5.4 on every fixture: on the gradient program with the value
    // (the snapshot's report), and on G, the gradient alone, the theorem's
    // own term. The derivatives whose expansion costs several operations
    // are primitives of Target (`syntax::derivatives`), as the proof assumes.
    assert!(report.holds(), "{name}: Theorem 5.4 fails:\n{report}");
    let g = optimize::optimize(
        &optimize::gradient_only(&raw, None).expect("the gradient alone"),
        &optimize::Config::default(),
    )
    .unwrap_or_else(|e| panic!("{name}: optimize fails on G: {e}"));
    let g_def = g.defs.last().expect("a definition");
    let g_report = cost::report(&src, src_def, &g, g_def, &args(src_def, &inputs))
        .unwrap_or_else(|e| panic!("{name}: no cost report for G: {e}"));
    assert!(
        g_report.holds(),
        "{name}: Theorem 5.4 fails on G:\n{g_report}"
    );
    // The table of docs/cost.md (`--nocapture`).
    eprintln!(
        "| {} | {} | {:.3} | {:.3} | {} |",
        dir.file_name()
            .map(|n| n.to_string_lossy())
            .unwrap_or_default(),
        report.nao,
        report.ratio,
        g_report.ratio,
        cost::cheap_gradient_bound(report.nao)
    );
    expect_test::expect_file![dir.join("50.cost.txt")].assert_eq(&report.to_string());
}

#[test]
fn every_gradient_is_optimized_to_its_snapshot() {
    let all = fixtures();
    for dir in &all {
        check(dir);
    }
    assert!(
        all.len() >= 11,
        "only {} fixtures have a gradient",
        all.len()
    );
    // No stale snapshot without its input.
    for entry in std::fs::read_dir(workspace().join("fixtures")).expect("fixtures") {
        let p = entry.expect("an entry").path();
        if p.join("50.opt.ron").exists() || p.join("50.cost.txt").exists() {
            assert!(
                p.join("40.target.ron").exists(),
                "{}: 50.* without 40.target.ron",
                p.display()
            );
        }
    }
}
