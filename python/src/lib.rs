//! The Python extension module `adrev._adrev`: the compiler's pipeline
//! behind the Python package `adrev` (python/adrev/__init__.py).

use pyo3::prelude::*;

/// Parses and type-checks a program; returns the names of its definitions.
#[pyfunction]
fn definitions(name: String, text: String) -> PyResult<Vec<String>> {
    let m = syntax::compile(syntax::SourceFile { name, text })
        .map_err(|e| pyo3::exceptions::PyValueError::new_err(e.to_string()))?;
    Ok(m.defs.iter().map(|d| d.name.to_string()).collect())
}

#[pymodule]
fn _adrev(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(definitions, m)?)?;
    Ok(())
}
