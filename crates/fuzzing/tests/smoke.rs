//! A short fuzzing run in CI, without libFuzzer (whose instrumented build
//! alone takes longer than CI's budget): each target's body runs on
//! inputs mutated from its kept corpus (`fuzz/corpus/<target>/`) by the
//! mutations libFuzzer uses most (byte flips, inserts, erasures, copies of
//! a chunk, splices of two files, interesting numbers), from a fixed seed
//! so that a failure replays. A panic fails the test, printing the input.
//! `ADREV_SMOKE_SEED` and `ADREV_SMOKE_RUNS` choose another seed and
//! length (docs/testing.md, "Coverage-guided fuzzing").

use std::path::Path;

use testkit::Rng;

/// Mutations per target in CI: a few seconds for all targets together in
/// a debug build.
const RUNS: usize = 1000;

fn corpus(target: &str) -> Vec<Vec<u8>> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fuzz/corpus")
        .join(target);
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    files.sort();
    files
        .iter()
        .map(|f| std::fs::read(f).expect("a corpus file reads"))
        .collect()
}

/// Tokens worth inserting: the numbers and words readers treat specially.
const TOKENS: &[&[u8]] = &[
    b"0",
    b"-1",
    b"1e308",
    b"-0",
    b"nan",
    b"inf",
    b"9223372036854775807",
    b"[",
    b"]",
    b"(",
    b")",
    b"{",
    b"}",
    b",",
    b"\"",
    b"\n",
    b"let",
    b"fun",
    b"def",
    b"\xc3\xa9",
    b"null",
    b"true",
];

/// One mutation of `input` (the corpus `all` for splices).
fn mutate(rng: &mut Rng, input: &[u8], all: &[Vec<u8>]) -> Vec<u8> {
    let mut out = input.to_vec();
    // Half the inputs get one mutation, so that many stay well-formed
    // enough to reach the stages after the reader.
    let count = if rng.chance(0.5) { 1 } else { 1 + rng.below(4) };
    for _ in 0..count {
        let at = rng.below(out.len() + 1);
        match rng.below(6) {
            0 if !out.is_empty() => {
                let i = at.min(out.len() - 1);
                // Mostly the low seven bits: text stays UTF-8 and reaches
                // the reader past its first check.
                let bits = if rng.chance(0.9) { 7 } else { 8 };
                out[i] ^= 1 << rng.below(bits);
            }
            1 => out.insert(
                at,
                if rng.chance(0.9) {
                    b' ' + rng.below(95) as u8
                } else {
                    rng.next_u64() as u8
                },
            ),
            2 if at < out.len() => {
                let end = (at + 1 + rng.below(16)).min(out.len());
                out.drain(at..end);
            }
            3 if at < out.len() => {
                let end = (at + 1 + rng.below(64)).min(out.len());
                let chunk = out[at..end].to_vec();
                let to = rng.below(out.len() + 1);
                out.splice(to..to, chunk);
            }
            4 => {
                let other = &all[rng.below(all.len())];
                let cut = rng.below(other.len() + 1);
                out.truncate(at);
                out.extend_from_slice(&other[cut..]);
            }
            _ => {
                let token = TOKENS[rng.below(TOKENS.len())];
                out.splice(at..at, token.iter().copied());
            }
        }
    }
    out
}

fn env_or(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn smoke(target: &str) {
    let body = fuzzing::TARGETS
        .iter()
        .find(|(name, _)| *name == target)
        .map(|&(_, body)| body)
        .unwrap_or_else(|| panic!("no target `{target}`"));
    let all = corpus(target);
    assert!(!all.is_empty(), "the corpus of `{target}` is empty");
    let seed = env_or("ADREV_SMOKE_SEED", 20261202);
    let runs = env_or("ADREV_SMOKE_RUNS", RUNS as u64);
    let mut rng = Rng::new(seed ^ target.len() as u64 ^ u64::from(target.as_bytes()[0]) << 8);
    for run in 0..runs {
        let from = rng.below(all.len());
        let input = mutate(&mut rng, &all[from], &all);
        let outcome = std::panic::catch_unwind(|| body(&input));
        assert!(
            outcome.is_ok(),
            "`{target}` crashes on mutation {run} of seed {seed}: {:?}",
            String::from_utf8_lossy(&input)
        );
    }
}

#[test]
fn smoke_program_text() {
    smoke("program_text");
}

#[test]
fn smoke_ron_source() {
    smoke("ron_source");
}

#[test]
fn smoke_ron_target() {
    smoke("ron_target");
}

#[test]
fn smoke_ron_source_unf() {
    smoke("ron_source_unf");
}

#[test]
fn smoke_ron_target_unf() {
    smoke("ron_target_unf");
}

#[test]
fn smoke_value_literal() {
    smoke("value_literal");
}

#[test]
fn smoke_json_value() {
    smoke("json_value");
}

#[test]
fn smoke_npy_file() {
    smoke("npy_file");
}

#[test]
fn smoke_gradbench_protocol() {
    smoke("gradbench_protocol");
}

#[test]
fn every_target_has_a_smoke_test() {
    let this = include_str!("smoke.rs");
    for (target, _) in fuzzing::TARGETS {
        assert!(
            this.contains(&format!("smoke(\"{target}\")")),
            "`{target}` has no smoke run"
        );
    }
}
