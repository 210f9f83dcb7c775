//! The C backend behind one internal type: a program built once into a
//! scratch directory (removed when dropped) and called many times.
//!
//! Today a call goes through codegen's driver *process* (`codegen::run`:
//! inputs and outputs exchanged as files in the exact binary format). The
//! in-process path (`codegen::Library`, a dlopen of the shared library)
//! replaces the body of [`Native::call`] and [`Native::time`] when it is
//! merged; nothing else in the crate knows how C is called.

use crate::diag::{self, Error, Result};
use semantics::Value;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;
use syntax::{Module, SourceFile};

/// A built C program.
pub struct Native {
    built: codegen::Built,
    dir: PathBuf,
    file: SourceFile,
}

impl std::fmt::Debug for Native {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Native").field("dir", &self.dir).finish()
    }
}

static NEXT: AtomicU64 = AtomicU64::new(0);

/// A fresh scratch directory for one build.
fn scratch() -> PathBuf {
    let k = NEXT.fetch_add(1, Ordering::Relaxed);
    std::env::temp_dir().join(format!("adrev-c-{}-{k}", std::process::id()))
}

/// A codegen error as a diagnostic on the program's text.
pub fn codegen_error(file: &SourceFile, e: &codegen::Error) -> Error {
    let internal = matches!(e, codegen::Error::Internal { .. });
    diag::pass_error(file, e.span(), &e.to_string(), internal)
}

impl Native {
    /// Emits and builds `m` with `cfg`.
    pub fn build(m: &Module, cfg: &codegen::Config) -> Result<Native> {
        let c = codegen::emit(m, cfg).map_err(|e| codegen_error(&m.file, &e))?;
        let dir = scratch();
        let built = codegen::build(&c, &dir, cfg).map_err(|e| {
            let _ = std::fs::remove_dir_all(&dir);
            codegen_error(&m.file, &e)
        })?;
        Ok(Native {
            built,
            dir,
            file: m.file.clone(),
        })
    }

    /// Calls definition `entry` on `args` (one per parameter, in order).
    pub fn call(&self, entry: &str, args: &[Value]) -> Result<Value> {
        codegen::run(&self.built, entry, args).map_err(|e| codegen_error(&self.file, &e))
    }

    /// Calls `entry` once for its value, then `reps` more times, timed
    /// inside the C program around the computation only.
    pub fn time(&self, entry: &str, args: &[Value], reps: usize) -> Result<(Value, Vec<Duration>)> {
        let (v, times) = codegen::time(&self.built, entry, args, reps)
            .map_err(|e| codegen_error(&self.file, &e))?;
        let durations = times
            .wall_ns
            .iter()
            .map(|&ns| Duration::from_nanos(ns.max(0.0) as u64))
            .collect();
        Ok((v, durations))
    }
}

impl Drop for Native {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
