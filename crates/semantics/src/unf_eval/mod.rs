//! Evaluation of Source UNF and Target UNF modules (seeds/000 Section 4,
//! the concategory semantics of Section 6.2), so that the `source-unf` and
//! `target-unf` boundaries of the reverse-mode chain can be run and
//! compared with the Source program.
//!
//! A context is a persistent vector of entries: values, or continuations.
//! A continuation is the chain of `J^T` maps it precomposes (an index into
//! an arena, so that long chains are dropped without recursion) ending in
//! the initial continuation, which returns its argument. `J^T p` is
//! evaluated numerically at the primal point found in the input of the
//! enclosing `∘`: the partial derivatives of the scalar operators, and for
//! the primitives with a function (`map`, `reduce`, the loops of
//! `loops.rs`, `if`) the derivative of the body (a reverse derivative
//! stored in the `J^T` primitive) applied element by element, in plain
//! backward loops. A fused first-order primitive (`Term::Fused`, the
//! paper's `F(p, J^T p)` as one node) runs p and precomposes the
//! continuation with `J^T p`; a fused real-valued `if` evaluates the
//! branch taken with its gradient and precomposes the continuation with
//! `z ↦ g * z`. This is a second, independent implementation of Fig. 10 and
//! of docs/derivatives.md: `unf::raise` writes the same maps as Target
//! terms (with scans where this module loops).
//!
//! Results follow `unf::raise`'s calling convention: a Source UNF module
//! evaluates to the entry's value, a Target UNF module to the tuple
//! `(value, g_1, ..., g_k)` of the value and the gradient with respect to
//! each `wrt` parameter, seeded with 1 on the result.
//!
//! Invariants: the module is verified first (`unf::verify`), so positions
//! and shapes in it are trusted; values are checked against the entry's
//! parameter types; nothing panics on a verified module.

use rpds::Vector;
use syntax::stack::guard;
use syntax::{Prim as P, Span};
use unf::{Kind, Module, Op, Prim, Term, TermId};

use crate::error::Error;
use crate::shape::SizeEnv;
use crate::value::Value;

mod custom;
mod loops;
mod scalar;

use scalar::{add, binary, d_binary, d_unary, scalar, unary, zeros_like};

/// An entry of a context at run time.
#[derive(Clone)]
enum Slot {
    Val(Value),
    Cont(usize),
}

type Slots = Vector<Slot>;

/// A continuation: `Initial` returns its argument, `Compose` applies `jt`
/// (at the primal point `primal`) and then `prev`; `jt` is a linear map,
/// or a first-order `Term::Fused` standing for its `J^T p`.
enum Cont {
    Initial,
    Compose {
        prev: usize,
        jt: TermId,
        primal: Slots,
    },
    /// A fused real-valued `if` (`Term::Fused`): the cotangent z of its
    /// result (position `n + 1`) adds `g * z` at each position.
    Scaled {
        prev: usize,
        n: usize,
        grads: Vec<(usize, Value)>,
    },
}

/// Evaluates a UNF module at inputs given by parameter name (every
/// parameter exactly once): the entry's value for Source UNF, the tuple
/// `(value, g_1, ..., g_k)` for Target UNF.
pub fn eval_unf(m: &Module, inputs: &[(String, Value)]) -> Result<Value, Error> {
    let checked = unf::check(m).map_err(|errors| Error::Internal {
        span: errors.first().map(|e| e.span).unwrap_or(Span::GENERATED),
        message: format!(
            "ill-formed {} module: {}",
            m.kind.ir_name(),
            errors.first().map(|e| e.to_string()).unwrap_or_default()
        ),
    })?;
    let def = m.entry_def().ok_or_else(|| Error::NoSuchDef {
        span: Span::GENERATED,
        name: Some(m.entry.to_string()),
    })?;
    let args = bind_inputs(def, inputs)?;
    let mut ev = Eval {
        m,
        lens: (0..checked.tables.n_ctxs())
            .map(|i| checked.tables.len(unf::CtxId(i as u32)) as usize)
            .collect(),
        conts: Vec::new(),
        meter: crate::memory::Meter::default(),
    };
    let slots: Vec<Slot> = args.into_iter().map(Slot::Val).collect();
    match m.kind {
        Kind::Source => {
            let out = ev.eval(m.root, slots.into_iter().collect(), None)?;
            ev.last_value(&out)
        }
        Kind::Target => {
            let one = Value::Real(1.0);
            let (value, cot) = ev.grad(m.root, slots, one)?;
            let mut items = vec![value];
            for &w in &m.wrt {
                let g = cot
                    .get(w as usize - 1)
                    .cloned()
                    .ok_or_else(|| internal("a wrt position outside the parameters"))?;
                items.push(g);
            }
            Ok(Value::tuple(items))
        }
    }
}

fn bind_inputs(def: &syntax::Def, inputs: &[(String, Value)]) -> Result<Vec<Value>, Error> {
    let mut args: Vec<Option<Value>> = vec![None; def.params.len()];
    let mut sizes = SizeEnv::new();
    for (name, value) in inputs {
        let Some(pos) = def.params.iter().position(|p| p.name.as_str() == name) else {
            return Err(Error::UnknownInput {
                span: def.name_span,
                def: def.name.to_string(),
                name: name.clone(),
            });
        };
        let p = &def.params[pos];
        if args[pos].is_some() {
            return Err(Error::DuplicateInput {
                span: p.span,
                name: name.clone(),
            });
        }
        if let Some(ty) = &p.ty {
            value
                .check_input(ty, &mut sizes, Some(name))
                .map_err(|source| Error::Input {
                    span: p.span,
                    name: name.clone(),
                    source,
                })?;
        }
        args[pos] = Some(value.clone());
    }
    def.params
        .iter()
        .zip(args)
        .map(|(p, a)| {
            a.ok_or_else(|| Error::MissingInput {
                span: p.span,
                name: p.name.to_string(),
            })
        })
        .collect()
}

fn internal(message: &str) -> Error {
    Error::Internal {
        span: Span::GENERATED,
        message: format!("unf evaluation: {message}"),
    }
}

fn type_error(span: Span, message: String) -> Error {
    Error::Type { span, message }
}

struct Eval<'a> {
    m: &'a Module,
    lens: Vec<usize>,
    conts: Vec<Cont>,
    /// Checks the memory in use every so many terms evaluated.
    meter: crate::memory::Meter,
}

/// Whether `count` values, `copies` times over, fit in the memory budget
/// (`crate::memory`), for the primitive at `span`.
fn room(count: usize, copies: u64, span: Span, what: &str) -> Result<(), Error> {
    crate::memory::check_items(count, std::mem::size_of::<Value>(), copies).map_err(|shortfall| {
        Error::OutOfMemory {
            span,
            what: what.to_string(),
            shortfall,
        }
    })
}

fn slot(s: &Slots, i: usize) -> Result<Slot, Error> {
    s.get(i)
        .cloned()
        .ok_or_else(|| internal("a position outside its context"))
}

fn truncate(s: &Slots, n: usize) -> Slots {
    if n * 2 < s.len() {
        s.iter().take(n).cloned().collect()
    } else {
        let mut s = s.clone();
        while s.len() > n {
            s.drop_last_mut();
        }
        s
    }
}

impl Eval<'_> {
    fn len(&self, c: unf::CtxId) -> usize {
        self.lens[c.index()]
    }

    fn value(&self, s: &Slots, i: usize) -> Result<Value, Error> {
        match slot(s, i)? {
            Slot::Val(v) => Ok(v),
            Slot::Cont(_) => Err(internal("a continuation where a value is expected")),
        }
    }

    fn real(&self, s: &Slots, i: usize, span: Span) -> Result<f64, Error> {
        let v = self.value(s, i)?;
        v.as_real()
            .ok_or_else(|| type_error(span, format!("a real was expected, found {}", v.kind())))
    }

    fn last_value(&self, s: &Slots) -> Result<Value, Error> {
        if s.is_empty() {
            return Err(internal("an empty context has no result"));
        }
        self.value(s, s.len() - 1)
    }

    fn eval(&mut self, t: TermId, s: Slots, primal: Option<&Slots>) -> Result<Slots, Error> {
        self.meter.tick().map_err(|shortfall| Error::OutOfMemory {
            span: self.m.span(t),
            what: "this term".to_string(),
            shortfall,
        })?;
        guard(|| self.eval_inner(t, s, primal))
    }

    fn eval_inner(&mut self, t: TermId, s: Slots, primal: Option<&Slots>) -> Result<Slots, Error> {
        let span = self.m.span(t);
        match self.m.term(t) {
            Term::Prim(p) => self.prim(p, s, span),
            Term::Jt(p) => match primal {
                Some(pr) => self.jt(p, s, pr, span),
                None => Err(internal("a J^T outside a `∘`")),
            },
            Term::Seq(a, b) | Term::Weak(a, b) => {
                let s = self.eval(*a, s, primal)?;
                self.eval(*b, s, primal)
            }
            Term::Tuple(a, b) => {
                let mut ra = self.eval(*a, s.clone(), primal)?;
                for x in self.eval(*b, s, primal)?.iter() {
                    ra.push_back_mut(x.clone());
                }
                Ok(ra)
            }
            Term::Fused(p, _) if primal.is_none() && p.is_first_order() => {
                self.fused_first_order(t, p, s, span)
            }
            Term::Fused(p, _) if primal.is_none() => self.fused(p, s, span),
            Term::Fused(..) => Err(internal("a fused F(p, J^T p) inside a linear map")),
            Term::Compose(a, b) => {
                let ra = self.eval(*a, s.clone(), primal)?;
                let Some(Slot::Cont(prev)) = ra.last().cloned() else {
                    return Err(internal("the left operand of `∘` is not a continuation"));
                };
                self.conts.push(Cont::Compose {
                    prev,
                    jt: *b,
                    primal: s,
                });
                Ok(Vector::new().push_back(Slot::Cont(self.conts.len() - 1)))
            }
        }
    }

    /// Runs a reverse derivative `D(e)` on the entries of T and applies its
    /// final continuation to `(0, ..., 0, seed)`: e's value and the
    /// cotangents of the entries.
    fn grad(
        &mut self,
        t: TermId,
        inputs: Vec<Slot>,
        seed: Value,
    ) -> Result<(Value, Vec<Value>), Error> {
        self.conts.push(Cont::Initial);
        let mut s: Slots = inputs.into_iter().collect();
        s.push_back_mut(Slot::Cont(self.conts.len() - 1));
        let out = self.eval(t, s, None)?;
        let n = out.len();
        let Some(Slot::Cont(k)) = out.last().cloned() else {
            return Err(internal("a derivative that does not end in a continuation"));
        };
        if n < 2 {
            return Err(internal("a derivative without a result"));
        }
        let value = self.value(&out, n - 2)?;
        let mut cot = Slots::new();
        for i in 0..n - 2 {
            cot.push_back_mut(Slot::Val(zeros_like(&self.value(&out, i)?)));
        }
        cot.push_back_mut(Slot::Val(seed));
        let mut k = k;
        loop {
            match &self.conts[k] {
                Cont::Initial => break,
                Cont::Compose { prev, jt, primal } => {
                    let (prev, jt, primal) = (*prev, *jt, primal.clone());
                    cot = match self.m.term(jt) {
                        Term::Fused(p, _) => self.jt(p, cot, &primal, self.m.span(jt))?,
                        _ => self.eval(jt, cot, Some(&primal))?,
                    };
                    k = prev;
                }
                Cont::Scaled { prev, n, grads } => {
                    let (prev, n) = (*prev, *n);
                    let z = self.value(&cot, n + 1)?;
                    let z = z
                        .as_real()
                        .ok_or_else(|| internal("the cotangent of a real that is not a real"))?;
                    let mut next = truncate(&cot, n + 1);
                    for (pos, g) in grads.clone() {
                        self.add_at(&mut next, pos, &scalar::scale(&g, z))?;
                    }
                    cot = next;
                    k = prev;
                }
            }
        }
        let cot = cot.iter().map(|x| match x {
            Slot::Val(v) => Ok(v.clone()),
            Slot::Cont(_) => Err(internal("a continuation among cotangents")),
        });
        Ok((value, cot.collect::<Result<_, _>>()?))
    }

    /// The value of a Source UNF term on the given entries.
    fn run(&mut self, t: TermId, inputs: Vec<Value>) -> Result<Value, Error> {
        let out = self.eval(t, inputs.into_iter().map(Slot::Val).collect(), None)?;
        self.last_value(&out)
    }

    /// The value of a reverse derivative, without its backward pass.
    fn run_derivative(&mut self, t: TermId, inputs: Vec<Value>) -> Result<Value, Error> {
        self.conts.push(Cont::Initial);
        let mut s: Slots = inputs.into_iter().map(Slot::Val).collect();
        s.push_back_mut(Slot::Cont(self.conts.len() - 1));
        let out = self.eval(t, s, None)?;
        if out.len() < 2 {
            return Err(internal("a derivative without a result"));
        }
        self.value(&out, out.len() - 2)
    }

    fn prim(&mut self, p: &Prim, s: Slots, span: Span) -> Result<Slots, Error> {
        match p {
            Prim::Var(_, i) => {
                let x = slot(&s, *i as usize - 1)?;
                Ok(s.push_back(x))
            }
            Prim::Op(ctx, op) => {
                let n = self.len(*ctx);
                let v = match op {
                    Op::Const(c) => Value::Real(*c),
                    Op::Reals { node, .. } => match self.m.source.exprs.get(node.index()) {
                        Some(syntax::Expr::Reals(literal)) => Value::from_reals(literal),
                        _ => return Err(type_error(span, format!("`reals` names {node}"))),
                    },
                    Op::Unary(o) => Value::Real(scalar(*o, unary(*o, self.real(&s, n, span)?))?),
                    Op::Binary(o) => {
                        let (x, y) = (self.real(&s, n, span)?, self.real(&s, n + 1, span)?);
                        Value::Real(scalar(*o, binary(*o, x, y))?)
                    }
                    Op::Proj { index, .. } => {
                        let t = self.value(&s, n)?;
                        t.as_tuple()
                            .and_then(|items| items.get(*index as usize - 1).cloned())
                            .ok_or_else(|| type_error(span, format!("π{index} of {}", t.kind())))?
                    }
                    Op::Int(k) => Value::Int(*k),
                    Op::Bool(b) => Value::Bool(*b),
                    Op::Builtin { op, args, .. } => {
                        let k = self.len(*args);
                        let vals = (n..n + k)
                            .map(|i| self.value(&s, i))
                            .collect::<Result<Vec<_>, _>>()?;
                        scalar::builtin(*op, &vals, span)?
                    }
                    Op::Index { .. } => {
                        let (a, i) = (self.value(&s, n)?, self.value(&s, n + 1)?);
                        loops::index(&a, &i, span)?
                    }
                };
                Ok(s.push_back(Slot::Val(v)))
            }
            Prim::Pair(ctx, _) => {
                let n = self.len(*ctx);
                let items = (n..s.len())
                    .map(|i| self.value(&s, i))
                    .collect::<Result<Vec<_>, _>>()?;
                Ok(truncate(&s, n).push_back(Slot::Val(Value::tuple(items))))
            }
            Prim::Proj(keep, drop, rest) => {
                let (lk, ld) = (self.len(*keep), self.len(*drop));
                let tail = (lk + ld..s.len())
                    .map(|i| slot(&s, i))
                    .collect::<Result<Vec<_>, _>>()?;
                let mut out = truncate(&s, lk);
                let _ = rest;
                for x in tail {
                    out.push_back_mut(x);
                }
                Ok(out)
            }
            Prim::Map { ctx, args, fun, .. } => {
                let n = self.len(*ctx);
                let arrays = self.arrays(&s, n, args.len(), span)?;
                let free = fun
                    .free
                    .iter()
                    .map(|&f| self.value(&s, f as usize - 1))
                    .collect::<Result<Vec<_>, _>>()?;
                room(arrays[0].len(), 2, span, "`map`")?;
                let mut out = Vec::with_capacity(arrays[0].len());
                for e in 0..arrays[0].len() {
                    let mut inputs = free.clone();
                    inputs.extend(arrays.iter().map(|a| a[e].clone()));
                    out.push(self.run(fun.body, inputs)?);
                }
                Ok(s.push_back(Slot::Val(Value::array(out))))
            }
            Prim::Reduce { ctx, fun, init, .. } => {
                let n = self.len(*ctx);
                let a = self.arrays(&s, n, 1, span)?.remove(0);
                let mut acc = self.run(*init, Vec::new())?;
                for x in a {
                    acc = self.run(fun.body, vec![acc, x])?;
                }
                Ok(s.push_back(Slot::Val(acc)))
            }
            Prim::Custom { ctx, node, .. } => {
                let n = self.len(*ctx);
                let p = self.value(&s, n)?;
                let v = custom::run(&self.m.source, &self.m.entry, *node, &p, None)?;
                Ok(s.push_back(Slot::Val(v)))
            }
            Prim::Array { ctx, .. } => {
                let n = self.len(*ctx);
                let items = (n..s.len())
                    .map(|i| self.value(&s, i))
                    .collect::<Result<Vec<_>, _>>()?;
                Ok(truncate(&s, n).push_back(Slot::Val(Value::array(items))))
            }
            Prim::If {
                ctx,
                then_fun,
                else_fun,
                ..
            } => {
                let n = self.len(*ctx);
                let c = self.value(&s, n)?;
                let fun = match c.as_bool() {
                    Some(true) => then_fun,
                    Some(false) => else_fun,
                    None => {
                        return Err(type_error(
                            span,
                            format!("a condition that is {}", c.kind()),
                        ));
                    }
                };
                let free = self.free_values(&s, fun)?;
                let v = self.run(fun.body, free)?;
                Ok(s.push_back(Slot::Val(v)))
            }
            Prim::Loop { kind, ctx, fun, .. } => {
                let n = self.len(*ctx);
                let ops = (n..n + kind.operands())
                    .map(|i| self.value(&s, i))
                    .collect::<Result<Vec<_>, _>>()?;
                let free = self.free_values(&s, fun)?;
                let v = self.run_loop(*kind, fun.body, &free, &ops, false, span)?;
                Ok(s.push_back(Slot::Val(v)))
            }
            Prim::Trips {
                ctx, cond, body, ..
            } => {
                let n = self.len(*ctx);
                let mut state = self.value(&s, n)?;
                let free_c = self.free_values(&s, cond)?;
                let free_b = self.free_values(&s, body)?;
                let mut trips: i64 = 0;
                loop {
                    let mut inputs = free_c.clone();
                    inputs.push(state.clone());
                    let go = self.run(cond.body, inputs)?;
                    match go.as_bool() {
                        Some(true) => {}
                        Some(false) => break,
                        None => {
                            return Err(type_error(
                                span,
                                format!("a condition that is {}", go.kind()),
                            ));
                        }
                    }
                    let mut inputs = free_b.clone();
                    inputs.push(state);
                    state = self.run(body.body, inputs)?;
                    trips = trips.checked_add(1).ok_or(Error::Overflow {
                        span,
                        op: syntax::Prim::Trips,
                    })?;
                }
                Ok(s.push_back(Slot::Val(Value::Int(trips))))
            }
        }
    }

    /// `F(p, J^T p)` of a first-order primitive (`t`, a `Term::Fused`) on
    /// `s = T_in · K`: p on T_in, the continuation K precomposed with
    /// `J^T p` read at the primal point s.
    fn fused_first_order(
        &mut self,
        t: TermId,
        p: &Prim,
        s: Slots,
        span: Span,
    ) -> Result<Slots, Error> {
        let Some(Slot::Cont(prev)) = s.last().cloned() else {
            return Err(internal("a derivative without a continuation"));
        };
        let mut base = s.clone();
        base.drop_last_mut();
        let mut out = self.prim(p, base, span)?;
        self.conts.push(Cont::Compose {
            prev,
            jt: t,
            primal: s,
        });
        out.push_back_mut(Slot::Cont(self.conts.len() - 1));
        Ok(out)
    }

    /// `F(if, J^T if)` of a real-valued `if` in one piece: the value and
    /// the gradient of the branch taken, the continuation precomposed with
    /// `z ↦ g * z`. `s` is `T_in · K`.
    fn fused(&mut self, p: &Prim, s: Slots, span: Span) -> Result<Slots, Error> {
        let Prim::If {
            ctx,
            then_fun,
            else_fun,
            ..
        } = p
        else {
            return Err(internal("a fused primitive that is not an if"));
        };
        let Some(Slot::Cont(prev)) = s.last().cloned() else {
            return Err(internal("a derivative without a continuation"));
        };
        let s = truncate(&s, s.len() - 1);
        let n = self.len(*ctx);
        let c = self.value(&s, n)?;
        let fun = match c.as_bool() {
            Some(true) => then_fun,
            Some(false) => else_fun,
            None => {
                return Err(type_error(
                    span,
                    format!("a condition that is {}", c.kind()),
                ));
            }
        };
        let free: Vec<Slot> = self
            .free_values(&s, fun)?
            .into_iter()
            .map(Slot::Val)
            .collect();
        let (value, cot) = self.grad(fun.body, free, Value::Real(1.0))?;
        let grads = fun
            .free
            .iter()
            .zip(cot)
            .map(|(&f, g)| (f as usize - 1, g))
            .collect();
        self.conts.push(Cont::Scaled { prev, n, grads });
        let k = self.conts.len() - 1;
        Ok(s.push_back(Slot::Val(value)).push_back(Slot::Cont(k)))
    }

    /// The values of a function's free variables in the context `s`.
    fn free_values(&self, s: &Slots, fun: &unf::Fun) -> Result<Vec<Value>, Error> {
        fun.free
            .iter()
            .map(|&f| self.value(s, f as usize - 1))
            .collect()
    }

    /// The `k` arrays at positions `n..n+k`, of equal lengths.
    fn arrays(&self, s: &Slots, n: usize, k: usize, span: Span) -> Result<Vec<Vec<Value>>, Error> {
        let mut out: Vec<Vec<Value>> = Vec::with_capacity(k);
        for i in 0..k {
            let v = self.value(s, n + i)?;
            let a = v.as_array().ok_or_else(|| {
                type_error(span, format!("an array was expected, found {}", v.kind()))
            })?;
            out.push(a.to_vec());
        }
        if k == 2 && out[0].len() != out[1].len() {
            return Err(Error::SizeMismatch {
                span,
                op: P::Map2,
                left: out[0].len(),
                right: out[1].len(),
            });
        }
        Ok(out)
    }

    fn add_at(&self, s: &mut Slots, i: usize, v: &Value) -> Result<(), Error> {
        let old = self.value(s, i)?;
        s.set_mut(i, Slot::Val(add(&old, v)?));
        Ok(())
    }

    /// `J^T p` on cotangents `s` at the primal point `pr`.
    fn jt(&mut self, p: &Prim, s: Slots, pr: &Slots, span: Span) -> Result<Slots, Error> {
        match p {
            Prim::Var(_, i) => {
                let z = self.last_value(&s)?;
                let mut s = truncate(&s, s.len() - 1);
                self.add_at(&mut s, *i as usize - 1, &z)?;
                Ok(s)
            }
            Prim::Op(ctx, op) => {
                let n = self.len(*ctx);
                let z = self.last_value(&s)?;
                let mut s = truncate(&s, s.len() - 1);
                match op {
                    Op::Const(_) | Op::Reals { .. } | Op::Int(_) | Op::Bool(_) => {}
                    Op::Builtin { op, .. } => {
                        if matches!(op, P::Shift1L | P::Shift1R) {
                            let a = self.value(pr, n)?;
                            let d = loops::jt_shift(*op, &a, &z)?;
                            self.add_at(&mut s, n, &d)?;
                        }
                        if syntax::hist::differentiable(*op) {
                            let (d, is, v) = (
                                self.value(pr, n)?,
                                self.value(pr, n + 1)?,
                                self.value(pr, n + 2)?,
                            );
                            if let Some((dd, dv)) =
                                crate::hist::transpose(*op, &d, &is, &v, &z, span)?
                            {
                                self.add_at(&mut s, n, &dd)?;
                                self.add_at(&mut s, n + 2, &dv)?;
                            }
                        }
                        if syntax::hist::is_partial(*op) {
                            let mut xs = Vec::with_capacity(op.arity());
                            for i in 0..op.arity() {
                                xs.push(self.value(pr, n + i)?);
                            }
                            for (i, d) in crate::hist::transpose_partial(*op, &xs, &z, span)? {
                                self.add_at(&mut s, n + i, &d)?;
                            }
                        }
                    }
                    Op::Index { .. } => {
                        let (a, i) = (self.value(pr, n)?, self.value(pr, n + 1)?);
                        let d = loops::jt_index(&a, &i, &z, span)?;
                        self.add_at(&mut s, n, &d)?;
                    }
                    Op::Unary(o) => {
                        let zr = z
                            .as_real()
                            .ok_or_else(|| internal("a cotangent of a real that is not a real"))?;
                        let d = scalar(*o, d_unary(*o, self.real(pr, n, span)?))?;
                        self.add_at(&mut s, n, &Value::Real(d * zr))?;
                    }
                    Op::Binary(o) => {
                        let zr = z
                            .as_real()
                            .ok_or_else(|| internal("a cotangent of a real that is not a real"))?;
                        let (x, y) = (self.real(pr, n, span)?, self.real(pr, n + 1, span)?);
                        let (dx, dy) = scalar(*o, d_binary(*o, x, y))?;
                        self.add_at(&mut s, n, &Value::Real(dx * zr))?;
                        self.add_at(&mut s, n + 1, &Value::Real(dy * zr))?;
                    }
                    Op::Proj { index, .. } => {
                        let t = self.value(pr, n)?;
                        let items = t
                            .as_tuple()
                            .ok_or_else(|| internal("π of a value that is not a tuple"))?;
                        let cot: Vec<Value> = items
                            .iter()
                            .enumerate()
                            .map(|(j, x)| {
                                if j + 1 == *index as usize {
                                    z.clone()
                                } else {
                                    zeros_like(x)
                                }
                            })
                            .collect();
                        self.add_at(&mut s, n, &Value::tuple(cot))?;
                    }
                }
                Ok(s)
            }
            Prim::Pair(ctx, _) => {
                let n = self.len(*ctx);
                let z = self.last_value(&s)?;
                let mut s = truncate(&s, n);
                let items = z
                    .as_tuple()
                    .ok_or_else(|| internal("the cotangent of a pair is not a tuple"))?;
                for x in items.iter() {
                    s.push_back_mut(Slot::Val(x.clone()));
                }
                Ok(s)
            }
            Prim::Proj(keep, drop, rest) => {
                let (lk, ld, lr) = (self.len(*keep), self.len(*drop), self.len(*rest));
                let tail = (lk..lk + lr)
                    .map(|i| slot(&s, i))
                    .collect::<Result<Vec<_>, _>>()?;
                let mut out = truncate(&s, lk);
                for j in 0..ld {
                    out.push_back_mut(Slot::Val(zeros_like(&self.value(pr, lk + j)?)));
                }
                for x in tail {
                    out.push_back_mut(x);
                }
                Ok(out)
            }
            Prim::Map { ctx, args, fun, .. } => {
                let n = self.len(*ctx);
                let k = args.len();
                let z = self.last_value(&s)?;
                let zs = z
                    .as_array()
                    .ok_or_else(|| internal("the cotangent of an array is not an array"))?
                    .to_vec();
                let mut s = truncate(&s, n + k);
                let arrays = self.arrays(pr, n, k, span)?;
                let free = fun
                    .free
                    .iter()
                    .map(|&f| self.value(pr, f as usize - 1))
                    .collect::<Result<Vec<_>, _>>()?;
                let nf = free.len();
                let mut elem_cots: Vec<Vec<Value>> = vec![Vec::with_capacity(zs.len()); k];
                for (e, ze) in zs.iter().enumerate() {
                    let mut inputs: Vec<Slot> = free.iter().cloned().map(Slot::Val).collect();
                    inputs.extend(arrays.iter().map(|a| Slot::Val(a[e].clone())));
                    let (_, cot) = self.grad(fun.body, inputs, ze.clone())?;
                    for (j, &f) in fun.free.iter().enumerate() {
                        self.add_at(&mut s, f as usize - 1, &cot[j])?;
                    }
                    for (i, c) in elem_cots.iter_mut().enumerate() {
                        c.push(cot[nf + i].clone());
                    }
                }
                for (i, c) in elem_cots.into_iter().enumerate() {
                    self.add_at(&mut s, n + i, &Value::array(c))?;
                }
                Ok(s)
            }
            Prim::Reduce { ctx, fun, init, .. } => {
                let n = self.len(*ctx);
                let z = self.last_value(&s)?;
                let zr = z
                    .as_real()
                    .ok_or_else(|| internal("a cotangent of a real that is not a real"))?;
                let mut s = truncate(&s, n + 1);
                let a = self.arrays(pr, n, 1, span)?.remove(0);
                // acc[i] is the result before element i; (dx[i], dy[i]) the
                // partial derivatives of the function at (acc[i], a[i]).
                let mut acc = self.run(*init, Vec::new())?;
                let (mut dx, mut dy) = (Vec::with_capacity(a.len()), Vec::with_capacity(a.len()));
                for x in &a {
                    let inputs = vec![Slot::Val(acc.clone()), Slot::Val(x.clone())];
                    let (_, cot) = self.grad(fun.body, inputs, Value::Real(1.0))?;
                    let real = |v: &Value| {
                        v.as_real()
                            .ok_or_else(|| internal("a partial derivative that is not a real"))
                    };
                    dx.push(real(&cot[0])?);
                    dy.push(real(&cot[1])?);
                    acc = self.run_derivative(fun.body, vec![acc, x.clone()])?;
                }
                // d result / d a[i] = dy[i] * prod_{j > i} dx[j]: a suffix
                // product, no division.
                let mut out = vec![0.0; a.len()];
                let mut suffix = 1.0;
                for i in (0..a.len()).rev() {
                    out[i] = dy[i] * suffix * zr;
                    suffix *= dx[i];
                }
                self.add_at(&mut s, n, &Value::reals(&out))?;
                Ok(s)
            }
            Prim::Custom { ctx, node, .. } => {
                let n = self.len(*ctx);
                let z = self.last_value(&s)?;
                let mut s = truncate(&s, n + 1);
                let p = self.value(pr, n)?;
                let d = custom::run(&self.m.source, &self.m.entry, *node, &p, Some(z))?;
                self.add_at(&mut s, n, &d)?;
                Ok(s)
            }
            Prim::Array { ctx, len, .. } => {
                let n = self.len(*ctx);
                let z = self.last_value(&s)?;
                let items = z
                    .as_array()
                    .ok_or_else(|| internal("the cotangent of an array is not an array"))?;
                if items.len() != *len as usize {
                    return Err(internal("an array literal's cotangent of another length"));
                }
                let mut s = truncate(&s, n);
                for x in items.iter() {
                    s.push_back_mut(Slot::Val(x.clone()));
                }
                Ok(s)
            }
            Prim::If {
                ctx,
                then_fun,
                else_fun,
                ..
            } => {
                let n = self.len(*ctx);
                let z = self.last_value(&s)?;
                let mut s = truncate(&s, n + 1);
                let c = self.value(pr, n)?;
                let fun = if c.as_bool() == Some(true) {
                    then_fun
                } else {
                    else_fun
                };
                let free: Vec<Slot> = self
                    .free_values(pr, fun)?
                    .into_iter()
                    .map(Slot::Val)
                    .collect();
                let (_, cot) = self.grad(fun.body, free, z)?;
                for (j, &f) in fun.free.iter().enumerate() {
                    self.add_at(&mut s, f as usize - 1, &cot[j])?;
                }
                Ok(s)
            }
            Prim::Loop { kind, ctx, fun, .. } => {
                let n = self.len(*ctx);
                let k = kind.operands();
                let z = self.last_value(&s)?;
                let mut s = truncate(&s, n + k);
                let ops = (n..n + k)
                    .map(|i| self.value(pr, i))
                    .collect::<Result<Vec<_>, _>>()?;
                let free = self.free_values(pr, fun)?;
                let (d_ops, d_free) = self.jt_loop(*kind, fun.body, &free, &ops, &z, span)?;
                for (i, d) in d_ops.iter().enumerate() {
                    self.add_at(&mut s, n + i, d)?;
                }
                for (j, &f) in fun.free.iter().enumerate() {
                    self.add_at(&mut s, f as usize - 1, &d_free[j])?;
                }
                Ok(s)
            }
            // An `Int` result: nothing flows back (locally constant).
            Prim::Trips { ctx, .. } => Ok(truncate(&s, self.len(*ctx) + 1)),
        }
    }
}
