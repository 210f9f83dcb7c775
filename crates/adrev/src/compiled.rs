//! A compiled request: the derivative program(s), built once for their
//! backend, called many times on named inputs, returning named outputs.

use crate::diag::{self, Error, Result};
use crate::inputs::{Bound, Inputs, Need};
use crate::native::Native;
use crate::outputs::Outputs;
use crate::request::{JacobianMode, Kind};
use data::Data;
use semantics::Value;
use std::time::{Duration, Instant};
use syntax::{Def, Module};

/// One program ready to run: a module, the definition to call, and the
/// backend's build of it.
#[derive(Debug)]
pub(crate) struct Artefact {
    module: Module,
    def: String,
    native: Option<Native>,
}

impl Artefact {
    /// `def` of `m`, built for C when `c` is given.
    pub(crate) fn new(
        module: Module,
        def: String,
        c: Option<&codegen::Config>,
    ) -> Result<Artefact> {
        if module.def(&def).is_none() {
            return Err(Error::internal(format!(
                "the compiled module has no definition `{def}`"
            )));
        }
        let native = c.map(|cfg| Native::build(&module, cfg)).transpose()?;
        Ok(Artefact {
            module,
            def,
            native,
        })
    }

    /// Runs the program on `args` (one per parameter, in order).
    fn call(&self, args: &[Data<'_>]) -> Result<Value> {
        match &self.native {
            Some(n) => n.call(&self.def, args),
            None => {
                let values: Vec<Value> = args.iter().map(Data::to_value).collect();
                self.eval(&values)
            }
        }
    }

    /// Runs the program on the evaluator.
    fn eval(&self, args: &[Value]) -> Result<Value> {
        let def = self
            .module
            .def(&self.def)
            .ok_or_else(|| Error::internal(format!("no definition `{}`", self.def)))?;
        semantics::eval_def(&self.module, def, args)
            .map_err(|e| diag::at(&self.module.file, e.span(), &e.to_string()))
    }

    /// Runs the program `reps` times after one untimed call, timing each
    /// run around the computation only.
    fn time(&self, args: &[Data<'_>], reps: usize) -> Result<(Value, Vec<Duration>)> {
        if let Some(n) = &self.native {
            return n.time(&self.def, args, reps);
        }
        let values: Vec<Value> = args.iter().map(Data::to_value).collect();
        let value = self.eval(&values)?;
        let mut times = Vec::with_capacity(reps);
        for _ in 0..reps {
            let t = Instant::now();
            let v = self.eval(&values)?;
            times.push(t.elapsed());
            drop(v);
        }
        Ok((value, times))
    }

    /// The module that runs (the optimized derivative program).
    pub(crate) fn module(&self) -> &Module {
        &self.module
    }
}

/// How a compiled request computes its outputs. (One per `Compiled`, built
/// once: the sizes of the variants do not matter.)
#[derive(Debug)]
#[allow(clippy::large_enum_variant)]
pub(crate) enum Plan {
    /// The entry's value.
    Value(Artefact),
    /// A UNF module run by its evaluator.
    UnfValue(unf::Module),
    /// `(value, g_1, ..., g_k)`, the value alone when k = 0.
    Gradient(Artefact),
    /// `(value, tangent)` from the entry's parameters and their tangents.
    Jvp(Artefact),
    /// `(value, J_1, ..., J_k)`.
    ForwardJacobian(Artefact),
    /// `(value, g_1, ..., g_k, H_11, ..., H_kk)`.
    Hessian(Artefact),
    /// The primal and the gradient program of the pullback.
    Vjp(Pullback),
    /// A reverse Jacobian: one pullback per output real.
    ReverseJacobian(Pullback),
    /// Both Jacobians, chosen per call by sizes.
    AutoJacobian {
        forward: Artefact,
        reverse: Pullback,
    },
}

/// The primal program and the gradient of the pullback `<f x, ct>`, whose
/// last parameter is the cotangent.
#[derive(Debug)]
pub(crate) struct Pullback {
    pub primal: Artefact,
    pub grad: Artefact,
}

impl Pullback {
    /// The VJP of `ct` at `args`: one cotangent per `wrt` parameter.
    fn vjp(&self, args: &[Data<'_>], ct: Value, k: usize) -> Result<Vec<Value>> {
        let mut all = args.to_vec();
        all.push(Data::Value(ct));
        let out = self.grad.call(&all)?;
        Ok(split(out, k, "a pullback's gradient program")?.1)
    }

    /// The Jacobian blocks by one VJP per real of the result `y`.
    fn jacobian(&self, args: &[Data<'_>], y: &Value, k: usize) -> Result<Vec<Value>> {
        let n = count_reals(y);
        let mut rows: Vec<Vec<Value>> = Vec::with_capacity(n);
        for j in 0..n {
            let ct = one_hot(y, j, &mut 0);
            rows.push(self.vjp(args, ct, k)?);
        }
        // Block i: y's shape, each real replaced by row j's i-th cotangent;
        // an Int/Bool leaf of y by zeros shaped like parameter i's gradient.
        let zeros: Vec<Value> = match rows.first() {
            Some(r) => r.iter().map(zero_like).collect(),
            None => self
                .vjp(args, one_hot(y, usize::MAX, &mut 0), k)?
                .iter()
                .map(zero_like)
                .collect(),
        };
        Ok((0..k)
            .map(|i| replace_reals(y, &mut 0, &|j| rows[j][i].clone(), &zeros[i]))
            .collect())
    }
}

/// What [`Compiled::call`] returns about the entry.
#[derive(Debug)]
pub struct Compiled {
    pub(crate) entry: Def,
    pub(crate) kind: Kind,
    pub(crate) wrt: Vec<String>,
    pub(crate) plan: Plan,
}

/// How often [`Compiled::time`] runs: at least `runs` times and at least
/// `min_time` in total.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timing {
    /// The least number of timed runs (at least 1).
    pub runs: usize,
    /// The least total time of the timed runs.
    pub min_time: Duration,
}

impl Default for Timing {
    /// Ten runs, no minimum time.
    fn default() -> Timing {
        Timing {
            runs: 10,
            min_time: Duration::ZERO,
        }
    }
}

impl Compiled {
    /// The entry definition (its parameters and types).
    pub fn entry(&self) -> &Def {
        &self.entry
    }

    /// The parameters differentiated, by name.
    pub fn wrt(&self) -> &[String] {
        &self.wrt
    }

    /// What was asked.
    pub fn kind(&self) -> Kind {
        self.kind
    }

    /// The program that runs for this request (the first one for a VJP or
    /// reverse Jacobian, which run the primal and the pullback's
    /// gradient): what `compile --grad` builds and `print` shows.
    pub fn module(&self) -> Option<&Module> {
        match &self.plan {
            Plan::Value(a)
            | Plan::Gradient(a)
            | Plan::Jvp(a)
            | Plan::ForwardJacobian(a)
            | Plan::Hessian(a) => Some(a.module()),
            Plan::Vjp(p) | Plan::ReverseJacobian(p) => Some(p.grad.module()),
            Plan::AutoJacobian { forward, .. } => Some(forward.module()),
            Plan::UnfValue(_) => None,
        }
    }

    fn need(&self) -> Need {
        Need {
            tangents: self.kind == Kind::Jvp,
            cotangent: self.kind == Kind::Vjp,
        }
    }

    /// Runs the compiled request on `inputs`, checked against the entry's
    /// parameter types.
    pub fn call(&self, inputs: &Inputs<'_>) -> Result<Outputs> {
        let bound = inputs.bind(&self.entry, self.need())?;
        self.run(&bound)
    }

    /// Runs the compiled request at least `timing.runs` times and for at
    /// least `timing.min_time`, after one untimed call; returns the outputs
    /// and each run's duration, measured around the computation only (for
    /// the C backend, inside the C program; a VJP or a Jacobian by reverse
    /// mode, which make several calls, are timed around all of them).
    pub fn time(&self, inputs: &Inputs<'_>, timing: Timing) -> Result<(Outputs, Vec<Duration>)> {
        let bound = inputs.bind(&self.entry, self.need())?;
        let runs = timing.runs.max(1);
        let single = match &self.plan {
            Plan::Value(a) | Plan::Gradient(a) | Plan::ForwardJacobian(a) | Plan::Hessian(a) => {
                Some(a)
            }
            _ => None,
        };
        let mut times = Vec::new();
        let outputs = match single {
            Some(a) => {
                let (v, t) = a.time(&bound.args, runs)?;
                times.extend(t);
                while times.iter().sum::<Duration>() < timing.min_time {
                    let more = runs.max(times.len());
                    times.extend(a.time(&bound.args, more)?.1);
                }
                self.outputs(v, &bound)?
            }
            None => {
                let out = self.run(&bound)?;
                while times.len() < runs || times.iter().sum::<Duration>() < timing.min_time {
                    let t = Instant::now();
                    drop(self.run(&bound)?);
                    times.push(t.elapsed());
                }
                out
            }
        };
        Ok((outputs, times))
    }

    fn run(&self, bound: &Bound) -> Result<Outputs> {
        let k = self.wrt.len();
        match &self.plan {
            Plan::UnfValue(u) => {
                let named: Vec<(String, Value)> = self
                    .entry
                    .params
                    .iter()
                    .map(|p| p.name.to_string())
                    .zip(bound.args.iter().map(Data::to_value))
                    .collect();
                let v = semantics::eval_unf(u, &named)
                    .map_err(|e| diag::at(&u.source.file, e.span(), &e.to_string()))?;
                Ok(Outputs::value_only(self.kind, v))
            }
            Plan::Jvp(a) => {
                let mut all = bound.args.clone();
                all.extend(bound.tangents.iter().cloned().map(Data::Value));
                let out = a.call(&all)?;
                let (value, rest) = split(out, 1, "a JVP program")?;
                let mut o = Outputs::value_only(self.kind, value);
                o.tangent = rest.into_iter().next();
                Ok(o)
            }
            Plan::Vjp(p) => {
                let value = p.primal.call(&bound.args)?;
                let ct = bound
                    .cotangent
                    .clone()
                    .ok_or_else(|| Error::internal("a VJP was called without its cotangent"))?;
                let grads = p.vjp(&bound.args, ct, k)?;
                let mut o = Outputs::value_only(self.kind, value);
                o.gradients = self.wrt.iter().cloned().zip(grads).collect();
                Ok(o)
            }
            Plan::ReverseJacobian(p) => self.reverse_jacobian(p, &bound.args),
            Plan::AutoJacobian { forward, reverse } => {
                let y = reverse.primal.call(&bound.args)?;
                let n_in: usize = self
                    .wrt_positions()
                    .iter()
                    .map(|&i| data_reals(&bound.args[i]))
                    .sum();
                if count_reals(&y) < n_in {
                    self.reverse_jacobian(reverse, &bound.args)
                } else {
                    let v = forward.call(&bound.args)?;
                    let mut o = self.outputs(v, bound)?;
                    o.jacobian_mode = Some(JacobianMode::Forward);
                    Ok(o)
                }
            }
            Plan::Value(a) | Plan::Gradient(a) | Plan::ForwardJacobian(a) | Plan::Hessian(a) => {
                let v = a.call(&bound.args)?;
                self.outputs(v, bound)
            }
        }
    }

    fn wrt_positions(&self) -> Vec<usize> {
        self.wrt
            .iter()
            .filter_map(|n| self.entry.params.iter().position(|p| p.name.as_str() == n))
            .collect()
    }

    fn reverse_jacobian(&self, p: &Pullback, args: &[Data<'_>]) -> Result<Outputs> {
        let y = p.primal.call(args)?;
        let blocks = p.jacobian(args, &y, self.wrt.len())?;
        let mut o = Outputs::value_only(self.kind, y);
        o.jacobian = self.wrt.iter().cloned().zip(blocks).collect();
        o.jacobian_mode = Some(JacobianMode::Reverse);
        Ok(o)
    }

    /// Splits the flat result of a one-program plan into named outputs.
    fn outputs(&self, out: Value, _bound: &Bound) -> Result<Outputs> {
        let k = self.wrt.len();
        let names = &self.wrt;
        match &self.plan {
            Plan::Value(_) => Ok(Outputs::value_only(self.kind, out)),
            Plan::Gradient(_) => {
                let (value, grads) = split(out, k, "a gradient program")?;
                let mut o = Outputs::value_only(self.kind, value);
                o.gradients = names.iter().cloned().zip(grads).collect();
                Ok(o)
            }
            Plan::ForwardJacobian(_) | Plan::AutoJacobian { .. } => {
                let (value, blocks) = split(out, k, "a Jacobian program")?;
                let mut o = Outputs::value_only(self.kind, value);
                o.jacobian = names.iter().cloned().zip(blocks).collect();
                o.jacobian_mode = Some(JacobianMode::Forward);
                Ok(o)
            }
            Plan::Hessian(_) => {
                let (value, rest) = split(out, k + k * k, "a Hessian program")?;
                let mut o = Outputs::value_only(self.kind, value);
                o.gradients = names.iter().cloned().zip(rest[..k].to_vec()).collect();
                for (i, a) in names.iter().enumerate() {
                    for (j, b) in names.iter().enumerate() {
                        o.hessian
                            .push(((a.clone(), b.clone()), rest[k + i * k + j].clone()));
                    }
                }
                Ok(o)
            }
            _ => Err(Error::internal(
                "outputs of a multi-program plan split as one",
            )),
        }
    }
}

/// Splits the flat `(value, r_1, ..., r_k)` of a derivative program (the
/// value alone when k = 0).
fn split(out: Value, k: usize, what: &str) -> Result<(Value, Vec<Value>)> {
    if k == 0 {
        return Ok((out, Vec::new()));
    }
    match out {
        Value::Tuple(items) if items.len() == k + 1 => Ok((items[0].clone(), items[1..].to_vec())),
        other => Err(Error::internal(format!(
            "{what} returned {other}, not a tuple of the value and {k} more results"
        ))),
    }
}

/// The number of reals in a value.
pub(crate) fn count_reals(v: &Value) -> usize {
    match v {
        Value::Real(_) => 1,
        Value::Array(items) | Value::Tuple(items) => items.iter().map(count_reals).sum(),
        _ => 0,
    }
}

/// The number of reals in an input.
fn data_reals(d: &Data<'_>) -> usize {
    match d {
        Data::Dense(x) => match x.buffer() {
            data::Buffer::Real(xs) => xs.len(),
            _ => 0,
        },
        Data::Tuple(items) => items.iter().map(data_reals).sum(),
        Data::Value(v) => count_reals(v),
    }
}

/// `v` with real number `j` (depth first) set to 1 and every other real 0.
fn one_hot(v: &Value, j: usize, i: &mut usize) -> Value {
    match v {
        Value::Real(_) => {
            *i += 1;
            Value::Real(if *i - 1 == j { 1.0 } else { 0.0 })
        }
        Value::Array(items) => Value::array(items.iter().map(|x| one_hot(x, j, i)).collect()),
        Value::Tuple(items) => Value::tuple(items.iter().map(|x| one_hot(x, j, i)).collect()),
        other => other.clone(),
    }
}

/// A value shaped like `v`, its reals 0, Ints 0 and Bools false.
fn zero_like(v: &Value) -> Value {
    match v {
        Value::Real(_) => Value::Real(0.0),
        Value::Int(_) => Value::Int(0),
        Value::Bool(_) => Value::Bool(false),
        Value::Array(items) => Value::array(items.iter().map(zero_like).collect()),
        Value::Tuple(items) => Value::tuple(items.iter().map(zero_like).collect()),
        other => other.clone(),
    }
}

/// `y` with real number `j` replaced by `f(j)` and every other leaf by `zero`.
fn replace_reals(y: &Value, i: &mut usize, f: &dyn Fn(usize) -> Value, zero: &Value) -> Value {
    match y {
        Value::Real(_) => {
            *i += 1;
            f(*i - 1)
        }
        Value::Array(items) => {
            Value::array(items.iter().map(|x| replace_reals(x, i, f, zero)).collect())
        }
        Value::Tuple(items) => {
            Value::tuple(items.iter().map(|x| replace_reals(x, i, f, zero)).collect())
        }
        _ => zero.clone(),
    }
}
