//! Derivative constructs inside generated programs (docs/language.md,
//! "Derivatives inside a program"): `diff`, `grad`, `grad_rev`, `jvp`,
//! `vjp` and `vjp_rev` of a generated function `fun x -> body` whose body
//! may read the variables in scope (so an outer derivative's perturbation
//! reaches it as a free variable: perturbation confusion would show) and
//! may hold another construct. Every route then nests its own mode over
//! the construct's: the UNF path is reverse over reverse or over forward,
//! forward mode is forward over either, and `inlang` wraps the whole
//! program in `grad_rev` and `jvp` of `grad_rev` once more.
//!
//! The generator's evaluator computes a construct by central finite
//! differences of the body ([`eval`]), an oracle that shares nothing with
//! either mode; the differential test also holds the program against its
//! [`forward_twin`], every reverse construct replaced by its forward one
//! (forward against reverse, to rounding).

use std::collections::BTreeMap;

use crate::ast::{GExpr, GTy, GVal};
use crate::eval::{Probe, Singular, apply_fn};
use syntax::Prim;

/// A derivative construct applied to `fun x -> body` at `at`.
#[derive(Debug, Clone, PartialEq)]
pub struct Deriv {
    /// `diff`, `grad`, `grad_rev`, `jvp`, `vjp` or `vjp_rev`.
    pub op: Prim,
    /// The function's parameter.
    pub x: String,
    /// Its type: `R` or an array of reals (`R` for `diff`).
    pub ty: GTy,
    /// The function's body: a real, except for `vjp`/`vjp_rev`, whose
    /// body is an array of reals.
    pub body: Box<GExpr>,
    /// The point.
    pub at: Box<GExpr>,
    /// `jvp`: the tangent (of `ty`); `vjp`, `vjp_rev`: the cotangent (of
    /// the body's type); `None` otherwise.
    pub dir: Option<Box<GExpr>>,
}

impl Deriv {
    /// The type of the construct as the program uses it: the tangent
    /// (`(jvp ..).2`, a real here) for `jvp`, `R` for `diff`, `ty` for the
    /// gradients (`(vjp ..).2` for the vjps).
    pub fn result_ty(&self) -> GTy {
        match self.op {
            Prim::Diff | Prim::Jvp => GTy::Real,
            _ => self.ty.clone(),
        }
    }

    /// The operands in the order they are written, the body last.
    pub fn children(&self) -> Vec<&GExpr> {
        let mut out = vec![&*self.at];
        out.extend(self.dir.as_deref());
        out.push(&*self.body);
        out
    }

    /// [`Deriv::children`], mutably.
    pub fn children_mut(&mut self) -> Vec<&mut GExpr> {
        let mut out = vec![&mut *self.at];
        out.extend(self.dir.as_deref_mut());
        out.push(&mut *self.body);
        out
    }

    /// The construct as text: `(grad_rev (fun x -> body) at)`, with
    /// `(...).2` around the pair that `jvp` and the vjps return.
    pub fn write(&self, out: &mut String, write: impl Fn(&GExpr, &mut String)) {
        let pair = matches!(self.op, Prim::Jvp | Prim::Vjp | Prim::VjpRev);
        out.push('(');
        if pair {
            out.push('(');
        }
        out.push_str(self.op.symbol());
        out.push_str(" (fun ");
        out.push_str(&self.x);
        out.push_str(" -> ");
        write(&self.body, out);
        out.push_str(") ");
        write(&self.at, out);
        if let Some(d) = &self.dir {
            out.push(' ');
            write(d, out);
        }
        out.push(')');
        if pair {
            out.push_str(".2)");
        }
    }
}

/// The forward construct computing what `op` computes (`grad` for
/// `grad_rev`, `vjp` for `vjp_rev`, the forward ones themselves).
pub fn forward_of(op: Prim) -> Prim {
    match op {
        Prim::GradRev => Prim::Grad,
        Prim::VjpRev => Prim::Vjp,
        other => other,
    }
}

/// `e` with every reverse construct replaced by its forward one: the same
/// value to rounding, by the other mode.
pub fn forward_twin(e: &GExpr) -> GExpr {
    let mut out = e.clone();
    to_forward(&mut out);
    out
}

fn to_forward(e: &mut GExpr) {
    syntax::stack::guard(|| {
        if let GExpr::Deriv(d) = e {
            d.op = forward_of(d.op);
        }
        for c in e.children_mut() {
            to_forward(c);
        }
    });
}

/// Whether `e` holds a derivative construct.
pub fn has_deriv(e: &GExpr) -> bool {
    syntax::stack::guard(|| {
        matches!(e, GExpr::Deriv(_)) || e.children().iter().any(|c| has_deriv(c))
    })
}

/// Counts what a construct nests over into a coverage table: another
/// construct (`forward over reverse` and so on, by the modes of the
/// two), a histogram or `scatter`, and the variables of the enclosing
/// program its function reads.
pub fn count_nesting(d: &Deriv, counts: &mut BTreeMap<String, u64>) {
    let mode = |op: Prim| {
        if matches!(op, Prim::GradRev | Prim::VjpRev) {
            "reverse"
        } else {
            "forward"
        }
    };
    let mut inner = Vec::new();
    collect(&d.body, &mut inner);
    for op in inner {
        let key = match op {
            Some(op) => format!("{} over {}", mode(d.op), mode(op)),
            None => format!("{} over a histogram", mode(d.op)),
        };
        *counts.entry(key).or_insert(0) += 1;
    }
    if d.body.free_vars().iter().any(|v| *v != d.x) {
        *counts
            .entry(format!("{} (free vars)", d.op.symbol()))
            .or_insert(0) += 1;
    }
}

/// The constructs (`Some`) and histograms or scatters (`None`) in `e`.
fn collect(e: &GExpr, out: &mut Vec<Option<Prim>>) {
    syntax::stack::guard(|| {
        match e {
            GExpr::Deriv(d) => out.push(Some(d.op)),
            GExpr::Hist(..) => out.push(None),
            _ => {}
        }
        for c in e.children() {
            collect(c, out);
        }
    });
}

/// The relative step of the finite differences.
const STEP: f64 = 1e-4;
/// How closely the Richardson estimates at two steps must agree
/// (relative to 1 + their size) for the construct to count as resolved;
/// otherwise the point is not admissible.
const SETTLED: f64 = 1e-6;

/// The construct's value by central finite differences of its body: per
/// real of `x`, the Richardson extrapolation of the quotients at steps h
/// and h/2, accepted only if it agrees with the one at h/2 and h/4. Every
/// evaluation of the body goes through the generator's evaluator, so the
/// perturbed points are admissible ones too (away from every kink by its
/// margin, which is a hundred times the step).
pub fn eval(d: &Deriv, env: &mut Vec<(String, GVal)>, probe: &mut Probe) -> Result<GVal, Singular> {
    let at = crate::eval::eval_probed(&d.at, env, probe)?;
    let dir = match &d.dir {
        Some(e) => Some(crate::eval::eval_probed(e, env, probe)?),
        None => None,
    };
    let mut xs = Vec::new();
    flatten(&at, &mut xs)?;
    // The real function whose derivative the construct is: the body, or
    // for the vjps its inner product with the cotangent.
    let g = |point: &[f64], env: &mut Vec<(String, GVal)>, probe: &mut Probe| {
        let x = unflatten(&at, point, &mut 0);
        let v = apply_fn(&d.x, &d.body, x, env, probe)?;
        match &dir {
            Some(dy) if matches!(d.op, Prim::Vjp | Prim::VjpRev) => {
                let (mut a, mut b) = (Vec::new(), Vec::new());
                flatten(&v, &mut a)?;
                flatten(dy, &mut b)?;
                Ok(a.iter().zip(&b).map(|(p, q)| p * q).sum())
            }
            _ => match v {
                GVal::Real(r) => Ok(r),
                other => Err(Singular(format!("a derivative of {other:?}"))),
            },
        }
    };
    if d.op == Prim::Jvp {
        let Some(dx) = &dir else {
            return Err(Singular("jvp without a tangent".to_string()));
        };
        let mut ts = Vec::new();
        flatten(dx, &mut ts)?;
        // Along the line x + t dx at t = 0.
        let line = |t: f64, env: &mut Vec<(String, GVal)>, probe: &mut Probe| {
            let p: Vec<f64> = xs.iter().zip(&ts).map(|(x, d)| x + t * d).collect();
            g(&p, env, probe)
        };
        let scale = ts.iter().fold(0.0_f64, |a, t| a.max(t.abs())).max(1e-3);
        let h = STEP / scale;
        return richardson(h, |t, env, probe| line(t, env, probe), env, probe).map(GVal::Real);
    }
    let mut grads = Vec::with_capacity(xs.len());
    for i in 0..xs.len() {
        let h = STEP * xs[i].abs().max(1.0);
        let base = xs.clone();
        let df = richardson(
            h,
            |t, env, probe| {
                let mut p = base.clone();
                p[i] += t;
                g(&p, env, probe)
            },
            env,
            probe,
        )?;
        grads.push(df);
    }
    Ok(unflatten(&at, &grads, &mut 0))
}

/// The derivative at 0 of `f` by central differences at h, h/2 and h/4,
/// extrapolated; an error if the two extrapolations disagree.
fn richardson(
    h: f64,
    mut f: impl FnMut(f64, &mut Vec<(String, GVal)>, &mut Probe) -> Result<f64, Singular>,
    env: &mut Vec<(String, GVal)>,
    probe: &mut Probe,
) -> Result<f64, Singular> {
    let mut quotient = |h: f64, env: &mut Vec<(String, GVal)>, probe: &mut Probe| {
        Ok::<f64, Singular>((f(h, env, probe)? - f(-h, env, probe)?) / (2.0 * h))
    };
    let (d1, d2, d4) = (
        quotient(h, env, probe)?,
        quotient(h / 2.0, env, probe)?,
        quotient(h / 4.0, env, probe)?,
    );
    let (r1, r2) = ((4.0 * d2 - d1) / 3.0, (4.0 * d4 - d2) / 3.0);
    if (r1 - r2).abs() > SETTLED * (1.0 + r2.abs()) || !r2.is_finite() {
        return Err(Singular(format!(
            "finite differences of a derivative construct do not settle ({r1} vs {r2})"
        )));
    }
    Ok(r2)
}

fn flatten(v: &GVal, out: &mut Vec<f64>) -> Result<(), Singular> {
    match v {
        GVal::Real(x) => out.push(*x),
        GVal::Array(xs) | GVal::Tuple(xs) => {
            for x in xs {
                flatten(x, out)?;
            }
        }
        other => return Err(Singular(format!("a derivative with respect to {other:?}"))),
    }
    Ok(())
}

fn unflatten(template: &GVal, xs: &[f64], i: &mut usize) -> GVal {
    match template {
        GVal::Array(items) => GVal::Array(items.iter().map(|t| unflatten(t, xs, i)).collect()),
        GVal::Tuple(items) => GVal::Tuple(items.iter().map(|t| unflatten(t, xs, i)).collect()),
        _ => {
            *i += 1;
            GVal::Real(xs[*i - 1])
        }
    }
}
