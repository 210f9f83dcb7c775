//! Expressions to loop-IR statements (`imp`): the context, scalars, `let`,
//! tuples, conditionals, lambdas and their inlining, indexing.
//!
//! Each expression is compiled to a [`Val`] (see `val.rs`) while the
//! statements that compute it are appended to the current block of the
//! function being built ([`FuncBuilder`]). Every scalar that is not a
//! literal gets its own constant, so expressions never grow and every
//! variable is assigned once (the SSA form the optimizer produces carries
//! over to the IR and to C, where gcc does the rest). Variable names are
//! fresh (`t12_acc`), never the source's, because one lambda may be
//! inlined at several places.
//!
//! The builtins on arrays, loops and materialization are in `arrays.rs`, the
//! folds and scans in `folds.rs`.

use std::rc::Rc;

use syntax::{Def, Expr, ExprId, Module, Name, Pat, Prim, Span, Ty, stack};

use crate::Config;
use crate::error::Error;
use crate::imp::{
    self, BinOp, CheckedOp, Expr as E, FuncBuilder, Place, Scalar, Stmt, UnOp, VarId,
};
use crate::layout::Kind;
use crate::uses::Uses;
use crate::val::{Arr, Env, Func, Leaves, Manifest, Val};

/// The fewest numbers of a literal of reals that become a table of
/// constants (docs/codegen.md, "Tables of constants"). Below, each number
/// stays a store into a fresh arena block: at this size the C compiler's
/// 2 ms a store is nothing, a literal returned as the result needs no
/// copy (a table, like an input, is copied out), and the numbers stay
/// next to their use in the C and the IR snapshots, which the fixtures'
/// literals (2 to 4 numbers) keep as they were.
pub(crate) const TABLE_MIN: usize = 16;

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
    /// It has a loop of its own: enough work per iteration to run in
    /// parallel from fewer iterations ([`crate::arrays::PAR_MIN_NESTED`]).
    pub loops: bool,
}

/// The state of compiling one definition.
pub(crate) struct Lowerer<'a> {
    pub m: &'a Module,
    pub cfg: &'a Config,
    pub w: FuncBuilder,
    /// The program's table of called functions (shared by all definitions).
    pub prog: &'a mut imp::Program,
    pub uses: Uses,
    pub sites: &'a mut Vec<Site>,
    /// One frame per loop body (or captured block) being written.
    pub frames: Vec<Flags>,
    /// How many loops enclose the code being written.
    pub loop_depth: usize,
    /// Length variables known to be another length plus a constant
    /// (`n + 1` of a scan), for shifts to undo exactly.
    pub lens: std::collections::HashMap<VarId, (E, i64)>,
    /// The last element of each `scanl` written out with scalar
    /// accumulators, which its loop leaves in the accumulator variables:
    /// the first buffer to the array's length, the element's index and
    /// the accumulator (`streams.rs`, [`Lowerer::last_element`]).
    pub lasts: std::collections::HashMap<VarId, (E, E, Val)>,
    fresh: usize,
}

impl<'a> Lowerer<'a> {
    pub fn new(
        m: &'a Module,
        def: &Def,
        cfg: &'a Config,
        prog: &'a mut imp::Program,
        sites: &'a mut Vec<Site>,
    ) -> Lowerer<'a> {
        Lowerer {
            m,
            cfg,
            w: FuncBuilder::new(),
            prog,
            uses: Uses::of(m, def),
            sites,
            frames: Vec::new(),
            loop_depth: 0,
            lens: std::collections::HashMap::new(),
            lasts: std::collections::HashMap::new(),
            fresh: 0,
        }
    }

    /// A fresh variable name.
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

    /// A fresh variable of type `ty` (declared by the statement that
    /// introduces it).
    pub fn new_var(&mut self, hint: &str, ty: imp::Ty, mutable: bool) -> VarId {
        let name = self.fresh(hint);
        self.w.var(name, ty, mutable)
    }

    /// Records in every enclosing frame that the code can fail.
    pub(crate) fn note_fails(&mut self) {
        for f in &mut self.frames {
            f.fails = true;
        }
    }

    /// Stops the call at a new failure site when `cond` holds.
    pub fn fail_if(&mut self, cond: E, span: Span, kind: SiteKind, a: E, b: E) {
        let site = self.site(span, kind) as u32;
        self.w.push(Stmt::Fail { cond, site, a, b });
        self.note_fails();
    }

    /// `a op b` on `Int`, failing with an overflow at `span`.
    pub fn checked(&mut self, op: CheckedOp, a: E, b: E, span: Span, prim: Prim, hint: &str) -> E {
        let var = self.new_var(hint, imp::Ty::Scalar(Scalar::I64), false);
        let site = self.site(span, SiteKind::Overflow(prim)) as u32;
        self.w.push(Stmt::Checked {
            var,
            op,
            a,
            b,
            site,
        });
        self.note_fails();
        E::Var(var)
    }

    /// A call of the C function `name` taking and returning scalars.
    pub fn call(&mut self, name: &str, params: &[Scalar], ret: Scalar, args: Vec<E>) -> E {
        E::Call(self.prog.extern_id(name, params, ret), args)
    }

    /// A call of a real function of reals (`sin`, `pow`, `ad_lgamma`).
    pub fn math(&mut self, name: &str, args: Vec<E>) -> E {
        let params = vec![Scalar::F64; args.len()];
        self.call(name, &params, Scalar::F64, args)
    }

    /// `ad_mulc(a, b)`: a product of sizes, saturated so that the
    /// allocation refuses it.
    pub fn mulc(&mut self, a: E, b: E) -> E {
        self.call(
            "ad_mulc",
            &[Scalar::I64, Scalar::I64],
            Scalar::I64,
            vec![a, b],
        )
    }

    /// Declares a fresh buffer of `count` scalars from the arena.
    pub fn alloc(&mut self, kind: Kind, count: &E, span: Span, op: Option<Prim>) -> E {
        let var = self.new_var("buf", mem(kind, true), false);
        self.w.push(Stmt::Alloc {
            var,
            count: count.clone(),
            when: None,
        });
        self.check_alloc(&E::Var(var), count, span, op);
        E::Var(var)
    }

    /// Assigns a fresh buffer to the declared pointer variable `p`.
    pub fn alloc_into(&mut self, p: VarId, kind: Kind, count: &E, span: Span, op: Option<Prim>) {
        let b = self.alloc(kind, count, span, op);
        self.set(p, b);
    }

    fn check_alloc(&mut self, p: &E, count: &E, span: Span, op: Option<Prim>) {
        for f in &mut self.frames {
            f.allocs = true;
        }
        self.fail_if(
            E::IsNull(Box::new(p.clone())),
            span,
            SiteKind::Alloc(op),
            count.clone(),
            E::I64(0),
        );
    }

    /// `v := e` for a mutable variable.
    pub fn set(&mut self, v: VarId, e: E) {
        self.w.push(Stmt::Set {
            place: Place::Var(v),
            value: e,
        });
    }

    /// `mem[index] := value`.
    pub fn store_at(&mut self, mem: &E, index: &E, value: E) {
        self.w.push(Stmt::Set {
            place: Place::Elem {
                mem: mem.clone(),
                index: index.clone(),
            },
            value,
        });
    }

    /// A fresh mutable scalar variable with an optional first value.
    pub fn mut_var(&mut self, kind: Kind, init: Option<E>, hint: &str) -> VarId {
        let var = self.new_var(hint, imp::Ty::Scalar(kind.scalar()), true);
        self.w.push(Stmt::Let { var, init });
        var
    }

    /// Binds a scalar expression to a fresh constant.
    pub fn let_scalar(&mut self, kind: Kind, code: E, hint: &str) -> Val {
        Val::Scalar(kind, E::Var(self.let_var(kind, code, hint)))
    }

    /// Binds a scalar expression to a fresh constant, returning it.
    pub fn let_var(&mut self, kind: Kind, code: E, hint: &str) -> VarId {
        self.let_typed(imp::Ty::Scalar(kind.scalar()), code, hint)
    }

    /// Binds an expression of type `ty` to a fresh constant.
    pub fn let_typed(&mut self, ty: imp::Ty, code: E, hint: &str) -> VarId {
        let var = self.new_var(hint, ty, false);
        self.w.push(Stmt::Let {
            var,
            init: Some(code),
        });
        var
    }

    /// Compiles an expression.
    pub fn expr(&mut self, id: ExprId, env: &Env) -> Result<Val, Error> {
        stack::guard(|| self.expr_inner(id, env))
    }

    /// A compact literal of reals: from [`TABLE_MIN`] numbers on, a view
    /// of a table of constants (read-only, not the arena's: a result or
    /// an accumulator made from it is copied, as one made from an input
    /// is); below, the stores of [`Lowerer::reals`].
    fn literal(&mut self, literal: &syntax::Reals, span: Span) -> Result<Val, Error> {
        if literal.data.len() < TABLE_MIN {
            return self.reals(literal, 0, 0, span);
        }
        let Some((&outer, inner)) = literal.shape.split_first() else {
            return Err(Error::core(span, "an array literal without a shape"));
        };
        let table = self.prog.table_id(&literal.shape, &literal.data);
        let elem = inner.iter().rev().fold(
            Leaves::Scalar {
                kind: Kind::Real,
                ptr: E::Table(table),
            },
            |elem, &n| Leaves::Array {
                len: E::I64(n as i64),
                elem: Box::new(elem),
            },
        );
        Ok(Val::Array(Arr::Manifest(Manifest {
            len: E::I64(outer as i64),
            elem,
            owned: false,
        })))
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
                        Ok(Val::Scalar(Kind::Real, E::F64(literal.data[offset + j])))
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
            Expr::Real(x) => Ok(Val::Scalar(Kind::Real, E::F64(*x))),
            Expr::Int(i) => Ok(Val::Scalar(Kind::Int, E::I64(*i))),
            Expr::Bool(b) => Ok(Val::Scalar(Kind::Bool, E::Bool(*b))),
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
            Expr::Reals(literal) => self.literal(literal, span),
            Expr::Index { array, index } => {
                let a = self.expr(*array, env)?;
                let i = self.expr(*index, env)?;
                let (Val::Array(a), Some((Kind::Int, i))) = (&a, i.scalar()) else {
                    return Err(Error::core(span, "indexing needs an array and an integer"));
                };
                let (a, i) = (a.clone(), i.clone());
                let a = self.random_access(a)?;
                if let Some(v) = self.last_element(&a, &i) {
                    return Ok(v);
                }
                let len = a.len().clone();
                let out = E::bin(
                    BinOp::Or,
                    E::bin(BinOp::Lt, i.clone(), E::I64(0)),
                    E::bin(BinOp::Ge, i.clone(), len.clone()),
                );
                self.fail_if(out, span, SiteKind::Index, i.clone(), len);
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
        let c = c.clone();
        // Constant conditions (left by earlier stages) need no branch.
        match c {
            E::Bool(true) => return self.expr(then_branch, env),
            E::Bool(false) => return self.expr(else_branch, env),
            _ => {}
        }
        let slot = self.declare(&ty, span)?;
        self.w.open();
        let a = self.expr(then_branch, env);
        let owned_a = a.and_then(|a| self.assign(&slot, a, span));
        let then = self.w.close();
        let owned_a = owned_a?;
        self.w.open();
        let b = self.expr(else_branch, env);
        let owned_b = b.and_then(|b| self.assign(&slot, b, span));
        let els = self.w.close();
        let owned_b = owned_b?;
        self.w.push(Stmt::If { cond: c, then, els });
        Ok(set_owned(slot, owned_a && owned_b))
    }

    /// Declares mutable variables able to hold any value of `ty`, and
    /// returns the value that reads them.
    pub fn declare(&mut self, ty: &Ty, span: Span) -> Result<Val, Error> {
        stack::guard(|| match ty {
            Ty::Real | Ty::Int | Ty::Bool => {
                let kind = Kind::of(ty).expect("invariant: a scalar type");
                let t = self.mut_var(kind, None, "r");
                Ok(Val::Scalar(kind, E::Var(t)))
            }
            Ty::Tuple(items) => {
                let vals = items
                    .iter()
                    .map(|t| self.declare(t, span))
                    .collect::<Result<Vec<_>, _>>()?;
                Ok(Val::Tuple(vals.into()))
            }
            Ty::Array(_, elem) => {
                let len = self.mut_var(Kind::Int, Some(E::I64(0)), "n");
                let elem = self.declare_leaves(elem, span, true)?;
                Ok(Val::Array(Arr::Manifest(Manifest {
                    len: E::Var(len),
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
                let ty = mem(kind, !readonly);
                let p = self.new_var("p", ty.clone(), true);
                self.w.push(Stmt::Let {
                    var: p,
                    init: Some(E::Null(ty)),
                });
                Ok(Leaves::Scalar {
                    kind,
                    ptr: E::Var(p),
                })
            }
            Ty::Tuple(items) => Ok(Leaves::Tuple(
                items
                    .iter()
                    .map(|t| self.declare_leaves(t, span, readonly))
                    .collect::<Result<Vec<_>, _>>()?,
            )),
            Ty::Array(_, inner) => {
                let len = self.mut_var(Kind::Int, Some(E::I64(0)), "m");
                let elem = self.declare_leaves(inner, span, readonly)?;
                Ok(Leaves::Array {
                    len: E::Var(len),
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
                assign_var(&mut self.w, t, c);
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
                assign_var(&mut self.w, &t.len, a.len.clone());
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
        let ops: Vec<(Kind, E)> = args
            .iter()
            .map(|a| a.scalar().map(|(k, e)| (k, e.clone())))
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| {
                Error::core(
                    span,
                    format!("`{op}` applied to a value that is not a scalar"),
                )
            })?;
        let hint = op_hint(op);
        let bin = E::bin;
        let real = Kind::Real;
        match (op, ops.as_slice()) {
            (Prim::Neg, [(Kind::Real, a)]) => {
                Ok(self.let_scalar(real, E::Unary(UnOp::Neg, Box::new(a.clone())), hint))
            }
            (Prim::Abs, [(Kind::Real, a)]) => {
                let c = self.math("fabs", vec![a.clone()]);
                Ok(self.let_scalar(real, c, hint))
            }
            (Prim::Neg | Prim::Abs, [(Kind::Int, a)]) => {
                self.fail_if(
                    bin(BinOp::Eq, a.clone(), E::I64(i64::MIN)),
                    span,
                    SiteKind::Overflow(op),
                    E::I64(0),
                    E::I64(0),
                );
                let neg = E::Unary(UnOp::Neg, Box::new(a.clone()));
                let code = if op == Prim::Neg {
                    neg
                } else {
                    E::Select(
                        Box::new(bin(BinOp::Lt, a.clone(), E::I64(0))),
                        Box::new(neg),
                        Box::new(a.clone()),
                    )
                };
                Ok(self.let_scalar(Kind::Int, code, hint))
            }
            (
                Prim::Sin | Prim::Cos | Prim::Tan | Prim::Exp | Prim::Log | Prim::Sqrt | Prim::Tanh,
                [(Kind::Real, a)],
            ) => {
                let c = self.math(op.symbol(), vec![a.clone()]);
                Ok(self.let_scalar(real, c, hint))
            }
            (Prim::Not, [(Kind::Bool, a)]) => {
                Ok(self.let_scalar(Kind::Bool, E::Unary(UnOp::Not, Box::new(a.clone())), hint))
            }
            // The table's other real functions, as `syntax::derivatives::eval`
            // computes them: the same libm calls, or the runtime's.
            (
                Prim::Log1p | Prim::Expm1 | Prim::Atan | Prim::Sinh | Prim::Cosh | Prim::Erf,
                [(Kind::Real, a)],
            ) => {
                let c = self.math(op.symbol(), vec![a.clone()]);
                Ok(self.let_scalar(real, c, hint))
            }
            (
                Prim::Lgamma | Prim::Digamma | Prim::Trigamma | Prim::Sigmoid | Prim::Sign,
                [(Kind::Real, a)],
            ) => {
                let c = self.math(&format!("ad_{}", op.symbol()), vec![a.clone()]);
                Ok(self.let_scalar(real, c, hint))
            }
            (Prim::Atan2 | Prim::Hypot, [(Kind::Real, a), (Kind::Real, b)]) => {
                let c = self.math(op.symbol(), vec![a.clone(), b.clone()]);
                Ok(self.let_scalar(real, c, hint))
            }
            (Prim::Real, [(Kind::Int, a)]) => {
                Ok(self.let_scalar(real, E::Cast(Scalar::F64, Box::new(a.clone())), hint))
            }
            (Prim::Floor | Prim::Ceil | Prim::Round | Prim::Trunc, [(Kind::Real, a)]) => {
                let c = self.math(op.symbol(), vec![a.clone()]);
                let r = E::Var(self.let_var(real, c, "r"));
                // The reals with an Int value: [-2^63, 2^63); NaN fails.
                let fits = bin(
                    BinOp::And,
                    bin(BinOp::Ge, r.clone(), E::F64(-9223372036854775808.0)),
                    bin(BinOp::Lt, r.clone(), E::F64(9223372036854775808.0)),
                );
                self.fail_if(
                    E::Unary(UnOp::Not, Box::new(fits)),
                    span,
                    SiteKind::NotAnInt(op),
                    E::I64(0),
                    E::I64(0),
                );
                Ok(self.let_scalar(Kind::Int, E::Cast(Scalar::I64, Box::new(r)), hint))
            }
            (Prim::Div | Prim::Mod, [(Kind::Int, a), (Kind::Int, b)]) => {
                self.fail_if(
                    bin(BinOp::Eq, b.clone(), E::I64(0)),
                    span,
                    SiteKind::DivisionByZero(op),
                    E::I64(0),
                    E::I64(0),
                );
                if op == Prim::Div {
                    self.fail_if(
                        bin(
                            BinOp::And,
                            bin(BinOp::Eq, a.clone(), E::I64(i64::MIN)),
                            bin(BinOp::Eq, b.clone(), E::I64(-1)),
                        ),
                        span,
                        SiteKind::Overflow(op),
                        E::I64(0),
                        E::I64(0),
                    );
                }
                let f = if op == Prim::Div {
                    "ad_div_floor"
                } else {
                    "ad_mod_floor"
                };
                let ints = [Scalar::I64, Scalar::I64];
                let c = self.call(f, &ints, Scalar::I64, vec![a.clone(), b.clone()]);
                Ok(self.let_scalar(Kind::Int, c, hint))
            }
            // The derivative primitives, as `syntax::derivatives` defines them.
            (Prim::DTan | Prim::DTanh, [(Kind::Real, a)]) => {
                let (f, sign) = if op == Prim::DTan {
                    ("tan", BinOp::Add)
                } else {
                    ("tanh", BinOp::Sub)
                };
                let c = self.math(f, vec![a.clone()]);
                let t = E::Var(self.let_var(real, c, f));
                let code = bin(sign, E::F64(1.0), bin(BinOp::Mul, t.clone(), t));
                Ok(self.let_scalar(real, code, hint))
            }
            (Prim::DAbs, [(Kind::Real, a)]) => {
                let code = E::Select(
                    Box::new(bin(BinOp::Gt, a.clone(), E::F64(0.0))),
                    Box::new(E::F64(1.0)),
                    Box::new(E::F64(-1.0)),
                );
                Ok(self.let_scalar(real, code, hint))
            }
            (Prim::D1Pow, [(Kind::Real, a), (Kind::Real, b)]) => {
                let p = self.math(
                    "pow",
                    vec![a.clone(), bin(BinOp::Sub, b.clone(), E::F64(1.0))],
                );
                Ok(self.let_scalar(real, bin(BinOp::Mul, b.clone(), p), hint))
            }
            (Prim::D2Div, [(Kind::Real, a), (Kind::Real, b)]) => {
                let q = bin(BinOp::Div, bin(BinOp::Div, a.clone(), b.clone()), b.clone());
                Ok(self.let_scalar(real, E::Unary(UnOp::Neg, Box::new(q)), hint))
            }
            (Prim::D2Pow, [(Kind::Real, a), (Kind::Real, b)]) => {
                let l = self.math("log", vec![a.clone()]);
                let p = self.math("pow", vec![a.clone(), b.clone()]);
                let code = E::Select(
                    Box::new(bin(BinOp::Gt, a.clone(), E::F64(0.0))),
                    Box::new(bin(BinOp::Mul, l, p)),
                    Box::new(E::F64(0.0)),
                );
                Ok(self.let_scalar(real, code, hint))
            }
            (Prim::Add | Prim::Sub | Prim::Mul | Prim::Div, [(Kind::Real, a), (Kind::Real, b)]) => {
                let o = arith(op);
                Ok(self.let_scalar(real, bin(o, a.clone(), b.clone()), hint))
            }
            (Prim::Pow | Prim::Max | Prim::Min, [(Kind::Real, a), (Kind::Real, b)]) => {
                let f = match op {
                    Prim::Pow => "pow",
                    Prim::Max => "ad_max",
                    _ => "ad_min",
                };
                let c = self.math(f, vec![a.clone(), b.clone()]);
                Ok(self.let_scalar(real, c, hint))
            }
            (Prim::Add | Prim::Sub | Prim::Mul, [(Kind::Int, a), (Kind::Int, b)]) => {
                let c = match op {
                    Prim::Add => CheckedOp::Add,
                    Prim::Sub => CheckedOp::Sub,
                    _ => CheckedOp::Mul,
                };
                let k = self.checked(c, a.clone(), b.clone(), span, op, hint);
                Ok(Val::Scalar(Kind::Int, k))
            }
            (Prim::Max | Prim::Min, [(Kind::Int, a), (Kind::Int, b)]) => {
                let c = if op == Prim::Max {
                    BinOp::Gt
                } else {
                    BinOp::Lt
                };
                let code = E::Select(
                    Box::new(bin(c, a.clone(), b.clone())),
                    Box::new(a.clone()),
                    Box::new(b.clone()),
                );
                Ok(self.let_scalar(Kind::Int, code, hint))
            }
            (
                Prim::Lt | Prim::Le | Prim::Gt | Prim::Ge | Prim::Eq | Prim::Ne,
                [(ka, a), (kb, b)],
            ) if ka == kb && (*ka != Kind::Bool || matches!(op, Prim::Eq | Prim::Ne)) => {
                let o = arith(op);
                Ok(self.let_scalar(Kind::Bool, bin(o, a.clone(), b.clone()), hint))
            }
            (Prim::And | Prim::Or, [(Kind::Bool, a), (Kind::Bool, b)]) => {
                let o = arith(op);
                Ok(self.let_scalar(Kind::Bool, bin(o, a.clone(), b.clone()), hint))
            }
            _ => Err(Error::core(
                span,
                format!("`{op}` applied to operands of the wrong type"),
            )),
        }
    }
}

/// The loop IR's operator for a binary builtin of the same meaning.
fn arith(op: Prim) -> BinOp {
    match op {
        Prim::Add => BinOp::Add,
        Prim::Sub => BinOp::Sub,
        Prim::Mul => BinOp::Mul,
        Prim::Div => BinOp::Div,
        Prim::Lt => BinOp::Lt,
        Prim::Le => BinOp::Le,
        Prim::Gt => BinOp::Gt,
        Prim::Ge => BinOp::Ge,
        Prim::Eq => BinOp::Eq,
        Prim::Ne => BinOp::Ne,
        Prim::And => BinOp::And,
        _ => BinOp::Or,
    }
}

/// The type of an address of scalars of `kind`.
pub(crate) fn mem(kind: Kind, writable: bool) -> imp::Ty {
    imp::Ty::Mem {
        elem: kind.scalar(),
        writable,
    }
}

/// Assigns to a variable made by [`Lowerer::declare`] (whose value is
/// always a variable).
fn assign_var(w: &mut FuncBuilder, slot: &E, value: E) {
    if let E::Var(v) = slot {
        w.push(Stmt::Set {
            place: Place::Var(*v),
            value,
        });
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
fn assign_leaves(w: &mut FuncBuilder, dst: &Leaves, src: &Leaves) {
    match (dst, src) {
        (Leaves::Scalar { ptr: d, .. }, Leaves::Scalar { ptr: s, .. }) => {
            assign_var(w, d, s.clone())
        }
        (Leaves::Tuple(ds), Leaves::Tuple(ss)) => {
            for (d, s) in ds.iter().zip(ss) {
                assign_leaves(w, d, s);
            }
        }
        (Leaves::Array { len: dl, elem: de }, Leaves::Array { len: sl, elem: se }) => {
            assign_var(w, dl, sl.clone());
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
