//! The cost model of seeds/000 Section 5 and the checks of its results.
//!
//! - [`Cost`]: the 4-vector (MOVES, ADDS, MULTS, NLOPS) of Section 5.2.
//! - [`static_cost`]: Fig. 11's equations, compositionally over the
//!   restricted Target language (no first-class lambda, no application,
//!   lambdas only as the function of a builtin), at concrete array sizes.
//!   Sizes come from the types: the size variables of the entry's
//!   parameters are bound to the lengths of the inputs ([`sizes_at`]).
//! - [`dynamic_cost`]: the same costs counted during an evaluation, through
//!   the evaluator's [`Probe`] hook; defined on every program. On a
//!   restricted program without `if` the two agree exactly; with `if`, the
//!   static cost takes the dearer branch and bounds the dynamic one.
//! - [`nao`]: the nesting of array operations NAO(e) of Section 5.3.
//! - [`check_lemma_5_1`], [`check_lemma_5_3`], [`cheap_gradient`]: the
//!   properties the paper proves, checked on a given program;
//!   [`report`] puts the costs of a program and its gradient side by side.
//!
//! The figure fixes the cost of constants, variables, tuples, projections,
//! `let`, `map2`, `reduce`, the scans and the shifts; the costs it leaves
//! open are chosen in the same spirit and listed in docs/cost.md: every
//! builtin costs one MOVE per operand and result plus one operation of its
//! class; `map`, `foldl`, `build`, `ifold` cost like `map2`/`reduce` per
//! element; `if` costs one MOVE plus the condition plus, statically, the
//! dearer branch (componentwise).

use std::cell::Cell;
use std::collections::BTreeMap;
use std::fmt;
use std::ops::{Add, AddAssign};

use syntax::derivatives::{self, Sig};
use syntax::{Def, Expr, ExprId, Module, Name, Pat, Prim, Span, Ty, stack};

use crate::error::Error;
use crate::eval::{Config, Probe, eval_def_probed};
use crate::guarantee::{Caveat, caveats};
use crate::shape::SizeEnv;
use crate::value::Value;

/// A cost: counts of the four kinds of elementary work.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Cost {
    /// Moves of fixed-size data (64 bits) through flat memory.
    pub moves: u64,
    /// Additions (and subtractions, negations, comparisons, logic).
    pub adds: u64,
    /// Multiplications and divisions.
    pub mults: u64,
    /// Non-linear elementary operations (`sin`, `exp`, `pow`, ...).
    pub nlops: u64,
}

impl Cost {
    /// Nothing.
    pub const ZERO: Cost = Cost::new(0, 0, 0, 0);
    /// One move: the cost of a constant or a variable.
    pub const MOVE: Cost = Cost::new(1, 0, 0, 0);

    /// A cost from its four components.
    pub const fn new(moves: u64, adds: u64, mults: u64, nlops: u64) -> Cost {
        Cost {
            moves,
            adds,
            mults,
            nlops,
        }
    }

    /// `n` moves.
    pub const fn moves(n: u64) -> Cost {
        Cost::new(n, 0, 0, 0)
    }

    /// The scalar cost that the bounds compare: the sum of the components
    /// (every kind of work weighs one).
    pub fn total(self) -> u64 {
        self.moves
            .saturating_add(self.adds)
            .saturating_add(self.mults)
            .saturating_add(self.nlops)
    }

    /// `n` times this cost.
    pub fn times(self, n: u64) -> Cost {
        Cost::new(
            self.moves.saturating_mul(n),
            self.adds.saturating_mul(n),
            self.mults.saturating_mul(n),
            self.nlops.saturating_mul(n),
        )
    }

    /// The componentwise maximum.
    pub fn max(self, other: Cost) -> Cost {
        Cost::new(
            self.moves.max(other.moves),
            self.adds.max(other.adds),
            self.mults.max(other.mults),
            self.nlops.max(other.nlops),
        )
    }

    /// Whether every component is at most the other's.
    pub fn le(self, other: Cost) -> bool {
        self.moves <= other.moves
            && self.adds <= other.adds
            && self.mults <= other.mults
            && self.nlops <= other.nlops
    }
}

impl Add for Cost {
    type Output = Cost;
    fn add(self, o: Cost) -> Cost {
        Cost::new(
            self.moves.saturating_add(o.moves),
            self.adds.saturating_add(o.adds),
            self.mults.saturating_add(o.mults),
            self.nlops.saturating_add(o.nlops),
        )
    }
}

impl AddAssign for Cost {
    fn add_assign(&mut self, o: Cost) {
        *self = *self + o;
    }
}

impl fmt::Display for Cost {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "(moves {}, adds {}, mults {}, nlops {})",
            self.moves, self.adds, self.mults, self.nlops
        )
    }
}

/// The cost of one application of a first-order builtin, operands and
/// result moves included (`Cost(*) = (3,0,1,0)`, `Cost(sin) = (2,0,0,1)`).
/// `None` for the second-order builtins, whose cost depends on their
/// function and sizes.
pub fn prim_cost(op: Prim) -> Option<Cost> {
    Some(match op {
        Prim::Add | Prim::Sub => Cost::new(3, 1, 0, 0),
        Prim::Mul | Prim::Div => Cost::new(3, 0, 1, 0),
        Prim::Neg => Cost::new(2, 1, 0, 0),
        Prim::Mod => Cost::new(3, 0, 1, 0),
        // A conversion between Int and R: one cheap operation, like `-a`.
        Prim::Real | Prim::Floor | Prim::Ceil | Prim::Round | Prim::Trunc => Cost::new(2, 1, 0, 0),
        // Every other real function of the table (`sin`, `pow`, `lgamma`,
        // the derivative primitives, ...) is one NLOP.
        op if derivatives::sig(op) == Some(Sig::Real) => Cost::new(op.arity() as u64 + 1, 0, 0, 1),
        Prim::Lt | Prim::Le | Prim::Gt | Prim::Ge | Prim::Eq | Prim::Ne | Prim::And | Prim::Or => {
            Cost::new(3, 1, 0, 0)
        }
        Prim::Not => Cost::new(2, 1, 0, 0),
        Prim::Length => Cost::new(2, 0, 0, 0),
        // The second-order builtins and the derivative constructs.
        _ => return None,
    })
}

/// The cost of scatter, a histogram or one of their partials
/// (`syntax::hist`) of n elements into m bins: 2 moves per bin (read and
/// write `dest`), 3 per element (its index, its value, the write) plus the
/// operator's cost, and for the partials the extra passes they make (the
/// winners keep a running extremum, `dhist_mul_vals` counts zeros and
/// divides). Linear in n + m, as the primal is: docs/cost.md, "Scatter and
/// histograms".
pub fn hist_cost(op: Prim, m: u64, n: u64) -> Option<Cost> {
    let scalar = syntax::hist::operator(op).and_then(prim_cost);
    Some(match op {
        Prim::Scatter => Cost::moves(2 * m + 3 * n),
        // `hist_add_rows`: m and n count the scalars (bins times the row
        // length, elements times it), as the callers pass them.
        Prim::HistAdd | Prim::HistMul | Prim::HistMin | Prim::HistMax | Prim::HistAddRows => {
            Cost::moves(2 * m + 3 * n) + scalar.unwrap_or(Cost::ZERO).times(n)
        }
        Prim::Gather => Cost::moves(3 * n),
        Prim::GatherWon => Cost::moves(4 * n),
        Prim::PickDest => Cost::moves(3 * m),
        Prim::WinnerScatter => Cost::moves(m + 2 * n),
        Prim::WinnerMin | Prim::WinnerMax => {
            Cost::moves(3 * m + 4 * n) + scalar.unwrap_or(Cost::ZERO).times(n)
        }
        Prim::DHistMulDest => Cost::moves(m + 3 * n) + Cost::new(0, 0, n, 0),
        Prim::DHistMulVals => Cost::moves(3 * m + 6 * n) + Cost::new(0, 0, 2 * n, 0),
        _ => return None,
    })
}

/// The moves per element a second-order builtin adds to its function's
/// cost (Fig. 11: 2 for `map2` and `reduce`, 3 for the scans).
pub fn per_element_moves(op: Prim) -> Option<u64> {
    match op {
        Prim::Map | Prim::Map2 | Prim::Reduce | Prim::Foldl | Prim::Build | Prim::Ifold => Some(2),
        Prim::Scanl | Prim::Scanr => Some(3),
        _ => None,
    }
}

/// The sizes at which `def` runs on `args`: each size variable of the
/// parameters' types bound to the length of the input it sizes (the same
/// binding the evaluator checks inputs with).
pub fn sizes_at(def: &Def, args: &[Value]) -> Result<SizeEnv, Error> {
    let mut sizes = SizeEnv::new();
    for (param, arg) in def.params.iter().zip(args) {
        if let Some(ty) = &param.ty {
            arg.check_input(ty, &mut sizes, Some(param.name.as_str()))
                .map_err(|source| Error::Input {
                    span: param.span,
                    name: param.name.to_string(),
                    source,
                })?;
        }
    }
    Ok(sizes)
}

/// The length of an array of type `ty` under `sizes`.
pub fn array_len(ty: &Ty, sizes: &SizeEnv) -> Option<u64> {
    match ty {
        Ty::Array(syntax::Size::Lit(n), _) => Some(*n),
        Ty::Array(syntax::Size::Var(v, k), _) => {
            let n = sizes.get(v)? as i64 + k;
            (n >= 0).then_some(n as u64)
        }
        _ => None,
    }
}

/// Fig. 11: the cost of the body of `def` at the given sizes.
pub fn static_cost(m: &Module, def: &Def, sizes: &SizeEnv) -> Result<Cost, Error> {
    if !m.is_typed() {
        return Err(Error::NotRestricted {
            span: def.name_span,
            message: "the program has no types".to_string(),
        });
    }
    StaticCost { m, sizes }.cost(def.body)
}

struct StaticCost<'a> {
    m: &'a Module,
    sizes: &'a SizeEnv,
}

impl StaticCost<'_> {
    fn len(&self, id: ExprId) -> Result<u64, Error> {
        let ty = &self.m.types[id.index()];
        array_len(ty, self.sizes).ok_or_else(|| Error::UnknownSize {
            span: self.m.span(id),
            ty: format!("{ty}"),
        })
    }

    fn not_restricted(&self, id: ExprId, message: &str) -> Error {
        Error::NotRestricted {
            span: self.m.span(id),
            message: message.to_string(),
        }
    }

    /// The body of the function argument of a builtin.
    fn function_body(&self, f: ExprId) -> Result<ExprId, Error> {
        match self.m.expr(f) {
            Expr::Lambda { body, .. } => Ok(*body),
            _ => Err(self.not_restricted(f, "the function of a builtin is not a lambda")),
        }
    }

    fn sum(&self, ids: &[ExprId]) -> Result<Cost, Error> {
        let mut c = Cost::ZERO;
        for &i in ids {
            c += self.cost(i)?;
        }
        Ok(c)
    }

    fn cost(&self, id: ExprId) -> Result<Cost, Error> {
        stack::guard(|| {
            Ok(match self.m.expr(id) {
                Expr::Var(_) | Expr::Real(_) | Expr::Int(_) | Expr::Bool(_) => Cost::MOVE,
                // What the literal written element by element costs: a
                // move per number.
                Expr::Reals(literal) => Cost::moves(literal.data.len() as u64),
                Expr::Let {
                    pat, value, body, ..
                } => {
                    let binders = match pat {
                        Pat::Var(_) => 1,
                        Pat::Tuple(xs) => xs.len() as u64,
                    };
                    Cost::moves(binders) + self.cost(*value)? + self.cost(*body)?
                }
                Expr::Tuple(items) | Expr::Array(items) => self.sum(items)?,
                Expr::Proj { tuple, .. } => Cost::MOVE + self.cost(*tuple)?,
                Expr::Index { array, index } => {
                    Cost::MOVE + self.cost(*array)? + self.cost(*index)?
                }
                Expr::If {
                    cond,
                    then_branch,
                    else_branch,
                } => {
                    Cost::MOVE
                        + self.cost(*cond)?
                        + self.cost(*then_branch)?.max(self.cost(*else_branch)?)
                }
                Expr::Lambda { .. } => return Err(self.not_restricted(id, "a lambda")),
                Expr::App { .. } => return Err(self.not_restricted(id, "an application")),
                Expr::Section(_) => return Err(self.not_restricted(id, "an operator section")),
                Expr::Prim { op, args } => self.prim(id, *op, args)?,
            })
        })
    }

    fn prim(&self, id: ExprId, op: Prim, args: &[ExprId]) -> Result<Cost, Error> {
        if let Some(c) = prim_cost(op) {
            return Ok(c + self.sum(args)?);
        }
        Ok(match op {
            Prim::Shift1L | Prim::Shift1R => self.cost(args[0])? + Cost::moves(self.len(args[0])?),
            op if hist_cost(op, 0, 0).is_some() => {
                let (mut m, mut n) = (self.len(args[0])?, self.len(args[1])?);
                if op == Prim::HistAddRows {
                    // The row length, from the type of dest's rows.
                    let d = match &self.m.types[args[0].index()] {
                        Ty::Array(_, row) => array_len(row, self.sizes),
                        _ => None,
                    };
                    let d = d.ok_or_else(|| Error::UnknownSize {
                        span: self.m.span(args[0]),
                        ty: format!("{}", self.m.types[args[0].index()]),
                    })?;
                    (m, n) = (m * d, n * d);
                }
                hist_cost(op, m, n).unwrap_or(Cost::ZERO) + self.sum(args)?
            }
            Prim::Map | Prim::Map2 | Prim::Reduce | Prim::Foldl | Prim::Scanl | Prim::Scanr => {
                let body = self.function_body(args[0])?;
                let per = self.cost(body)? + Cost::moves(per_element_moves(op).unwrap_or(2));
                let n = self.len(*args.last().expect("invariant: builtins are fully applied"))?;
                per.times(n) + self.sum(&args[1..])?
            }
            Prim::Build | Prim::Ifold => {
                let f = if op == Prim::Build { args[1] } else { args[0] };
                let count = if op == Prim::Build { args[0] } else { args[2] };
                let body = self.function_body(f)?;
                let n = match op {
                    Prim::Build => self.len(id)?,
                    _ => match self.m.expr(count) {
                        Expr::Int(k) if *k >= 0 => *k as u64,
                        _ => {
                            return Err(Error::NotRestricted {
                                span: self.m.span(count),
                                message: "the count of an ifold is not a literal".to_string(),
                            });
                        }
                    },
                };
                let rest: Vec<ExprId> = args.iter().copied().filter(|&a| a != f).collect();
                (self.cost(body)? + Cost::moves(2)).times(n) + self.sum(&rest)?
            }
            Prim::While | Prim::Trips => {
                return Err(Error::NotRestricted {
                    span: self.m.span(id),
                    message: format!(
                        "`{op}` has no static cost: its trip count is known only when it runs"
                    ),
                });
            }
            _ => return Err(self.not_restricted(id, "a differentiation construct")),
        })
    }
}

/// NAO(e), Section 5.3: how deeply array operations nest in `id`. An
/// array operation whose function is a lambda counts one plus its body;
/// everything else takes the maximum over its children.
pub fn nao(m: &Module, id: ExprId) -> u32 {
    stack::guard(|| match m.expr(id) {
        Expr::Prim { op, args } if op.function_arg().is_some() => {
            let funs: Vec<ExprId> = op.function_args().iter().map(|&i| args[i]).collect();
            let mut res = 0;
            for &a in args {
                let n = if funs.contains(&a) {
                    match m.expr(a) {
                        Expr::Lambda { body, .. } => 1 + nao(m, *body),
                        _ => 1 + nao(m, a),
                    }
                } else {
                    nao(m, a)
                };
                res = res.max(n);
            }
            res
        }
        e => e
            .children()
            .into_iter()
            .map(|c| nao(m, c))
            .max()
            .unwrap_or(0),
    })
}

/// A place where a property of the paper fails.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// Where.
    pub span: Span,
    /// The node.
    pub at: ExprId,
    /// What is wrong.
    pub message: String,
}

/// Lemma 5.1: every variable of non-ground type (a continuation) bound in
/// `def` occurs exactly once.
pub fn check_lemma_5_1(m: &Module, def: &Def) -> Result<(), Vec<Violation>> {
    let mut bound: BTreeMap<Name, (ExprId, Ty)> = BTreeMap::new();
    let mut uses: BTreeMap<Name, u32> = BTreeMap::new();
    let mut stack = vec![def.body];
    while let Some(id) = stack.pop() {
        match m.expr(id) {
            Expr::Var(x) => *uses.entry(x.clone()).or_insert(0) += 1,
            Expr::Let { pat, value, .. } => {
                let ty = &m.types[value.index()];
                match (pat, ty) {
                    (Pat::Var(x), t) => {
                        bound.insert(x.clone(), (id, t.clone()));
                    }
                    (Pat::Tuple(xs), Ty::Tuple(ts)) => {
                        for (x, t) in xs.iter().zip(ts) {
                            bound.insert(x.clone(), (id, t.clone()));
                        }
                    }
                    _ => {}
                }
            }
            Expr::Lambda { params, .. } => {
                for p in params {
                    if let Some(t) = &p.ty {
                        bound.insert(p.name.clone(), (id, t.clone()));
                    }
                }
            }
            _ => {}
        }
        m.expr(id).for_each_child(|c| stack.push(c));
    }
    let violations: Vec<Violation> = bound
        .into_iter()
        .filter(|(_, (_, t))| !t.is_ground())
        .filter_map(|(x, (at, _))| {
            let n = uses.get(&x).copied().unwrap_or(0);
            (n != 1).then(|| Violation {
                span: m.span(at),
                at,
                message: format!("continuation `{x}` occurs {n} times, not once"),
            })
        })
        .collect();
    if violations.is_empty() {
        Ok(())
    } else {
        Err(violations)
    }
}

/// Lemma 5.3: no lambda (except as the function of a builtin), no
/// application, and no variable of non-ground type remain in `def`.
pub fn check_lemma_5_3(m: &Module, def: &Def) -> Result<(), Vec<Violation>> {
    let mut violations = Vec::new();
    let mut allowed_lambdas = std::collections::HashSet::new();
    let mut stack = vec![def.body];
    while let Some(id) = stack.pop() {
        let e = m.expr(id);
        let bad = |message: String| Violation {
            span: m.span(id),
            at: id,
            message,
        };
        match e {
            Expr::Prim { op, args } => {
                for &i in op.function_args() {
                    if matches!(m.expr(args[i]), Expr::Lambda { .. }) {
                        allowed_lambdas.insert(args[i]);
                    }
                }
            }
            Expr::Lambda { params, .. } => {
                if !allowed_lambdas.contains(&id) {
                    violations.push(bad("a lambda remains".to_string()));
                }
                for p in params {
                    if p.ty.as_ref().is_some_and(|t| !t.is_ground()) {
                        violations.push(bad(format!("parameter `{}` is a function", p.name)));
                    }
                }
            }
            Expr::App { .. } => violations.push(bad("an application remains".to_string())),
            Expr::Var(x) if !m.types[id.index()].is_ground() => {
                violations.push(bad(format!("variable `{x}` is a function")));
            }
            _ => {}
        }
        e.for_each_child(|c| stack.push(c));
    }
    if violations.is_empty() {
        Ok(())
    } else {
        Err(violations)
    }
}

/// Theorem 5.4's bound, `4 * 3^p`.
pub fn cheap_gradient_bound(p: u32) -> f64 {
    4.0 * 3f64.powi(p as i32)
}

/// The comparison of Theorem 5.4 for one program at one size.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CheapGradient {
    /// Cost(e).
    pub source: Cost,
    /// Cost(G), G the optimized gradient.
    pub gradient: Cost,
    /// p = NAO(e).
    pub nao: u32,
    /// total(G) / total(e).
    pub ratio: f64,
    /// `4 * 3^p`.
    pub bound: f64,
}

impl CheapGradient {
    /// Whether Cost(G) <= 4 * 3^p * Cost(e) (on the totals).
    pub fn holds(&self) -> bool {
        self.ratio <= self.bound
    }
}

/// Compares the cost of a gradient with the cost of its source program.
pub fn cheap_gradient(source: Cost, gradient: Cost, nao: u32) -> CheapGradient {
    let ratio = if source.total() == 0 {
        if gradient.total() == 0 {
            0.0
        } else {
            f64::INFINITY
        }
    } else {
        gradient.total() as f64 / source.total() as f64
    };
    CheapGradient {
        source,
        gradient,
        nao,
        ratio,
        bound: cheap_gradient_bound(nao),
    }
}

/// The dynamic counter: the cost of each node as the evaluator reports it.
struct Counter<'m> {
    m: &'m Module,
    cost: Cell<Cost>,
}

impl Counter<'_> {
    fn add(&self, c: Cost) {
        self.cost.set(self.cost.get() + c);
    }
}

/// The length of an array value (0 for anything else).
fn len_of(v: Option<&Value>) -> u64 {
    v.and_then(Value::as_array).map_or(0, |a| a.len() as u64)
}

/// A non-negative `Int` value (0 for anything else).
fn count_of(v: Option<&Value>) -> u64 {
    v.and_then(Value::as_int)
        .and_then(|k| u64::try_from(k).ok())
        .unwrap_or(0)
}

impl Probe for Counter<'_> {
    fn node(&self, id: ExprId) {
        let c = match self.m.exprs.get(id.index()) {
            Some(Expr::Var(_) | Expr::Real(_) | Expr::Int(_) | Expr::Bool(_)) => Cost::MOVE,
            Some(Expr::Let { pat, .. }) => Cost::moves(match pat {
                Pat::Var(_) => 1,
                Pat::Tuple(xs) => xs.len() as u64,
            }),
            Some(Expr::Proj { .. } | Expr::Index { .. } | Expr::If { .. }) => Cost::MOVE,
            // Binding the arguments of a call, like a `let` per parameter.
            Some(Expr::App { args, .. }) => Cost::moves(args.len() as u64),
            Some(Expr::Prim { op, .. }) => prim_cost(*op).unwrap_or(Cost::ZERO),
            _ => Cost::ZERO,
        };
        self.add(c);
    }

    fn builtin(&self, _id: ExprId, op: Prim, args: &[Value]) {
        let c = match op {
            Prim::Shift1L | Prim::Shift1R => Cost::moves(len_of(args.first())),
            Prim::Build => Cost::moves(2 * count_of(args.first())),
            Prim::Ifold => Cost::moves(2 * count_of(args.get(2))),
            // Per iteration: `Probe::trip`.
            Prim::While | Prim::Trips => Cost::ZERO,
            op if hist_cost(op, 0, 0).is_some() => {
                let (mut m, mut n) = (len_of(args.first()), len_of(args.get(1)));
                if op == Prim::HistAddRows {
                    // Every row has dest's first row's length (or the
                    // builtin failed).
                    let first = args
                        .first()
                        .and_then(Value::as_array)
                        .and_then(|a| a.first());
                    let d = len_of(first);
                    (m, n) = (m * d, n * d);
                }
                hist_cost(op, m, n).unwrap_or(Cost::ZERO)
            }
            _ => match per_element_moves(op) {
                Some(k) => Cost::moves(k * len_of(args.last())),
                None => Cost::ZERO,
            },
        };
        self.add(c);
    }

    /// A `while` iteration moves its state in and out, as `ifold` does
    /// per index.
    fn trip(&self, _op: Prim) {
        self.add(Cost::moves(2));
    }
}

/// Evaluates `def` on `args` and counts its cost as it runs: every node
/// evaluated costs what Fig. 11 charges for it, every element a builtin
/// walks its extra moves. Defined on every program (a call costs one move
/// per argument, a closure nothing).
pub fn dynamic_cost(m: &Module, def: &Def, args: &[Value]) -> Result<(Value, Cost), Error> {
    let counter = Counter {
        m,
        cost: Cell::new(Cost::ZERO),
    };
    let value = eval_def_probed(m, def, args, &Config::default(), Some(&counter))?;
    Ok((value, counter.cost.get()))
}

/// The costs of a source program and of its gradient at one input, as
/// `cargo xtask cost` prints them.
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    /// Cost(e) by Fig. 11, or why it has none (a size known only at run
    /// time).
    pub source_static: Result<Cost, Error>,
    /// Cost(e) counted in an evaluation.
    pub source_dynamic: Cost,
    /// Cost(G) by Fig. 11, or why it has none (G not in the restricted
    /// language, e.g. not optimized).
    pub gradient_static: Result<Cost, Error>,
    /// Cost(G) counted in an evaluation.
    pub gradient_dynamic: Cost,
    /// p = NAO(e).
    pub nao: u32,
    /// total(G) / total(e): of the static costs when both have one, else
    /// of the counted ones.
    pub ratio: f64,
    /// Whether `ratio` compares counted costs.
    pub ratio_dynamic: bool,
    /// `4 * 3^p`.
    pub bound: f64,
    /// The constructs of the source for which the bound is not promised
    /// (docs/derivatives.md, section 7).
    pub caveats: Vec<Caveat>,
}

impl Report {
    /// Whether Theorem 5.4's bound holds at this input.
    pub fn holds(&self) -> bool {
        self.ratio <= self.bound
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.source_static {
            Ok(c) => writeln!(f, "source    static  {c}")?,
            Err(e) => writeln!(f, "source    static  none: {e}")?,
        }
        writeln!(f, "source    dynamic {}", self.source_dynamic)?;
        match &self.gradient_static {
            Ok(c) => writeln!(f, "gradient  static  {c}")?,
            Err(e) => writeln!(f, "gradient  static  none: {e}")?,
        }
        writeln!(f, "gradient  dynamic {}", self.gradient_dynamic)?;
        writeln!(f, "p = NAO(e) = {}", self.nao)?;
        writeln!(
            f,
            "ratio {:.3}{} (bound 4 * 3^p = {}): {}",
            self.ratio,
            if self.ratio_dynamic {
                " of the counted costs"
            } else {
                ""
            },
            self.bound,
            match (self.holds(), self.caveats.is_empty()) {
                (true, _) => "holds",
                (false, true) => "FAILS",
                (false, false) => "above it, where the guarantee is weaker:",
            }
        )?;
        for c in &self.caveats {
            writeln!(f, "note: {c}")?;
        }
        Ok(())
    }
}

/// The costs of `source_def` (in `source`) and `grad_def` (in `gradient`)
/// at the same arguments, and Theorem 5.4's comparison.
pub fn report(
    source: &Module,
    source_def: &Def,
    gradient: &Module,
    grad_def: &Def,
    args: &[Value],
) -> Result<Report, Error> {
    let source_static =
        sizes_at(source_def, args).and_then(|sizes| static_cost(source, source_def, &sizes));
    let (_, source_dynamic) = dynamic_cost(source, source_def, args)?;
    let gradient_static =
        sizes_at(grad_def, args).and_then(|sizes| static_cost(gradient, grad_def, &sizes));
    let (_, gradient_dynamic) = dynamic_cost(gradient, grad_def, args)?;
    let nao = nao(source, source_def.body);
    let (e, g, ratio_dynamic) = match (&source_static, &gradient_static) {
        (Ok(e), Ok(g)) => (*e, *g, false),
        _ => (source_dynamic, gradient_dynamic, true),
    };
    let check = cheap_gradient(e, g, nao);
    Ok(Report {
        source_static,
        source_dynamic,
        gradient_static,
        gradient_dynamic,
        nao,
        ratio: check.ratio,
        ratio_dynamic,
        bound: check.bound,
        caveats: caveats(source, source_def.body),
    })
}
