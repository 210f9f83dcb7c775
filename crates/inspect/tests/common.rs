//! Reading fixtures and building the programs the tests compare with.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

use semantics::{Expectations, Value};
use syntax::{Def, Module, SourceFile};

/// The workspace root.
pub fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The fixtures with a Source snapshot, sorted.
pub fn fixtures() -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(workspace().join("fixtures"))
        .expect("the fixtures directory exists")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join("10.source.ron").is_file())
        .collect();
    out.sort();
    out
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

/// A fixture's Source program, specialised to first order when it is
/// higher-order only on the surface (as reverse mode and the commands
/// see it).
pub fn source(dir: &Path) -> Module {
    let m: Module = syntax::from_ron(
        syntax::SOURCE_IR,
        syntax::FORMAT_VERSION,
        &read(&dir.join("10.source.ron")),
    )
    .expect("the Source snapshot reads");
    first_order(m)
}

/// The program with its derivative constructs expanded (as the commands
/// load it, by the driver: `grad_rev` needs its reverse mode) and
/// specialised to first order where it can be.
fn first_order(m: Module) -> Module {
    let derivatives = m
        .exprs
        .iter()
        .any(|e| matches!(e, syntax::Expr::Prim { op, .. } if op.is_derivative_construct()));
    let m = if derivatives {
        adrev::passes::expand(&m).expect("the derivative constructs expand")
    } else {
        m
    };
    let entry = m.defs.last().expect("a definition").clone();
    if syntax::check_first_order(&m, &entry).is_ok() {
        return m;
    }
    syntax::specialize(&m).unwrap_or(m)
}

/// A fixture's optimized gradient program (`50.opt.ron`), if it has one.
pub fn optimized(dir: &Path) -> Option<Module> {
    let path = dir.join("50.opt.ron");
    path.is_file().then(|| {
        syntax::from_ron(syntax::TARGET_IR, syntax::FORMAT_VERSION, &read(&path))
            .expect("the optimized snapshot reads")
    })
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

/// Every real in a value.
pub fn reals(v: &Value) -> Vec<f64> {
    match v {
        Value::Real(x) => vec![*x],
        Value::Tuple(items) | Value::Array(items) => items.iter().flat_map(reals).collect(),
        _ => Vec::new(),
    }
}

/// The reals of the leaf at `path` (components of tuples; arrays are
/// walked through) of a value.
pub fn leaf_reals(v: &Value, path: &[u32]) -> Vec<f64> {
    match (v, path.split_first()) {
        (Value::Array(items), _) => items.iter().flat_map(|i| leaf_reals(i, path)).collect(),
        (Value::Tuple(items), Some((first, rest))) => items
            .get(*first as usize - 1)
            .map(|i| leaf_reals(i, rest))
            .unwrap_or_default(),
        _ => reals(v),
    }
}
