//! The first stage boundary of every fixture: `program.ad` compiles to the
//! typed Source program snapshotted in `10.source.ron`, and the snapshot
//! reads back (envelope, verifier) to the same module.
//!
//! Bless with `UPDATE_EXPECT=1 cargo nextest run` (`cargo xtask bless`).

use std::path::{Path, PathBuf};
use syntax::{FORMAT_VERSION, Module, SOURCE_IR, SourceFile};

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Every fixture directory with a program, sorted.
fn fixtures() -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(workspace().join("fixtures"))
        .expect("the fixtures directory exists")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join("program.ad").is_file())
        .collect();
    out.sort();
    assert!(
        out.len() >= 14,
        "expected the example fixtures, found {}",
        out.len()
    );
    out
}

fn compile(dir: &Path) -> Module {
    let case = dir
        .file_name()
        .expect("a fixture directory has a name")
        .to_string_lossy();
    let text = std::fs::read_to_string(dir.join("program.ad")).expect("program.ad is readable");
    let file = SourceFile {
        name: format!("fixtures/{case}/program.ad"),
        text,
    };
    match syntax::compile(file) {
        Ok(m) => m,
        Err(e) => panic!("fixture {case} does not compile: {e:?}"),
    }
}

#[test]
fn every_program_compiles_to_its_source_snapshot() {
    for dir in fixtures() {
        let m = compile(&dir);
        let ron = syntax::to_ron(SOURCE_IR, FORMAT_VERSION, &m);
        expect_test::expect_file![dir.join("10.source.ron")].assert_eq(&ron);
    }
}

#[test]
fn every_source_snapshot_reads_back_verified_and_equal() {
    for dir in fixtures() {
        let path = dir.join("10.source.ron");
        let text =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let back: Module = syntax::from_ron(SOURCE_IR, FORMAT_VERSION, &text)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        if let Err(errors) = syntax::verify(&back) {
            panic!("{} fails the verifier: {errors:?}", path.display());
        }
        assert_eq!(
            back,
            compile(&dir),
            "{} is stale: run `cargo xtask bless`",
            path.display()
        );
        assert_eq!(
            syntax::to_ron(SOURCE_IR, FORMAT_VERSION, &back),
            text,
            "{} is not byte-stable",
            path.display()
        );
    }
}
