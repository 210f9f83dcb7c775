//! Calling generated code in this process: the shared library loaded with
//! `libloading`, every entry called through its uniform wrapper
//! (`abi::CALL_SIGNATURE`), inputs passed as pointers to the caller's
//! buffers (no copy of a dense input), results copied out of the context's
//! arena. docs/codegen.md, "Two ways to run generated code", says when to
//! use this and when the driver process.
//!
//! Thread safety: a [`Library`] holds one context behind a mutex, so it
//! may be shared between threads (`Library: Send + Sync`) and calls are
//! serialized; for parallel calls open one `Library` per thread (each
//! has its own context; the loaded code is shared by the dynamic loader).
//!
//! This is the only module of the crate with `unsafe`: loading a library
//! runs its initialisers, and calling C is outside Rust's checks. Each
//! block says why it is sound; what they rely on is that the library was
//! built by [`crate::build`] from the [`crate::CProgram`] it is opened
//! with (the wrapper signature and the layouts of its entries), and that
//! the generated code keeps the calling convention of `abi.rs`.
#![allow(unsafe_code)]

use std::ffi::{c_int, c_void};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use data::{Arg, Buffer, Data, Dense};
use semantics::{SizeEnv, Value};
use syntax::Span;

use crate::error::Error;
use crate::layout::Kind;
use crate::transfer::{assemble, flatten_value, leaf_len};
use crate::{Built, CProgram, Entry};

/// Libraries opened so far by this process (names the loaded copies).
static OPENED: AtomicU64 = AtomicU64::new(0);

/// `abi::CALL_SIGNATURE` as a Rust type.
type CallFn = unsafe extern "C" fn(
    *mut c_void,
    *const i64,
    *const *const c_void,
    *mut i64,
    *const *mut c_void,
) -> c_int;
type CtxNewFn = unsafe extern "C" fn() -> *mut c_void;
type CtxFreeFn = unsafe extern "C" fn(*mut c_void);
type ErrorInfoFn = unsafe extern "C" fn(*mut c_void, *mut i64);

/// A built program loaded into this process, called many times.
pub struct Library {
    program: CProgram,
    calls: Vec<CallFn>,
    ctx_free: CtxFreeFn,
    error_info: ErrorInfoFn,
    ctx: Mutex<CallState>,
    // Last: the code must stay loaded while the pointers above live (the
    // context is freed in `Drop` before the fields are dropped). A program
    // with OpenMP loops is never unloaded: unloading it may unload libgomp
    // under its idle worker threads, which then crash.
    lib: std::mem::ManuallyDrop<libloading::Library>,
}

/// The call context (`ad_ctx *`), owned by one [`Library`].
struct CallState(*mut c_void);

// SAFETY: the context is plain heap memory of the generated runtime with
// no thread affinity; it is only touched while its `Library`'s mutex is
// held, so moving it between threads is sound.
unsafe impl Send for CallState {}

/// One output slot: the callee stores a scalar result (a `double`, an
/// `int64_t` or a `bool`) or the address of a result buffer in it.
#[repr(C)]
#[derive(Clone, Copy)]
union Slot {
    real: f64,
    int: i64,
    byte: u8,
    ptr: *const c_void,
}

impl Library {
    /// Loads the shared library of a program built with
    /// `Config::shared_library` (and without the sanitizers, whose run
    /// time must be the first library of a process).
    pub fn open(built: &Built) -> Result<Library, Error> {
        let internal = |message: String| Error::Internal {
            span: Span::GENERATED,
            message,
        };
        let Some(path) = &built.shared_library else {
            return Err(internal(
                "the program was built without a shared library (Config::shared_library)".into(),
            ));
        };
        if built.sanitized {
            return Err(Error::unsupported(
                Span::GENERATED,
                "loading a sanitized build into this process (run it through the driver process instead)",
            ));
        }
        // The dynamic loader knows a library by its path: a program
        // rebuilt in place while an older build is loaded would get the
        // old code. So each open loads its own copy, removed once loaded
        // (the mapping stays).
        let copy = path.with_extension(format!(
            "{}.{}.so",
            std::process::id(),
            OPENED.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::copy(path, &copy).map_err(|e| Error::io("copy", path, e))?;
        // SAFETY: the file is the library `build` compiled from generated
        // C, whose only initialisers are those of libc, libm and (with
        // OpenMP) libgomp; loading it runs nothing else.
        let loaded = unsafe { libloading::Library::new(&copy) };
        let _ = std::fs::remove_file(&copy);
        let lib = loaded.map_err(|e| Error::io("load", path, e))?;
        let sym = |name: &str| -> Result<*const c_void, Error> {
            // SAFETY: only the address is read; it is converted to a
            // function pointer of the type the generated code defines the
            // symbol with (`runtime.rs`, `abi.rs`) just below.
            unsafe { lib.get::<*const c_void>(name.as_bytes()) }
                .map(|s| *s)
                .map_err(|e| Error::io("find the symbol in", path, format!("`{name}`: {e}")))
        };
        // SAFETY (the transmutes): each symbol is defined by the generated
        // code with exactly this C type: `ad_ctx *adrev_ctx_new(void)`,
        // `void adrev_ctx_free(ad_ctx *)`, `void adrev_error_info(ad_ctx *,
        // int64_t[3])`, and every `adrev_call_*` with CALL_SIGNATURE.
        let ctx_new: CtxNewFn = unsafe { std::mem::transmute(sym("adrev_ctx_new")?) };
        let ctx_free: CtxFreeFn = unsafe { std::mem::transmute(sym("adrev_ctx_free")?) };
        let error_info: ErrorInfoFn = unsafe { std::mem::transmute(sym("adrev_error_info")?) };
        let calls = built
            .program
            .entries
            .iter()
            .map(|e| {
                sym(&e.call_symbol)
                    .map(|p| unsafe { std::mem::transmute::<*const c_void, CallFn>(p) })
            })
            .collect::<Result<Vec<_>, _>>()?;
        // SAFETY: `adrev_ctx_new` takes nothing and returns a fresh context
        // or NULL.
        let ctx = unsafe { ctx_new() };
        if ctx.is_null() {
            return Err(internal(
                "cannot create a call context (out of memory)".into(),
            ));
        }
        Ok(Library {
            program: built.program.clone(),
            calls,
            ctx_free,
            error_info,
            ctx: Mutex::new(CallState(ctx)),
            lib: std::mem::ManuallyDrop::new(lib),
        })
    }

    /// The program this library was built from.
    pub fn program(&self) -> &CProgram {
        &self.program
    }

    /// Calls an entry on positional arguments and returns its value, as
    /// [`crate::run`] does through the driver process (the same checks,
    /// the same errors with the same spans, the same bits).
    pub fn call_values(&self, entry: &str, args: &[Value]) -> Result<Value, Error> {
        let args: Vec<Data<'_>> = args.iter().cloned().map(Data::Value).collect();
        self.call(entry, &args).map(|d| d.to_value())
    }

    /// Calls an entry (`None`: the last definition) on inputs given by
    /// parameter name, like [`crate::run_entry`]: every parameter exactly
    /// once, no other name (inputs are views; nothing dense is copied).
    pub fn call_entry(
        &self,
        entry: Option<&str>,
        inputs: &[(String, Data<'_>)],
    ) -> Result<Data<'static>, Error> {
        let e = crate::exec::find_entry(&self.program, entry)?;
        let views: Vec<(String, Data<'_>)> =
            inputs.iter().map(|(n, d)| (n.clone(), d.view())).collect();
        let args = crate::exec::positional(e, &views)?;
        self.call(&e.name, &args)
    }

    /// Calls an entry on positional arguments. Dense arguments are passed
    /// to the C code in place (their buffers are not copied); general
    /// values are flattened first (`layout.rs`). The arguments are checked
    /// against the parameters' types with the evaluator's messages; the
    /// result is dense wherever its type is arrays of a scalar.
    pub fn call(&self, entry: &str, args: &[Data<'_>]) -> Result<Data<'static>, Error> {
        self.run(entry, args, 0).map(|(result, _)| result)
    }

    /// [`Library::call`], then `reps` more calls each timed around the
    /// generated function alone: the arguments are checked and laid out
    /// once, before the first call, and the result is copied out of the
    /// arena after the clock stops. What GradBench means by timing "the
    /// computation only". Returns the first call's result and the times.
    pub fn time(
        &self,
        entry: &str,
        args: &[Data<'_>],
        reps: usize,
    ) -> Result<(Data<'static>, Vec<std::time::Duration>), Error> {
        self.run(entry, args, reps)
    }

    /// Checks `args`, calls entry `entry` once for its result and `reps`
    /// more times for their durations.
    fn run(
        &self,
        entry: &str,
        args: &[Data<'_>],
        reps: usize,
    ) -> Result<(Data<'static>, Vec<std::time::Duration>), Error> {
        let e = crate::exec::find_entry(&self.program, Some(entry))?;
        let k = self
            .program
            .entries
            .iter()
            .position(|x| std::ptr::eq(x, e))
            .ok_or_else(|| Error::Internal {
                span: e.span,
                message: format!("`{}` is not among the library's entries", e.name),
            })?;
        crate::exec::check_arity(e, args.len())?;
        let checked: Vec<Arg<'_, '_>> = e
            .params
            .iter()
            .zip(args)
            .map(|(p, a)| Arg {
                name: &p.name,
                ty: &p.ty,
                data: a,
                from: None,
            })
            .collect();
        let mut sizes = data::check_args(&checked).map_err(|err| match err {
            data::DataError::Input { name, source, .. } => {
                let span = e
                    .params
                    .iter()
                    .find(|p| p.name == name)
                    .map_or(e.span, |p| p.span);
                Error::from(semantics::Error::Input { span, name, source })
            }
            other => Error::Internal {
                span: e.span,
                message: other.to_string(),
            },
        })?;
        let inputs = Inputs::of(e, args, &sizes)?;
        let (dims, leaves) = self.invoke(k, e, &inputs, None)?;
        let result = assemble(&e.ret, &dims, leaves).ok_or_else(|| Error::Internal {
            span: e.span,
            message: format!("`{}` returned a result that does not fit its type", e.name),
        })?;
        crate::exec::check_result(e, |ty, sizes| result.check(ty, sizes, None), &mut sizes)?;
        let mut times = Vec::with_capacity(reps);
        for _ in 0..reps {
            self.invoke(k, e, &inputs, Some(&mut times))?;
        }
        Ok((result, times))
    }

    /// Runs the wrapper of entry `k` and copies the result out of the
    /// arena: its dims and its leaves.
    /// With `clock`, the call alone is timed and its duration pushed.
    fn invoke(
        &self,
        k: usize,
        e: &Entry,
        inputs: &Inputs<'_>,
        clock: Option<&mut Vec<std::time::Duration>>,
    ) -> Result<(Vec<usize>, Vec<Buffer<'static>>), Error> {
        let internal = |message: String| Error::Internal {
            span: e.span,
            message,
        };
        let r = &e.ret_layout;
        let mut out_dims = vec![0i64; r.dims];
        let mut slots = vec![Slot { int: 0 }; r.leaves.len()];
        let out_ptrs: Vec<*mut c_void> = slots
            .iter_mut()
            .map(|s| s as *mut Slot as *mut c_void)
            .collect();
        let ctx = self.ctx.lock().unwrap_or_else(|p| p.into_inner());
        // SAFETY: `calls[k]` is entry k's wrapper (CALL_SIGNATURE). The
        // context is ours and held under the lock. `inputs` holds exactly
        // the entry's dims and one pointer per parameter leaf, each to a
        // live buffer of as many scalars of the leaf's kind as its dims
        // say (checked by `Inputs::of`), which the callee only reads.
        // `out_dims` has one element per result dim and `out_ptrs` one
        // slot per result leaf, 8 bytes each, enough for a scalar or an
        // address. The callee keeps no pointer to any of them.
        let start = std::time::Instant::now();
        let rc = unsafe {
            (self.calls[k])(
                ctx.0,
                inputs.dims.as_ptr(),
                inputs.leaves.as_ptr(),
                out_dims.as_mut_ptr(),
                out_ptrs.as_ptr(),
            )
        };
        if let Some(times) = clock {
            times.push(start.elapsed());
        }
        if rc != 0 {
            let mut info = [0i64; 3];
            // SAFETY: `adrev_error_info` writes three int64_t.
            unsafe { (self.error_info)(ctx.0, info.as_mut_ptr()) };
            let site = usize::try_from(info[0])
                .ok()
                .and_then(|s| s.checked_sub(1))
                .and_then(|s| self.program.sites.get(s))
                .ok_or_else(|| {
                    internal(format!(
                        "`{}` failed at an unknown site {}",
                        e.name, info[0]
                    ))
                })?;
            return Err(crate::exec::site_error(site, info[1], info[2]));
        }
        let dims = out_dims
            .iter()
            .map(|&d| usize::try_from(d))
            .collect::<Result<Vec<usize>, _>>()
            .map_err(|_| internal(format!("`{}` returned a negative array length", e.name)))?;
        let mut leaves = Vec::with_capacity(r.leaves.len());
        for (leaf, slot) in r.leaves.iter().zip(&slots) {
            let n = leaf_len(&leaf.under, &dims)
                .ok_or_else(|| internal(format!("`{}` returned too large a result", e.name)))?;
            // SAFETY: the callee stored into every slot (the generated
            // epilogue writes every output leaf before returning 0): a
            // scalar of the leaf's kind where `under` is empty, else the
            // address of an arena buffer of `n` scalars of that kind (the
            // product of the dims it wrote), valid until the context's
            // next call, which cannot start while we hold the lock. For
            // n = 0 the address is not read. Booleans are read as bytes
            // (C99 `bool` stores 0 or 1) and compared with 0.
            let buffer = unsafe {
                match (leaf.kind, leaf.under.is_empty()) {
                    (Kind::Real, true) => Buffer::Real(vec![slot.real].into()),
                    (Kind::Int, true) => Buffer::Int(vec![slot.int].into()),
                    (Kind::Bool, true) => Buffer::Bool(vec![slot.byte != 0].into()),
                    (_, false) if n == 0 => empty(leaf.kind),
                    (Kind::Real, false) => Buffer::Real(
                        std::slice::from_raw_parts(slot.ptr as *const f64, n)
                            .to_vec()
                            .into(),
                    ),
                    (Kind::Int, false) => Buffer::Int(
                        std::slice::from_raw_parts(slot.ptr as *const i64, n)
                            .to_vec()
                            .into(),
                    ),
                    (Kind::Bool, false) => Buffer::Bool(
                        std::slice::from_raw_parts(slot.ptr as *const u8, n)
                            .iter()
                            .map(|&b| b != 0)
                            .collect::<Vec<_>>()
                            .into(),
                    ),
                }
            };
            leaves.push(buffer);
        }
        drop(ctx);
        Ok((dims, leaves))
    }
}

fn empty(kind: Kind) -> Buffer<'static> {
    match kind {
        Kind::Real => Buffer::Real(Vec::new().into()),
        Kind::Int => Buffer::Int(Vec::new().into()),
        Kind::Bool => Buffer::Bool(Vec::new().into()),
    }
}

impl Drop for Library {
    fn drop(&mut self) {
        let ctx = self.ctx.get_mut().unwrap_or_else(|p| p.into_inner());
        // SAFETY: the context came from `adrev_ctx_new` of this library,
        // which is still loaded (`lib` is dropped after this), and is
        // freed once, here.
        unsafe { (self.ctx_free)(ctx.0) };
        if !self.program.parallel {
            // SAFETY: dropped once, here, after the last use of the code.
            unsafe { std::mem::ManuallyDrop::drop(&mut self.lib) };
        }
    }
}

/// The arguments of one call as the wrapper takes them: every dim, and a
/// pointer per leaf into the caller's dense buffers or into `owned`
/// (values flattened for this call).
struct Inputs<'a> {
    dims: Vec<i64>,
    leaves: Vec<*const c_void>,
    /// Keeps the flattened leaves of general values alive for the call.
    _owned: Vec<Buffer<'static>>,
    _borrow: std::marker::PhantomData<&'a ()>,
}

impl<'a> Inputs<'a> {
    /// Lays out the (checked) arguments of entry `e`, verifying that every
    /// leaf's buffer holds exactly what its dims say: the C code reads
    /// that many scalars.
    fn of(e: &Entry, args: &'a [Data<'a>], sizes: &SizeEnv) -> Result<Inputs<'a>, Error> {
        let mut dims: Vec<i64> = Vec::new();
        let mut parts: Vec<Part<'a>> = Vec::new();
        for (p, a) in e.params.iter().zip(args) {
            let (at, at_parts) = (dims.len(), parts.len());
            lay_out(a, &p.ty, sizes, &mut dims, &mut parts).map_err(|what| {
                Error::UnsupportedAtRuntime {
                    span: p.span,
                    what: format!("input `{}`: {what}", p.name),
                }
            })?;
            let own_dims: Vec<usize> = dims[at..].iter().map(|&d| d as usize).collect();
            let own_parts = &parts[at_parts..];
            let fits = own_dims.len() == p.layout.dims
                && own_parts.len() == p.layout.leaves.len()
                && p.layout.leaves.iter().zip(own_parts).all(|(leaf, part)| {
                    let b = part.buffer();
                    kind_of(b) == leaf.kind && leaf_len(&leaf.under, &own_dims) == Some(b.len())
                });
            if !fits {
                return Err(Error::Internal {
                    span: p.span,
                    message: format!("input `{}` does not fit its layout", p.name),
                });
            }
        }
        let mut owned = Vec::new();
        let mut leaves = Vec::with_capacity(parts.len());
        for part in parts {
            match part {
                Part::Borrowed(b) => leaves.push(ptr(b)),
                Part::Owned(b) => {
                    // The Vec's heap buffer does not move when the Buffer
                    // is moved into `owned`.
                    leaves.push(ptr(&b));
                    owned.push(b);
                }
            }
        }
        Ok(Inputs {
            dims,
            leaves,
            _owned: owned,
            _borrow: std::marker::PhantomData,
        })
    }
}

enum Part<'a> {
    Borrowed(&'a Buffer<'a>),
    Owned(Buffer<'static>),
}

impl Part<'_> {
    fn buffer(&self) -> &Buffer<'_> {
        match self {
            Part::Borrowed(b) => b,
            Part::Owned(b) => b,
        }
    }
}

fn kind_of(b: &Buffer<'_>) -> Kind {
    match b {
        Buffer::Real(_) => Kind::Real,
        Buffer::Int(_) => Kind::Int,
        Buffer::Bool(_) => Kind::Bool,
    }
}

fn ptr(b: &Buffer<'_>) -> *const c_void {
    match b {
        Buffer::Real(x) => x.as_ptr() as *const c_void,
        Buffer::Int(x) => x.as_ptr() as *const c_void,
        Buffer::Bool(x) => x.as_ptr() as *const c_void,
    }
}

/// Appends the dims and leaves of one argument of type `ty`.
fn lay_out<'a>(
    a: &'a Data<'a>,
    ty: &syntax::Ty,
    sizes: &SizeEnv,
    dims: &mut Vec<i64>,
    parts: &mut Vec<Part<'a>>,
) -> Result<(), String> {
    match (a, ty) {
        (Data::Dense(d), _) => {
            push_dims(d, dims)?;
            parts.push(Part::Borrowed(d.buffer()));
            Ok(())
        }
        (Data::Tuple(items), syntax::Ty::Tuple(tys)) if items.len() == tys.len() => items
            .iter()
            .zip(tys)
            .try_for_each(|(it, t)| lay_out(it, t, sizes, dims, parts)),
        (Data::Tuple(_), _) => Err("a tuple where another type was expected".into()),
        (Data::Value(v), _) => {
            let (ds, leaves) = flatten_value(v, ty, sizes)?;
            for d in ds {
                dims.push(i64::try_from(d).map_err(|_| "an array too long".to_string())?);
            }
            parts.extend(leaves.into_iter().map(Part::Owned));
            Ok(())
        }
    }
}

fn push_dims(d: &Dense<'_>, dims: &mut Vec<i64>) -> Result<(), String> {
    for &n in d.shape() {
        dims.push(i64::try_from(n).map_err(|_| "an array too long".to_string())?);
    }
    Ok(())
}
