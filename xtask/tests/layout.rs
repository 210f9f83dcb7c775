//! Every crate's integration tests are one binary, `tests/suite.rs`, with
//! `autotests = false` in its manifest; a file in `tests/` that `suite.rs`
//! does not declare would never be compiled, and its tests would silently
//! not run. This test finds such files. And `.ci/run`, what CI runs, must
//! end with the README's test command.

use crate::common::workspace;

#[test]
fn every_integration_test_file_is_a_module_of_its_suite() {
    let root = workspace();
    let mut dirs = vec![root.join("xtask/tests")];
    for entry in std::fs::read_dir(root.join("crates")).expect("crates/") {
        dirs.push(entry.expect("an entry").path().join("tests"));
    }
    let mut missing = Vec::new();
    let mut suites = 0;
    for dir in dirs.into_iter().filter(|d| d.is_dir()) {
        let suite = std::fs::read_to_string(dir.join("suite.rs"))
            .unwrap_or_else(|e| panic!("{}: no suite.rs ({e})", dir.display()));
        suites += 1;
        let manifest = std::fs::read_to_string(dir.join("../Cargo.toml")).expect("a manifest");
        assert!(
            manifest.contains("autotests = false")
                && manifest.contains("path = \"tests/suite.rs\""),
            "{}: the manifest must build tests/suite.rs alone",
            dir.display()
        );
        for entry in std::fs::read_dir(&dir).expect("tests/") {
            let name = entry
                .expect("an entry")
                .file_name()
                .to_string_lossy()
                .into_owned();
            let Some(module) = name.strip_suffix(".rs") else {
                continue;
            };
            // A harness of its own (`harness = false`, the fixture runner)
            // is a test target of the manifest instead.
            let harness = manifest.contains(&format!("path = \"tests/{name}\"\nharness = false"));
            if module != "suite"
                && !harness
                && !suite.lines().any(|l| l.trim() == format!("mod {module};"))
            {
                missing.push(format!("{}/{name}", dir.display()));
            }
        }
    }
    assert!(suites >= 9, "only {suites} test suites found");
    assert!(
        missing.is_empty(),
        "not declared in their tests/suite.rs: {missing:?}"
    );
}

/// CI runs `.ci/run`; the README promises that it ends with the README's
/// own test command. Both are read here: the second line of the README's
/// first code block (the first line is the gradient example) must be the
/// last command of `.ci/run`, so that the two cannot drift apart.
#[test]
fn ci_runs_the_readme_test_command() {
    let root = workspace();
    let readme = std::fs::read_to_string(root.join("README.md")).expect("README.md");
    let block: Vec<&str> = readme
        .split("```sh\n")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .expect("a ```sh block in the README")
        .lines()
        .collect();
    assert_eq!(
        block.len(),
        2,
        "the README's block holds two commands: {block:?}"
    );
    let run = std::fs::read_to_string(root.join(".ci/run")).expect(".ci/run");
    let last = run
        .lines()
        .map(str::trim)
        .rfind(|l| !l.is_empty() && !l.starts_with('#'))
        .expect("a command in .ci/run");
    assert_eq!(
        last, block[1],
        ".ci/run must end with the README's test command"
    );
    assert!(
        std::fs::metadata(root.join(".ci/test")).is_ok(),
        "the test command's script exists"
    );
}
