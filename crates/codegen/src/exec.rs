//! Building generated C with the system compiler and running the driver.
//!
//! This path does not load generated code into Rust's process: it writes
//! the inputs to a file, runs the driver executable, and reads the result
//! back (docs/codegen.md, "Two ways to run generated code"; the other way
//! is `library.rs`). Temporary files are
//! named by process id and a counter, so tests may run in parallel on one
//! built program.

use std::path::Path;
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};

use semantics::{SizeEnv, Value};
use syntax::Span;

use crate::error::Error;
use crate::lower::{Site, SiteKind};
use crate::{Built, CProgram, Config, Entry};

/// Writes the program's files into `dir` (created if needed) and compiles
/// the driver executable (and the shared library if `cfg` asks), with the
/// flags of [`Config::flags`]. The command lines are recorded in
/// [`Built::commands`].
pub fn build(c: &CProgram, dir: &Path, cfg: &Config) -> Result<Built, Error> {
    build_with(c, dir, cfg, true)
}

/// [`build`] of the shared library alone (whatever `cfg.shared_library`
/// says), for callers that only load it ([`crate::Library`]): no driver
/// executable, whose cc run (driver source and link, about 0.2 s) is
/// otherwise part of every build ([`run`] and [`time`] refuse it).
pub fn build_library(c: &CProgram, dir: &Path, cfg: &Config) -> Result<Built, Error> {
    let cfg = Config {
        shared_library: true,
        ..cfg.clone()
    };
    build_with(c, dir, &cfg, false)
}

fn build_with(c: &CProgram, dir: &Path, cfg: &Config, with_driver: bool) -> Result<Built, Error> {
    std::fs::create_dir_all(dir).map_err(|e| Error::io("create", dir, e))?;
    let source = dir.join(format!("{}.c", c.name));
    let header = dir.join(format!("{}.h", c.name));
    let driver_c = dir.join(format!("{}_driver.c", c.name));
    for (path, text) in [
        (&source, &c.source),
        (&header, &c.header),
        (&driver_c, &c.driver),
    ] {
        std::fs::write(path, text).map_err(|e| Error::io("write", path, e))?;
    }
    let mut cfg = cfg.clone();
    cfg.parallel |= c.parallel;
    let flags = cfg.flags();
    let driver = dir.join(format!("{}_driver", c.name));
    let mut commands = Vec::new();
    // With a shared library, the program is compiled once (position
    // independent) and linked twice, into the driver and the library.
    let object = dir.join(format!("{}.o", c.name));
    let program_input = if cfg.shared_library {
        let mut args = flags.clone();
        args.extend([
            "-fPIC".into(),
            "-c".into(),
            "-o".into(),
            path_str(&object),
            path_str(&source),
        ]);
        commands.push(compile(&cfg.cc, &args)?);
        path_str(&object)
    } else {
        path_str(&source)
    };
    let driver = if with_driver {
        let mut args: Vec<String> = flags.clone();
        args.extend([
            "-o".into(),
            path_str(&driver),
            program_input.clone(),
            path_str(&driver_c),
        ]);
        args.extend(cfg.libs());
        commands.push(compile(&cfg.cc, &args)?);
        Some(driver)
    } else {
        None
    };
    let shared_library = if cfg.shared_library {
        let lib = dir.join(format!("lib{}.so", c.name));
        let mut args = flags;
        args.extend([
            "-fPIC".into(),
            "-shared".into(),
            "-o".into(),
            path_str(&lib),
            program_input,
        ]);
        args.extend(cfg.libs());
        commands.push(compile(&cfg.cc, &args)?);
        Some(lib)
    } else {
        None
    };
    Ok(Built {
        program: c.clone(),
        dir: dir.to_path_buf(),
        source,
        header,
        driver,
        shared_library,
        commands,
        sanitized: cfg.sanitize,
    })
}

fn path_str(p: &Path) -> String {
    p.display().to_string()
}

/// Runs the C compiler; returns the command line.
fn compile(cc: &str, args: &[String]) -> Result<String, Error> {
    let line = std::iter::once(cc.to_string())
        .chain(args.iter().cloned())
        .collect::<Vec<_>>()
        .join(" ");
    let out = Command::new(cc)
        .args(args)
        .output()
        .map_err(|e| Error::Compiler {
            span: Span::GENERATED,
            message: format!("cannot run `{line}`: {e}"),
        })?;
    if !out.status.success() {
        return Err(Error::Compiler {
            span: Span::GENERATED,
            message: format!(
                "`{line}` exited with {}:\n{}",
                out.status,
                String::from_utf8_lossy(&out.stderr)
            ),
        });
    }
    Ok(line)
}

/// Runs entry `entry` of a built program on positional arguments. The
/// arguments are checked against the parameters' types first, with the
/// evaluator's messages.
pub fn run(built: &Built, entry: &str, args: &[Value]) -> Result<Value, Error> {
    call(built, entry, args, 0).map(|(v, _)| v)
}

/// Runs the entry (`None`: the last definition) on inputs given by
/// parameter name, like `semantics::eval_entry`: every parameter exactly
/// once, no other name.
pub fn run_entry(
    built: &Built,
    entry: Option<&str>,
    inputs: &[(String, Value)],
) -> Result<Value, Error> {
    let e = find_entry(&built.program, entry)?;
    let args = positional(e, inputs)?;
    let name = e.name.clone();
    run(built, &name, &args)
}

/// The exported function for `entry` (`None`: the last definition).
pub(crate) fn find_entry<'p>(
    program: &'p CProgram,
    entry: Option<&str>,
) -> Result<&'p Entry, Error> {
    program.entry(entry).ok_or_else(|| Error::NoSuchEntry {
        span: Span::GENERATED,
        name: entry.map(str::to_string),
    })
}

/// Inputs given by parameter name in parameter order, like
/// `semantics::eval_entry`: every parameter exactly once, no other name.
pub(crate) fn positional<T: Clone>(e: &Entry, inputs: &[(String, T)]) -> Result<Vec<T>, Error> {
    let mut args: Vec<Option<T>> = vec![None; e.params.len()];
    for (name, value) in inputs {
        let Some(pos) = e.params.iter().position(|p| &p.name == name) else {
            return Err(semantics::Error::UnknownInput {
                span: e.span,
                def: e.name.clone(),
                name: name.clone(),
            }
            .into());
        };
        if args[pos].is_some() {
            return Err(semantics::Error::DuplicateInput {
                span: e.params[pos].span,
                name: name.clone(),
            }
            .into());
        }
        args[pos] = Some(value.clone());
    }
    args.into_iter()
        .zip(&e.params)
        .map(|(a, p)| {
            a.ok_or_else(|| {
                Error::from(semantics::Error::MissingInput {
                    span: p.span,
                    name: p.name.clone(),
                })
            })
        })
        .collect()
}

/// The times of repeated calls of an entry, in nanoseconds, measured
/// inside the driver (process start-up and input reading not counted).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Times {
    /// Wall-clock time of each call.
    pub wall_ns: Vec<f64>,
    /// CPU time of the process during each call (all threads).
    pub cpu_ns: Vec<f64>,
}

/// Runs an entry once for its value and then `reps` more times, returning
/// the value and the times of the `reps` calls.
pub fn time(
    built: &Built,
    entry: &str,
    args: &[Value],
    reps: usize,
) -> Result<(Value, Times), Error> {
    call(built, entry, args, reps.max(1))
}

static CALLS: AtomicU64 = AtomicU64::new(0);

fn call(built: &Built, entry: &str, args: &[Value], reps: usize) -> Result<(Value, Times), Error> {
    let e = built
        .program
        .entry(Some(entry))
        .ok_or_else(|| Error::NoSuchEntry {
            span: Span::GENERATED,
            name: Some(entry.to_string()),
        })?;
    let (bytes, mut sizes) = encode_args(e, args)?;
    let k = CALLS.fetch_add(1, Ordering::Relaxed);
    let tag = format!("{}_{}", std::process::id(), k);
    let input = built.dir.join(format!("in_{tag}.bin"));
    let output = built.dir.join(format!("out_{tag}.bin"));
    std::fs::write(&input, &bytes).map_err(|e| Error::io("write", &input, e))?;
    let res = run_driver(built, e, &input, &output, reps, &[]);
    let _ = std::fs::remove_file(&input);
    let _ = std::fs::remove_file(&output);
    let (bytes, times) = res?;
    let value = crate::transfer::decode(&bytes, &e.ret).ok_or_else(|| Error::Internal {
        span: e.span,
        message: format!(
            "the driver for `{}` wrote a result that does not fit its type",
            e.name
        ),
    })?;
    check_result(
        e,
        |ty, sizes| value.check_input(ty, sizes, None),
        &mut sizes,
    )?;
    Ok((value, times))
}

/// The evaluator checks a result against the declared type, sizes
/// included (`[n-1]R` at n = 0 has no value); so do both ways of running
/// generated code, with its error. `check` checks the result.
pub(crate) fn check_result(
    e: &Entry,
    check: impl FnOnce(&syntax::Ty, &mut SizeEnv) -> Result<(), semantics::ValueError>,
    sizes: &mut SizeEnv,
) -> Result<(), Error> {
    check(&e.ret, sizes).map_err(|err| {
        semantics::Error::Type {
            span: e.body_span,
            message: format!(
                "the result of `{}` does not have its declared type: {err}",
                e.name
            ),
        }
        .into()
    })
}

/// The evaluator's error for a call with `found` arguments, if that is
/// not the entry's arity.
pub(crate) fn check_arity(e: &Entry, found: usize) -> Result<(), Error> {
    if found == e.params.len() {
        return Ok(());
    }
    Err(semantics::Error::Arity {
        span: e.span,
        expected: e.params.len(),
        found,
    }
    .into())
}

/// Checks the arguments with the evaluator's rules and encodes them.
pub fn encode_args(e: &Entry, args: &[Value]) -> Result<(Vec<u8>, SizeEnv), Error> {
    check_arity(e, args.len())?;
    let mut sizes = SizeEnv::new();
    for (p, a) in e.params.iter().zip(args) {
        a.check_input(&p.ty, &mut sizes, Some(&p.name))
            .map_err(|source| semantics::Error::Input {
                span: p.span,
                name: p.name.clone(),
                source,
            })?;
    }
    let mut bytes = Vec::new();
    for (p, a) in e.params.iter().zip(args) {
        crate::transfer::encode(a, &p.ty, &sizes, &mut bytes).map_err(|what| {
            Error::UnsupportedAtRuntime {
                span: p.span,
                what: format!("input `{}`: {what}", p.name),
            }
        })?;
    }
    Ok((bytes, sizes))
}

/// Runs the driver on an input file already in its format (the
/// benchmarks write large inputs directly); returns the result's bytes and
/// the times of the `reps` timed calls. `env` is added to the driver's
/// environment (`OMP_NUM_THREADS`).
pub fn run_file(
    built: &Built,
    entry: &str,
    input: &Path,
    reps: usize,
    env: &[(&str, String)],
) -> Result<(Vec<u8>, Times), Error> {
    let e = built
        .program
        .entry(Some(entry))
        .ok_or_else(|| Error::NoSuchEntry {
            span: Span::GENERATED,
            name: Some(entry.to_string()),
        })?;
    let k = CALLS.fetch_add(1, Ordering::Relaxed);
    let output = built
        .dir
        .join(format!("out_{}_{k}.bin", std::process::id()));
    let res = run_driver(built, e, input, &output, reps, env);
    let _ = std::fs::remove_file(&output);
    res
}

fn run_driver(
    built: &Built,
    e: &Entry,
    input: &Path,
    output: &Path,
    reps: usize,
    env: &[(&str, String)],
) -> Result<(Vec<u8>, Times), Error> {
    let Some(driver) = &built.driver else {
        return Err(Error::Internal {
            span: e.span,
            message: format!("`{}` was built without its driver executable", e.name),
        });
    };
    let mut cmd = Command::new(driver);
    cmd.arg(&e.name).arg(input).arg(output);
    for (k, v) in env {
        cmd.env(k, v);
    }
    if reps > 0 {
        cmd.arg(reps.to_string());
    }
    if built.sanitized {
        cmd.env(
            "ASAN_OPTIONS",
            "detect_leaks=1:abort_on_error=0:exitcode=86",
        )
        .env(
            "UBSAN_OPTIONS",
            "halt_on_error=1:print_stacktrace=1:exitcode=87",
        );
    }
    let out = cmd.output().map_err(|err| Error::io("run", driver, err))?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let internal = |what: &str| Error::Internal {
        span: e.span,
        message: format!(
            "{what} (driver for `{}`, status {}):\n{stderr}",
            e.name, out.status
        ),
    };
    match out.status.code() {
        Some(0) => {}
        Some(3) => {
            let line = stdout
                .lines()
                .find(|l| l.starts_with("error "))
                .unwrap_or("");
            let nums: Vec<i64> = line
                .split_whitespace()
                .skip(1)
                .filter_map(|t| t.parse().ok())
                .collect();
            return match nums.as_slice() {
                [site, a, b] => {
                    let site = usize::try_from(*site)
                        .ok()
                        .and_then(|s| s.checked_sub(1))
                        .and_then(|s| built.program.sites.get(s))
                        .ok_or_else(|| internal("a failure at an unknown site"))?;
                    Err(site_error(site, *a, *b))
                }
                _ => Err(internal("a failure without its site")),
            };
        }
        _ => return Err(internal("the compiled program stopped abnormally")),
    }
    if !stderr.trim().is_empty() {
        return Err(internal("the compiled program wrote to stderr"));
    }
    let bytes = std::fs::read(output).map_err(|err| Error::io("read", output, err))?;
    let numbers = |key: &str| -> Vec<f64> {
        stdout
            .lines()
            .find_map(|l| l.strip_prefix(key))
            .map(|t| {
                t.split_whitespace()
                    .filter_map(|x| x.parse().ok())
                    .collect()
            })
            .unwrap_or_default()
    };
    let times = Times {
        wall_ns: numbers("times_ns"),
        cpu_ns: numbers("cpu_ns"),
    };
    Ok((bytes, times))
}

/// The error a failure site reports: the evaluator's error where there is one.
pub(crate) fn site_error(site: &Site, a: i64, b: i64) -> Error {
    let span = site.span;
    let len = |x: i64| usize::try_from(x).unwrap_or(0);
    match &site.kind {
        SiteKind::Index => semantics::Error::IndexOutOfBounds {
            span,
            index: a,
            len: len(b),
        }
        .into(),
        SiteKind::Overflow(op) => semantics::Error::Overflow { span, op: *op }.into(),
        SiteKind::DivisionByZero(op) => semantics::Error::DivisionByZero { span, op: *op }.into(),
        SiteKind::NotAnInt(op) => semantics::Error::NotAnInt { span, op: *op }.into(),
        SiteKind::SizeMismatch(op) => semantics::Error::SizeMismatch {
            span,
            op: *op,
            left: len(a),
            right: len(b),
        }
        .into(),
        SiteKind::NegativeCount(op) => semantics::Error::NegativeCount {
            span,
            op: *op,
            count: a,
        }
        .into(),
        SiteKind::Alloc(Some(op)) => semantics::Error::TooLarge {
            span,
            op: *op,
            count: a,
        }
        .into(),
        SiteKind::Alloc(None) => Error::UnsupportedAtRuntime {
            span,
            what: format!("an array of {a} elements (out of memory)"),
        },
        SiteKind::Ragged => Error::UnsupportedAtRuntime {
            span,
            what: format!("an array of arrays whose rows differ in length ({a} and {b})"),
        },
        SiteKind::AccumulatorSize(op) => Error::UnsupportedAtRuntime {
            span,
            what: format!("an accumulator of `{op}` whose length changes ({a} to {b})"),
        },
        SiteKind::InputSize { param } => Error::Internal {
            span,
            message: format!(
                "input `{param}` refused by the compiled code after the evaluator's checks accepted it"
            ),
        },
    }
}
