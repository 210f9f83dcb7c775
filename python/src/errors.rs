//! The boundary between the compiler's errors and Python's exceptions.
//!
//! The exception classes live in Python (`adrev/_errors.py`, which also
//! reads the line and column out of a rendered diagnostic); this module
//! only raises them. Every entry point of the extension runs inside
//! [`guarded`], so that a panic of the compiler becomes an
//! `adrev.InternalError` rather than PyO3's `PanicException` (a
//! `BaseException` that `except Exception` would not catch).

use pyo3::prelude::*;
use std::panic::{AssertUnwindSafe, catch_unwind};

/// The exception classes of `adrev._errors`.
#[derive(Debug, Clone, Copy)]
pub enum Class {
    /// The program or the request.
    Compile,
    /// The inputs of a call.
    Input,
    /// The program failed while running.
    Run,
    /// A bug of the compiler.
    Internal,
}

impl Class {
    fn name(self) -> &'static str {
        match self {
            Class::Compile => "CompileError",
            Class::Input => "InputError",
            Class::Run => "RunError",
            Class::Internal => "InternalError",
        }
    }
}

/// An exception of class `class` carrying `message` (a rendered
/// diagnostic, or a plain sentence, which gets the `error: ` prefix the
/// compiler's own messages have).
pub fn raise(class: Class, message: impl Into<String>) -> PyErr {
    let mut message = message.into();
    if !message.starts_with("error") {
        message = format!("error: {message}\n");
    }
    Python::attach(|py| {
        let made = py
            .import("adrev._errors")
            .and_then(|m| m.getattr(class.name()))
            .and_then(|c| c.call1((message.clone(),)));
        match made {
            Ok(exc) => PyErr::from_value(exc),
            Err(e) => e,
        }
    })
}

/// A library error: the user's ones as `user` (the class the caller's
/// phase stands for), the compiler's own bugs as `InternalError`.
pub fn from_adrev(user: Class, e: adrev::Error) -> PyErr {
    match e {
        adrev::Error::User(m) => raise(user, m),
        adrev::Error::Internal(m) => raise(Class::Internal, format!("error: internal error: {m}")),
    }
}

/// Runs one entry point of the extension, turning a panic into an
/// `InternalError` that says what panicked.
pub fn guarded<T>(f: impl FnOnce() -> PyResult<T>) -> PyResult<T> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(payload) => {
            let what = payload
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| payload.downcast_ref::<&str>().copied())
                .unwrap_or("a panic without a message");
            let message = format!("error: internal error: the compiler panicked: {what}\n");
            Python::attach(|_| Err(raise(Class::Internal, message)))
        }
    }
}
