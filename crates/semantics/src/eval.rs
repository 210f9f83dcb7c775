//! The reference evaluator: call-by-value over a core-form module
//! (seeds/000 Appendix A.1, Figures 14 and 15), as a big-step interpreter.
//!
//! - Operands are evaluated left to right, all of them, before the node
//!   itself (Figure 14's evaluation contexts): the function of an
//!   application before its arguments, both operands of `&&` and `||`
//!   (the language is pure, so this is observable only through errors).
//!   Only the taken branch of an `if` is evaluated.
//! - A lambda evaluates to a closure that captures its environment (a
//!   persistent map, see `env.rs`); applying it binds all its parameters at
//!   once, and the number of arguments must equal the number of parameters.
//! - The builtins are in `prims.rs`; their chosen meaning (order of
//!   `reduce`, scans, shifts of `[]`, IEEE reals, checked integers) is
//!   documented in docs/semantics.md.
//!
//! Invariants: never panics, whatever the module. A malformed module (an
//! id out of range or not before its parent, an unbound variable, a
//! surface-form node, an ill-typed operand) gives `Error::Internal` or
//! `Error::Type` with the span of the node. `let` bodies, taken branches
//! and function bodies are evaluated in a loop rather than by recursion,
//! so long `let` chains use no stack; the remaining recursion is wrapped
//! in `syntax::stack::guard` and bounded by [`MAX_NESTING`].

use std::cell::Cell;
use std::rc::Rc;

use syntax::{Def, Expr, ExprId, Module, Prim, Span, stack};

use crate::env::{Env, Symbols, empty_env};
use crate::error::Error;
use crate::shape::SizeEnv;
use crate::value::{Closure, Value};

/// How deeply evaluation may nest (operands inside operands, calls inside
/// calls) before it stops with an error. Four times the parser's nesting
/// limit, which leaves room for the nodes transformations add; only a
/// module that is not well typed (self-application) can go deeper.
pub const MAX_NESTING: usize = 4 * stack::MAX_DEPTH;

/// Options of an evaluation.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Config {
    /// Stop with [`Error::StepLimit`] after this many evaluation steps
    /// (nodes visited). `None`: no limit. Well-typed programs without
    /// `while` always terminate; the limit is for budgets, for `while`
    /// loops that do not end, and for modules that are not well typed,
    /// which can loop (`(fun f -> f f) (fun f -> f f)`).
    pub max_steps: Option<u64>,
}

/// An observer of an evaluation, told of every node evaluated and every
/// builtin applied, in evaluation order. The dynamic cost model
/// (`crate::cost`) counts with one; the evaluator itself never needs it.
pub trait Probe {
    /// Node `id` is evaluated (once per evaluation of it: a node inside a
    /// function is reported each time the function runs).
    fn node(&self, id: ExprId);
    /// Builtin node `id` (`op`) is applied to these evaluated operands.
    fn builtin(&self, id: ExprId, op: Prim, args: &[Value]);
    /// A `while` or `trips` loop (`op`) applies its body once more: the
    /// loop's own per-iteration moves, which its operands cannot tell in
    /// advance (docs/cost.md).
    fn trip(&self, _op: Prim) {}
}

/// Evaluates definition `def` of `m` applied to `args` (in parameter
/// order). Each argument is checked against its parameter's type, with
/// size variables bound consistently across all of them, and the result
/// against the declared result type.
pub fn eval_def(m: &Module, def: &Def, args: &[Value]) -> Result<Value, Error> {
    eval_def_with(m, def, args, &Config::default())
}

/// [`eval_def`] with options.
pub fn eval_def_with(m: &Module, def: &Def, args: &[Value], cfg: &Config) -> Result<Value, Error> {
    eval_def_probed(m, def, args, cfg, None)
}

/// [`eval_def_with`], reporting each step to `probe`.
pub fn eval_def_probed(
    m: &Module,
    def: &Def,
    args: &[Value],
    cfg: &Config,
    probe: Option<&dyn Probe>,
) -> Result<Value, Error> {
    let mut ctx = Evaluator::new(m, def, cfg);
    ctx.probe = probe;
    if def.params.len() != args.len() {
        return Err(Error::Arity {
            span: def.name_span,
            expected: def.params.len(),
            found: args.len(),
        });
    }
    let mut sizes = SizeEnv::new();
    let mut env = empty_env();
    for (param, arg) in def.params.iter().zip(args) {
        if let Some(ty) = &param.ty {
            arg.check_input(ty, &mut sizes, Some(param.name.as_str()))
                .map_err(|source| Error::Input {
                    span: param.span,
                    name: param.name.to_string(),
                    source,
                })?;
        }
        let sym = ctx
            .syms
            .lookup(param.name.as_str())
            .ok_or_else(|| Error::Internal {
                span: param.span,
                message: format!("parameter `{}` was not interned", param.name),
            })?;
        env.bind(sym, arg.clone());
    }
    ctx.check_id(def.body, def.name_span)?;
    let result = ctx.eval(def.body, &env)?;
    if let Some(ty) = &def.ret {
        result
            .check_input(ty, &mut sizes, None)
            .map_err(|e| Error::Type {
                span: ctx.span(def.body),
                message: format!(
                    "the result of `{}` does not have its declared type: {e}",
                    def.name
                ),
            })?;
    }
    Ok(result)
}

/// Applies `lambda`, a closed lambda of definition `def` of `m` (the body
/// or a rule of a `with_rules` node, `syntax::rules`), to `args`: what the
/// UNF evaluator runs for `custom` and its transposed Jacobian.
pub(crate) fn apply_closed(
    m: &Module,
    def: &Def,
    lambda: ExprId,
    args: &[Value],
) -> Result<Value, Error> {
    let ctx = Evaluator::new(m, def, &Config::default());
    let f = Value::Closure(Rc::new(Closure {
        lambda,
        env: empty_env(),
    }));
    ctx.apply(&f, args, m.span(lambda))
}

/// Evaluates the entry definition (`entry`, or the last definition) at
/// inputs given by parameter name. Every parameter must be given exactly
/// once and no other name; the values are checked as in [`eval_def`].
pub fn eval_entry(
    m: &Module,
    entry: Option<&str>,
    inputs: &[(String, Value)],
) -> Result<Value, Error> {
    eval_entry_with(m, entry, inputs, &Config::default())
}

/// [`eval_entry`] with options.
pub fn eval_entry_with(
    m: &Module,
    entry: Option<&str>,
    inputs: &[(String, Value)],
    cfg: &Config,
) -> Result<Value, Error> {
    eval_entry_probed(m, entry, inputs, cfg, None)
}

/// [`eval_entry_with`], reporting each step to `probe`.
pub fn eval_entry_probed(
    m: &Module,
    entry: Option<&str>,
    inputs: &[(String, Value)],
    cfg: &Config,
    probe: Option<&dyn Probe>,
) -> Result<Value, Error> {
    let def = m.entry(entry).ok_or_else(|| Error::NoSuchDef {
        span: Span::GENERATED,
        name: entry.map(str::to_string),
    })?;
    let mut args: Vec<Option<Value>> = vec![None; def.params.len()];
    for (name, value) in inputs {
        let Some(pos) = def.params.iter().position(|p| p.name.as_str() == name) else {
            return Err(Error::UnknownInput {
                span: def.name_span,
                def: def.name.to_string(),
                name: name.clone(),
            });
        };
        if args[pos].is_some() {
            return Err(Error::DuplicateInput {
                span: def.params[pos].span,
                name: name.clone(),
            });
        }
        args[pos] = Some(value.clone());
    }
    let mut given = Vec::with_capacity(args.len());
    for (param, arg) in def.params.iter().zip(args) {
        match arg {
            Some(v) => given.push(v),
            None => {
                return Err(Error::MissingInput {
                    span: param.span,
                    name: param.name.to_string(),
                });
            }
        }
    }
    eval_def_probed(m, def, &given, cfg, probe)
}

/// The evaluator's state for one call: the module, its interned names and
/// the current nesting depth.
pub(crate) struct Evaluator<'m> {
    pub(crate) m: &'m Module,
    syms: Symbols,
    depth: Cell<usize>,
    /// Steps left before `Error::StepLimit`.
    fuel: Cell<u64>,
    max_steps: Option<u64>,
    /// Told of every step, if any.
    probe: Option<&'m dyn Probe>,
    /// Checks the memory in use every so many steps.
    meter: crate::memory::Meter,
}

impl<'m> Evaluator<'m> {
    /// The state for evaluating `def` (which need not be one of `m.defs`).
    fn new(m: &'m Module, def: &Def, cfg: &Config) -> Evaluator<'m> {
        let mut syms = Symbols::new(m);
        for p in &def.params {
            syms.intern(p.name.as_str());
        }
        Evaluator {
            m,
            syms,
            depth: Cell::new(0),
            fuel: Cell::new(cfg.max_steps.unwrap_or(u64::MAX)),
            max_steps: cfg.max_steps,
            probe: None,
            meter: crate::memory::Meter::default(),
        }
    }

    /// Counts one step against the limit.
    fn step(&self, id: ExprId) -> Result<(), Error> {
        let fuel = self.fuel.get();
        if fuel == 0 {
            return Err(Error::StepLimit {
                span: self.span(id),
                limit: self.max_steps.unwrap_or(u64::MAX),
            });
        }
        self.fuel.set(fuel - 1);
        if let Some(p) = self.probe {
            p.node(id);
        }
        self.meter
            .tick()
            .map_err(|shortfall| self.out_of_memory(id, shortfall))
    }

    /// The error for running out of memory while evaluating node `id`.
    pub(crate) fn out_of_memory(&self, id: ExprId, shortfall: crate::memory::Shortfall) -> Error {
        let what = match self.m.exprs.get(id.index()) {
            Some(Expr::Prim { op, .. }) => format!("`{op}`"),
            _ => "this expression".to_string(),
        };
        Error::OutOfMemory {
            span: self.span(id),
            what,
            shortfall,
        }
    }

    /// Tells the probe, if any, that a `while` loop iterates once more.
    pub(crate) fn observe_trip(&self, op: Prim) {
        if let Some(p) = self.probe {
            p.trip(op);
        }
    }

    /// Tells the probe, if any, that builtin node `id` is applied.
    fn observe_builtin(&self, id: ExprId, op: Prim, args: &[Value]) {
        if let Some(p) = self.probe {
            p.builtin(id, op, args);
        }
    }

    /// The span of a node, or `GENERATED` for an id out of range.
    pub(crate) fn span(&self, id: ExprId) -> Span {
        self.m
            .spans
            .get(id.index())
            .copied()
            .unwrap_or(Span::GENERATED)
    }

    fn check_id(&self, id: ExprId, span: Span) -> Result<(), Error> {
        if id.index() < self.m.exprs.len() {
            Ok(())
        } else {
            Err(Error::Internal {
                span,
                message: format!("expression {id} does not exist"),
            })
        }
    }

    fn node(&self, id: ExprId) -> Result<&'m Expr, Error> {
        self.m.exprs.get(id.index()).ok_or_else(|| Error::Internal {
            span: Span::GENERATED,
            message: format!("expression {id} does not exist"),
        })
    }

    /// `child` of `parent`, which must come before it in the arena (so
    /// that following children always terminates).
    fn child(&self, parent: ExprId, child: ExprId) -> Result<ExprId, Error> {
        if child < parent {
            Ok(child)
        } else {
            Err(Error::Internal {
                span: self.span(parent),
                message: format!("operand {child} of {parent} does not come before it"),
            })
        }
    }

    /// Evaluates node `id` in `env`.
    pub(crate) fn eval(&self, id: ExprId, env: &Env) -> Result<Value, Error> {
        // Leaves need neither the stack guard nor the loop.
        match self.m.exprs.get(id.index()) {
            Some(Expr::Var(name)) => {
                self.step(id)?;
                return self.lookup(id, name, env);
            }
            Some(Expr::Real(x)) => {
                self.step(id)?;
                return Ok(Value::Real(*x));
            }
            _ => {}
        }
        let depth = self.depth.get() + 1;
        if depth > MAX_NESTING {
            return Err(Error::Internal {
                span: self.span(id),
                message: format!("evaluation nested deeper than {MAX_NESTING} levels"),
            });
        }
        self.depth.set(depth);
        let res = stack::guard(|| self.eval_loop(id, env.clone()));
        self.depth.set(depth - 1);
        res
    }

    /// Evaluates `id`, following `let` bodies, taken branches and called
    /// function bodies in the loop (they are tail positions).
    fn eval_loop(&self, mut id: ExprId, mut env: Env) -> Result<Value, Error> {
        loop {
            self.step(id)?;
            match self.node(id)? {
                Expr::Let { value, body, .. } => {
                    let v = self.eval(self.child(id, *value)?, &env)?;
                    self.bind_let(id, v, &mut env)?;
                    id = self.child(id, *body)?;
                }
                Expr::If {
                    cond,
                    then_branch,
                    else_branch,
                } => {
                    let c = self.eval(self.child(id, *cond)?, &env)?;
                    let taken = match c {
                        Value::Bool(true) => *then_branch,
                        Value::Bool(false) => *else_branch,
                        other => {
                            return Err(Error::Type {
                                span: self.span(*cond),
                                message: format!(
                                    "the condition of `if` must be a boolean, found {}",
                                    other.kind()
                                ),
                            });
                        }
                    };
                    id = self.child(id, taken)?;
                }
                Expr::App { func, args } => {
                    let f = self.eval(self.child(id, *func)?, &env)?;
                    let mut vals = Vec::with_capacity(args.len());
                    for &a in args {
                        vals.push(self.eval(self.child(id, a)?, &env)?);
                    }
                    let (body, callee_env) = self.enter(&f, &vals, self.span(id))?;
                    id = body;
                    env = callee_env;
                }
                other => return self.eval_node(id, other, &env),
            }
        }
    }

    /// Evaluates a node other than the tail-position forms of `eval_loop`.
    fn eval_node(&self, id: ExprId, expr: &Expr, env: &Env) -> Result<Value, Error> {
        match expr {
            Expr::Var(name) => self.lookup(id, name, env),
            Expr::Real(x) => Ok(Value::Real(*x)),
            Expr::Int(i) => Ok(Value::Int(*i)),
            Expr::Bool(b) => Ok(Value::Bool(*b)),
            Expr::Tuple(items) => Ok(Value::tuple(self.eval_all(id, items, env)?)),
            Expr::Array(items) => Ok(Value::array(self.eval_all(id, items, env)?)),
            Expr::Reals(literal) => {
                crate::memory::check_items(literal.data.len(), std::mem::size_of::<Value>(), 1)
                    .map_err(|shortfall| self.out_of_memory(id, shortfall))?;
                Ok(Value::from_reals(literal))
            }
            Expr::Proj { tuple, index } => {
                let t = self.eval(self.child(id, *tuple)?, env)?;
                let item = match &t {
                    Value::Tuple(items) => {
                        (*index as usize).checked_sub(1).and_then(|i| items.get(i))
                    }
                    _ => None,
                };
                item.cloned().ok_or_else(|| Error::Type {
                    span: self.span(id),
                    message: format!("projection .{index} of {}", t.kind()),
                })
            }
            Expr::Lambda { body, .. } => {
                self.child(id, *body)?;
                let mut env = env.clone();
                env.flatten();
                Ok(Value::Closure(Rc::new(Closure { lambda: id, env })))
            }
            Expr::Index { array, index } => {
                let a = self.eval(self.child(id, *array)?, env)?;
                let i = self.eval(self.child(id, *index)?, env)?;
                let span = self.span(id);
                match (&a, &i) {
                    (Value::Array(items), Value::Int(i)) => usize::try_from(*i)
                        .ok()
                        .and_then(|k| items.get(k))
                        .cloned()
                        .ok_or(Error::IndexOutOfBounds {
                            span,
                            index: *i,
                            len: items.len(),
                        }),
                    _ => Err(Error::Type {
                        span,
                        message: format!(
                            "indexing needs an array and an integer, found {} and {}",
                            a.kind(),
                            i.kind()
                        ),
                    }),
                }
            }
            Expr::Prim { op, args } => {
                let span = self.span(id);
                if op.is_derivative_construct() {
                    return Err(Error::NotExpanded { span, op: *op });
                }
                if args.len() != op.arity() {
                    return Err(Error::Internal {
                        span,
                        message: format!(
                            "`{op}` takes {} operands, given {}",
                            op.arity(),
                            args.len()
                        ),
                    });
                }
                // Operands on the stack: this is the inner loop of every
                // builtin's function argument.
                let arg = |k: usize| self.eval(self.child(id, args[k])?, env);
                match args.len() {
                    1 => {
                        let vals = [arg(0)?];
                        self.observe_builtin(id, *op, &vals);
                        crate::prims::apply_prim(self, *op, &vals, span)
                    }
                    2 => {
                        let vals = [arg(0)?, arg(1)?];
                        self.observe_builtin(id, *op, &vals);
                        crate::prims::apply_prim(self, *op, &vals, span)
                    }
                    _ => {
                        let vals = self.eval_all(id, args, env)?;
                        self.observe_builtin(id, *op, &vals);
                        crate::prims::apply_prim(self, *op, &vals, span)
                    }
                }
            }
            Expr::Section(op) => Err(Error::Internal {
                span: self.span(id),
                message: format!(
                    "operator section `({op})` in a module that is not in core form (elaborate it first)"
                ),
            }),
            Expr::Let { .. } | Expr::If { .. } | Expr::App { .. } => {
                self.eval_loop(id, env.clone())
            }
        }
    }

    /// The value of variable node `id`, named `name`.
    fn lookup(&self, id: ExprId, name: &syntax::Name, env: &Env) -> Result<Value, Error> {
        let sym = self.syms.var(id.index());
        env.get(sym).cloned().ok_or_else(|| Error::Internal {
            span: self.span(id),
            message: format!("unbound variable `{name}`"),
        })
    }

    fn eval_all(&self, parent: ExprId, items: &[ExprId], env: &Env) -> Result<Vec<Value>, Error> {
        let mut out = Vec::with_capacity(items.len());
        for &item in items {
            out.push(self.eval(self.child(parent, item)?, env)?);
        }
        Ok(out)
    }

    /// Extends `env` with what the `let` node `id` binds to `v`.
    fn bind_let(&self, id: ExprId, v: Value, env: &mut Env) -> Result<(), Error> {
        let syms = self.syms.binders(id.index());
        let Some(Expr::Let { pat, .. }) = self.m.exprs.get(id.index()) else {
            return Err(Error::Internal {
                span: self.span(id),
                message: format!("{id} is not a `let`"),
            });
        };
        match pat {
            syntax::Pat::Var(_) => {
                let &[sym] = syms else {
                    return Err(Error::Internal {
                        span: self.span(id),
                        message: "a `let` of one name binds another number of names".to_string(),
                    });
                };
                env.bind(sym, v);
            }
            syntax::Pat::Tuple(names) => match &v {
                Value::Tuple(items) if items.len() == names.len() && syms.len() == names.len() => {
                    for (&sym, item) in syms.iter().zip(items.iter()) {
                        env.bind(sym, item.clone());
                    }
                }
                _ => {
                    return Err(Error::Type {
                        span: self.span(id),
                        message: format!(
                            "a pattern of {} names cannot bind {}",
                            names.len(),
                            v.kind()
                        ),
                    });
                }
            },
        }
        Ok(())
    }

    /// Binds the parameters of closure `f` to `args`: the body to evaluate
    /// and the environment to evaluate it in.
    fn enter(&self, f: &Value, args: &[Value], span: Span) -> Result<(ExprId, Env), Error> {
        let Value::Closure(closure) = f else {
            return Err(Error::Type {
                span,
                message: format!("only functions can be applied, found {}", f.kind()),
            });
        };
        let lambda = closure.lambda;
        let Some(Expr::Lambda { params, body }) = self.m.exprs.get(lambda.index()) else {
            return Err(Error::Internal {
                span,
                message: format!("closure of {lambda}, which is not a lambda of this module"),
            });
        };
        let syms = self.syms.binders(lambda.index());
        if params.len() != args.len() {
            return Err(Error::Arity {
                span,
                expected: params.len(),
                found: args.len(),
            });
        }
        if syms.len() != params.len() {
            return Err(Error::Internal {
                span,
                message: format!("the parameters of {lambda} were not interned"),
            });
        }
        let mut env = closure.env.clone();
        for (&sym, arg) in syms.iter().zip(args) {
            env.bind(sym, arg.clone());
        }
        Ok((self.child(lambda, *body)?, env))
    }

    /// Applies function value `f` to `args` (for the builtins that take a
    /// function); `span` is the builtin's.
    pub(crate) fn apply(&self, f: &Value, args: &[Value], span: Span) -> Result<Value, Error> {
        if let Some(res) = self.apply_scalar_op(f, args) {
            return res;
        }
        let (body, env) = self.enter(f, args, span)?;
        self.eval(body, &env)
    }

    /// A fast path for the commonest function arguments of a builtin: an
    /// elaborated operator section, a lambda whose body is a scalar
    /// primitive applied to its own parameters (`fun (x, y) -> x + y`),
    /// and a lambda returning one of its parameters (`fun i -> i`).
    /// Gives the same result as binding the parameters and evaluating the
    /// body, without building an environment; `None` when `f` is not of
    /// that shape.
    fn apply_scalar_op(&self, f: &Value, args: &[Value]) -> Option<Result<Value, Error>> {
        let Value::Closure(closure) = f else {
            return None;
        };
        let lambda = closure.lambda;
        let Some(Expr::Lambda { params, body }) = self.m.exprs.get(lambda.index()) else {
            return None;
        };
        if params.len() != args.len() || *body >= lambda {
            return None;
        }
        let syms = self.syms.binders(lambda.index());
        // A body that is one of the parameters (the `fun i -> i` of every
        // loop a gradient program indexes): the last parameter of that
        // name is the value.
        if let Some(Expr::Var(_)) = self.m.exprs.get(body.index()) {
            let sym = self.syms.var(body.index());
            let pos = syms.iter().rposition(|&s| s == sym)?;
            let value = args.get(pos)?.clone();
            return Some(self.step(*body).map(|()| value));
        }
        let Some(Expr::Prim { op, args: operands }) = self.m.exprs.get(body.index()) else {
            return None;
        };
        if op.function_arg().is_some() || op.is_derivative_construct() || operands.len() > 2 {
            return None;
        }
        let operand = |k: usize| -> Option<Value> {
            let id = *operands.get(k)?;
            if id >= *body || !matches!(self.m.exprs.get(id.index()), Some(Expr::Var(_))) {
                return None;
            }
            let sym = self.syms.var(id.index());
            // The last parameter of a name shadows the earlier ones.
            let pos = syms.iter().rposition(|&s| s == sym)?;
            args.get(pos).cloned()
        };
        let span = self.span(*body);
        // The probe sees what the slow path would have evaluated: the
        // operand variables and the body.
        let observe = |vals: &[Value]| {
            if let Some(p) = self.probe {
                operands.iter().for_each(|&o| p.node(o));
                p.builtin(*body, *op, vals);
            }
        };
        let res = match operands.len() {
            1 => {
                let vals = [operand(0)?];
                observe(&vals);
                crate::prims::apply_prim(self, *op, &vals, span)
            }
            2 => {
                let vals = [operand(0)?, operand(1)?];
                observe(&vals);
                crate::prims::apply_prim(self, *op, &vals, span)
            }
            _ => return None,
        };
        Some(self.step(*body).and(res))
    }
}
