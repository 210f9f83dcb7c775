//! `adrev._adrev.Function`: one entry of a program, compiled once per
//! request (kind, Jacobian mode, `wrt`) and called on Python inputs.
//!
//! A call goes: Python inputs → values of the parameters' types
//! (`to_value`, with the package's dtype rules) → sizes checked across
//! all inputs by the evaluator's own check → `adrev::Compiled::call` →
//! outputs back to Python (`to_python`), named as the library names them.

use pyo3::prelude::*;
use pyo3::types::PyDict;
use semantics::SizeEnv;
use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::sync::{Arc, Mutex, PoisonError};
use syntax::{Def, Ty};

use crate::call::{self, param_ty};
use crate::errors::{Class, from_adrev, guarded, raise};
use crate::to_python::object;

/// How a function's requests are built.
#[derive(Debug, Clone)]
pub struct Options {
    backend: adrev::Backend,
    route: adrev::Route,
    optimize: bool,
    checkpoint: adrev::Checkpoint,
}

impl Options {
    /// Checks the names the Python API takes.
    pub fn new(
        backend: &str,
        route: &str,
        optimize: bool,
        parallel: bool,
        checkpoint: &str,
    ) -> PyResult<Options> {
        let backend = match backend {
            "c" => adrev::Backend::C(codegen::Config {
                parallel,
                ..codegen::Config::default()
            }),
            "eval" if !parallel => adrev::Backend::Eval,
            "eval" => return Err(raise(Class::Input, "parallel=True needs backend=\"c\"")),
            other => {
                return Err(raise(
                    Class::Input,
                    format!("backend is \"c\" or \"eval\", not {other:?}"),
                ));
            }
        };
        let route = choose(
            "route",
            route,
            &[
                adrev::Route::Unf,
                adrev::Route::Direct,
                adrev::Route::Forward,
            ],
            adrev::Route::name,
        )?;
        let checkpoint = choose(
            "checkpoint",
            checkpoint,
            &adrev::Checkpoint::ALL,
            adrev::Checkpoint::name,
        )?;
        Ok(Options {
            backend,
            route,
            optimize,
            checkpoint,
        })
    }
}

/// What one compiled artefact answers: kind (with the Jacobian mode) and
/// the differentiated parameters.
type Key = (&'static str, &'static str, Vec<String>);

/// One entry, with the requests compiled so far. Threads share it: the
/// cache is behind a mutex, held only while Rust code runs (compiling,
/// calling), never while Python code may run, so a thread waiting for it
/// never holds the GIL another thread needs.
#[pyclass(module = "adrev._adrev")]
pub struct Function {
    program: Arc<adrev::Program>,
    entry: Def,
    options: Options,
    compiled: Mutex<HashMap<Key, adrev::Compiled>>,
}

/// A failure inside the cache's lock, turned into a Python exception only
/// once the lock is released (raising runs Python code).
enum Failure {
    Compile(adrev::Error),
    Run(adrev::Error),
}

impl Function {
    /// The entry `name` (default: the last definition) of `program`.
    pub fn new(
        program: Arc<adrev::Program>,
        name: Option<&str>,
        options: Options,
    ) -> PyResult<Function> {
        let entry = program
            .entry(name)
            .map_err(|e| from_adrev(Class::Compile, e))?
            .clone();
        Ok(Function {
            program,
            entry,
            options,
            compiled: Mutex::new(HashMap::new()),
        })
    }

    /// Runs `f` on the compiled request for `key`, compiled now if this is
    /// its first call.
    fn with_compiled<T>(
        &self,
        key: &Key,
        kind: adrev::Kind,
        f: impl FnOnce(&adrev::Compiled) -> adrev::Result<T>,
    ) -> PyResult<T> {
        let result = {
            let mut cache = self.compiled.lock().unwrap_or_else(PoisonError::into_inner);
            match cache.entry(key.clone()) {
                Entry::Occupied(c) => f(c.get()).map_err(Failure::Run),
                Entry::Vacant(slot) => match self.program.compile(&self.request_for(key, kind)) {
                    Ok(c) => f(slot.insert(c)).map_err(Failure::Run),
                    Err(e) => Err(Failure::Compile(e)),
                },
            }
        };
        result.map_err(|failure| match failure {
            Failure::Compile(e) => from_adrev(Class::Compile, e),
            Failure::Run(e) => from_adrev(Class::Run, e),
        })
    }

    /// The library's request for `key`.
    fn request_for(&self, key: &Key, kind: adrev::Kind) -> adrev::Request {
        // A value or a JVP is not "with respect to" a subset: every
        // parameter (the empty list in the key).
        let wrt = if key.2.is_empty() {
            adrev::Wrt::All
        } else {
            adrev::Wrt::Names(key.2.clone())
        };
        adrev::Request::new(kind)
            .entry(self.entry.name.to_string())
            .wrt(wrt)
            .route(self.options.route)
            .optimize(self.options.optimize)
            .checkpoint(self.options.checkpoint)
            .backend(self.options.backend.clone())
    }
}

/// The option of `options` whose library name is `given`; the error lists
/// the names.
fn choose<T: Copy>(
    what: &str,
    given: &str,
    options: &[T],
    name: fn(T) -> &'static str,
) -> PyResult<T> {
    options
        .iter()
        .copied()
        .find(|o| name(*o) == given)
        .ok_or_else(|| {
            let names: Vec<String> = options.iter().map(|o| format!("{:?}", name(*o))).collect();
            raise(
                Class::Input,
                format!("{what} is one of {}, not {given:?}", names.join(", ")),
            )
        })
}

fn kind_of(kind: &str, mode: &str) -> PyResult<adrev::Kind> {
    let mode = choose(
        "mode",
        mode,
        &[
            adrev::JacobianMode::Auto,
            adrev::JacobianMode::Forward,
            adrev::JacobianMode::Reverse,
        ],
        adrev::JacobianMode::name,
    )?;
    Ok(match kind {
        "value" => adrev::Kind::Value,
        "grad" => adrev::Kind::Grad,
        "value-and-grad" => adrev::Kind::ValueAndGrad,
        "vjp" => adrev::Kind::Vjp,
        "jvp" => adrev::Kind::Jvp,
        "jacobian" => adrev::Kind::Jacobian { mode },
        "hessian" => adrev::Kind::Hessian,
        other => return Err(raise(Class::Internal, format!("no kind of call {other:?}"))),
    })
}

fn mode_name(kind: adrev::Kind) -> &'static str {
    match kind {
        adrev::Kind::Jacobian { mode } => mode.name(),
        _ => "",
    }
}

#[pymethods]
impl Function {
    /// The entry's name.
    #[getter]
    fn name(&self) -> String {
        self.entry.name.to_string()
    }

    /// `"c"` or `"eval"`.
    #[getter]
    fn backend(&self) -> &'static str {
        match self.options.backend {
            adrev::Backend::Eval => "eval",
            adrev::Backend::C(_) => "c",
        }
    }

    /// The parameters as `(name, type)`.
    fn params(&self) -> Vec<(String, String)> {
        self.entry
            .params
            .iter()
            .map(|p| {
                let ty = p.ty.as_ref().map_or_else(|| "_".to_string(), Ty::to_string);
                (p.name.to_string(), ty)
            })
            .collect()
    }

    /// The result type.
    fn result(&self) -> String {
        self.entry
            .ret
            .as_ref()
            .map_or_else(|| "_".to_string(), Ty::to_string)
    }

    /// How many requests have been compiled.
    fn compiled(&self) -> usize {
        self.compiled
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }

    /// One call: `kind` is `value`, `grad`, `value-and-grad`, `vjp`, `jvp`,
    /// `jacobian` or `hessian`. Returns a dict with `value`, `gradients`
    /// (pairs), `tangent`, `jacobian` (pairs), `jacobian_mode` and
    /// `hessian` (pairs of a name pair and a block).
    #[allow(clippy::too_many_arguments)]
    #[pyo3(signature = (kind, wrt, inputs, tangents, cotangent, mode))]
    fn call<'py>(
        &self,
        py: Python<'py>,
        kind: &str,
        wrt: Option<Vec<String>>,
        inputs: &Bound<'py, PyDict>,
        tangents: Option<&Bound<'py, PyDict>>,
        cotangent: Option<&Bound<'py, PyAny>>,
        mode: &str,
    ) -> PyResult<Bound<'py, PyDict>> {
        guarded(|| {
            let (key, kind) = self.request(kind, wrt, mode)?;
            let held = call::hold(&self.entry, inputs, tangents, cotangent, kind)?;
            let (inputs, sizes) = held.lend(&self.entry)?;
            let out = self.with_compiled(&key, kind, |c| c.call(&inputs))?;
            self.outputs(py, &out, &sizes)
        })
    }

    /// The baseline of the benchmark (python/bench): the seconds each of
    /// `reps` calls of the compiled request takes from Rust, on inputs
    /// converted from Python once, results not converted back.
    #[allow(clippy::too_many_arguments)]
    #[pyo3(signature = (kind, wrt, inputs, tangents, cotangent, mode, reps))]
    fn time_in_rust(
        &self,
        kind: &str,
        wrt: Option<Vec<String>>,
        inputs: &Bound<'_, PyDict>,
        tangents: Option<&Bound<'_, PyDict>>,
        cotangent: Option<&Bound<'_, PyAny>>,
        mode: &str,
        reps: usize,
    ) -> PyResult<Vec<f64>> {
        guarded(|| {
            let (key, kind) = self.request(kind, wrt, mode)?;
            let held = call::hold(&self.entry, inputs, tangents, cotangent, kind)?;
            let (inputs, _) = held.lend(&self.entry)?;
            self.with_compiled(&key, kind, |compiled| {
                let mut seconds = Vec::with_capacity(reps);
                for _ in 0..reps {
                    let start = std::time::Instant::now();
                    compiled.call(&inputs)?;
                    seconds.push(start.elapsed().as_secs_f64());
                }
                Ok(seconds)
            })
        })
    }
}

impl Function {
    /// The request key and the kind of one call.
    fn request(
        &self,
        kind: &str,
        wrt: Option<Vec<String>>,
        mode: &str,
    ) -> PyResult<(Key, adrev::Kind)> {
        let kind = kind_of(kind, mode)?;
        let wrt = match kind {
            adrev::Kind::Value | adrev::Kind::Jvp => Vec::new(),
            _ => wrt
                .map_or(adrev::Wrt::All, adrev::Wrt::Names)
                .resolve(&self.entry)
                .map_err(|e| from_adrev(Class::Input, e))?,
        };
        Ok(((kind.name(), mode_name(kind), wrt), kind))
    }
}

impl Function {
    /// The outputs of one call as the dict `call` returns.
    fn outputs<'py>(
        &self,
        py: Python<'py>,
        out: &adrev::Outputs,
        sizes: &SizeEnv,
    ) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        let ret = self.entry.ret.as_ref();
        d.set_item("value", object(py, &out.value, ret, sizes)?)?;
        let mut grads = Vec::new();
        for (n, g) in &out.gradients {
            grads.push((
                n.clone(),
                object(py, g, param_ty(&self.entry, n).ok(), sizes)?,
            ));
        }
        d.set_item("gradients", grads)?;
        let tangent = match &out.tangent {
            Some(t) => Some(object(py, t, ret, sizes)?),
            None => None,
        };
        d.set_item("tangent", tangent)?;
        let mut jac = Vec::new();
        for (n, b) in &out.jacobian {
            jac.push((n.clone(), object(py, b, None, sizes)?));
        }
        d.set_item("jacobian", jac)?;
        d.set_item("jacobian_mode", out.jacobian_mode.map(|m| m.name()))?;
        let mut hess = Vec::new();
        for ((a, b), block) in &out.hessian {
            hess.push(((a.clone(), b.clone()), object(py, block, None, sizes)?));
        }
        d.set_item("hessian", hess)?;
        Ok(d)
    }
}
