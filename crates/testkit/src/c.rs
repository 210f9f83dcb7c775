//! Running built C programs two ways, as the C backend's tests do: the
//! driver process and the shared library loaded in process, which must
//! agree bit for bit.

use codegen::Built;
use semantics::Value;
use std::path::PathBuf;

thread_local! {
    /// The libraries opened by [`in_process`], by shared-library path and
    /// source (a rebuilt program is opened anew).
    static LIBRARIES: std::cell::RefCell<Vec<(PathBuf, String, std::rc::Rc<codegen::Library>)>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

/// The built program loaded in process (opened once per thread and build).
pub fn in_process(built: &Built) -> std::rc::Rc<codegen::Library> {
    let path = built
        .shared_library
        .clone()
        .expect("test builds have a shared library");
    LIBRARIES.with(|libs| {
        let mut libs = libs.borrow_mut();
        if let Some((_, _, lib)) = libs
            .iter()
            .find(|(p, s, _)| *p == path && *s == built.program.source)
        {
            return lib.clone();
        }
        let lib = std::rc::Rc::new(
            codegen::Library::open(built)
                .unwrap_or_else(|e| panic!("open {}: {e}", path.display())),
        );
        libs.push((path, built.program.source.clone(), lib.clone()));
        lib
    })
}

/// Runs an entry through the driver process and, unless the build is
/// sanitized, in process through [`codegen::Library`]; the two must agree
/// bit for bit (the printed values: reals in their shortest round-trip
/// form), or fail with the same error.
pub fn run_both(built: &Built, entry: &str, args: &[Value]) -> Result<Value, codegen::Error> {
    let process = codegen::run(built, entry, args);
    if built.sanitized {
        return process;
    }
    let library = in_process(built).call_values(entry, args);
    same(entry, process, library)
}

/// The driver process's result, after checking that the library's is the
/// same (printed values, or equal errors).
pub fn same(
    entry: &str,
    process: Result<Value, codegen::Error>,
    library: Result<Value, codegen::Error>,
) -> Result<Value, codegen::Error> {
    match (&process, &library) {
        (Ok(p), Ok(l)) if p.to_string() == l.to_string() => {}
        (Err(p), Err(l)) if p == l => {}
        _ => panic!(
            "`{entry}`: the driver process gave {:?}, the library {:?}",
            process.as_ref().map(|v| short(&v.to_string())),
            library.as_ref().map(|v| short(&v.to_string()))
        ),
    }
    process
}

/// At most 400 characters of a printed value.
pub fn short(s: &str) -> String {
    if s.len() <= 400 {
        s.to_string()
    } else {
        let cut = (0..=400)
            .rev()
            .find(|&i| s.is_char_boundary(i))
            .unwrap_or(0);
        format!("{}...", &s[..cut])
    }
}

/// [`run_both`] on inputs by name (`codegen::run_entry` and
/// `Library::call_entry`).
pub fn run_entry_both(
    built: &Built,
    entry: Option<&str>,
    inputs: &[(String, Value)],
) -> Result<Value, codegen::Error> {
    let process = codegen::run_entry(built, entry, inputs);
    let named: Vec<(String, data::Data<'_>)> = inputs
        .iter()
        .map(|(n, v)| (n.clone(), data::Data::Value(v.clone())))
        .collect();
    let library = in_process(built)
        .call_entry(entry, &named)
        .map(|d| d.to_value());
    same(entry.unwrap_or("the last definition"), process, library)
}
