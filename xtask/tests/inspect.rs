//! The inspection commands on every fixture, as a user runs them:
//! `residuals`, `activity` and `nan-hazards` print exactly the reports the
//! `inspect` crate's tests hold as snapshots (`60.residuals.txt`,
//! `61.activity.txt`, `62.nan-hazards.txt`, blessed there); `dot` draws
//! every boundary file; `--svg` without Graphviz says how to get it.

use crate::common;

use common::{workspace, xtask};

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
