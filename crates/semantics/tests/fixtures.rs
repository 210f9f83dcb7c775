//! Every `fixtures/*/program.ad`: compiled from its text, evaluated at its
//! `-- at` inputs, and compared with its `-- value` (tolerance rel 1e-9,
//! abs 1e-12, language.md "Expectation comments").

use std::path::{Path, PathBuf};

use semantics::{Expectations, Value, eval_entry};
use syntax::SourceFile;

/// Fixtures that use a compile-time derivative construct (`diff`,
/// `grad_rev`, ...): the driver expands them (forward mode, with reverse
/// mode for `grad_rev` and `vjp_rev`), and only then can they be evaluated.
const NEEDS_FORWARD: &[&str] = &[
    "diff_pow_abs",
    "ho_diff_helper",
    "hvp_rev",
    "nested_diff_182_15",
    "nested_fr_182_15",
    "nested_rf_182_15",
    "nested_rr_182_15",
    "second_derivative",
    "vjp_rev_map",
];

fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures")
}

/// The case names, sorted.
fn cases() -> Vec<String> {
    let mut out: Vec<String> = std::fs::read_dir(fixtures_dir())
        .expect("fixtures/ exists")
        .filter_map(|entry| {
            let path = entry.ok()?.path();
            path.join("program.ad")
                .is_file()
                .then(|| path.file_name()?.to_str().map(str::to_string))?
        })
        .collect();
    out.sort();
    out
}

/// Compiles and evaluates one fixture; `Ok(None)` if it states no value.
fn run(case: &str) -> Result<Option<(Value, Value)>, String> {
    let path = fixtures_dir().join(case).join("program.ad");
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let m = syntax::compile(SourceFile {
        name: format!("fixtures/{case}/program.ad"),
        text: text.clone(),
    })
    .map_err(|e| format!("does not compile: {e}"))?;
    syntax::verify(&m).map_err(|errs| format!("the compiled module fails verify: {errs:?}"))?;
    let expect = Expectations::parse(&text);
    let def = m.entry(None).ok_or("no definition")?;
    let inputs = expect
        .inputs(def)
        .map_err(|e| format!("bad `-- at`: {e}"))?;
    let Some(want) = expect.value(&m, def) else {
        return Ok(None);
    };
    let want = want.map_err(|e| format!("bad `-- value`: {e}"))?;
    let got = eval_entry(&m, None, &inputs).map_err(|e| format!("evaluation failed: {e}"))?;
    Ok(Some((got, want)))
}

#[test]
fn every_fixture_evaluates_to_its_stated_value() {
    let cases = cases();
    assert!(cases.len() >= 10, "only {} fixtures found", cases.len());
    let mut failures = Vec::new();
    let mut checked = 0;
    for case in &cases {
        if NEEDS_FORWARD.contains(&case.as_str()) {
            continue;
        }
        match run(case) {
            Ok(Some((got, want))) => {
                checked += 1;
                if !got.approx_eq_default(&want) {
                    failures.push(format!("{case}: got {got}, expected {want}"));
                }
            }
            Ok(None) => failures.push(format!("{case}: states no `-- value`")),
            Err(e) => failures.push(format!("{case}: {e}")),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert_eq!(checked, cases.len() - NEEDS_FORWARD.len());
}

#[test]
fn the_skipped_fixtures_do_need_forward_mode() {
    // If one of these stops using a construct, it belongs in the test above.
    for case in NEEDS_FORWARD {
        let err = run(case).expect_err("a derivative construct cannot be evaluated");
        assert!(
            err.contains("must be expanded before evaluation"),
            "{case}: {err}"
        );
    }
}
