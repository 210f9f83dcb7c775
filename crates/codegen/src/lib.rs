//! `codegen`: first-order Target programs to C99, built with the system C
//! compiler and run from Rust.
//!
//! In: a typed core-form module, as the optimizer leaves it (seeds/000
//! Lemma 5.3: no lambda, application or non-ground variable except the
//! function arguments of array builtins; lambdas applied where they stand
//! or bound by `let` and applied later are inlined too). Out: a
//! [`CProgram`] (C source, header, driver; [`emit`], pure), built into a
//! driver executable and optionally a shared library ([`build`]), and run
//! on [`semantics::Value`]s through the driver process ([`run`],
//! [`run_entry`], [`time`]) or in process on `data::Data` ([`Library`]).
//!
//! - `lower.rs` / `arrays.rs` / `folds.rs`: expressions to statements of
//!   the loop IR (`imp`); arrays are manifest buffers or delayed (pull)
//!   arrays, so chains of `map`, `map2`, `build` and shifts fuse into the
//!   loop that consumes them; `assoc.rs` says which `reduce`s the fast
//!   configurations may split into lanes or parallel chunks;
//! - `imp/`: the loop IR, its verifier and printers, and its passes run on
//!   each function: sibling loops over one range fused (`imp/fuse.rs`),
//!   then loop-invariant checks and scratch buffers moved before their
//!   loops (`imp/licm.rs`); C is printed last (`imp/c.rs`);
//! - `abi.rs`: one exported function per definition, its signature (dims
//!   and leaves of each parameter, `layout.rs`) and the header;
//! - `runtime.rs`: the arena and helpers every generated file includes;
//! - `driver.rs` / `transfer.rs` / `exec.rs`: the driver executable, the
//!   exact binary exchange of values (typed leaves, shared with the
//!   library path), building and running;
//! - `library.rs`: the shared library loaded and called in process (the
//!   crate's only `unsafe`);
//!
//! Invariants: the generated code computes what `semantics` computes, bit
//! for bit in the default configuration (same libm, no reassociation, no
//! contraction: `-ffp-contract=off`); it reports the evaluator's run-time
//! errors with the same spans (except that errors inside array elements
//! that are never used may go unreported, docs/codegen.md); no allocation
//! is made per element: temporaries come from an arena reset per loop
//! iteration and per call.

mod abi;
mod arrays;
mod assoc;
mod driver;
mod error;
mod exec;
mod folds;
mod hist;
pub mod imp;
mod inplace;
mod layout;
mod library;
mod lower;
mod runtime;
mod streams;
mod transfer;
mod uses;
mod val;
mod whiles;
mod writer;

use std::path::PathBuf;

use syntax::{Module, Ty};

pub use abi::{CALL_SIGNATURE, Entry, EntryParam};
pub use error::Error;
pub use exec::{Times, build, build_library, encode_args, run, run_entry, run_file, time};
pub use layout::{Kind, Layout, Leaf};
pub use library::Library;
pub use lower::{Site, SiteKind};

/// How C code is generated and built.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    /// Mark large `map`s and `reduce`s as OpenMP parallel loops and build
    /// with `-fopenmp`. Off by default: a parallel `reduce` adds in
    /// another order, so results are no longer bit-identical to the
    /// evaluator's (only a `reduce` whose operator is associative with its
    /// unit is split: `assoc.rs`, note [rebracketing]).
    pub parallel: bool,
    /// With `parallel`, the least trip count at which a loop runs on more
    /// than one thread (default 32768: below it, starting the threads
    /// costs more than they save; a loop whose body has a loop of its own
    /// runs in parallel from at most 1024). Tests set it to 2 to run the
    /// parallel paths on small inputs.
    pub parallel_min: u32,
    /// Let `reduce` keep several partial results (lanes) combined at the
    /// end, which makes sums several times faster; only where `reduce`'s
    /// function is associative with its unit (`assoc.rs`, note
    /// [rebracketing]), so the results differ in rounding alone.
    /// Off by default: the evaluator folds from the left, and results then
    /// differ from its in the last bits.
    pub reassociate: bool,
    /// Call glibc's vector math library (libmvec) from vectorized loops:
    /// `sin`, `cos`, `tan`, `exp`, `log`, `tanh` several elements at a
    /// time. Off by default: libmvec's results may differ from libm's by a
    /// few units in the last place (within 4 ulp), so no longer
    /// bit-identical to the evaluator's. Pair it with `native` for the
    /// widest vectors.
    pub vector_math: bool,
    /// The optimization level passed to the C compiler.
    pub opt_level: OptLevel,
    /// Build for the machine at hand (`-march=native`); does not change
    /// results (contraction stays off).
    pub native: bool,
    /// Build with AddressSanitizer and UndefinedBehaviorSanitizer (and
    /// `-O1 -g`), aborting on the first report.
    pub sanitize: bool,
    /// Also build a shared library `lib<name>.so`.
    pub shared_library: bool,
    /// The C compiler (default: `$CC`, else `cc`).
    pub cc: String,
    /// More flags, appended last.
    pub extra_flags: Vec<String>,
}

/// The C compiler's optimization level.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OptLevel {
    /// `-O0`.
    O0,
    /// `-O1`.
    O1,
    /// `-O2`.
    O2,
    /// `-O3`.
    O3,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            parallel: false,
            parallel_min: arrays::PAR_MIN,
            reassociate: false,
            vector_math: false,
            opt_level: OptLevel::O3,
            native: false,
            sanitize: false,
            shared_library: false,
            cc: std::env::var("CC").unwrap_or_else(|_| "cc".to_string()),
            extra_flags: Vec::new(),
        }
    }
}

/// The libm functions the generated code calls, other than `sqrt` and
/// `fabs` (exact in IEEE arithmetic, so a folded call equals the
/// library's): compiled as plain calls (`Config::flags`). `max` and `min`
/// are the runtime's own `ad_max` and `ad_min`.
const MATH_FUNCTIONS: [&str; 16] = [
    "sin", "cos", "tan", "tanh", "exp", "log", "pow", "log1p", "expm1", "atan", "atan2", "hypot",
    "sinh", "cosh", "erf", "lgamma_r",
];

impl Config {
    /// The flags the C compiler is given (docs/codegen.md explains each).
    pub fn flags(&self) -> Vec<String> {
        let mut f: Vec<String> = vec!["-std=c99".into()];
        if self.sanitize {
            f.extend(
                [
                    "-O1",
                    "-g",
                    "-fsanitize=address,undefined",
                    "-fno-sanitize-recover=all",
                    "-fno-omit-frame-pointer",
                ]
                .map(String::from),
            );
        } else {
            f.push(
                match self.opt_level {
                    OptLevel::O0 => "-O0",
                    OptLevel::O1 => "-O1",
                    OptLevel::O2 => "-O2",
                    OptLevel::O3 => "-O3",
                }
                .into(),
            );
            if matches!(self.opt_level, OptLevel::O2 | OptLevel::O3) {
                // Every loop starts a 64-byte line: without it, where GCC
                // happens to place the hot inner loops of a large function
                // decides its speed (GMM's gradient: the same instructions,
                // 20% slower after a change elsewhere in the function;
                // docs/codegen.md, "Loop alignment").
                f.push("-falign-loops=64".into());
            }
        }
        f.extend(["-ffp-contract=off", "-fno-math-errno"].map(String::from));
        // The math functions are not builtins: gcc would fold them on
        // constants with correctly rounded results, which glibc's are not
        // always (`tanh`, `tan`, `sin`, `cos`: an ulp off), and merge `sin`
        // and `cos` into `sincos`. The prelude declares them `const`, so
        // calls on one argument are still shared.
        f.extend(MATH_FUNCTIONS.iter().map(|m| format!("-fno-builtin-{m}")));
        if self.native {
            f.push("-march=native".into());
        }
        if self.parallel {
            f.push("-fopenmp".into());
        } else if self.reassociate || self.vector_math {
            // Only the `omp simd` pragmas, no OpenMP run time.
            f.push("-fopenmp-simd".into());
        }
        if self.vector_math {
            f.push("-DAD_VECTOR_MATH".into());
        }
        f.extend(self.extra_flags.iter().cloned());
        f
    }

    /// The libraries linked, after the sources.
    pub fn libs(&self) -> Vec<String> {
        if self.vector_math {
            vec!["-lmvec".into(), "-lm".into()]
        } else {
            vec!["-lm".into()]
        }
    }
}

/// Generated C: the source, its header and the driver, plus what the
/// Rust side needs to call it.
#[derive(Debug, Clone, PartialEq)]
pub struct CProgram {
    /// The file stem (`program` for `program.c`, `program.h`).
    pub name: String,
    /// The C source: runtime, error table, one function per definition.
    pub source: String,
    /// The header declaring the exported functions.
    pub header: String,
    /// The driver's C source (a `main` running one function on a file).
    pub driver: String,
    /// The exported functions.
    pub entries: Vec<Entry>,
    /// The failure sites, numbered from 1.
    pub sites: Vec<Site>,
    /// Whether the code has parallel loops (build with OpenMP).
    pub parallel: bool,
    /// The exported functions in the loop IR, as C was printed from them.
    pub loop_ir: imp::Program,
}

impl CProgram {
    /// The exported function for a definition (`None`: the last one).
    pub fn entry(&self, name: Option<&str>) -> Option<&Entry> {
        match name {
            Some(n) => self.entries.iter().find(|e| e.name == n),
            None => self.entries.last(),
        }
    }
}

/// A program built by [`build`].
#[derive(Debug, Clone, PartialEq)]
pub struct Built {
    /// What was built.
    pub program: CProgram,
    /// The directory holding the files.
    pub dir: PathBuf,
    /// The C source file.
    pub source: PathBuf,
    /// The header file.
    pub header: PathBuf,
    /// The driver executable (`None`: built by [`build_library`]).
    pub driver: Option<PathBuf>,
    /// The shared library, if asked for.
    pub shared_library: Option<PathBuf>,
    /// The compiler command lines that were run, as a shell would read them.
    pub commands: Vec<String>,
    /// Whether it was built with the sanitizers.
    pub sanitized: bool,
}

/// Generates C for every definition of `m` whose parameters and result
/// are ground (definitions taking or returning functions are only used
/// inlined into later ones, and are skipped unless one is the last).
pub fn emit(m: &Module, cfg: &Config) -> Result<CProgram, Error> {
    emit_named(m, cfg, &stem(&m.file.name))
}

/// [`emit`], the files named `name.c` and `name.h` (the source includes
/// `name.h`): `cargo xtask codegen -o OUT.c` names them after `OUT`.
pub fn emit_named(m: &Module, cfg: &Config, name: &str) -> Result<CProgram, Error> {
    // Derivative rules are for the routes that differentiate; the C code
    // computes the value, the body's (`syntax::rules::erase`).
    if syntax::rules::any(m) {
        let mut erased = m.clone();
        syntax::rules::erase(&mut erased);
        return emit_named(&erased, cfg, name);
    }
    if !m.is_typed() {
        return Err(Error::core(
            syntax::Span::GENERATED,
            "the module has no types (run the front end first)",
        ));
    }
    let last = m.defs.len().saturating_sub(1);
    let symbols = abi::symbols(m);
    let mut sites = Vec::new();
    let mut entries = Vec::new();
    let mut prog = imp::Program::default();
    for (k, (def, sym)) in m.defs.iter().zip(&symbols).enumerate() {
        let ground = def
            .params
            .iter()
            .all(|p| p.ty.as_ref().is_some_and(Ty::is_ground))
            && def.ret.as_ref().is_none_or(Ty::is_ground);
        if !ground && k != last {
            continue;
        }
        let (entry, func) = abi::emit_def(m, def, sym, cfg, &mut prog, &mut sites)?;
        entries.push(entry);
        prog.funcs.push(func);
    }
    optimize(&mut prog)?;
    let funcs: Vec<String> = prog.funcs.iter().map(|f| imp::c::func(&prog, f)).collect();
    let name = name.to_string();
    let mut source = format!(
        "/* Generated by the adrev C backend from {} (C99; see docs/codegen.md). */\n",
        abi::c_string(&m.file.name).trim_matches('"')
    );
    source.push_str(runtime::PRELUDE);
    source.push_str(&format!("\n#include \"{name}.h\"\n\n"));
    source.push_str(&imp::c::tables(&prog));
    source.push_str("static const char *const ad_site_text[] = {\n    \"\",\n");
    for s in &sites {
        source.push_str(&format!("    {},\n", abi::site_text(m, s)));
    }
    source.push_str("};\n\n");
    source.push_str(
        "const char *adrev_error(ad_ctx *ctx) {\n    if (ctx->site <= 0 || (size_t)ctx->site >= sizeof ad_site_text / sizeof ad_site_text[0]) return \"\";\n    snprintf(ctx->message, sizeof ctx->message, ad_site_text[ctx->site], (long long)ctx->detail[0], (long long)ctx->detail[1]);\n    return ctx->message;\n}\n\n",
    );
    for f in funcs {
        source.push_str(&f);
        source.push('\n');
    }
    for e in &entries {
        source.push_str(&e.call_wrapper());
        source.push('\n');
    }
    let header = header(&name, &m.file.name, &entries);
    let driver = driver::driver(&format!("{name}.h"), &entries);
    Ok(CProgram {
        name,
        source,
        header,
        driver,
        entries,
        sites,
        parallel: cfg.parallel,
        loop_ir: prog,
    })
}

/// The loop IR's passes on every function: the removal of bounds checks
/// that cannot fire, then sibling loop fusion, then
/// loop-invariant code motion (docs/codegen.md), twice (a loop whose
/// checks left it may fuse with the next, and code motion then takes the
/// invariants out of the loops fused), then the reuse of blocks that die
/// in the loop writing a new one (fusion first puts their reads and the
/// write in one loop), each checked by the verifier (as the lowering's
/// output is first): a failure is a bug here.
fn optimize(prog: &mut imp::Program) -> Result<(), Error> {
    let internal = |e: imp::VerifyError| Error::Internal {
        span: syntax::Span::GENERATED,
        message: e.to_string(),
    };
    imp::verify(prog).map_err(internal)?;
    let mut funcs = std::mem::take(&mut prog.funcs);
    for f in &mut funcs {
        imp::bounds::elide(f);
        imp::verify_func(prog, f).map_err(internal)?;
        for _ in 0..2 {
            imp::fuse::fuse(f);
            imp::verify_func(prog, f).map_err(internal)?;
            imp::licm::hoist(prog, f);
            imp::verify_func(prog, f).map_err(internal)?;
        }
        imp::reuse::reuse(f);
        imp::verify_func(prog, f).map_err(internal)?;
    }
    prog.funcs = funcs;
    Ok(())
}

/// Emits, builds (in `dir`) and runs a module's entry (`None`: the last
/// definition) on inputs by parameter name: the C backend's counterpart
/// of `semantics::eval_entry`, for `eval --backend c` / `grad --backend c`.
/// The value prints (`Display`) exactly as the evaluator's does, and is
/// bit-identical to it in the default configuration.
pub fn eval_entry(
    m: &Module,
    entry: Option<&str>,
    inputs: &[(String, semantics::Value)],
    cfg: &Config,
    dir: &std::path::Path,
) -> Result<semantics::Value, Error> {
    let name = match entry {
        Some(n) => n.to_string(),
        None => m
            .defs
            .last()
            .map(|d| d.name.to_string())
            .ok_or(Error::NoSuchEntry {
                span: syntax::Span::GENERATED,
                name: None,
            })?,
    };
    if m.def(&name).is_none() {
        return Err(Error::NoSuchEntry {
            span: syntax::Span::GENERATED,
            name: Some(name),
        });
    }
    let c = emit(m, cfg)?;
    let built = build(&c, dir, cfg)?;
    run_entry(&built, Some(&name), inputs)
}

/// Writes the C source and header of a program as `<dir>/<name>.c` and
/// `<dir>/<name>.h` without compiling them (`cargo xtask codegen`);
/// returns the two paths.
pub fn write_sources(c: &CProgram, dir: &std::path::Path) -> Result<(PathBuf, PathBuf), Error> {
    std::fs::create_dir_all(dir).map_err(|e| Error::io("create", dir, e))?;
    let source = dir.join(format!("{}.c", c.name));
    let header = dir.join(format!("{}.h", c.name));
    std::fs::write(&source, &c.source).map_err(|e| Error::io("write", &source, e))?;
    std::fs::write(&header, &c.header).map_err(|e| Error::io("write", &header, e))?;
    Ok((source, header))
}

/// The header: the context API and one prototype per entry.
fn header(name: &str, file: &str, entries: &[Entry]) -> String {
    let guard = format!("ADREV_{}_H", name.to_ascii_uppercase());
    let mut h = format!(
        "/* Generated by the adrev C backend from {}.\n * Each function returns 0, or the number of the failure site (adrev_error says\n * what failed). Results live in the context's arena until its next call. */\n#ifndef {guard}\n#define {guard}\n\n#include <stdbool.h>\n#include <stdint.h>\n\ntypedef struct ad_ctx ad_ctx;\n\n/* A call context (its arena is reused from call to call); NULL if out of memory. */\nad_ctx *adrev_ctx_new(void);\n/* Frees a context and every result it holds. */\nvoid adrev_ctx_free(ad_ctx *ctx);\n/* What the last call's failure was (\"\" after a success). */\nconst char *adrev_error(ad_ctx *ctx);\n/* The last failure's site number and its two details (0s after a success). */\nvoid adrev_error_info(ad_ctx *ctx, int64_t info[3]);\n/* Each entry also has a wrapper adrev_call_NAME of one signature for all entries:\n * int (ad_ctx *ctx, const int64_t *in_dims, const void *const *in_leaves,\n *      int64_t *out_dims, void *const *out_leaves)\n * with every parameter's dims in order, a pointer to each parameter leaf (its scalar\n * or its buffer), and for each result leaf where to store its scalar or buffer address. */\n\n",
        abi::c_string(file).trim_matches('"')
    );
    for e in entries {
        h.push_str(&e.describe());
        h.push('\n');
        h.push_str(&e.prototype());
        h.push_str(";\n");
        h.push_str(&e.call_prototype());
        h.push_str(";\n\n");
    }
    h.push_str(&format!("#endif /* {guard} */\n"));
    h
}

/// A C-friendly file stem from a program's path.
fn stem(path: &str) -> String {
    let s = std::path::Path::new(path)
        .file_stem()
        .and_then(|s| s.to_str())
        .map(writer::c_ident)
        .unwrap_or_default();
    if s.is_empty() {
        "program".to_string()
    } else {
        s
    }
}
