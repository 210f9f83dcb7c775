//! The typing of each primitive (checklist steps 3 and 4 for `Prim`
//! terms): the contexts a primitive reads and writes, its operand and
//! result types, and its function's body (`Fun`), as `ir.rs` gives them.

use super::{Checker, builtin_fits, d_with, is_binary, is_unary, rho_of, same_shape, show};
use crate::error::Loc;
use crate::ir::{CtxId, Fun, LoopKind, Op, Prim, TermId, TyId};
use syntax::{Expr, Span, Ty};

impl Checker<'_> {
    pub(super) fn ctx_ok(&mut self, at: Loc, span: Span, c: CtxId) -> bool {
        if self.t.has_ctx(c) {
            true
        } else {
            self.err(at, span, format!("context {c} does not exist"));
            false
        }
    }

    pub(super) fn ground(&mut self, at: Loc, span: Span, t: TyId) -> Option<Ty> {
        if !self.t.has_ty(t) {
            self.err(at, span, format!("type {t} does not exist"));
            return None;
        }
        match self.t.ground_ty(t) {
            Some(ty) => Some(ty.clone()),
            None => {
                self.err(at, span, format!("type {t} is not ground"));
                None
            }
        }
    }

    pub(super) fn real_array(&mut self, at: Loc, span: Span, t: TyId) -> bool {
        match self.ground(at, span, t) {
            Some(Ty::Array(_, elem)) if *elem == Ty::Real => true,
            Some(_) => {
                self.err(at, span, format!("type {t} is not an array of reals"));
                false
            }
            None => false,
        }
    }

    /// The input and output contexts of a primitive (of its J^T reversed).
    pub(super) fn prim(&mut self, id: TermId, p: &Prim, jt: bool) -> Option<(CtxId, CtxId)> {
        let span = self.m.spans[id.index()];
        let at = Loc::Term(id);
        let real = self.real;
        match p {
            Prim::Var(ctx, index) => {
                if !self.ctx_ok(at, span, *ctx) {
                    return None;
                }
                let Some(a) = self.t.entry(*ctx, *index) else {
                    self.err(
                        at,
                        span,
                        format!(
                            "var index {index} outside a context of length {}",
                            self.t.len(*ctx)
                        ),
                    );
                    return None;
                };
                Some((*ctx, self.t.snoc(*ctx, a)))
            }
            Prim::Op(ctx, op) => {
                if !self.ctx_ok(at, span, *ctx) {
                    return None;
                }
                let (args, res): (Vec<TyId>, TyId) = match op {
                    Op::Const(_) => (vec![], real),
                    Op::Reals { node, ty } => (vec![], self.reals(at, span, *node, *ty)?),
                    Op::Unary(o) if is_unary(*o) => (vec![real], real),
                    Op::Binary(o) if is_binary(*o) => (vec![real, real], real),
                    Op::Unary(o) | Op::Binary(o) => {
                        self.err(at, span, format!("`{o}` is not an operator of this arity"));
                        return None;
                    }
                    Op::Int(_) => (vec![], self.t.ground(&Ty::Int)),
                    Op::Bool(_) => (vec![], self.t.ground(&Ty::Bool)),
                    Op::Builtin { op, args, ret } => {
                        if !self.ctx_ok(at, span, *args) {
                            return None;
                        }
                        let arg_ids = self.t.entries(*args);
                        let mut tys = Vec::new();
                        for &a in &arg_ids {
                            tys.push(self.ground(at, span, a)?);
                        }
                        let r = self.ground(at, span, *ret)?;
                        if !builtin_fits(*op, &tys, &r) {
                            self.err(at, span, format!("`{op}` does not apply to these types"));
                            return None;
                        }
                        (arg_ids, *ret)
                    }
                    Op::Index { array } => {
                        let elem = self.array_elem(at, span, *array)?;
                        let int = self.t.ground(&Ty::Int);
                        (vec![*array, int], self.t.ground(&elem))
                    }
                    Op::Proj { index, tuple } => match self.ground(at, span, *tuple) {
                        Some(Ty::Tuple(items))
                            if *index >= 1 && (*index as usize) <= items.len() =>
                        {
                            let res = self.t.ground(&items[*index as usize - 1]);
                            (vec![*tuple], res)
                        }
                        Some(_) => {
                            self.err(
                                at,
                                span,
                                format!("π_{index} of type {tuple}, which has no such component"),
                            );
                            return None;
                        }
                        None => return None,
                    },
                };
                let input = args.iter().fold(*ctx, |c, &a| self.t.snoc(c, a));
                Some((input, self.t.snoc(input, res)))
            }
            Prim::Pair(ctx, ty) => {
                if !self.ctx_ok(at, span, *ctx) {
                    return None;
                }
                let Some(Ty::Tuple(items)) = self.ground(at, span, *ty) else {
                    self.err(at, span, format!("pair of type {ty}, which is not a tuple"));
                    return None;
                };
                if items.len() == 1 {
                    self.err(at, span, "pair of one component");
                    return None;
                }
                let input = items.iter().fold(*ctx, |c, it| {
                    let t = self.t.ground(it);
                    self.t.snoc(c, t)
                });
                Some((input, self.t.snoc(*ctx, *ty)))
            }
            Prim::Proj(keep, drop, rest) => {
                if !(self.ctx_ok(at, span, *keep)
                    && self.ctx_ok(at, span, *drop)
                    && self.ctx_ok(at, span, *rest))
                {
                    return None;
                }
                let kd = self.t.append(*keep, *drop);
                let input = self.t.append(kd, *rest);
                Some((input, self.t.append(*keep, *rest)))
            }
            Prim::Map {
                ctx,
                args,
                ret,
                fun,
            } => {
                if !self.ctx_ok(at, span, *ctx) {
                    return None;
                }
                if args.is_empty() || args.len() > 2 {
                    self.err(at, span, format!("map over {} arrays", args.len()));
                    return None;
                }
                let mut elems = Vec::new();
                for &a in args {
                    elems.push(self.array_elem(at, span, a)?);
                }
                let out = self.array_elem(at, span, *ret)?;
                if !self.fun(at, span, *ctx, fun, &elems, &out, jt) {
                    return None;
                }
                let input = args.iter().fold(*ctx, |c, &a| self.t.snoc(c, a));
                Some((input, self.t.snoc(input, *ret)))
            }
            Prim::Reduce {
                ctx,
                arg,
                fun,
                init_expr,
                init,
            } => {
                if !self.ctx_ok(at, span, *ctx) {
                    return None;
                }
                let mut ok = self.real_array(at, span, *arg);
                if !fun.free.is_empty() {
                    self.err(at, span, "the function of reduce has free variables");
                    ok = false;
                }
                ok &= self.fun(at, span, *ctx, fun, &[Ty::Real, Ty::Real], &Ty::Real, jt);
                if init_expr.index() >= self.m.source.exprs.len() {
                    self.err(
                        at,
                        span,
                        format!("initial value {init_expr} does not exist"),
                    );
                    ok = false;
                }
                let ii = self.info[init.index()];
                if ii.target_only {
                    self.err(at, span, "the initial value of reduce is not Source UNF");
                    ok = false;
                }
                let real_list = self.t.snoc(CtxId::EMPTY, real);
                if ii.io.is_some() && ii.io != Some((CtxId::EMPTY, real_list)) {
                    self.err(
                        at,
                        span,
                        "the initial value of reduce is not `[] ⊢ init : [R]`",
                    );
                    ok = false;
                }
                if !ok || ii.io.is_none() {
                    return None;
                }
                let input = self.t.snoc(*ctx, *arg);
                Some((input, self.t.snoc(input, real)))
            }
            Prim::Array { ctx, ty, len } => {
                if !self.ctx_ok(at, span, *ctx) {
                    return None;
                }
                let elem = self.array_elem(at, span, *ty)?;
                let e = self.t.ground(&elem);
                let input = (0..*len).fold(*ctx, |c, _| self.t.snoc(c, e));
                Some((input, self.t.snoc(*ctx, *ty)))
            }
            Prim::Custom {
                ctx,
                arg,
                ret,
                node,
            } => {
                if !self.ctx_ok(at, span, *ctx) {
                    return None;
                }
                let a = self.ground(at, span, *arg)?;
                let r = self.ground(at, span, *ret)?;
                let src = &self.m.source;
                let Some(rules) = (node.index() < src.exprs.len())
                    .then(|| syntax::rules::Rules::of(src, *node))
                    .flatten()
                else {
                    self.err(
                        at,
                        span,
                        format!("`custom` names {node}, not a with_rules node"),
                    );
                    return None;
                };
                let (stored_p, stored_u) = (src.ty(rules.point), src.ty(*node));
                if stored_p != Some(&a) || stored_u != Some(&r) {
                    self.err(
                        at,
                        span,
                        format!("`custom` is typed {a:?} to {r:?}, its Source node otherwise"),
                    );
                    return None;
                }
                if rules.vjp.is_none() {
                    self.err(at, span, "`custom` of a function with no vjp rule");
                    return None;
                }
                let input = self.t.snoc(*ctx, *arg);
                Some((input, self.t.snoc(input, *ret)))
            }
            Prim::If {
                ctx,
                ret,
                then_fun,
                else_fun,
            } => {
                if !self.ctx_ok(at, span, *ctx) {
                    return None;
                }
                let c = self.ground(at, span, *ret)?;
                let ok = self.fun(at, span, *ctx, then_fun, &[], &c, jt)
                    & self.fun(at, span, *ctx, else_fun, &[], &c, jt);
                if !ok {
                    return None;
                }
                let b = self.t.ground(&Ty::Bool);
                let input = self.t.snoc(*ctx, b);
                Some((input, self.t.snoc(input, *ret)))
            }
            Prim::Loop {
                kind,
                ctx,
                args,
                ret,
                fun,
            } => {
                if !self.ctx_ok(at, span, *ctx) {
                    return None;
                }
                if args.len() != kind.operands() {
                    self.err(
                        at,
                        span,
                        format!("`{}` with {} operands", kind.prim(), args.len()),
                    );
                    return None;
                }
                let mut tys = Vec::new();
                for &a in args {
                    tys.push(self.ground(at, span, a)?);
                }
                let r = self.ground(at, span, *ret)?;
                let (params, res) = self.loop_signature(at, span, *kind, &tys, &r)?;
                if !self.fun(at, span, *ctx, fun, &params, &res, jt) {
                    return None;
                }
                let input = args.iter().fold(*ctx, |c, &a| self.t.snoc(c, a));
                Some((input, self.t.snoc(input, *ret)))
            }
            Prim::Trips {
                ctx,
                state,
                cond,
                body,
            } => {
                if !self.ctx_ok(at, span, *ctx) {
                    return None;
                }
                let s = self.ground(at, span, *state)?;
                // The count's functions stay primal in its J^T (zero).
                let ok = self.fun(
                    at,
                    span,
                    *ctx,
                    cond,
                    std::slice::from_ref(&s),
                    &Ty::Bool,
                    false,
                ) & self.fun(at, span, *ctx, body, std::slice::from_ref(&s), &s, false);
                if !ok {
                    return None;
                }
                let int = self.t.ground(&Ty::Int);
                let input = self.t.snoc(*ctx, *state);
                Some((input, self.t.snoc(input, int)))
            }
        }
    }

    /// The parameter and result types of the function of a loop, from its
    /// operand and result types; an error if these do not fit the kind.
    pub(super) fn loop_signature(
        &mut self,
        at: Loc,
        span: Span,
        kind: LoopKind,
        args: &[Ty],
        ret: &Ty,
    ) -> Option<(Vec<Ty>, Ty)> {
        let elem = |t: &Ty| match t {
            Ty::Array(_, e) => Some((**e).clone()),
            _ => None,
        };
        let sig = match kind {
            LoopKind::Reduce | LoopKind::Foldl => {
                let e = elem(&args[1]);
                match e {
                    Some(e)
                        if same_shape(&args[0], ret)
                            && (kind == LoopKind::Foldl || same_shape(&e, ret)) =>
                    {
                        Some((vec![args[0].clone(), e], args[0].clone()))
                    }
                    _ => None,
                }
            }
            LoopKind::Scanl | LoopKind::Scanr => match (elem(&args[1]), elem(ret)) {
                (Some(e), Some(r)) if same_shape(&r, &args[0]) => {
                    let params = if kind == LoopKind::Scanl {
                        vec![args[0].clone(), e]
                    } else {
                        vec![e, args[0].clone()]
                    };
                    Some((params, args[0].clone()))
                }
                _ => None,
            },
            LoopKind::Ifold if args[1] == Ty::Int && same_shape(&args[0], ret) => {
                Some((vec![args[0].clone(), Ty::Int], args[0].clone()))
            }
            LoopKind::Build if args[0] == Ty::Int => elem(ret).map(|e| (vec![Ty::Int], e)),
            LoopKind::Ifold | LoopKind::Build => None,
        };
        if sig.is_none() {
            self.err(
                at,
                span,
                format!(
                    "`{}` of operands and result that do not fit it",
                    kind.prim()
                ),
            );
        }
        sig
    }

    /// The element type of an array type.
    pub(super) fn array_elem(&mut self, at: Loc, span: Span, t: TyId) -> Option<Ty> {
        match self.ground(at, span, t)? {
            Ty::Array(_, elem) => Some(Ty::clone(&elem)),
            _ => {
                self.err(at, span, format!("type {t} is not an array"));
                None
            }
        }
    }

    /// The type of `reals` naming `node`: the node is an array literal of
    /// reals in the Source module, its shape and numbers agree, and `ty` is
    /// its type.
    fn reals(&mut self, at: Loc, span: Span, node: syntax::ExprId, ty: TyId) -> Option<TyId> {
        let declared = self.ground(at, span, ty)?;
        let Some(Expr::Reals(literal)) = self.m.source.exprs.get(node.index()) else {
            self.err(
                at,
                span,
                format!("`reals` names {node}, not an array literal of reals"),
            );
            return None;
        };
        if !literal.is_well_formed() {
            // No dimension, an empty one, or a product of the sizes that is
            // not the count of numbers (a damaged file's may overflow).
            let total = (literal.shape.iter()).try_fold(1u128, |a, &n| a.checked_mul(n.into()));
            let wants = match total {
                _ if literal.shape.is_empty() => "a literal has a dimension".to_string(),
                Some(0) => "no dimension may be empty".to_string(),
                Some(t) => format!("its shape needs {t}"),
                None => "its shape needs more than any array holds".to_string(),
            };
            self.err(
                at,
                span,
                format!(
                    "the literal {node} has shape {:?} and {} numbers: {wants}",
                    literal.shape,
                    literal.data.len()
                ),
            );
            return None;
        }
        if literal.ty() != declared {
            let (want, got) = (show(&literal.ty()), show(&declared));
            self.err(
                at,
                span,
                format!("`reals` is typed {got}, its literal {node} is {want}"),
            );
            return None;
        }
        Some(ty)
    }

    /// Checks a function index: the lambda (or, with no parameters, the
    /// branch expression), the free positions, the body. `params` and `res`
    /// are the parameter and result types the primitive needs; the body is
    /// typed with the lambda's own (the same up to array sizes).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn fun(
        &mut self,
        at: Loc,
        span: Span,
        ctx: CtxId,
        fun: &Fun,
        params: &[Ty],
        res: &Ty,
        jt: bool,
    ) -> bool {
        let m = self.m;
        let Some(expr) = m.source.exprs.get(fun.lambda.index()) else {
            self.err(at, span, format!("function {} does not exist", fun.lambda));
            return false;
        };
        let (declared, body_expr): (Vec<Ty>, syntax::ExprId) = if params.is_empty() {
            (Vec::new(), fun.lambda)
        } else {
            let Expr::Lambda { params: ps, body } = expr else {
                self.err(at, span, format!("{} is not a lambda", fun.lambda));
                return false;
            };
            if ps.len() != params.len() {
                self.err(
                    at,
                    span,
                    format!(
                        "a function of {} parameters where {} are taken",
                        ps.len(),
                        params.len()
                    ),
                );
                return false;
            }
            let mut declared = Vec::new();
            for (p, want) in ps.iter().zip(params) {
                match &p.ty {
                    Some(ty) if same_shape(ty, want) => declared.push(ty.clone()),
                    _ => {
                        self.err(
                            at,
                            span,
                            format!("parameter `{}` is not of type {}", p.name, show(want)),
                        );
                        return false;
                    }
                }
            }
            (declared, *body)
        };
        let result = match m.source.types.get(body_expr.index()) {
            Some(ty) if same_shape(ty, res) => ty.clone(),
            _ => {
                self.err(
                    at,
                    span,
                    format!("the function does not return {}", show(res)),
                );
                return false;
            }
        };
        let mut body_ctx = CtxId::EMPTY;
        let mut last = 0;
        for &f in &fun.free {
            if f <= last {
                self.err(at, span, "free positions are not increasing");
                return false;
            }
            last = f;
            let Some(t) = self.t.entry(ctx, f) else {
                self.err(at, span, format!("free position {f} outside the context"));
                return false;
            };
            if self.t.ground_ty(t).is_none() {
                self.err(at, span, format!("free position {f} is not of ground type"));
                return false;
            }
            body_ctx = self.t.snoc(body_ctx, t);
        }
        for ty in &declared {
            let t = self.t.ground(ty);
            body_ctx = self.t.snoc(body_ctx, t);
        }
        let r = self.t.ground(&result);
        let body_out = self.t.snoc(body_ctx, r);
        let bi = self.info[fun.body.index()];
        let Some(io) = bi.io else { return false };
        let want = if jt {
            if bi.req.is_some() {
                self.err(at, span, "the body's derivative holds a J^T outside a `∘`");
                return false;
            }
            let entries = self.t.entries(body_ctx);
            let Some(rho) = rho_of(&mut self.t, &entries) else {
                return false;
            };
            (
                d_with(&mut self.t, body_ctx, rho),
                d_with(&mut self.t, body_out, rho),
            )
        } else {
            if bi.target_only {
                self.err(at, span, "the body of a primitive is not Source UNF");
                return false;
            }
            (body_ctx, body_out)
        };
        if io != want {
            self.err(
                at,
                span,
                format!(
                    "the body maps {} to {}, but {} to {} is expected",
                    io.0, io.1, want.0, want.1
                ),
            );
            return false;
        }
        true
    }
}
