//! The UNF path's stage files (docs/stages.md) and the optimizer's.

use super::Env;
use crate::fixture::Fixture;
use crate::stages::{self, FILES, read_term, read_unf, term_ron};
use semantics::{Value, cost};
use syntax::TARGET_IR;

/// `20.source-unf.ron`, `30.target-unf.ron` and `40.target.ron`, each
/// computed from `program.ad` and compared with its snapshot; each stage
/// also run again on the previous boundary's file as a user running that
/// stage alone would (read back through its envelope, verified), which
/// must give the same file. A fixture UNF does not take has none of the
/// files.
pub fn boundaries(f: &Fixture, _: &Env) {
    let Some(b) = stages::boundaries(f) else {
        for file in &FILES[1..] {
            f.no_snapshot(file, "UNF does not take the program");
        }
        return;
    };
    let s_text = unf::to_ron(&b.source_unf).expect("the module writes as RON");
    f.snapshot(FILES[1], &s_text);
    let t_text = unf::to_ron(&b.target_unf).expect("the module writes as RON");
    f.snapshot(FILES[2], &t_text);
    let g_text = term_ron(TARGET_IR, &b.target);
    f.snapshot(FILES[3], &g_text);

    let what = |file: &str| format!("{}/{file}", f.name);
    let s = read_unf(unf::Kind::Source, &s_text, &what(FILES[1]));
    assert_eq!(
        unf::to_ron(&s).expect("the module writes as RON"),
        s_text,
        "{}: not byte-stable",
        what(FILES[1])
    );
    let t = reverse::reverse(&s, &reverse::Config::default()).expect("reverse");
    assert_eq!(
        unf::to_ron(&t).expect("the module writes as RON"),
        t_text,
        "{}: reverse of the file differs",
        f.name
    );
    let t = read_unf(unf::Kind::Target, &t_text, &what(FILES[2]));
    assert_eq!(
        unf::to_ron(&t).expect("the module writes as RON"),
        t_text,
        "{}: not byte-stable",
        what(FILES[2])
    );
    let g = unf::raise(&t).expect("raise");
    assert_eq!(
        term_ron(TARGET_IR, &g),
        g_text,
        "{}: raise of the file differs",
        f.name
    );
    read_term(TARGET_IR, &g_text, &what(FILES[3]));
}

/// The inputs of the entry in parameter order.
pub fn args(def: &syntax::Def, inputs: &[(String, Value)]) -> Vec<Value> {
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

/// `50.opt.ron` (the optimized gradient program, which reads back,
/// verified and byte-stable, and gives what the optimizer gives on the
/// `40.target.ron` file) and `50.cost.txt` (Fig. 11's costs, NAO, the
/// ratio and Theorem 5.4's bound). The optimized gradient computes what
/// the raw one computes and the `-- value` and `-- grad` lines; Lemma 5.1
/// holds on the raw gradient, Lemma 5.3 on the optimized one, and Theorem
/// 5.4 on both the gradient with the value and G, the gradient alone.
pub fn optimize(f: &Fixture, _: &Env) {
    let name = &f.name;
    let Some(b) = stages::boundaries(f) else {
        f.no_snapshot("50.opt.ron", "UNF does not take the program");
        f.no_snapshot("50.cost.txt", "UNF does not take the program");
        return;
    };
    let text = term_ron(TARGET_IR, &b.opt);
    f.snapshot("50.opt.ron", &text);
    let back = read_term(TARGET_IR, &text, &format!("{name}/50.opt.ron"));
    assert_eq!(
        term_ron(TARGET_IR, &back),
        text,
        "{name}: 50.opt.ron is not byte-stable"
    );
    let raw = read_term(TARGET_IR, &term_ron(TARGET_IR, &b.target), "40.target.ron");
    let again = optimize::optimize(&raw, &optimize::Config::default()).expect("optimize");
    assert_eq!(
        term_ron(TARGET_IR, &again),
        text,
        "{name}: optimize of the file differs"
    );

    let src = &b.source;
    let src_def = src.defs.last().expect("a definition");
    let exp = f.expectations();
    let inputs = f.inputs(src_def);
    let before = semantics::eval_entry(&b.target, None, &inputs).expect("the raw gradient runs");
    let after = semantics::eval_entry(&back, None, &inputs).expect("the optimized gradient runs");
    assert!(
        after.approx_eq_default(&before),
        "{name}: optimized {after}, raw {before}"
    );
    let parts = crate::values::items(&after);
    if let Some(v) = exp.value(src, src_def) {
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

    let raw_def = b.target.defs.last().expect("a definition");
    cost::check_lemma_5_1(&b.target, raw_def)
        .unwrap_or_else(|v| panic!("{name}: Lemma 5.1: {v:?}"));
    let def = back.defs.last().expect("a definition");
    cost::check_lemma_5_3(&back, def).unwrap_or_else(|v| panic!("{name}: Lemma 5.3: {v:?}"));
    let at = args(src_def, &inputs);
    let report = cost::report(src, src_def, &back, def, &at)
        .unwrap_or_else(|e| panic!("{name}: no cost report: {e}"));
    assert!(report.holds(), "{name}: Theorem 5.4 fails:\n{report}");
    let g = optimize::optimize(
        &optimize::gradient_only(&b.target, None).expect("the gradient alone"),
        &optimize::Config::default(),
    )
    .unwrap_or_else(|e| panic!("{name}: optimize fails on G: {e}"));
    let g_def = g.defs.last().expect("a definition");
    let g_report = cost::report(src, src_def, &g, g_def, &at)
        .unwrap_or_else(|e| panic!("{name}: no cost report for G: {e}"));
    assert!(
        g_report.holds(),
        "{name}: Theorem 5.4 fails on G:\n{g_report}"
    );
    // A row of docs/cost.md's table (`--nocapture`).
    eprintln!(
        "| {name} | {} | {:.3} | {:.3} | {} |",
        report.nao,
        report.ratio,
        g_report.ratio,
        cost::cheap_gradient_bound(report.nao)
    );
    f.snapshot("50.cost.txt", &report.to_string());
}
