//! Running the `xtask` binary the way a user does, from the workspace root.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

/// The workspace root.
pub fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// What a run printed and how it ended.
pub struct Run {
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
    /// The exit status (None when killed by a signal).
    pub code: Option<i32>,
}

/// Runs `xtask ARGS` in the workspace root.
pub fn xtask(args: &[&str]) -> Run {
    let out = Command::new(env!("CARGO_BIN_EXE_xtask"))
        .args(args)
        .current_dir(workspace())
        .output()
        .expect("the xtask binary runs");
    Run::from(out)
}

impl From<std::process::Output> for Run {
    fn from(out: std::process::Output) -> Run {
        Run {
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
            code: out.status.code(),
        }
    }
}

/// The example fixtures (directories with a `program.ad`), sorted, as
/// paths relative to the workspace root.
pub fn fixtures() -> Vec<String> {
    let mut out: Vec<String> = std::fs::read_dir(workspace().join("fixtures"))
        .expect("the fixtures directory exists")
        .filter_map(|e| e.ok())
        .filter(|e| e.path().join("program.ad").is_file())
        .map(|e| format!("fixtures/{}", e.file_name().to_string_lossy()))
        .collect();
    out.sort();
    out
}

/// Writes a program to a file of the temporary directory named after the
/// test process and `name`; returns its path.
pub fn write_program(name: &str, text: &str) -> String {
    let path = std::env::temp_dir().join(format!("adrev-{}-{name}", std::process::id()));
    std::fs::write(&path, text).expect("the temporary directory is writable");
    path.to_str().expect("utf-8 path").to_string()
}
