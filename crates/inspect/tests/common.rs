//! Reading fixtures and building the programs the tests compare with.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

use semantics::{Expectations, Value};
use syntax::{Def, Module, SourceFile};

/// The workspace root.
pub fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The fixture's directory name.
pub fn name(dir: &Path) -> String {
    dir.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

pub fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A fixture's Source program as reverse mode and the commands see it
/// (derivative constructs expanded, specialised to first order where it
/// can be), computed from its `program.ad`.
pub fn source(dir: &Path) -> Module {
    testkit::stages::differentiable(&fixture(dir).compile())
}

fn fixture(dir: &Path) -> testkit::Fixture {
    testkit::Fixture::load(&name(dir)).unwrap_or_else(|e| panic!("{e}"))
}

/// The program with its derivative constructs expanded (as the commands
/// load it, by the driver: `grad_rev` needs its reverse mode) and
/// specialised to first order where it can be.
fn first_order(m: Module) -> Module {
    testkit::stages::differentiable(&m)
}

/// A fixture's optimized gradient program (what `50.opt.ron` holds), if
/// reverse mode takes it, computed from its `program.ad`.
pub fn optimized(dir: &Path) -> Option<Module> {
    testkit::stages::boundaries(&fixture(dir)).map(|b| b.opt)
}

/// A program from text.
pub fn compile(text: &str) -> Module {
    first_order(
        syntax::compile(SourceFile {
            name: "test.ad".to_string(),
            text: text.to_string(),
        })
        .unwrap_or_else(|e| panic!("{text}: {e}")),
    )
}

/// The entry's `-- at` inputs in parameter order; `None` without any.
pub fn args(m: &Module, def: &Def) -> Option<Vec<Value>> {
    let exp = Expectations::parse(&m.file.text);
    if exp.at.is_empty() {
        return None;
    }
    let named = exp.inputs(def).expect("the -- at lines read");
    Some(
        def.params
            .iter()
            .map(|p| {
                named
                    .iter()
                    .find(|(n, _)| n == p.name.as_str())
                    .map(|(_, v)| v.clone())
                    .unwrap_or_else(|| panic!("no input for {}", p.name))
            })
            .collect(),
    )
}

/// The gradient `(value, g_1, ..., g_k)` of the last definition of `m` at
/// `args`, by reverse mode through UNF and the optimizer.
pub fn gradient(m: &Module, args: &[Value]) -> Vec<Value> {
    let def = m.defs.last().expect("a definition");
    let g = reverse::gradient(m, def, &reverse::Config { wrt: None }).expect("reverse mode");
    let g = optimize::optimize(&g, &optimize::Config::default()).expect("the optimizer");
    let gdef = g.defs.last().expect("the gradient definition");
    let out = semantics::eval_def(&g, gdef, args).expect("the gradient runs");
    match out {
        Value::Tuple(items) if !def.params.is_empty() => items.to_vec(),
        other => vec![other],
    }
}

pub use testkit::values::{leaf_reals, reals};
