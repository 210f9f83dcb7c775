//! The smoke run of the fuzz targets in CI: every file of the kept corpus
//! (`fuzz/corpus/<target>/`, what the long libFuzzer runs found and
//! minimized) through the target's body, as the fuzzer ran it. A panic
//! fails the test and names the file.

use std::path::{Path, PathBuf};

fn corpus_dir(target: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fuzz/corpus")
        .join(target)
}

#[test]
fn every_target_has_a_kept_corpus_that_replays_without_a_crash() {
    for &(target, body) in fuzzing::TARGETS {
        let dir = corpus_dir(target);
        let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("the corpus of `{target}` ({}): {e}", dir.display()))
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.is_file())
            .collect();
        files.sort();
        assert!(
            files.len() >= 5,
            "the corpus of `{target}` has {} files",
            files.len()
        );
        for file in &files {
            let data = std::fs::read(file).expect("a corpus file reads");
            let outcome = std::panic::catch_unwind(|| body(&data));
            assert!(
                outcome.is_ok(),
                "`{target}` crashes on {} (replay: cargo fuzz run {target} {})",
                file.display(),
                file.display()
            );
        }
    }
}
