//! Mutated fixture files through the commands a user runs on them: every
//! stage file and program of the fixtures, truncated, with characters
//! deleted, inserted or duplicated, a number, a name or a quoted string
//! swapped. Whatever
//! the mutation, a command succeeds or exits with status 1 and says why;
//! never a panic, a signal, an internal error (status 2) or a silent
//! failure.
//!
//! A sweep like this one (5,200 mutations, outside the tests) found a Target
//! UNF file naming a parameter twice that the verifier let through and
//! `unf-inverse` then failed on (`fixtures/err/ron/unf_parameter_twice`).
//! `MUTATIONS_CASES` and `MUTATIONS_SEED` set the size and the seed.

use crate::common;

use common::{fixtures, workspace, xtask};

/// The tests' one RNG (seeded: the test draws the same mutations on every
/// run).
use testkit::Rng;

/// One of `xs`, drawn by `rng`.
fn pick<'a, T>(rng: &mut Rng, xs: &'a [T]) -> &'a T {
    &xs[rng.below(xs.len().max(1))]
}

/// The char boundaries of `s`, so that every cut is valid UTF-8.
fn cut(s: &str, i: usize) -> usize {
    (i.min(s.len())..=s.len())
        .find(|&k| s.is_char_boundary(k))
        .unwrap_or(s.len())
}

/// Runs of `pred` characters in `s`, as byte ranges.
fn runs(s: &str, start: fn(char) -> bool, cont: fn(char) -> bool) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut it = s.char_indices().peekable();
    while let Some((i, c)) = it.next() {
        if start(c) {
            let mut j = i + c.len_utf8();
            while let Some(&(k, d)) = it.peek() {
                if !cont(d) {
                    break;
                }
                j = k + d.len_utf8();
                it.next();
            }
            out.push((i, j));
        }
    }
    out
}

/// The byte ranges of the `"..."` strings of `s` (no escapes in fixtures).
fn quoted(s: &str) -> Vec<(usize, usize)> {
    let quotes: Vec<usize> = s.match_indices('"').map(|(i, _)| i).collect();
    quotes.chunks_exact(2).map(|q| (q[0], q[1] + 1)).collect()
}

fn mutate(rng: &mut Rng, s: &str) -> String {
    if s.is_empty() {
        return String::new();
    }
    let i = cut(s, rng.below(s.len()));
    let j = cut(s, i + 1 + rng.below(40));
    match rng.below(8) {
        0 => s[..i].to_string(),
        1 => format!("{}{}", &s[..i], &s[cut(s, i + 1)..]),
        2 => {
            let c = *pick(
                rng,
                &[
                    '(', ')', '[', ']', '{', '}', ',', ':', '"', '0', '7', '-', '.', 'e', '_', 'a',
                    ' ', '\n',
                ],
            );
            format!("{}{c}{}", &s[..i], &s[i..])
        }
        3 => format!("{}{}{}", &s[..j], &s[i..j], &s[j..]),
        4 => format!("{}{}", &s[..i], &s[j..]),
        5 => {
            let nums = runs(
                s,
                |c| c.is_ascii_digit(),
                |c| c.is_ascii_digit() || c == '.',
            );
            if nums.is_empty() {
                return s[..i].to_string();
            }
            let (a, b) = *pick(rng, &nums);
            let by = *pick(
                rng,
                &[
                    "0",
                    "-1",
                    "1e308",
                    "99999999999999999999",
                    "3",
                    "1.5",
                    "NaN",
                ],
            );
            format!("{}{by}{}", &s[..a], &s[b..])
        }
        6 => {
            // One quoted string for another: the file still reads, but a
            // name now clashes or is unknown.
            let strs = quoted(s);
            if strs.len() < 2 {
                return s[..i].to_string();
            }
            let (a, b) = *pick(rng, &strs);
            let (c, d) = *pick(rng, &strs);
            format!("{}{}{}", &s[..a], &s[c..d], &s[b..])
        }
        _ => {
            let ids = runs(
                s,
                |c| c.is_ascii_alphabetic() || c == '_',
                |c| c.is_ascii_alphanumeric() || c == '_',
            );
            if ids.is_empty() {
                return s[..i].to_string();
            }
            let (a, b) = *pick(rng, &ids);
            let (c, d) = *pick(rng, &ids);
            format!("{}{}{}", &s[..a], &s[c..d], &s[b..])
        }
    }
}

/// The commands to run on a mutated `file` (relative to the workspace),
/// which came from the fixture file named `name`.
fn commands(name: &str, file: &str, out: &str) -> Vec<Vec<String>> {
    let s = |v: &[&str]| v.iter().map(|a| a.to_string()).collect::<Vec<_>>();
    let mut cmds = vec![s(&["print", file]), s(&["check", file])];
    let stage = match name {
        "10.source.ron" => Some("unf"),
        "20.source-unf.ron" => Some("reverse"),
        "30.target-unf.ron" => Some("unf-inverse"),
        "40.target.ron" => Some("optimize"),
        _ => None,
    };
    if let Some(stage) = stage {
        cmds.push(s(&["stage", stage, file, out]));
    }
    match name {
        "program.ad" => {
            cmds.push(s(&["grad", file]));
            cmds.push(s(&["jvp", file]));
            cmds.push(s(&["reverse-direct", file, "-o", out]));
        }
        "10.source.ron" => cmds.push(s(&["eval", file])),
        "40.target.ron" | "50.opt.ron" => {
            cmds.push(s(&["eval", file]));
            // Writes the C text only; nothing is compiled.
            cmds.push(s(&["codegen", file, "-o", "target/tmp/mutations/out.c"]));
        }
        _ => {}
    }
    cmds
}

#[test]
fn mutated_fixture_files_are_refused_cleanly_or_accepted() {
    let cases: usize = std::env::var("MUTATIONS_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(400);
    let seed: u64 = std::env::var("MUTATIONS_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20261129);
    let mut files = Vec::new();
    for dir in fixtures() {
        for entry in std::fs::read_dir(workspace().join(&dir)).expect("a fixture directory") {
            let name = entry
                .expect("an entry")
                .file_name()
                .to_string_lossy()
                .into_owned();
            if name.ends_with(".ron") || name == "program.ad" {
                files.push((dir.clone(), name));
            }
        }
    }
    files.sort();
    assert!(files.len() > 100, "only {} fixture files", files.len());

    let scratch = workspace().join("target/tmp/mutations");
    std::fs::create_dir_all(&scratch).expect("a scratch directory");
    let mut rng = Rng::new(seed);
    let mut failures = Vec::new();
    let mut refused = 0;
    for case in 0..cases {
        let (dir, name) = pick(&mut rng, &files).clone();
        let text = std::fs::read_to_string(workspace().join(&dir).join(&name)).expect("readable");
        let mut mutated = mutate(&mut rng, &text);
        if rng.below(2) == 0 {
            mutated = mutate(&mut rng, &mutated);
        }
        let ext = if name.ends_with(".ad") { "ad" } else { "ron" };
        let file = format!("target/tmp/mutations/case.{ext}");
        let out = "target/tmp/mutations/out.ron";
        std::fs::write(workspace().join(&file), &mutated).expect("writable");
        for cmd in commands(&name, &file, out) {
            let args: Vec<&str> = cmd.iter().map(String::as_str).collect();
            let run = xtask(&args);
            let ok = match run.code {
                Some(0) => true,
                Some(1) => {
                    refused += 1;
                    !run.stderr.trim().is_empty()
                }
                _ => false,
            };
            if !ok || run.stderr.contains("panicked") {
                let keep = scratch.join(format!("failed-{case}.{ext}"));
                std::fs::write(&keep, &mutated).expect("writable");
                failures.push(format!(
                    "case {case}: {dir}/{name} mutated (kept as {}), `xtask {}` ended with {:?}:\n{}",
                    keep.display(),
                    cmd.join(" "),
                    run.code,
                    run.stderr
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // The mutations must reach the error paths, not only harmless spots.
    assert!(
        refused >= cases / 2,
        "only {refused} refusals in {cases} cases"
    );
}
