//! The stage boundaries of the UNF path for every fixture: each boundary
//! file is regenerated from the previous one (read back through its
//! envelope and verified, as a user running one stage would), verified, and
//! compared with its snapshot:
//!
//! `10.source.ron` → UNF → `20.source-unf.ron` → D_ρ → `30.target-unf.ron`
//! → UNF^-1 → `40.target.ron`.
//!
//! A fixture that reverse mode does not accept yet has no UNF boundary
//! files; a stale file is an error. Bless with `cargo xtask bless`.

use std::path::{Path, PathBuf};

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn fixtures() -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(workspace().join("fixtures"))
        .expect("the fixtures directory exists")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join("10.source.ron").is_file())
        .collect();
    out.sort();
    out
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The Source module of a fixture, specialised to first order when it is
/// higher-order only on the surface (as the command line does).
fn source(dir: &Path) -> Option<syntax::Module> {
    let m: syntax::Module = syntax::from_ron(
        syntax::SOURCE_IR,
        syntax::FORMAT_VERSION,
        &read(&dir.join("10.source.ron")),
    )
    .expect("the Source snapshot reads");
    let entry = m.defs.last().expect("a fixture has a definition").clone();
    if syntax::check_first_order(&m, &entry).is_ok() {
        return Some(m);
    }
    let s = syntax::specialize(&m).ok()?;
    let entry = s.def(entry.name.as_str())?.clone();
    syntax::check_first_order(&s, &entry).is_ok().then_some(s)
}

#[test]
fn every_unf_boundary_is_regenerated_from_the_previous_one() {
    let mut covered = 0;
    for dir in fixtures() {
        let files =
            ["20.source-unf.ron", "30.target-unf.ron", "40.target.ron"].map(|f| dir.join(f));
        let lowered = source(&dir).and_then(|m| {
            let entry = m.defs.last().expect("a definition").clone();
            unf::lower(&m, &entry).ok()
        });
        let Some(lowered) = lowered else {
            for f in &files {
                assert!(
                    !f.exists(),
                    "{} exists but reverse mode refuses the fixture",
                    f.display()
                );
            }
            continue;
        };
        covered += 1;
        unf::verify(&lowered)
            .unwrap_or_else(|e| panic!("{}: UNF output fails: {e:?}", dir.display()));
        expect_test::expect_file![files[0].clone()].assert_eq(&unf::to_ron(&lowered));

        let s = unf::from_ron(&read(&files[0]), unf::Kind::Source)
            .expect("the Source UNF snapshot reads");
        unf::verify(&s).unwrap_or_else(|e| panic!("{}: {e:?}", files[0].display()));
        let t = reverse::reverse(&s, &reverse::Config::default())
            .unwrap_or_else(|e| panic!("{}: reverse fails: {e}", dir.display()));
        unf::verify(&t).unwrap_or_else(|e| panic!("{}: D_rho output fails: {e:?}", dir.display()));
        expect_test::expect_file![files[1].clone()].assert_eq(&unf::to_ron(&t));

        let t = unf::from_ron(&read(&files[1]), unf::Kind::Target)
            .expect("the Target UNF snapshot reads");
        unf::verify(&t).unwrap_or_else(|e| panic!("{}: {e:?}", files[1].display()));
        let g = unf::raise(&t).unwrap_or_else(|e| panic!("{}: raise fails: {e}", dir.display()));
        syntax::verify(&g)
            .unwrap_or_else(|e| panic!("{}: UNF^-1 output fails: {e:?}", dir.display()));
        expect_test::expect_file![files[2].clone()].assert_eq(&syntax::to_ron(
            syntax::TARGET_IR,
            syntax::FORMAT_VERSION,
            &g,
        ));
        let back: syntax::Module =
            syntax::from_ron(syntax::TARGET_IR, syntax::FORMAT_VERSION, &read(&files[2]))
                .expect("the Target snapshot reads");
        syntax::verify(&back).unwrap_or_else(|e| panic!("{}: {e:?}", files[2].display()));
    }
    assert!(
        covered >= 11,
        "only {covered} fixtures go through the UNF path"
    );
}
