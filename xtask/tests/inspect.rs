//! The inspection commands on every fixture, as a user runs them:
//! `residuals`, `activity` and `nan-hazards` print exactly the reports the
//! `inspect` crate's tests hold as snapshots (`60.residuals.txt`,
//! `61.activity.txt`, `62.nan-hazards.txt`, blessed there); `dot` draws
//! every boundary file; `--svg` without Graphviz says how to get it.

use crate::common;

use common::{fixtures, workspace, xtask};

#[test]
fn every_fixture_prints_its_reports() {
    let mut failures = Vec::new();
    let mut compared = 0;
    for case in fixtures() {
        let program = format!("{case}/program.ad");
        for (command, snapshot) in [
            ("residuals", "60.residuals.txt"),
            ("activity", "61.activity.txt"),
            ("nan-hazards", "62.nan-hazards.txt"),
        ] {
            let run = xtask(&[command, &program]);
            if run.code != Some(0) {
                failures.push(format!(
                    "{command} {case}: exit {:?}: {}",
                    run.code, run.stderr
                ));
                continue;
            }
            let path = workspace().join(&case).join(snapshot);
            if let Ok(expected) = std::fs::read_to_string(&path) {
                compared += 1;
                if run.stdout != expected {
                    failures.push(format!(
                        "{command} {case}: printed\n{}\nbut {} holds\n{expected}",
                        run.stdout,
                        path.display()
                    ));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(compared >= 90, "only {compared} reports compared");
}

#[test]
fn dot_draws_every_boundary_file() {
    let mut failures = Vec::new();
    for case in fixtures() {
        for file in [
            "program.ad",
            "20.source-unf.ron",
            "30.target-unf.ron",
            "50.opt.ron",
        ] {
            let path = format!("{case}/{file}");
            if !workspace().join(&path).is_file() {
                continue;
            }
            let run = xtask(&["dot", &path]);
            if run.code != Some(0) || !run.stdout.starts_with("digraph ") {
                failures.push(format!("dot {path}: exit {:?}: {}", run.code, run.stderr));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn svg_without_graphviz_says_how_to_install_it() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_xtask"))
        .args(["dot", "fixtures/prod/program.ad", "--svg"])
        .current_dir(workspace())
        .env("PATH", "/nonexistent")
        .output()
        .expect("the xtask binary runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("Graphviz") && stderr.contains("apt-get install graphviz"),
        "{stderr}"
    );
}

#[test]
fn the_analyses_take_a_source_program() {
    let run = xtask(&["activity", "fixtures/prod/20.source-unf.ron"]);
    assert_eq!(run.code, Some(1), "{}", run.stderr);
    assert!(
        run.stderr
            .contains("`activity` differentiates a Source program"),
        "{}",
        run.stderr
    );
    let run = xtask(&["residuals", "fixtures/prod/program.ad", "--wrt", "B"]);
    assert_eq!(run.code, Some(1), "{}", run.stderr);
    assert!(run.stderr.contains("no parameter `B`"), "{}", run.stderr);
}
