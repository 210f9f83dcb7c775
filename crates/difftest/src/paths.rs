//! The paths from a Source program to its gradient, run on one program at
//! one point, and the comparisons between them. Every path is a pass list
//! of the library (`adrev::passes`), verified after every pass.
//!
//! - `direct`: the direct macro of Fig. 5 (`reverse::reverse_direct`);
//! - `unf`: UNF → D_ρ → UNF^-1 (`unf::lower`, `reverse::reverse`, `unf::raise`);
//! - `forward`: forward mode (`forward::grad_program`);
//! - `c`: a program run by the C backend (`codegen::eval_entry`);
//! - `opt`: a gradient program after `optimize::optimize`;
//! - `fd`: central finite differences of the Source program under the
//!   reference evaluator, at two step sizes, whose difference estimates the
//!   error of the quotient (so the tolerance follows the conditioning of the
//!   program at that point).

use adrev::passes::{self, Context, Flow, Pass};
use semantics::Value;
use syntax::{Def, Module};

/// The value and gradient a path computed, the gradient one value per
/// parameter of `wrt` (all parameters when `wrt` is `None`).
#[derive(Debug, Clone, PartialEq)]
pub struct Gradient {
    /// The program's value.
    pub value: f64,
    /// One cotangent per differentiated parameter, shaped like it.
    pub grads: Vec<Value>,
}

/// The reals of a value, depth first.
pub fn flatten(v: &Value, out: &mut Vec<f64>) {
    match v {
        Value::Real(x) => out.push(*x),
        Value::Array(items) | Value::Tuple(items) => items.iter().for_each(|i| flatten(i, out)),
        _ => {}
    }
}

/// The reals of a list of values.
pub fn flat(vs: &[Value]) -> Vec<f64> {
    let mut out = Vec::new();
    vs.iter().for_each(|v| flatten(v, &mut out));
    out
}

/// A value shaped like `template` with its reals taken from `xs` from `*i` on.
pub fn unflatten(template: &Value, xs: &[f64], i: &mut usize) -> Value {
    match template {
        Value::Real(_) => {
            *i += 1;
            Value::Real(xs[*i - 1])
        }
        Value::Array(items) => Value::array(items.iter().map(|t| unflatten(t, xs, i)).collect()),
        Value::Tuple(items) => Value::tuple(items.iter().map(|t| unflatten(t, xs, i)).collect()),
        other => other.clone(),
    }
}

/// The passes' context: `def`, `cfg.wrt`, verified after every pass.
fn context(def: &Def, wrt: Option<Vec<String>>) -> Context {
    Context {
        wrt,
        ..Context::new(def.name.as_str())
    }
}

/// Runs one of the library's pass lists on a Source module to a term module.
fn run_passes(list: &[Pass], m: &Module, cx: &Context) -> Result<Module, String> {
    passes::run(list, Flow::Source(m.clone()), cx)
        .and_then(Flow::into_module)
        .map_err(|e| one_line(&e))
}

/// The first line of a library error, without the `error: ` prefix (a
/// table cell, a fuzzer's report).
pub fn one_line(e: &adrev::Error) -> String {
    let first = e.message().lines().next().unwrap_or_default();
    let first = first.strip_prefix("error: ").unwrap_or(first);
    if e.is_internal() {
        format!("internal error: {first}")
    } else {
        first.to_string()
    }
}

/// The gradient program of the direct path.
pub fn direct_program(m: &Module, def: &Def, cfg: &reverse::Config) -> Result<Module, String> {
    run_passes(&[Pass::Direct], m, &context(def, cfg.wrt.clone()))
}

/// The gradient program of the UNF path.
pub fn unf_program(m: &Module, def: &Def, cfg: &reverse::Config) -> Result<Module, String> {
    let list = [Pass::Lower, Pass::Reverse, Pass::Raise];
    run_passes(&list, m, &context(def, cfg.wrt.clone()))
}

/// The gradient program of forward mode (one pass per input direction).
pub fn forward_program(m: &Module, def: &Def, wrt: Option<&[String]>) -> Result<Module, String> {
    forward_program_with(m, def, wrt, &forward::Config::default())
}

/// [`forward_program`] with options (the vectorised mode; the mutant of
/// forward mode that the tests of the comparisons use).
pub fn forward_program_with(
    m: &Module,
    def: &Def,
    wrt: Option<&[String]>,
    cfg: &forward::Config,
) -> Result<Module, String> {
    let cx = Context {
        forward: cfg.clone(),
        ..context(def, wrt.map(<[String]>::to_vec))
    };
    run_passes(&[Pass::ForwardGrad], m, &cx)
}

/// The stages of the UNF path one by one: the Source UNF module, the
/// Target UNF module, and the gradient program raised from it.
#[derive(Debug, Clone)]
pub struct UnfStages {
    /// `unf::lower` of the Source program (Fig. 9).
    pub source_unf: unf::Module,
    /// `reverse::reverse` of it (Fig. 8).
    pub target_unf: unf::Module,
    /// `unf::raise` of that (Fig. 10), verified.
    pub target: Module,
}

/// Runs the UNF path stage by stage, naming the stage that fails.
pub fn unf_stages(
    m: &Module,
    def: &Def,
    cfg: &reverse::Config,
) -> Result<UnfStages, (String, String)> {
    let cx = context(def, cfg.wrt.clone());
    let step = |pass: Pass, flow: Flow| {
        passes::run(&[pass], flow, &cx).map_err(|e| (pass.name().to_string(), one_line(&e)))
    };
    let unexpected = |stage: &str| (stage.to_string(), "an unexpected IR".to_string());
    let Flow::SourceUnf(source_unf, checked) = step(Pass::Lower, Flow::Source(m.clone()))? else {
        return Err(unexpected("unf"));
    };
    let Flow::TargetUnf(target_unf, checked) =
        step(Pass::Reverse, Flow::SourceUnf(source_unf.clone(), checked))?
    else {
        return Err(unexpected("reverse"));
    };
    let Flow::Target(target) = step(Pass::Raise, Flow::TargetUnf(target_unf.clone(), checked))?
    else {
        return Err(unexpected("unf-inverse"));
    };
    Ok(UnfStages {
        source_unf,
        target_unf,
        target,
    })
}

/// The first definition of `m` run by the C backend on `inputs` (the
/// library's value request on `codegen::Config::default()`).
pub fn run_c(m: &Module, inputs: &[(String, Value)]) -> Result<Value, String> {
    let program = adrev::Program::from_ir(adrev::Ir::Target(m.clone()));
    let def = m
        .defs
        .first()
        .ok_or_else(|| "the module has no definition".to_string())?;
    let req = adrev::Request::new(adrev::Kind::Value)
        .entry(def.name.as_str())
        .backend(adrev::Backend::C(codegen::Config::default()));
    program
        .compile(&req)
        .and_then(|c| c.call(&adrev::Inputs::from_values(inputs.iter().cloned())))
        .map(|o| o.value)
        .map_err(|e| one_line(&e))
}

/// A gradient program's output `(value, g_1, ..., g_k)` (the value alone
/// when k = 0) as a [`Gradient`].
pub fn as_gradient(out: &Value) -> Result<Gradient, String> {
    if let Some(value) = out.as_real() {
        return Ok(Gradient {
            value,
            grads: Vec::new(),
        });
    }
    let items = out
        .as_tuple()
        .ok_or_else(|| format!("a gradient program returned {out}, not a tuple"))?;
    let value = items
        .first()
        .and_then(Value::as_real)
        .ok_or_else(|| "a gradient program's first component is not a real".to_string())?;
    Ok(Gradient {
        value,
        grads: items[1..].to_vec(),
    })
}

/// A gradient program after the optimizer (partial evaluation and the
/// rules of Fig. 12), verified.
pub fn optimized(g: &Module) -> Result<Module, String> {
    passes::run(
        &[Pass::Optimize],
        Flow::Target(g.clone()),
        &Context::new(""),
    )
    .and_then(Flow::into_module)
    .map_err(|e| one_line(&e))
}

/// Runs a gradient program `(value, g_1, ..., g_k)` (the value alone when
/// k = 0).
pub fn run_gradient(g: &Module, inputs: &[(String, Value)]) -> Result<Gradient, String> {
    let out = semantics::eval_entry(g, None, inputs).map_err(|e| e.to_string())?;
    as_gradient(&out)
}

/// The value of the Source entry `def` at `inputs`.
pub fn source_value(m: &Module, def: &Def, inputs: &[(String, Value)]) -> Result<f64, String> {
    let v = semantics::eval_def(m, def, &ordered(def, inputs)?).map_err(|e| e.to_string())?;
    v.as_real()
        .ok_or_else(|| format!("the program returned {v}, not a real"))
}

fn ordered(def: &Def, inputs: &[(String, Value)]) -> Result<Vec<Value>, String> {
    def.params
        .iter()
        .map(|p| {
            inputs
                .iter()
                .find(|(n, _)| n == p.name.as_str())
                .map(|(_, v)| v.clone())
                .ok_or_else(|| format!("no input for `{}`", p.name))
        })
        .collect()
}

/// Central finite differences: the estimate and its error bound per
/// differentiated parameter, shaped like the parameter. The step starts at
/// 1e-3 (relative) and is divided by 4 until three successive quotients
/// agree to 1e-4; the last two give the Richardson-extrapolated estimate
/// and, as their difference, the error estimate. A component for which no
/// three successive quotients agree before the step reaches 1e-10, or
/// whose perturbations stop changing the value, is inconclusive (infinite
/// error). A step whose forward and backward one-sided quotients disagree
/// (by more than 1e-2 relative) is never accepted: the perturbations fell
/// on two sides of a kink.
#[derive(Debug, Clone, PartialEq)]
pub struct FiniteDiff {
    /// The Richardson-extrapolated quotients.
    pub grads: Vec<Value>,
    /// An estimate of the error of each quotient.
    pub errors: Vec<Value>,
}

/// Central finite differences of `def` at `inputs` with respect to the
/// parameters `wrt` (1-based positions).
pub fn finite_differences(
    m: &Module,
    def: &Def,
    inputs: &[(String, Value)],
    wrt: &[usize],
) -> Result<FiniteDiff, String> {
    let args = ordered(def, inputs)?;
    let f = |args: &[Value]| -> Result<f64, String> {
        let v = semantics::eval_def(m, def, args).map_err(|e| e.to_string())?;
        v.as_real().ok_or_else(|| "not a real".to_string())
    };
    let f0 = f(&args)?;
    let (mut grads, mut errors) = (Vec::new(), Vec::new());
    for &w in wrt {
        let template = &args[w - 1];
        let mut xs = Vec::new();
        flatten(template, &mut xs);
        let (mut g, mut e) = (Vec::with_capacity(xs.len()), Vec::with_capacity(xs.len()));
        for j in 0..xs.len() {
            // The central quotient, and whether the two one-sided ones
            // agree with each other at this step.
            let quotient = |h: f64| -> Result<(f64, bool), String> {
                let at = |delta: f64| -> Result<f64, String> {
                    let mut ys = xs.clone();
                    ys[j] += delta;
                    let mut a = args.clone();
                    a[w - 1] = unflatten(template, &ys, &mut 0);
                    f(&a)
                };
                let (plus, minus) = (at(h)?, at(-h)?);
                let central = (plus - minus) / (2.0 * h);
                let (fwd, bwd) = ((plus - f0) / h, (f0 - minus) / h);
                let rounding = 1e-12 * f0.abs().max(1.0) / h;
                Ok((
                    central,
                    (fwd - bwd).abs() <= 1e-2 * (1.0 + central.abs()) + rounding,
                ))
            };
            // Shrink the step by 4 until three successive quotients agree
            // to 1e-4 (one agreeing pair can be a plateau of a piecewise
            // function seen from both sides); the error estimate follows
            // the curvature, so an ill-conditioned point gets a smaller
            // step. Below 1e-10 (relative), or once a perturbation no
            // longer changes f at all after it did, rounding rules the
            // quotients: the component is inconclusive (infinite error, no
            // AD value fails it).
            let settled = |a: f64, b: f64| (a - b).abs() <= 1e-4 * (1.0 + b.abs());
            let scale = xs[j].abs().max(1.0);
            let mut h = 1e-3 * scale;
            let mut q0 = quotient(h)?.0;
            h /= 4.0;
            let mut q1 = quotient(h)?.0;
            let mut found = (q1, f64::INFINITY);
            while h > 1e-10 * scale {
                h /= 4.0;
                let (q2, sides_agree) = quotient(h)?;
                if q2 == 0.0 && q1 != 0.0 {
                    break;
                }
                // Equal central quotients whose one-sided halves disagree
                // straddle a kink or a jump (`max 1 e` where both
                // perturbations fall on the plateau and f0 does not): not
                // a slope, look closer.
                if settled(q0, q1) && settled(q1, q2) && sides_agree {
                    let err =
                        (q2 - q1).abs().max((q1 - q0).abs() / 4.0) + 1e-13 * f0.abs().max(1.0) / h;
                    found = ((16.0 * q2 - q1) / 15.0, err);
                    break;
                }
                (q0, q1) = (q1, q2);
            }
            g.push(found.0);
            e.push(found.1);
        }
        grads.push(unflatten(template, &g, &mut 0));
        errors.push(unflatten(template, &e, &mut 0));
    }
    Ok(FiniteDiff { grads, errors })
}

/// The largest relative difference `|a - b| / max(|a|, |b|)` between two
/// lists of values of the same shapes (0 where both are below `tiny`;
/// components where either side is NaN are left out: `ad_agree` and
/// `fd_agree` judge those); infinite when the shapes differ.
pub fn max_rel_diff(a: &[Value], b: &[Value], tiny: f64) -> f64 {
    let (xs, ys) = (flat(a), flat(b));
    if xs.len() != ys.len() || a.len() != b.len() {
        return f64::INFINITY;
    }
    xs.iter()
        .zip(&ys)
        .map(|(x, y)| {
            let scale = x.abs().max(y.abs());
            if x.is_nan() && y.is_nan() {
                0.0
            } else if x.is_nan() || y.is_nan() {
                f64::NAN
            } else if scale <= tiny {
                0.0
            } else {
                (x - y).abs() / scale
            }
        })
        .fold(0.0, |m, d| if d.is_nan() { m } else { m.max(d) })
}

/// Whether two AD paths agree: relative 1e-8, absolute 1e-10 scaled by the
/// largest component (they compute the same derivatives, in possibly
/// different orders of summation).
pub fn ad_agree(a: &[Value], b: &[Value]) -> Result<(), String> {
    let (xs, ys) = (flat(a), flat(b));
    if xs.len() != ys.len() {
        return Err(format!("{} reals vs {}", xs.len(), ys.len()));
    }
    let scale = xs.iter().chain(&ys).fold(1.0_f64, |m, x| m.max(x.abs()));
    for (i, (x, y)) in xs.iter().zip(&ys).enumerate() {
        let ok = (x - y).abs() <= 1e-8 * x.abs().max(y.abs()) + 1e-10 * scale;
        if !ok {
            return Err(format!("component {i}: {x} vs {y}"));
        }
    }
    Ok(())
}

/// How many components of a finite-difference gradient are inconclusive.
pub fn inconclusive(fd: &FiniteDiff) -> usize {
    flat(&fd.errors).iter().filter(|e| e.is_infinite()).count()
}

/// Whether an AD gradient agrees with finite differences within ten times
/// the estimated error of the quotients plus 1e-6 relative (inconclusive
/// components agree with anything).
pub fn fd_agree(ad: &[Value], fd: &FiniteDiff) -> Result<(), String> {
    let (xs, ys, es) = (flat(ad), flat(&fd.grads), flat(&fd.errors));
    if xs.len() != ys.len() {
        return Err(format!("{} reals vs {}", xs.len(), ys.len()));
    }
    for (i, ((x, y), e)) in xs.iter().zip(&ys).zip(&es).enumerate() {
        let tol = 10.0 * e + 1e-6 * (1.0 + x.abs().max(y.abs()));
        if e.is_finite() && ((x - y).abs() > tol || x.is_nan()) {
            return Err(format!(
                "component {i}: {x} vs finite differences {y} (tolerance {tol:.3e})"
            ));
        }
    }
    Ok(())
}
