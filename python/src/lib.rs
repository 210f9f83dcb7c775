//! The Python extension module `adrev._adrev`: the compiler's library
//! (`crates/adrev`) behind the Python package `adrev` (python/adrev/).
//!
//! - `program.rs`: `Program`, loaded and type-checked once;
//! - `function.rs`: `Function`, one entry compiled once per request;
//! - `call.rs`: the inputs of one call, held and lent to the library;
//! - `to_value.rs` / `to_python.rs`: Python objects and NumPy arrays to the
//!   compiler's data and back, with the package's typing rules;
//! - `errors.rs`: the compiler's errors (and panics) as the Python
//!   exceptions of `adrev/_errors.py`.
//!
//! docs/python.md describes the package.

use pyo3::prelude::*;

mod call;
mod errors;
mod function;
mod program;
mod to_python;
mod to_value;

#[pymodule]
fn _adrev(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<program::Program>()?;
    m.add_class::<function::Function>()?;
    // The tolerance of language.md for comparing reals (tests use it).
    m.add("REL_TOL", semantics::REL_TOL)?;
    m.add("ABS_TOL", semantics::ABS_TOL)?;
    Ok(())
}
