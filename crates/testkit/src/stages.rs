//! Every stage of a fixture computed from its `program.ad` alone, never
//! from another snapshot: so one run of the tests blesses every snapshot,
//! and a test reading a stage sees today's compiler.

use crate::fixture::Fixture;
use syntax::Module;

/// The boundaries of the UNF path (docs/stages.md): `10.source.ron` →
/// UNF → `20.source-unf.ron` → D_ρ → `30.target-unf.ron` → UNF^-1 →
/// `40.target.ron` → optimize → `50.opt.ron`.
pub struct Boundaries {
    /// The Source program as reverse mode sees it (specialised to first
    /// order when it is higher order only on the surface).
    pub source: Module,
    /// Source UNF.
    pub source_unf: unf::Module,
    /// Target UNF.
    pub target_unf: unf::Module,
    /// The gradient program.
    pub target: Module,
    /// The optimized gradient program.
    pub opt: Module,
}

/// The boundary files, in order, with their IR names.
pub const FILES: [&str; 5] = [
    "10.source.ron",
    "20.source-unf.ron",
    "30.target-unf.ron",
    "40.target.ron",
    "50.opt.ron",
];

/// `m` specialised to first order when it is higher order only on the
/// surface (as the command line does before reverse mode); `None` when
/// it stays higher order.
pub fn first_order(m: &Module) -> Option<Module> {
    let entry = m.defs.last()?.clone();
    if syntax::check_first_order(m, &entry).is_ok() {
        return Some(m.clone());
    }
    let s = syntax::specialize(m).ok()?;
    let entry = s.def(entry.name.as_str())?.clone();
    syntax::check_first_order(&s, &entry).is_ok().then_some(s)
}

/// Whether the program holds a compile-time derivative construct (`diff`,
/// `grad`, ...), which forward mode expands before anything else runs.
pub fn uses_derivatives(m: &Module) -> bool {
    m.exprs
        .iter()
        .any(|e| matches!(e, syntax::Expr::Prim { op, .. } if op.is_derivative_construct()))
}

/// The program as every gradient route takes it: derivative constructs
/// expanded, then specialised to first order where it can be.
pub fn differentiable(m: &Module) -> Module {
    let m = if uses_derivatives(m) {
        adrev::passes::expand(m)
            .unwrap_or_else(|e| panic!("the derivative constructs expand: {}", e.message()))
    } else {
        m.clone()
    };
    first_order(&m).unwrap_or(m)
}

/// The UNF path's boundaries of the Source program as written (the stage
/// files a user gets from `cargo xtask pipeline`); `None` when UNF does
/// not take it (a derivative construct, higher-order code). Every output
/// passes its verifier.
pub fn boundaries(f: &Fixture) -> Option<Boundaries> {
    let source = first_order(&f.entry_module())?;
    let entry = source.defs.last()?.clone();
    let source_unf = unf::lower(&source, &entry).ok()?;
    let name = &f.name;
    unf::verify(&source_unf).unwrap_or_else(|e| panic!("{name}: UNF output fails: {e:?}"));
    let target_unf = reverse::reverse(&source_unf, &reverse::Config::default())
        .unwrap_or_else(|e| panic!("{name}: reverse fails: {e}"));
    unf::verify(&target_unf).unwrap_or_else(|e| panic!("{name}: D_rho output fails: {e:?}"));
    let target = unf::raise(&target_unf).unwrap_or_else(|e| panic!("{name}: raise fails: {e}"));
    syntax::verify(&target).unwrap_or_else(|e| panic!("{name}: UNF^-1 output fails: {e:?}"));
    let opt = optimize::optimize(&target, &optimize::Config::default())
        .unwrap_or_else(|e| panic!("{name}: optimize fails: {e}"));
    syntax::verify(&opt).unwrap_or_else(|e| panic!("{name}: the optimizer's output fails: {e:?}"));
    Some(Boundaries {
        source,
        source_unf,
        target_unf,
        target,
        opt,
    })
}

/// A term-IR module in its RON envelope.
pub fn term_ron(ir: &str, m: &Module) -> String {
    syntax::to_ron(ir, syntax::FORMAT_VERSION, m).expect("the module writes as RON")
}

/// Reads a term-IR file's text back through its envelope and verifies it.
pub fn read_term(ir: &str, text: &str, what: &str) -> Module {
    let m: Module = syntax::from_ron(ir, syntax::FORMAT_VERSION, text)
        .unwrap_or_else(|e| panic!("{what} does not read back: {e}"));
    syntax::verify(&m).unwrap_or_else(|e| panic!("{what} fails the verifier: {e:?}"));
    m
}

/// Reads a UNF file's text back through its envelope and verifies it.
pub fn read_unf(kind: unf::Kind, text: &str, what: &str) -> unf::Module {
    let m = unf::from_ron(text, kind).unwrap_or_else(|e| panic!("{what} does not read back: {e}"));
    unf::verify(&m).unwrap_or_else(|e| panic!("{what} fails the verifier: {e:?}"));
    m
}
