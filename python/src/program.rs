//! `adrev._adrev.Program`: a program loaded and type-checked once
//! (`adrev::Program`), its stage dumps, its expectation comments, and the
//! functions made from its definitions.

use pyo3::prelude::*;
use semantics::{Expectations, SizeEnv};
use std::sync::Arc;

use crate::errors::{Class, from_adrev, guarded, raise};
use crate::function::{Function, Options};
use crate::to_python::object;

/// One stage boundary: `(stage, file, ir, text, ron)`.
type StageTuple = (String, String, String, String, String);

/// A loaded program (read only: threads share it).
#[pyclass(module = "adrev._adrev")]
pub struct Program {
    inner: Arc<adrev::Program>,
}

#[pymethods]
impl Program {
    /// Program text; `name` is the file name in diagnostics.
    #[staticmethod]
    fn from_text(name: &str, text: String) -> PyResult<Program> {
        guarded(|| {
            let inner =
                adrev::Program::from_text(name, text).map_err(|e| from_adrev(Class::Compile, e))?;
            Ok(Program {
                inner: Arc::new(inner),
            })
        })
    }

    /// A program file: `.ad` text or an IR's RON file.
    #[staticmethod]
    fn load(path: &str) -> PyResult<Program> {
        guarded(|| {
            let inner = adrev::Program::load(path).map_err(|e| from_adrev(Class::Compile, e))?;
            Ok(Program {
                inner: Arc::new(inner),
            })
        })
    }

    /// The names of the definitions, in order.
    fn definitions(&self) -> PyResult<Vec<String>> {
        guarded(|| {
            let m = self
                .inner
                .module()
                .map_err(|e| from_adrev(Class::Compile, e))?;
            Ok(m.defs.iter().map(|d| d.name.to_string()).collect())
        })
    }

    /// The definition `name` (default: the last) as a function.
    fn function(
        &self,
        name: Option<&str>,
        backend: &str,
        route: &str,
        optimize: bool,
        parallel: bool,
        checkpoint: &str,
    ) -> PyResult<Function> {
        guarded(|| {
            let options = Options::new(backend, route, optimize, parallel, checkpoint)?;
            Function::new(Arc::clone(&self.inner), name, options)
        })
    }

    /// Every stage boundary of the gradient of `name` with respect to `wrt`.
    fn stages(&self, name: Option<&str>, wrt: Option<Vec<String>>) -> PyResult<Vec<StageTuple>> {
        guarded(|| {
            let wrt = wrt.map_or(adrev::Wrt::All, adrev::Wrt::Names);
            let dumps = self
                .inner
                .stages(name, &wrt)
                .map_err(|e| from_adrev(Class::Compile, e))?;
            Ok(dumps
                .into_iter()
                .map(|d| {
                    (
                        d.stage.to_string(),
                        d.file.to_string(),
                        d.ir.to_string(),
                        d.text,
                        d.ron,
                    )
                })
                .collect())
        })
    }

    /// The `-- at`, `-- value` and `-- grad` lines of the program's text,
    /// read against the types of `name`: `(at, value, grads)` with `at` and
    /// `grads` lists of `(parameter, value)`.
    #[allow(clippy::type_complexity)]
    fn expectations<'py>(
        &self,
        py: Python<'py>,
        name: Option<&str>,
    ) -> PyResult<(
        Vec<(String, Bound<'py, PyAny>)>,
        Option<Bound<'py, PyAny>>,
        Vec<(String, Bound<'py, PyAny>)>,
    )> {
        guarded(|| {
            let compile = |e| from_adrev(Class::Compile, e);
            let m = self.inner.module().map_err(compile)?;
            let def = self.inner.entry(name).map_err(compile)?;
            let exp = Expectations::parse(&m.file.text);
            let bad =
                |e: semantics::Error| raise(Class::Compile, format!("an expectation comment: {e}"));
            let sizes = SizeEnv::new();
            let param_ty = |p: &str| {
                def.params
                    .iter()
                    .find(|q| q.name.as_str() == p)
                    .and_then(|q| q.ty.as_ref())
            };
            let mut at = Vec::new();
            for (n, v) in exp.inputs(def).map_err(bad)? {
                at.push((n.clone(), object(py, &v, param_ty(&n), &sizes)?));
            }
            let value = match exp.value(m, def) {
                Some(v) => Some(object(py, &v.map_err(bad)?, def.ret.as_ref(), &sizes)?),
                None => None,
            };
            let mut grads = Vec::new();
            for (n, _) in &exp.grads {
                if let Some(g) = exp.grad(def, n) {
                    grads.push((
                        n.clone(),
                        object(py, &g.map_err(bad)?, param_ty(n), &sizes)?,
                    ));
                }
            }
            Ok((at, value, grads))
        })
    }
}
