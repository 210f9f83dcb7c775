//! The arrow UNF (seeds/000 Fig. 9): a first-order Source definition in core
//! form → Source UNF.
//!
//! `lower(e)` in the context Gamma (a [`CtxId`] plus the names of its
//! entries) produces a term `Gamma ⊢ UNF(e) : Gamma·B`, clause by clause as
//! in Fig. 9. Two refinements:
//!
//! - Weakening. Fig. 9 writes `UNF(e1) ;~ UNF(e2)`, where `~` rewrites the
//!   indices of a finished term to carry one more type. We lower e2 directly
//!   in the extended context `Gamma·A` instead, which yields the same term
//!   (variables of Gamma keep their positions) without rewriting anything,
//!   so nested operands cost nothing extra. The node is a `Weak` rather than a `Seq`
//!   so the printer can show `;~`.
//! - Sharing. Every context is interned in [`Tables`]; a term stores ids.
//!
//! Beyond the paper's core: k-ary tuples (`pair` of k components), tuple
//! patterns in `let` (a projection per component), `map` with one array
//! (Fig. 4's `map (x.e) A = map2 (x,y.e) A A`, kept as a primitive of its
//! own so the array is not duplicated), and the constructs of Section 7 and
//! Appendix A: `if` (each branch a function of its free variables),
//! `foldl`, the scans, `ifold`, `build`, `reduce` beyond the paper's
//! restriction (a `Loop`), indexing, array literals, Int and Bool
//! constants, comparisons, logic, integer arithmetic, `length` and the
//! shifts (`Op::Builtin`), over any ground types. A builtin on types it
//! does not take is `Error::Unsupported`.

use crate::error::Error;
use crate::ir::{CtxId, Fun, Kind, LoopKind, Module, Op, Prim, Term, TermId, TyId};
use crate::tables::Tables;
use crate::verify::{Checked, builtin_fits, is_binary, is_unary};
use rpds::HashTrieMap;
use std::collections::BTreeSet;
use std::hash::BuildHasherDefault;
use std::rc::Rc;
use syntax::fxhash::FxHasher;
use syntax::stack::guard;
use syntax::visit::FreeMemo;
use syntax::{Def, Expr, ExprId, Name, Pat, Span, Ty};

/// Names in scope: each bound name's 1-based position in the context.
/// Hashed with `syntax::fxhash` rather than rpds' default SipHash, and
/// of degree 16 rather than 64, as the optimizer's environment
/// (`optimize/src/simplify.rs`): each `let` inserts its name, copying one
/// node per level, and SipHash and the wider nodes were most of that cost
/// on long programs (docs/scale.md). Nothing iterates over the
/// environment, so the hash decides nothing but speed.
type Env = HashTrieMap<Name, u32, archery::RcK, BuildHasherDefault<FxHasher>>;

/// An empty [`Env`].
fn empty_env() -> Env {
    HashTrieMap::new_with_hasher_and_degree_and_ptr_kind(BuildHasherDefault::default(), 16)
}

/// The arrow UNF: the Source UNF of the definition `entry` of `m`.
///
/// `m` must be in core form and `entry` first order (`syntax` checks it).
/// Every first-order construct is lowered (module documentation); a builtin
/// applied to types it does not take is refused with
/// [`Error::Unsupported`] naming it and its span.
pub fn lower(m: &syntax::Module, entry: &Def) -> Result<Module, Error> {
    lower_checked(m, entry).map(|(out, _)| out)
}

/// [`lower`], also returning what the verifier of its output computed
/// (`crate::check`), so that a caller handing the module on to
/// `reverse::reverse_checked` does not check it a second time.
pub fn lower_checked(m: &syntax::Module, entry: &Def) -> Result<(Module, Checked), Error> {
    syntax::check_first_order(m, entry)?;
    // A `while` loop is differentiated as its trip count and an `ifold` of
    // that many steps (docs/derivatives.md, "`while` loops"); the Source
    // module the UNF embeds is the rewritten one.
    if syntax::has_while(m) {
        let bounded = syntax::bound_whiles(m)?;
        let entry = bounded
            .def(entry.name.as_str())
            .cloned()
            .ok_or_else(|| Error::Shape {
                span: entry.name_span,
                message: "the entry was lost bounding its while loops".to_string(),
            })?;
        return lower_checked(&bounded, &entry);
    }
    if !m.is_typed() {
        return Err(Error::Shape {
            span: entry.name_span,
            message: "the source module is not typed (core form expected)".to_string(),
        });
    }
    let mut cx = Lower {
        m,
        t: Tables::new(),
        terms: Vec::new(),
        spans: Vec::new(),
        fv: FreeMemo::default(),
    };
    let mut gamma = CtxId::EMPTY;
    let mut env = empty_env();
    for p in &entry.params {
        let ty = match &p.ty {
            Some(ty) if ty.is_ground() => ty,
            Some(_) => {
                return Err(unsupported_with(
                    p.span,
                    "->",
                    " in the type of a parameter",
                ));
            }
            None => {
                return Err(Error::Shape {
                    span: p.span,
                    message: format!("parameter `{}` has no type", p.name),
                });
            }
        };
        let t = cx.t.ground(ty);
        gamma = cx.t.snoc(gamma, t);
        env = env.insert(p.name.clone(), cx.t.len(gamma));
    }
    let root = cx.expr(entry.body, gamma, &env)?;
    let b = cx.ty_of(entry.body);
    let output = cx.t.snoc(gamma, b);
    let (tys, ctxs) = cx.t.into_parts();
    let out = Module {
        kind: Kind::Source,
        source: m.clone(),
        entry: entry.name.clone(),
        tys,
        ctxs,
        terms: cx.terms,
        spans: cx.spans,
        root,
        input: gamma,
        output,
        wrt: Vec::new(),
    };
    // Lemma 4.4: the output is well typed; a failure is a bug of this pass.
    let checked = crate::check(&out).map_err(|errors| Error::Shape {
        span: entry.name_span,
        message: format!(
            "internal error after pass 'unf': {}",
            errors.first().map(|e| e.to_string()).unwrap_or_default()
        ),
    })?;
    Ok((out, checked))
}

fn unsupported(span: Span, construct: &str) -> Error {
    unsupported_with(span, construct, "")
}

fn unsupported_with(span: Span, construct: &str, detail: &str) -> Error {
    Error::Unsupported {
        span,
        construct: construct.to_string(),
        detail: detail.to_string(),
    }
}

struct Lower<'a> {
    m: &'a syntax::Module,
    t: Tables,
    terms: Vec<Term>,
    spans: Vec<Span>,
    /// The free variables of the Source nodes asked so far: a branch or a
    /// function nested in another is not walked again for each enclosing
    /// one (an `if`/`else if` chain would be quadratic).
    fv: FreeMemo,
}

impl Lower<'_> {
    fn add(&mut self, term: Term, span: Span) -> TermId {
        let id = TermId(self.terms.len() as u32);
        self.terms.push(term);
        self.spans.push(span);
        id
    }

    /// The variables free in a Source expression, memoised.
    fn free(&mut self, e: ExprId) -> Rc<BTreeSet<Name>> {
        self.fv.get(self.m, e)
    }

    fn prim(&mut self, p: Prim, span: Span) -> TermId {
        self.add(Term::Prim(p), span)
    }

    fn seq(&mut self, first: TermId, then: TermId, weak: bool, span: Span) -> TermId {
        let term = if weak {
            Term::Weak(first, then)
        } else {
            Term::Seq(first, then)
        };
        self.add(term, span)
    }

    /// The interned type of a Source node.
    fn ty_of(&mut self, e: ExprId) -> TyId {
        let ty = self.m.types[e.index()].clone();
        self.t.ground(&ty)
    }

    fn src_ty(&self, e: ExprId) -> &Ty {
        &self.m.types[e.index()]
    }

    /// `proj_{Gamma;drop;[res]}`: hide the intermediate results `drop`.
    fn hide(&mut self, gamma: CtxId, drop: &[TyId], res: TyId, span: Span) -> TermId {
        let drop = self.t.list(drop);
        let rest = self.t.list(&[res]);
        self.prim(Prim::Proj(gamma, drop, rest), span)
    }

    /// Lowers operands left to right, each weakened by the results of the
    /// ones before (`UNF(e1) ;~ UNF(e2) ;~ ...`). Returns the term and the
    /// operands' types.
    fn operands(
        &mut self,
        args: &[ExprId],
        gamma: CtxId,
        env: &Env,
        span: Span,
    ) -> Result<(TermId, Vec<TyId>), Error> {
        let mut ctx = gamma;
        let mut tys = Vec::with_capacity(args.len());
        let mut acc: Option<TermId> = None;
        for &a in args {
            let t = self.expr(a, ctx, env)?;
            let ty = self.ty_of(a);
            tys.push(ty);
            ctx = self.t.snoc(ctx, ty);
            acc = Some(match acc {
                None => t,
                Some(prev) => self.seq(prev, t, true, span),
            });
        }
        let acc = acc.expect("invariant: operands are never empty");
        Ok((acc, tys))
    }

    /// `UNF(Gamma ⊢ e)`: `Gamma ⊢ UNF(e) : Gamma·B`.
    fn expr(&mut self, e: ExprId, gamma: CtxId, env: &Env) -> Result<TermId, Error> {
        guard(|| self.expr_inner(e, gamma, env))
    }

    fn expr_inner(&mut self, e: ExprId, gamma: CtxId, env: &Env) -> Result<TermId, Error> {
        let span = self.m.spans[e.index()];
        let real = self.t.ground(&Ty::Real);
        match self.m.expr(e) {
            Expr::Real(c) => Ok(self.prim(Prim::Op(gamma, Op::Const(*c)), span)),
            Expr::Int(k) => Ok(self.prim(Prim::Op(gamma, Op::Int(*k)), span)),
            Expr::Bool(b) => Ok(self.prim(Prim::Op(gamma, Op::Bool(*b)), span)),
            Expr::Var(x) => match env.get(x) {
                Some(&index) => Ok(self.prim(Prim::Var(gamma, index), span)),
                None => Err(unsupported_with(
                    span,
                    x.as_str(),
                    " (a name that is not a variable in scope)",
                )),
            },
            Expr::Let {
                pat, value, body, ..
            } => {
                let t1 = self.expr(*value, gamma, env)?;
                let a = self.ty_of(*value);
                let b = self.ty_of(*body);
                match pat {
                    Pat::Var(x) => {
                        let ctx = self.t.snoc(gamma, a);
                        let env2 = env.insert(x.clone(), self.t.len(ctx));
                        let t2 = self.expr(*body, ctx, &env2)?;
                        let s = self.seq(t1, t2, false, span);
                        let p = self.hide(gamma, &[a], b, span);
                        Ok(self.seq(s, p, false, span))
                    }
                    Pat::Tuple(xs) => self.let_tuple(e, xs, t1, a, b, *body, gamma, env),
                }
            }
            Expr::Tuple(items) => {
                let ty = self.ty_of(e);
                let pair = self.prim(Prim::Pair(gamma, ty), span);
                if items.is_empty() {
                    return Ok(pair);
                }
                let (ops, _) = self.operands(items, gamma, env, span)?;
                Ok(self.seq(ops, pair, false, span))
            }
            Expr::Proj { tuple, index } => {
                let t = self.expr(*tuple, gamma, env)?;
                let p = self.ty_of(*tuple);
                let res = self.ty_of(e);
                let op = self.prim(
                    Prim::Op(
                        gamma,
                        Op::Proj {
                            index: *index,
                            tuple: p,
                        },
                    ),
                    span,
                );
                let s = self.seq(t, op, false, span);
                let h = self.hide(gamma, &[p], res, span);
                Ok(self.seq(s, h, false, span))
            }
            Expr::Prim { op, args } => self.prim_app(e, *op, args, gamma, env, real),
            Expr::If {
                cond,
                then_branch,
                else_branch,
            } => {
                // UNF(b) ; if_{Γ; e2; e3} ; proj_{Γ;[Bool];[C]}: the
                // branches are functions of their free variables.
                let t = self.expr(*cond, gamma, env)?;
                let then_fun = self.branch(*then_branch, env, gamma)?;
                let else_fun = self.branch(*else_branch, env, gamma)?;
                let ret = self.ty_of(e);
                let p = self.prim(
                    Prim::If {
                        ctx: gamma,
                        ret,
                        then_fun,
                        else_fun,
                    },
                    span,
                );
                let s = self.seq(t, p, false, span);
                let b = self.t.ground(&Ty::Bool);
                let h = self.hide(gamma, &[b], ret, span);
                Ok(self.seq(s, h, false, span))
            }
            Expr::Array(items) => {
                let ty = self.ty_of(e);
                let arr = self.prim(
                    Prim::Array {
                        ctx: gamma,
                        ty,
                        len: items.len() as u32,
                    },
                    span,
                );
                if items.is_empty() {
                    return Ok(arr);
                }
                let (ops, _) = self.operands(items, gamma, env, span)?;
                Ok(self.seq(ops, arr, false, span))
            }
            Expr::Index { array, index } => {
                let (ops, tys) = self.operands(&[*array, *index], gamma, env, span)?;
                let res = self.ty_of(e);
                let op = self.prim(Prim::Op(gamma, Op::Index { array: tys[0] }), span);
                let s = self.seq(ops, op, false, span);
                let h = self.hide(gamma, &tys, res, span);
                Ok(self.seq(s, h, false, span))
            }
            // One term whatever the literal's length: the numbers stay in
            // the Source node (issue 19; written as its constants, UNF, D_ρ
            // and UNF⁻¹ went element by element).
            Expr::Reals(_) => {
                let ty = self.ty_of(e);
                Ok(self.prim(Prim::Op(gamma, Op::Reals { node: e, ty }), span))
            }
            Expr::Lambda { .. } => Err(unsupported(span, "fun")),
            Expr::App { .. } => Err(unsupported(span, "application")),
            Expr::Section(p) => Err(unsupported(span, p.symbol())),
        }
    }

    /// A branch of `if` as a function of no parameters: the branch lowered
    /// in the context of its free variables.
    fn branch(&mut self, b: ExprId, env: &Env, gamma: CtxId) -> Result<Fun, Error> {
        let span = self.m.spans[b.index()];
        let (free, ctx, inner) = self.free_context(b, env, gamma, span)?;
        let body = self.expr(b, ctx, &inner)?;
        Ok(Fun {
            lambda: b,
            free,
            body,
        })
    }

    /// The context of the free variables of `e` (in the order of their
    /// positions in gamma), their positions, and the names bound to them.
    fn free_context(
        &mut self,
        e: ExprId,
        env: &Env,
        gamma: CtxId,
        span: Span,
    ) -> Result<(Vec<u32>, CtxId, Env), Error> {
        let mut fv: Vec<(u32, Name)> = Vec::new();
        for x in self.free(e).iter().cloned() {
            match env.get(&x) {
                Some(&pos) => fv.push((pos, x)),
                None => {
                    return Err(unsupported_with(
                        span,
                        x.as_str(),
                        " (a name that is not a variable in scope)",
                    ));
                }
            }
        }
        fv.sort();
        let mut ctx = CtxId::EMPTY;
        let mut inner = empty_env();
        for (pos, x) in &fv {
            let t = self
                .t
                .entry(gamma, *pos)
                .expect("invariant: env positions are inside gamma");
            ctx = self.t.snoc(ctx, t);
            inner = inner.insert(x.clone(), self.t.len(ctx));
        }
        Ok((fv.into_iter().map(|(p, _)| p).collect(), ctx, inner))
    }

    /// `let (x1, ..., xk) = e1 in e2`: after `UNF(e1)` the context is
    /// `Gamma·P`; each component is read with `var ; π_i ; proj`, then e2 is
    /// lowered in `Gamma·P·A1·...·Ak` and everything but its result hidden.
    #[allow(clippy::too_many_arguments)]
    fn let_tuple(
        &mut self,
        e: ExprId,
        xs: &[Name],
        t1: TermId,
        p: TyId,
        b: TyId,
        body: ExprId,
        gamma: CtxId,
        env: &Env,
    ) -> Result<TermId, Error> {
        let span = self.m.spans[e.index()];
        let Some(Ty::Tuple(items)) = self.t.ground_ty(p).cloned() else {
            return Err(Error::Shape {
                span,
                message: "a tuple pattern binds a value that is not a tuple".to_string(),
            });
        };
        if items.len() != xs.len() {
            return Err(Error::Shape {
                span,
                message: format!(
                    "a pattern of {} names binds a tuple of {}",
                    xs.len(),
                    items.len()
                ),
            });
        }
        let gp = self.t.snoc(gamma, p);
        let pos_p = self.t.len(gp);
        let mut ctx = gp;
        let mut acc = t1;
        let mut env2 = env.clone();
        let mut hidden = vec![p];
        for (i, (x, item)) in xs.iter().zip(&items).enumerate() {
            let a = self.t.ground(item);
            let var = self.prim(Prim::Var(ctx, pos_p), span);
            let op = self.prim(
                Prim::Op(
                    ctx,
                    Op::Proj {
                        index: i as u32 + 1,
                        tuple: p,
                    },
                ),
                span,
            );
            let drop = self.t.list(&[p]);
            let rest = self.t.list(&[a]);
            let proj = self.prim(Prim::Proj(ctx, drop, rest), span);
            let s1 = self.seq(var, op, false, span);
            let s2 = self.seq(s1, proj, false, span);
            acc = self.seq(acc, s2, false, span);
            ctx = self.t.snoc(ctx, a);
            env2 = env2.insert(x.clone(), self.t.len(ctx));
            hidden.push(a);
        }
        let t2 = self.expr(body, ctx, &env2)?;
        let s = self.seq(acc, t2, false, span);
        let h = self.hide(gamma, &hidden, b, span);
        Ok(self.seq(s, h, false, span))
    }

    fn prim_app(
        &mut self,
        e: ExprId,
        op: syntax::Prim,
        args: &[ExprId],
        gamma: CtxId,
        env: &Env,
        real: TyId,
    ) -> Result<TermId, Error> {
        use syntax::Prim as P;
        let span = self.m.spans[e.index()];
        let all_real =
            args.iter().all(|&a| *self.src_ty(a) == Ty::Real) && *self.src_ty(e) == Ty::Real;
        if op == P::WithRules {
            // UNF(p) ; custom ; proj: the point is the only operand,
            // the functions stay Source (closed, `syntax::rules`).
            if let Some(r) = syntax::rules::Rules::of(self.m, e) {
                r.rule(self.m, e, syntax::rules::Rule::Vjp)?;
            }
            let point = args[3];
            let t = self.expr(point, gamma, env)?;
            let arg = self.ty_of(point);
            let ret = self.ty_of(e);
            let p = self.prim(
                Prim::Custom {
                    ctx: gamma,
                    arg,
                    ret,
                    node: e,
                },
                span,
            );
            let s = self.seq(t, p, false, span);
            let h = self.hide(gamma, &[arg], ret, span);
            return Ok(self.seq(s, h, false, span));
        }
        if op.function_arg().is_none() && !((is_unary(op) || is_binary(op)) && all_real) {
            return self.builtin(e, op, args, gamma, env);
        }
        if is_unary(op) {
            let t = self.expr(args[0], gamma, env)?;
            let o = self.prim(Prim::Op(gamma, Op::Unary(op)), span);
            let s = self.seq(t, o, false, span);
            let h = self.hide(gamma, &[real], real, span);
            return Ok(self.seq(s, h, false, span));
        }
        if is_binary(op) {
            let (ops, _) = self.operands(args, gamma, env, span)?;
            let o = self.prim(Prim::Op(gamma, Op::Binary(op)), span);
            let s = self.seq(ops, o, false, span);
            let h = self.hide(gamma, &[real, real], real, span);
            return Ok(self.seq(s, h, false, span));
        }
        match op {
            P::Map | P::Map2 => {
                let arrays = &args[1..];
                let fun = self.fun(op, args[0], arrays.len(), env, gamma, false)?;
                let (ops, tys) = self.operands(arrays, gamma, env, span)?;
                let ret = self.ty_of(e);
                let map = self.prim(
                    Prim::Map {
                        ctx: gamma,
                        args: tys.clone(),
                        ret,
                        fun,
                    },
                    span,
                );
                let s = self.seq(ops, map, false, span);
                let h = self.hide(gamma, &tys, ret, span);
                Ok(self.seq(s, h, false, span))
            }
            P::Reduce if !self.paper_reduce(args) => {
                self.loop_(e, LoopKind::Reduce, args, gamma, env)
            }
            P::Foldl => self.loop_(e, LoopKind::Foldl, args, gamma, env),
            P::Scanl => self.loop_(e, LoopKind::Scanl, args, gamma, env),
            P::Scanr => self.loop_(e, LoopKind::Scanr, args, gamma, env),
            P::Ifold => self.loop_(e, LoopKind::Ifold, args, gamma, env),
            P::Build => self.loop_(e, LoopKind::Build, args, gamma, env),
            P::Trips => self.trips(e, args, gamma, env),
            P::Reduce => {
                // The paper's reduce (Section 3.1): a closed function of two
                // reals, a closed initial value, an array of reals.
                let fun = self.fun(op, args[0], 2, env, gamma, true)?;
                let init = self.expr(args[1], CtxId::EMPTY, &empty_env())?;
                let t = self.expr(args[2], gamma, env)?;
                let arg = self.ty_of(args[2]);
                let red = self.prim(
                    Prim::Reduce {
                        ctx: gamma,
                        arg,
                        fun,
                        init_expr: args[1],
                        init,
                    },
                    span,
                );
                let s = self.seq(t, red, false, span);
                let h = self.hide(gamma, &[arg], real, span);
                Ok(self.seq(s, h, false, span))
            }
            other => Err(unsupported(span, other.symbol())),
        }
    }

    /// Whether `reduce f z A` is in the paper's core (Section 3.1): `f` a
    /// closed lambda of two reals, `z` closed, `A` an array of reals. Such
    /// a reduce keeps the paper's primitive and its transposed Jacobian
    /// (Fig. 10); any other is differentiated as the left fold it is.
    fn paper_reduce(&mut self, args: &[ExprId]) -> bool {
        let closed_lambda = matches!(self.m.expr(args[0]), Expr::Lambda { params, .. }
            if params.iter().all(|p| p.ty.as_ref() == Some(&Ty::Real)))
            && self.free(args[0]).is_empty();
        let real_array = matches!(self.src_ty(args[2]), Ty::Array(_, elem) if **elem == Ty::Real);
        closed_lambda && real_array && self.free(args[1]).is_empty()
    }

    /// A second-order builtin other than map and the paper's reduce:
    /// `UNF(operands) ; loop ; proj`, the function lowered in the context
    /// of its free variables and its parameters.
    fn loop_(
        &mut self,
        e: ExprId,
        kind: LoopKind,
        args: &[ExprId],
        gamma: CtxId,
        env: &Env,
    ) -> Result<TermId, Error> {
        let span = self.m.spans[e.index()];
        let op = kind.prim();
        let f = args[op.function_arg().expect("invariant: loops take a function")];
        let arity = if kind == LoopKind::Build { 1 } else { 2 };
        let fun = self.fun(op, f, arity, env, gamma, false)?;
        let operands: Vec<ExprId> = args.iter().copied().filter(|&a| a != f).collect();
        let (ops, tys) = self.operands(&operands, gamma, env, span)?;
        let ret = self.ty_of(e);
        let p = self.prim(
            Prim::Loop {
                kind,
                ctx: gamma,
                args: tys.clone(),
                ret,
                fun,
            },
            span,
        );
        let s = self.seq(ops, p, false, span);
        let h = self.hide(gamma, &tys, ret, span);
        Ok(self.seq(s, h, false, span))
    }

    /// `trips c b z`: `UNF(z) ; trips ; proj`, the condition and the body
    /// lowered as functions of the state.
    fn trips(
        &mut self,
        e: ExprId,
        args: &[ExprId],
        gamma: CtxId,
        env: &Env,
    ) -> Result<TermId, Error> {
        let span = self.m.spans[e.index()];
        let op = syntax::Prim::Trips;
        let cond = self.fun(op, args[0], 1, env, gamma, false)?;
        let body = self.fun(op, args[1], 1, env, gamma, false)?;
        let (ops, tys) = self.operands(&args[2..], gamma, env, span)?;
        let int = self.t.ground(&Ty::Int);
        let p = self.prim(
            Prim::Trips {
                ctx: gamma,
                state: tys[0],
                cond,
                body,
            },
            span,
        );
        let s = self.seq(ops, p, false, span);
        let h = self.hide(gamma, &tys, int, span);
        Ok(self.seq(s, h, false, span))
    }

    /// A first-order builtin that is not a real operator ([`Op::Builtin`]):
    /// `UNF(operands) ; op ; proj`.
    fn builtin(
        &mut self,
        e: ExprId,
        op: syntax::Prim,
        args: &[ExprId],
        gamma: CtxId,
        env: &Env,
    ) -> Result<TermId, Error> {
        let span = self.m.spans[e.index()];
        let arg_tys: Vec<Ty> = args.iter().map(|&a| self.src_ty(a).clone()).collect();
        let ret_ty = self.src_ty(e).clone();
        if !builtin_fits(op, &arg_tys, &ret_ty) {
            let shown: Vec<String> = arg_tys.iter().map(crate::print::ground).collect();
            return Err(unsupported_with(
                span,
                op.symbol(),
                &format!(" on {}", shown.join(" and ")),
            ));
        }
        let (ops, tys) = self.operands(args, gamma, env, span)?;
        let list = self.t.list(&tys);
        let ret = self.ty_of(e);
        let o = self.prim(
            Prim::Op(
                gamma,
                Op::Builtin {
                    op,
                    args: list,
                    ret,
                },
            ),
            span,
        );
        let s = self.seq(ops, o, false, span);
        let h = self.hide(gamma, &tys, ret, span);
        Ok(self.seq(s, h, false, span))
    }

    /// The function index of map, map2 and reduce: the lambda's body lowered
    /// in `F·P`, F the types of its free variables (in context order), P its
    /// parameters' types.
    fn fun(
        &mut self,
        op: syntax::Prim,
        f: ExprId,
        arity: usize,
        env: &Env,
        gamma: CtxId,
        closed: bool,
    ) -> Result<Fun, Error> {
        let span = self.m.spans[f.index()];
        let Expr::Lambda { params, body } = self.m.expr(f) else {
            return Err(unsupported_with(
                span,
                op.symbol(),
                " whose function is not a lambda",
            ));
        };
        if params.len() != arity {
            return Err(Error::Shape {
                span,
                message: format!(
                    "a function of {} parameters where {arity} are taken",
                    params.len()
                ),
            });
        }
        let mut param_tys = Vec::with_capacity(params.len());
        for p in params {
            match &p.ty {
                Some(ty) if ty.is_ground() => param_tys.push(ty.clone()),
                _ => {
                    return Err(unsupported_with(
                        span,
                        op.symbol(),
                        " whose function takes a function",
                    ));
                }
            }
        }
        if !self.src_ty(*body).is_ground() {
            return Err(unsupported_with(
                span,
                op.symbol(),
                " whose function returns a function",
            ));
        }
        let (free, mut ctx, mut inner) = self.free_context(f, env, gamma, span)?;
        if closed && !free.is_empty() {
            return Err(Error::Shape {
                span,
                message: "the paper's reduce with a free variable in its function".to_string(),
            });
        }
        for (p, ty) in params.iter().zip(&param_tys) {
            let t = self.t.ground(ty);
            ctx = self.t.snoc(ctx, t);
            inner = inner.insert(p.name.clone(), self.t.len(ctx));
        }
        let body = self.expr(*body, ctx, &inner)?;
        Ok(Fun {
            lambda: f,
            free,
            body,
        })
    }
}
