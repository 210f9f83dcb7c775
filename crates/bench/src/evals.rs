//! GradBench's det and ba as kernels of the C backend's harness
//! ([`crate::run`]), each against its hand-written baseline
//! (baseline/det.c, baseline/ba.c): det's gradient from the pipeline's
//! reverse mode, ba's Jacobian by reverse mode inside the program, compiled
//! as the GradBench tool compiles it (crates/gradbench/src/engine.rs).

use semantics::Value;
use syntax::{Module, SourceFile};

use crate::{Differentiate, Inputs, Kernel};

/// The entry's name of the last definition of `m`.
fn last(m: &Module) -> String {
    m.entry(None)
        .map(|d| d.name.to_string())
        .unwrap_or_default()
}

/// An eval's program (gradbench/*.ad), compiled.
fn eval_module(name: &str) -> Result<Module, String> {
    let eval = gradbench::evals::eval(name).ok_or_else(|| format!("no {name} eval"))?;
    syntax::compile(SourceFile {
        name: eval.file.into(),
        text: eval.program.to_string(),
    })
    .map_err(|e| e.to_string())
}

/// GradBench's det (`gradbench/det.ad`, its `det` entry) at each `ell` of
/// `sizes` (the kernel's `n`), its gradient with respect to A from `diff`
/// (the pipeline), against baseline/det.c (expansion by minors, the
/// gradient by reverse mode by hand through the recursion).
pub fn det_kernel(diff: &Differentiate<'_>, sizes: &[usize]) -> Result<Kernel, String> {
    let m = eval_module("det")?;
    let (_, opt) = diff(&m, "det", None);
    let grad = opt?;
    let grad_entry = last(&grad);
    Ok(Kernel {
        name: "det".into(),
        primal: m,
        primal_entry: "det".into(),
        grad,
        grad_entry,
        inputs: Inputs::Det,
        sizes: sizes.to_vec(),
        grad_origin: "reverse mode (UNF, D_rho, UNF^-1) and the optimizer, with respect to A; \
             the program computes det by elimination (O(ell^3)), the baseline by expansion by \
             minors as GradBench defines it (O(ell!)): compare grad / primal"
            .into(),
        variants: Vec::new(),
    })
}

/// The entry `entry` of `m` as the GradBench tool compiles it: inlined,
/// its derivative constructs expanded (`vjp_rev` by the pipeline's reverse
/// mode, `diff` by forward mode), optimized.
fn expanded(m: &Module, entry: &str) -> Result<Module, String> {
    let cx = adrev::passes::Context::new(entry);
    let flow = adrev::passes::run(
        &[
            adrev::passes::Pass::Inline,
            adrev::passes::Pass::Expand,
            adrev::passes::Pass::Optimize,
        ],
        adrev::passes::Flow::Source(m.clone()),
        &cx,
    )
    .and_then(adrev::passes::Flow::into_module)
    .map_err(|e| e.message().trim_end().to_string())?;
    Ok(flow)
}

/// GradBench's ba (`gradbench/ba.ad`) on an ADBench file's text (`name`
/// for the report): the primal `ba_objective`, the Jacobian `ba_jacobian`
/// (reverse mode inside the program, a `vjp_rev` per row: the tool's build),
/// against baseline/ba.c (the hand-derived 2 x 15 blocks, written into
/// GradBench's sparse output).
pub fn ba_kernel(text: &'static str) -> Result<Kernel, String> {
    let m = eval_module("ba")?;
    let problem = BaFile::parse(text)?;
    Ok(Kernel {
        name: "ba".into(),
        primal: expanded(&m, "ba_objective")?,
        primal_entry: "ba_objective".into(),
        grad: expanded(&m, "ba_jacobian")?,
        grad_entry: "ba_jacobian".into(),
        inputs: Inputs::Ba(text),
        sizes: vec![problem.p],
        grad_origin: "reverse mode inside the program (`vjp_rev` per row; `diff`), \
             the GradBench tool's build; the value column is 0 (a Jacobian has none)"
            .into(),
        variants: Vec::new(),
    })
}

/// The inputs of det at `ell`: uniform in [0, 1) from a fixed seed (the
/// eval's generator draws uniform entries too).
pub fn det_inputs(ell: usize) -> Vec<Value> {
    let mut rng = difftest::Rng::new(0xDE7_0000 + ell as u64);
    let rows = (0..ell)
        .map(|_| Value::reals(&(0..ell).map(|_| rng.unit()).collect::<Vec<_>>()))
        .collect();
    vec![Value::array(rows)]
}

/// An ADBench ba file: `n m p`, one camera, one point, one weight, one
/// feature, replicated as GradBench's eval does (observation i sees point
/// i mod m from camera i mod n).
#[derive(Debug, Clone, PartialEq)]
pub struct BaFile {
    /// Cameras.
    pub n: usize,
    /// Points.
    pub m: usize,
    /// Observations.
    pub p: usize,
    /// The camera (11 reals).
    pub cam: Vec<f64>,
    /// The point (3).
    pub x: Vec<f64>,
    /// The weight.
    pub w: f64,
    /// The feature (2).
    pub feat: Vec<f64>,
}

impl BaFile {
    /// Reads the file's first five lines.
    pub fn parse(text: &str) -> Result<BaFile, String> {
        let lines: Vec<Vec<f64>> = text
            .lines()
            .take(5)
            .map(|l| {
                l.split_whitespace()
                    .map(|w| w.parse::<f64>().map_err(|e| format!("`{w}`: {e}")))
                    .collect()
            })
            .collect::<Result<_, _>>()?;
        let line = |i: usize, len: usize| -> Result<Vec<f64>, String> {
            match lines.get(i) {
                Some(l) if l.len() == len => Ok(l.clone()),
                _ => Err(format!("ba file: line {} must hold {len} numbers", i + 1)),
            }
        };
        let head = line(0, 3)?;
        let size = |v: f64| -> Result<usize, String> {
            if v >= 1.0 && v.fract() == 0.0 {
                Ok(v as usize)
            } else {
                Err(format!("ba file: line 1: {v} is not a positive count"))
            }
        };
        Ok(BaFile {
            n: size(head[0])?,
            m: size(head[1])?,
            p: size(head[2])?,
            cam: line(1, 11)?,
            x: line(2, 3)?,
            w: line(3, 1)?[0],
            feat: line(4, 2)?,
        })
    }

    /// The arguments of `ba_objective` and `ba_jacobian`.
    pub fn inputs(&self) -> Vec<Value> {
        let rows = |row: &[f64], k: usize| Value::array(vec![Value::reals(row); k]);
        let ints = |f: &dyn Fn(usize) -> usize| {
            Value::array((0..self.p).map(|i| Value::Int(f(i) as i64)).collect())
        };
        vec![
            rows(&self.cam, self.n),
            rows(&self.x, self.m),
            Value::reals(&vec![self.w; self.p]),
            ints(&|i| i % self.n),
            ints(&|i| i % self.m),
            rows(&self.feat, self.p),
        ]
    }
}
