//! Expressions to C statements: the context, scalars, `let`, tuples,
//! conditionals, lambdas and their inlining, indexing.
//!
//! Each expression is compiled to a [`Val`] (see `val.rs`) while the
//! statements that compute it are appended to the current [`Writer`]. Every
//! scalar that is not a literal gets its own `const` variable, so C
//! expressions never grow and every name is assigned once (the SSA form the
//! optimizer produces carries over to C, where gcc does the rest). Names in
//! C are fresh (`t12_acc`), never the source's, because one lambda may be
//! inlined at several places.
//!
//! The builtins on arrays, loops and materialization are in `arrays.rs`, the
//! folds and scans in `folds.rs`.

use std::rc::Rc;

use syntax::{Def, Expr, ExprId, Module, Name, Pat, Prim, Span, Ty, stack};

use crate::Config;
use crate::error::Error;
use crate::layout::Kind;
use crate::uses::Uses;
use crate::val::{Arr, Env, Func, Leaves, Manifest, Val};
use crate::writer::Writer;

/// A place in the generated code that can stop the call with an error.
#[derive(Debug, Clone, PartialEq)]
pub struct Site {
    /// The node the error is about.
    pub span: Span,
    /// What went wrong.
    pub kind: SiteKind,
}

/// The run-time errors the generated code detects. Each failure reports
/// its site number and two integers (`a`, `b`) whose meaning depends on the kind.
#[derive(Debug, Clone, PartialEq)]
pub enum SiteKind {
    /// `A[i]` out of bounds: `a` the index, `b` the length.
    Index,
    /// An `Int` operation overflowed.
    Overflow(Prim),
    /// `a / 0` or `mod a 0` on `Int`.
    DivisionByZero(Prim),
    /// `floor`, `ceil`, `round` or `trunc` of a real with no `Int` value.
    NotAnInt(Prim),
    /// `map2` over arrays of lengths `a` and `b`.
    SizeMismatch(Prim),
    /// `build`/`ifold` with the negative count `a`.
    NegativeCount(Prim),
    /// An allocation of `a` elements failed.
    Alloc(Option<Prim>),
    /// Rows of an array of arrays differ in length (`a` and `b`).
    Ragged,
    /// A fold's array accumulator changed length (`a` to `b`).
    AccumulatorSize(Prim),
    /// An input whose array length does not fit its type (`a`), for C
    /// callers; `run` checks inputs before calling.
    InputSize {
        /// The parameter.
        param: String,
    },
}

/// What a loop body did, which decides whether it needs an arena mark and
/// whether it may run in parallel.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Flags {
    /// It allocated from the arena.
    pub allocs: bool,
    /// It can stop the call with an error.
    pub fails: bool,
    /// It advances a stream (a scan read while computed), so its
    /// iterations must run in order.
    pub sequential: bool,
}

/// The state of compiling one definition.
pub(crate) struct Lowerer<'a> {
    pub m: &'a Module,
    pub cfg: &'a Config,
    pub w: Writer,
    pub uses: Uses,
    pub sites: &'a mut Vec<Site>,
    /// One frame per loop body (or captured block) being written.
    pub frames: Vec<Flags>,
    /// How many loops enclose the code being written.
    pub loop_depth: usize,
    /// Length variables known to be another length plus a constant
    /// (`n + 1` of a scan), for shifts to undo exactly.
    pub lens: std::collections::HashMap<String, (String, i64)>,
    /// The last element of each `scanl` written out with scalar
    /// accumulators, which its loop leaves in the accumulator variables:
    /// the first buffer pointer to the array's length, the element's index
    /// and the accumulator (`streams.rs`, [`Lowerer::last_element`]).
    pub lasts: std::collections::HashMap<String, (String, String, Val)>,
    fresh: usize,
}

impl<'a> Lowerer<'a> {
    pub fn new(m: &'a Module, def: &Def, cfg: &'a Config, sites: &'a mut Vec<Site>) -> Lowerer<'a> {
        Lowerer {
            m,
            cfg,
            w: Writer::default(),
            uses: Uses::of(m, def),
            sites,
            frames: Vec::new(),
            loop_depth: 0,
            lens: std::collections::HashMap::new(),
            lasts: std::collections::HashMap::new(),
            fresh: 0,
        }
    }

    /// A fresh C name.
    pub fn fresh(&mut self, hint: &str) -> String {
        self.fresh += 1;
        let hint = crate::writer::c_ident(hint);
        if hint.is_empty() {
            format!("t{}", self.fresh)
        } else {
            format!("t{}_{hint}", self.fresh)
        }
    }

    /// The span of a node.
    pub fn span(&self, id: ExprId) -> Span {
        self.m.span(id)
    }

    /// The type of a node.
    pub fn ty(&self, id: ExprId) -> Result<&'a Ty, Error> {
        let m: &'a Module = self.m;
        m.ty(id)
            .ok_or_else(|| Error::core(m.span(id), format!("node {id} has no type")))
    }

    /// Registers a failure site and returns its number (from 1).
    pub fn site(&mut self, span: Span, kind: SiteKind) -> usize {
        self.sites.push(Site { span, kind });
        self.sites.len()
    }

    /// Writes `if (cond) return ad_fail(...)`.
    pub fn fail_if(&mut self, cond: &str, span: Span, kind: SiteKind, a: &str, b: &str) {
        let k = self.site(span, kind);
        self.w
            .line(format!("if ({cond}) return ad_fail(ctx, {k}, {a}, {b});"));
        for f in &mut self.frames {
            f.fails = true;
        }
    }

    /// Declares a fresh buffer of `count` scalars from the arena.
    pub fn alloc(&mut self, kind: Kind, count: &str, span: Span, op: Option<Prim>) -> String {
        let p = self.fresh("buf");
        let t = kind.c_type();
        self.w.line(format!(
            "{t} *{p} = ({t} *)ad_alloc(ctx, {count}, sizeof({t}));"
        ));
        self.check_alloc(&p, count, span, op);
        p
    }

    /// Assigns a fresh buffer to the declared pointer variable `p`.
    pub fn alloc_into(&mut self, p: &str, kind: Kind, count: &str, span: Span, op: Option<Prim>) {
        let t = kind.c_type();
        self.w
            .line(format!("{p} = ({t} *)ad_alloc(ctx, {count}, sizeof({t}));"));
        self.check_alloc(p, count, span, op);
    }

    fn check_alloc(&mut self, p: &str, count: &str, span: Span, op: Option<Prim>) {
        for f in &mut self.frames {
            f.allocs = true;
        }
        self.fail_if(&format!("!{p}"), span, SiteKind::Alloc(op), count, "0");
    }

    /// Binds a scalar C expression to a fresh `const` variable.
    pub fn let_scalar(&mut self, kind: Kind, code: &str, hint: &str) -> Val {
        Val::Scalar(kind, self.let_var(kind, code, hint))
    }

    /// Binds a scalar C expression to a fresh `const` variable, returning its name.
    pub fn let_var(&mut self, kind: Kind, code: &str, hint: &str) -> String {
        let t = self.fresh(hint);
        self.w
            .line(format!("const {} {t} = {code};", kind.c_type()));
        t
    }

    /// Compiles an expression.
    pub fn expr(&mut self, id: ExprId, env: &Env) -> Result<Val, Error> {
        stack::guard(|| self.expr_inner(id, env))
    }

    /// The rows of a compact literal from dimension `depth` on, starting at
    /// number `offset`: the nested `[c1, ..., ck]` it stands for, as
    /// `Expr::Array` of constants compiles.
    fn reals(
        &mut self,
        literal: &syntax::Reals,
        depth: usize,
        offset: usize,
        span: Span,
    ) -> Result<Val, Error> {
        stack::guard(|| {
            let rest = syntax::Reals {
                shape: literal.shape[depth..].to_vec(),
                data: literal.data.clone(),
            };
            let len = rest.shape[0] as usize;
            let row = rest.row_len();
            let vals = (0..len)
                .map(|j| {
                    if depth + 1 == literal.shape.len() {
                        Ok(Val::Scalar(Kind::Real, real_lit(literal.data[offset + j])))
                    } else {
                        self.reals(literal, depth + 1, offset + j * row, span)
                    }
                })
                .collect::<Result<Vec<_>, _>>()?;
            self.literal_array(&rest.ty(), vals, span)
                .map(|m| Val::Array(Arr::Manifest(m)))
        })
    }

    fn expr_inner(&mut self, id: ExprId, env: &Env) -> Result<Val, Error> {
        let m = self.m;
        let span = m.span(id);
        if id.index() >= m.exprs.len() {
            return Err(Error::core(span, format!("node {id} out of range")));
        }
        match m.expr(id) {
            Expr::Var(name) => env
                .get(name)
                .cloned()
                .ok_or_else(|| Error::core(span, format!("unbound variable `{name}`"))),
            Expr::Real(x) => Ok(Val::Scalar(Kind::Real, real_lit(*x))),
            Expr::Int(i) => Ok(Val::Scalar(Kind::Int, int_lit(*i))),
            Expr::Bool(b) => Ok(Val::Scalar(Kind::Bool, b.to_string())),
            Expr::Let {
                pat, value, body, ..
            } => {
                let v = self.expr(*value, env)?;
                let env = self.bind_pat(pat, v, env, span)?;
                self.expr(*body, &env)
            }
            Expr::Tuple(items) => {
                let vals = items
                    .iter()
                    .map(|&it| self.expr(it, env))
                    .collect::<Result<Vec<_>, _>>()?;
                Ok(Val::Tuple(vals.into()))
            }
            Expr::Proj { tuple, index } => match self.expr(*tuple, env)? {
                Val::Tuple(items) => (*index as usize)
                    .checked_sub(1)
                    .and_then(|i| items.get(i))
                    .cloned()
                    .ok_or_else(|| Error::core(span, format!("projection .{index} out of range"))),
                _ => Err(Error::core(
                    span,
                    "projection out of a value that is not a tuple",
                )),
            },
            Expr::If {
                cond,
                then_branch,
                else_branch,
            } => self.cond(id, *cond, *then_branch, *else_branch, env),
            Expr::Lambda { .. } => Ok(Val::Func(Rc::new(Func {
                lambda: id,
                env: env.clone(),
            }))),
            Expr::App { func, args } => {
                let f = self.expr(*func, env)?;
                let args = args
                    .iter()
                    .map(|&a| self.expr(a, env))
                    .collect::<Result<Vec<_>, _>>()?;
                match f {
                    Val::Func(f) => self.apply(&f, args, span),
                    _ => Err(Error::core(
                        span,
                        "application of a value that is not a function",
                    )),
                }
            }
            Expr::Prim { op, args } => self.prim(id, *op, args, env),
            Expr::Section(op) => Err(Error::core(
                span,
                format!("operator section `({op})` (surface form)"),
            )),
            Expr::Array(items) => {
                let vals = items
                    .iter()
                    .map(|&it| self.expr(it, env))
                    .collect::<Result<Vec<_>, _>>()?;
                let ty = self.ty(id)?.clone();
                self.literal_array(&ty, vals, span)
                    .map(|m| Val::Array(Arr::Manifest(m)))
            }
            Expr::Reals(literal) => self.reals(literal, 0, 0, span),
            Expr::Index { array, index } => {
                let a = self.expr(*array, env)?;
                let i = self.expr(*index, env)?;
                let (Val::Array(a), Some((Kind::Int, i))) = (&a, i.scalar()) else {
                    return Err(Error::core(span, "indexing needs an array and an integer"));
                };
                let (a, i) = (a.clone(), i.to_string());
                let a = self.random_access(a)?;
                if let Some(v) = self.last_element(&a, &i) {
                    return Ok(v);
                }
                let len = a.len().to_string();
                self.fail_if(
                    &format!("{i} < 0 || {i} >= {len}"),
                    span,
                    SiteKind::Index,
                    &i,
                    &len,
                );
                self.elem(&a, &i)
            }
        }
    }

    /// Binds a pattern to a value, materializing delayed arrays that are
    /// used more than once (see `uses.rs`).
    pub fn bind_pat(&mut self, pat: &Pat, v: Val, env: &Env, span: Span) -> Result<Env, Error> {
        match pat {
            Pat::Var(n) => {
                let v = self.bind_val(n, v)?;
                Ok(env.insert(n.clone(), v))
            }
            Pat::Tuple(names) => {
                let Val::Tuple(items) = v else {
                    return Err(Error::core(
                        span,
                        "tuple pattern bound to a value that is not a tuple",
                    ));
                };
                if items.len() != names.len() {
                    return Err(Error::core(
                        span,
                        format!(
                            "tuple pattern of {} names bound to a {}-tuple",
                            names.len(),
                            items.len()
                        ),
                    ));
                }
                let mut env = env.clone();
                for (n, it) in names.iter().zip(items.iter()) {
                    let v = self.bind_val(n, it.clone())?;
                    env = env.insert(n.clone(), v);
                }
                Ok(env)
            }
        }
    }

    fn bind_val(&mut self, name: &Name, v: Val) -> Result<Val, Error> {
        if self.uses.may_delay(name) {
            return Ok(v);
        }
        // A tuple that is only projected: each component on its own
        // (reverse mode passes (primal, adjoint) pairs around this way).
        if let Val::Tuple(items) = &v
            && self.uses.may_delay_part(name, 1).is_some()
        {
            let mut out = Vec::with_capacity(items.len());
            for (i, it) in items.iter().enumerate() {
                if self.uses.may_delay_part(name, i as u32 + 1) == Some(true) {
                    out.push(it.clone());
                } else {
                    out.push(self.materialize_val(it.clone())?);
                }
            }
            return Ok(Val::Tuple(out.into()));
        }
        self.materialize_val(v)
    }

    /// Inlines a function applied to arguments.
    pub fn apply(&mut self, f: &Func, args: Vec<Val>, span: Span) -> Result<Val, Error> {
        let m = self.m;
        let Expr::Lambda { params, body } = m.expr(f.lambda) else {
            return Err(Error::core(span, "a function value that is not a lambda"));
        };
        if params.len() != args.len() {
            return Err(Error::core(
                span,
                format!(
                    "a function of {} parameters applied to {} arguments",
                    params.len(),
                    args.len()
                ),
            ));
        }
        let mut env = f.env.clone();
        for (p, a) in params.iter().zip(args) {
            let v = self.bind_val(&p.name, a)?;
            env = env.insert(p.name.clone(), v);
        }
        self.expr(*body, &env)
    }

    /// `if`: result variables declared before, assigned in each branch.
    fn cond(
        &mut self,
        id: ExprId,
        cond: ExprId,
        then_branch: ExprId,
        else_branch: ExprId,
        env: &Env,
    ) -> Result<Val, Error> {
        let span = self.span(id);
        let ty = self.ty(id)?.clone();
        let c = self.expr(cond, env)?;
        let Some((Kind::Bool, c)) = c.scalar() else {
            return Err(Error::core(span, "a condition that is not a boolean"));
        };
        let c = c.to_string();
        // Constant conditions (left by earlier stages) need no branch.
        if c == "true" {
            return self.expr(then_branch, env);
        }
        if c == "false" {
            return self.expr(else_branch, env);
        }
        let slot = self.declare(&ty, span)?;
        self.w.open(format!("if ({c})"));
        let a = self.expr(then_branch, env)?;
        let owned_a = self.assign(&slot, a, span)?;
        self.w.reopen("else");
        let b = self.expr(else_branch, env)?;
        let owned_b = self.assign(&slot, b, span)?;
        self.w.close();
        Ok(set_owned(slot, owned_a && owned_b))
    }

    /// Declares mutable variables able to hold any value of `ty`, and
    /// returns the value that reads them.
    pub fn declare(&mut self, ty: &Ty, span: Span) -> Result<Val, Error> {
        stack::guard(|| match ty {
            Ty::Real | Ty::Int | Ty::Bool => {
                let kind = Kind::of(ty).expect("invariant: a scalar type");
                let t = self.fresh("r");
                self.w.line(format!("{} {t};", kind.c_type()));
                Ok(Val::Scalar(kind, t))
            }
            Ty::Tuple(items) => {
                let vals = items
                    .iter()
                    .map(|t| self.declare(t, span))
                    .collect::<Result<Vec<_>, _>>()?;
                Ok(Val::Tuple(vals.into()))
            }
            Ty::Array(_, elem) => {
                let len = self.fresh("n");
                self.w.line(format!("int64_t {len} = 0;"));
                let elem = self.declare_leaves(elem, span, true)?;
                Ok(Val::Array(Arr::Manifest(Manifest {
                    len,
                    elem,
                    owned: true,
                })))
            }
            Ty::Func(..) => Err(Error::unsupported(
                span,
                "a conditional or accumulator whose value is a function",
            )),
        })
    }

    /// Declares dim and pointer variables for the elements of an array of
    /// `elem`s (pointers `const` when `readonly`).
    pub fn declare_leaves(
        &mut self,
        elem: &Ty,
        span: Span,
        readonly: bool,
    ) -> Result<Leaves, Error> {
        stack::guard(|| match elem {
            Ty::Real | Ty::Int | Ty::Bool => {
                let kind = Kind::of(elem).expect("invariant: a scalar type");
                let p = self.fresh("p");
                let c = if readonly { "const " } else { "" };
                self.w.line(format!("{c}{} *{p} = NULL;", kind.c_type()));
                Ok(Leaves::Scalar { kind, ptr: p })
            }
            Ty::Tuple(items) => Ok(Leaves::Tuple(
                items
                    .iter()
                    .map(|t| self.declare_leaves(t, span, readonly))
                    .collect::<Result<Vec<_>, _>>()?,
            )),
            Ty::Array(_, inner) => {
                let len = self.fresh("m");
                self.w.line(format!("int64_t {len} = 0;"));
                let elem = self.declare_leaves(inner, span, readonly)?;
                Ok(Leaves::Array {
                    len,
                    elem: Box::new(elem),
                })
            }
            Ty::Func(..) => Err(Error::unsupported(span, "an array of functions")),
        })
    }

    /// Assigns a value to variables made by [`Lowerer::declare`]; returns
    /// whether all its arrays belong to the arena.
    pub fn assign(&mut self, slot: &Val, v: Val, span: Span) -> Result<bool, Error> {
        stack::guard(|| match (slot, v) {
            (Val::Scalar(_, t), Val::Scalar(_, c)) => {
                self.w.line(format!("{t} = {c};"));
                Ok(true)
            }
            (Val::Tuple(ts), Val::Tuple(vs)) if ts.len() == vs.len() => {
                let mut owned = true;
                for (t, v) in ts.iter().zip(vs.iter()) {
                    owned &= self.assign(t, v.clone(), span)?;
                }
                Ok(owned)
            }
            (Val::Array(Arr::Manifest(t)), Val::Array(a)) => {
                let a = self.materialize(&a)?;
                self.w.line(format!("{} = {};", t.len, a.len));
                assign_leaves(&mut self.w, &t.elem, &a.elem);
                Ok(a.owned)
            }
            (_, Val::Func(_)) => Err(Error::unsupported(
                span,
                "a conditional whose value is a function",
            )),
            _ => Err(Error::core(
                span,
                "the branches of a conditional differ in shape",
            )),
        })
    }

    /// Compiles a scalar builtin on evaluated operands.
    pub fn scalar_prim(&mut self, op: Prim, args: &[Val], span: Span) -> Result<Val, Error> {
        let ops: Vec<(Kind, &str)> = args
            .iter()
            .map(|a| a.scalar())
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| {
                Error::core(
                    span,
                    format!("`{op}` applied to a value that is not a scalar"),
                )
            })?;
        let hint = op_hint(op);
        match (op, ops.as_slice()) {
            (Prim::Neg, [(Kind::Real, a)]) => {
                Ok(self.let_scalar(Kind::Real, &format!("-{a}"), hint))
            }
            (Prim::Abs, [(Kind::Real, a)]) => {
                Ok(self.let_scalar(Kind::Real, &format!("fabs({a})"), hint))
            }
            (Prim::Neg | Prim::Abs, [(Kind::Int, a)]) => {
                let (a, k) = (a.to_string(), self.fresh(hint));
                self.fail_if(
                    &format!("{a} == INT64_MIN"),
                    span,
                    SiteKind::Overflow(op),
                    "0",
                    "0",
                );
                let code = if op == Prim::Neg {
                    format!("-{a}")
                } else {
                    format!("({a} < 0 ? -{a} : {a})")
                };
                self.w.line(format!("const int64_t {k} = {code};"));
                Ok(Val::Scalar(Kind::Int, k))
            }
            (
                Prim::Sin | Prim::Cos | Prim::Tan | Prim::Exp | Prim::Log | Prim::Sqrt | Prim::Tanh,
                [(Kind::Real, a)],
            ) => Ok(self.let_scalar(Kind::Real, &format!("{}({a})", op.symbol()), hint)),
            (Prim::Not, [(Kind::Bool, a)]) => {
                Ok(self.let_scalar(Kind::Bool, &format!("!{a}"), hint))
            }
            // The table's other real functions, as `syntax::derivatives::eval`
            // computes them: the same libm calls, or the runtime's.
            (
                Prim::Log1p | Prim::Expm1 | Prim::Atan | Prim::Sinh | Prim::Cosh | Prim::Erf,
                [(Kind::Real, a)],
            ) => Ok(self.let_scalar(Kind::Real, &format!("{}({a})", op.symbol()), hint)),
            (
                Prim::Lgamma | Prim::Digamma | Prim::Trigamma | Prim::Sigmoid | Prim::Sign,
                [(Kind::Real, a)],
            ) => Ok(self.let_scalar(Kind::Real, &format!("ad_{}({a})", op.symbol()), hint)),
            (Prim::Atan2 | Prim::Hypot, [(Kind::Real, a), (Kind::Real, b)]) => {
                Ok(self.let_scalar(Kind::Real, &format!("{}({a}, {b})", op.symbol()), hint))
            }
            (Prim::Real, [(Kind::Int, a)]) => {
                Ok(self.let_scalar(Kind::Real, &format!("(double){a}"), hint))
            }
            (Prim::Floor | Prim::Ceil | Prim::Round | Prim::Trunc, [(Kind::Real, a)]) => {
                let r = self.let_var(Kind::Real, &format!("{}({a})", op.symbol()), "r");
                // The reals with an Int value: [-2^63, 2^63); NaN fails.
                self.fail_if(
                    &format!("!({r} >= -9223372036854775808.0 && {r} < 9223372036854775808.0)"),
                    span,
                    SiteKind::NotAnInt(op),
                    "0",
                    "0",
                );
                Ok(self.let_scalar(Kind::Int, &format!("(int64_t){r}"), hint))
            }
            (Prim::Div | Prim::Mod, [(Kind::Int, a), (Kind::Int, b)]) => {
                let (a, b) = (a.to_string(), b.to_string());
                self.fail_if(
                    &format!("{b} == 0"),
                    span,
                    SiteKind::DivisionByZero(op),
                    "0",
                    "0",
                );
                if op == Prim::Div {
                    self.fail_if(
                        &format!("{a} == INT64_MIN && {b} == -1"),
                        span,
                        SiteKind::Overflow(op),
                        "0",
                        "0",
                    );
                }
                let f = if op == Prim::Div {
                    "ad_div_floor"
                } else {
                    "ad_mod_floor"
                };
                Ok(self.let_scalar(Kind::Int, &format!("{f}({a}, {b})"), hint))
            }
            // The derivative primitives, as `syntax::derivatives` defines them.
            (Prim::DTan | Prim::DTanh, [(Kind::Real, a)]) => {
                let (f, sign) = if op == Prim::DTan {
                    ("tan", "+")
                } else {
                    ("tanh", "-")
                };
                let t = self.let_var(Kind::Real, &format!("{f}({a})"), f);
                Ok(self.let_scalar(Kind::Real, &format!("1.0 {sign} {t} * {t}"), hint))
            }
            (Prim::DAbs, [(Kind::Real, a)]) => {
                Ok(self.let_scalar(Kind::Real, &format!("({a} > 0.0 ? 1.0 : -1.0)"), hint))
            }
            (Prim::D1Pow, [(Kind::Real, a), (Kind::Real, b)]) => {
                Ok(self.let_scalar(Kind::Real, &format!("{b} * pow({a}, {b} - 1.0)"), hint))
            }
            (Prim::D2Div, [(Kind::Real, a), (Kind::Real, b)]) => {
                Ok(self.let_scalar(Kind::Real, &format!("-({a} / {b} / {b})"), hint))
            }
            (Prim::D2Pow, [(Kind::Real, a), (Kind::Real, b)]) => Ok(self.let_scalar(
                Kind::Real,
                &format!("({a} > 0.0 ? log({a}) * pow({a}, {b}) : 0.0)"),
                hint,
            )),
            (Prim::Add | Prim::Sub | Prim::Mul | Prim::Div, [(Kind::Real, a), (Kind::Real, b)]) => {
                Ok(self.let_scalar(Kind::Real, &format!("{a} {} {b}", op.symbol()), hint))
            }
            (Prim::Pow | Prim::Max | Prim::Min, [(Kind::Real, a), (Kind::Real, b)]) => {
                let f = match op {
                    Prim::Pow => "pow",
                    Prim::Max => "fmax",
                    _ => "fmin",
                };
                Ok(self.let_scalar(Kind::Real, &format!("{f}({a}, {b})"), hint))
            }
            (Prim::Add | Prim::Sub | Prim::Mul, [(Kind::Int, a), (Kind::Int, b)]) => {
                let (a, b, k) = (a.to_string(), b.to_string(), self.fresh(hint));
                let f = match op {
                    Prim::Add => "ad_add_ovf",
                    Prim::Sub => "ad_sub_ovf",
                    _ => "ad_mul_ovf",
                };
                self.w.line(format!("int64_t {k};"));
                self.fail_if(
                    &format!("{f}({a}, {b}, &{k})"),
                    span,
                    SiteKind::Overflow(op),
                    "0",
                    "0",
                );
                Ok(Val::Scalar(Kind::Int, k))
            }
            (Prim::Max | Prim::Min, [(Kind::Int, a), (Kind::Int, b)]) => {
                let c = if op == Prim::Max { ">" } else { "<" };
                Ok(self.let_scalar(Kind::Int, &format!("({a} {c} {b} ? {a} : {b})"), hint))
            }
            (
                Prim::Lt | Prim::Le | Prim::Gt | Prim::Ge | Prim::Eq | Prim::Ne,
                [(ka, a), (kb, b)],
            ) if ka == kb && (*ka != Kind::Bool || matches!(op, Prim::Eq | Prim::Ne)) => {
                Ok(self.let_scalar(Kind::Bool, &format!("{a} {} {b}", op.symbol()), hint))
            }
            (Prim::And | Prim::Or, [(Kind::Bool, a), (Kind::Bool, b)]) => {
                Ok(self.let_scalar(Kind::Bool, &format!("{a} {} {b}", op.symbol()), hint))
            }
            _ => Err(Error::core(
                span,
                format!("`{op}` applied to operands of the wrong type"),
            )),
        }
    }
}

/// Marks every array of a declared value as owned or not.
fn set_owned(v: Val, owned: bool) -> Val {
    match v {
        Val::Array(Arr::Manifest(mut m)) => {
            m.owned = owned;
            Val::Array(Arr::Manifest(m))
        }
        Val::Tuple(items) => {
            Val::Tuple(items.iter().map(|v| set_owned(v.clone(), owned)).collect())
        }
        v => v,
    }
}

/// Assigns the dims and pointers of `src` to the variables of `dst`.
fn assign_leaves(w: &mut Writer, dst: &Leaves, src: &Leaves) {
    match (dst, src) {
        (Leaves::Scalar { ptr: d, .. }, Leaves::Scalar { ptr: s, .. }) => {
            w.line(format!("{d} = {s};"))
        }
        (Leaves::Tuple(ds), Leaves::Tuple(ss)) => {
            for (d, s) in ds.iter().zip(ss) {
                assign_leaves(w, d, s);
            }
        }
        (Leaves::Array { len: dl, elem: de }, Leaves::Array { len: sl, elem: se }) => {
            w.line(format!("{dl} = {sl};"));
            assign_leaves(w, de, se);
        }
        // Same type, same shape: the verifier guaranteed it.
        _ => {}
    }
}

/// A short readable hint for the variable holding an operation's result.
fn op_hint(op: Prim) -> &'static str {
    match op {
        Prim::Add => "add",
        Prim::Sub => "sub",
        Prim::Mul => "mul",
        Prim::Div => "div",
        Prim::Neg => "neg",
        Prim::Lt | Prim::Le | Prim::Gt | Prim::Ge | Prim::Eq | Prim::Ne => "cmp",
        Prim::And | Prim::Or | Prim::Not => "b",
        other => other.symbol(),
    }
}

/// A real constant as a C literal that reads back to the same f64.
pub(crate) fn real_lit(x: f64) -> String {
    if x.is_nan() {
        "NAN".to_string()
    } else if x.is_infinite() {
        if x > 0.0 { "INFINITY" } else { "(-INFINITY)" }.to_string()
    } else if x.is_sign_negative() {
        format!("({x:?})")
    } else {
        format!("{x:?}")
    }
}

/// An integer constant as a C literal.
pub(crate) fn int_lit(i: i64) -> String {
    if i == i64::MIN {
        "INT64_MIN".to_string()
    } else if i < 0 {
        format!("(-INT64_C({}))", i.unsigned_abs())
    } else {
        format!("INT64_C({i})")
    }
}
