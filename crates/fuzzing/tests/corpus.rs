//! The smoke run of the fuzz targets in CI: every file of the kept corpus
//! (`fuzz/corpus/<target>/`, what the long libFuzzer runs found and
//! minimized) and every crash they found (`fuzz/regressions/<target>/`,
//! fixed since) through the target's body, as the fuzzer ran it. A panic
//! fails the test and names the file.

use std::path::{Path, PathBuf};

fn fuzz_dir(kind: &str, target: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fuzz")
        .join(kind)
        .join(target)
}

/// The files of a directory, sorted; none when it does not exist.
fn files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.is_file())
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    files
}

/// Runs every file through `body`, failing on the first crash.
fn replay(target: &str, body: fuzzing::Body, files: &[PathBuf]) {
    for file in files {
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

#[test]
fn every_target_has_a_kept_corpus_that_replays_without_a_crash() {
    for &(target, body) in fuzzing::TARGETS {
        let corpus = files(&fuzz_dir("corpus", target));
        assert!(
            corpus.len() >= 5,
            "the corpus of `{target}` has {} files",
            corpus.len()
        );
        replay(target, body, &corpus);
    }
}

#[test]
fn the_crashes_the_fuzzer_found_stay_fixed() {
    let mut found = 0;
    for &(target, body) in fuzzing::TARGETS {
        let crashes = files(&fuzz_dir("regressions", target));
        found += crashes.len();
        replay(target, body, &crashes);
    }
    assert!(found >= 1, "fuzz/regressions/ holds the crashes found");
}

/// The first crash `json_value` found: `1e-30` in a JSON input read as
/// 9.999999999999999e-31, one ulp off (serde_json's default float parser
/// is not correctly rounded; its `float_roundtrip` feature is).
#[test]
fn json_numbers_read_to_the_correctly_rounded_f64() {
    let decimals: [f64; 10] = [
        1e-30,
        0.1,
        2.2250738585072014e-308,
        5e-324,
        1.7976931348623157e308,
        0.30000000000000004,
        9007199254740993.0,
        123456789.12345679,
        4.35,
        1.0000000000000002,
    ];
    let text: Vec<String> = decimals.iter().map(|x| format!("{x:e}")).collect();
    let json = format!("[{}]", text.join(", "));
    let ty = syntax::parse_ty("[n]R").expect("a type");
    let read = data::read_json(json.as_bytes(), "exact.json")
        .expect("JSON")
        .to_data(&ty)
        .expect("reals")
        .to_value();
    let got: Vec<u64> = read
        .as_array()
        .expect("an array")
        .iter()
        .map(|v| v.as_real().expect("a real").to_bits())
        .collect();
    let want: Vec<u64> = decimals.iter().map(|x| x.to_bits()).collect();
    assert_eq!(got, want, "{json}");
}

/// The first hang `npy_file` found: a header of 118 bytes nesting 90
/// brackets, on which the Python-literal parser backtracks exponentially;
/// the reader now refuses it by its nesting, at once.
#[test]
fn a_deeply_nested_npy_header_is_refused_at_once() {
    let path = fuzz_dir("regressions", "npy_file").join("header_nested_90_deep");
    let bytes = std::fs::read(&path).expect("the regression file reads");
    let start = std::time::Instant::now();
    let err = data::read_npy_bytes(&bytes, "deep.npy").expect_err("a malformed header");
    assert!(err.to_string().contains("nested"), "{err}");
    assert!(start.elapsed().as_secs() < 2, "took {:?}", start.elapsed());
}
