//! The C backend behind one internal type: a program built once into a
//! scratch directory (removed when dropped) and called many times.
//!
//! A call runs in this process (`codegen::Library`: the shared library
//! loaded, dense inputs passed in place, no file in between). A sanitized
//! build runs through codegen's driver *process* instead (the sanitizers'
//! run time must be the first library of a process), which also turns a
//! crash or a sanitizer report into an internal error rather than the end
//! of the caller. Nothing else in the crate knows how C is called.

use crate::diag::{self, Error, Result};
use data::Data;
use semantics::Value;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;
use syntax::{Module, SourceFile};

/// A built C program.
pub struct Native {
    built: codegen::Built,
    /// The loaded library (`None` for a sanitized build: the process path).
    library: Option<codegen::Library>,
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
        let cfg = codegen::Config {
            shared_library: !cfg.sanitize,
            ..cfg.clone()
        };
        let c = codegen::emit(m, &cfg).map_err(|e| codegen_error(&m.file, &e))?;
        let dir = scratch();
        let fail = |e: &codegen::Error| {
            let _ = std::fs::remove_dir_all(&dir);
            codegen_error(&m.file, e)
        };
        // The library is all an unsanitized build runs: no driver.
        let built = if cfg.sanitize {
            codegen::build(&c, &dir, &cfg)
        } else {
            codegen::build_library(&c, &dir, &cfg)
        }
        .map_err(|e| fail(&e))?;
        let library = if cfg.sanitize {
            None
        } else {
            Some(codegen::Library::open(&built).map_err(|e| fail(&e))?)
        };
        Ok(Native {
            built,
            library,
            dir,
            file: m.file.clone(),
        })
    }

    /// Calls definition `entry` on `args` (one per parameter, in order).
    pub fn call(&self, entry: &str, args: &[Data<'_>]) -> Result<Value> {
        let err = |e: codegen::Error| codegen_error(&self.file, &e);
        match &self.library {
            Some(lib) => lib.call(entry, args).map(|d| d.to_value()).map_err(err),
            None => {
                let values: Vec<Value> = args.iter().map(Data::to_value).collect();
                codegen::run(&self.built, entry, &values).map_err(err)
            }
        }
    }

    /// Calls `entry` once for its value, then `reps` more times, each run
    /// timed around the computation only: in this process around the
    /// generated function (the arguments checked and laid out once, the
    /// result copied after the clock stops), through the driver process
    /// inside the C program.
    pub fn time(
        &self,
        entry: &str,
        args: &[Data<'_>],
        reps: usize,
    ) -> Result<(Value, Vec<Duration>)> {
        if let Some(lib) = &self.library {
            let (value, times) = lib
                .time(entry, args, reps)
                .map_err(|e| codegen_error(&self.file, &e))?;
            return Ok((value.to_value(), times));
        }
        let values: Vec<Value> = args.iter().map(Data::to_value).collect();
        let (v, times) = codegen::time(&self.built, entry, &values, reps)
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
        // The library is closed before its file is removed.
        drop(self.library.take());
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
