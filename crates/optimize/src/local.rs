//! The local rules: rewrites of one freshly built node whose children are
//! already simplified (algebra, constant folding, tuple projections,
//! conditionals, the array identities and map fusion).
//!
//! Each rule looks at the node and at most a few levels of children, plus
//! the facts recorded about `let`-bound arrays, so firing one costs O(1)
//! apart from `map2-unused` (a scan of the lambda body) and `if-same` (a
//! comparison of the branches). A rule that needs a binding inside a
//! lambda body it builds writes a `let` (`map (x. let y = c in e) A`) and
//! leaves the substitution to the next round, so that no tree is walked
//! twice in one round.
//!
//! The rules are stated over the reals. Two of them are not IEEE-exact:
//! `0 * e ~> 0` when `e` is infinite or NaN, and the array rules that drop
//! an array whose length would have been checked (`map2` of arrays of
//! different lengths is a run-time error that the rewritten program no
//! longer raises). See docs/optimize.md.

use std::collections::HashMap;

use crate::hash::FxHashSet;

use syntax::{Expr, ExprId, Module, Name, Param, Pat, Prim, Size, Span, Ty, stack};

use crate::rules::RuleName;
use crate::simplify::{Fact, Round};

/// A literal scalar.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Lit {
    Real(f64),
    Int(i64),
    Bool(bool),
}

/// Where the length of a constant array comes from.
#[derive(Debug, Clone)]
pub(crate) enum Over {
    /// An output node, used at most once more.
    Node(ExprId),
    /// A variable, copied as needed.
    Var(Name, Ty),
}

impl Round<'_> {
    /// Applies local rules at `id` until none fires (bounded).
    pub(crate) fn rewrite(&mut self, mut id: ExprId) -> ExprId {
        for _ in 0..16 {
            match self.rewrite_once(id) {
                Some(next) => id = next,
                None => break,
            }
        }
        id
    }

    fn rewrite_once(&mut self, id: ExprId) -> Option<ExprId> {
        let Expr::Prim { op, args } = self.node(id) else {
            return None;
        };
        let res = match op {
            Prim::Add | Prim::Sub | Prim::Mul | Prim::Div | Prim::Neg => self
                .const_fold(id, op, &args)
                .or_else(|| self.algebra(id, op, &args)),
            Prim::Map => self.map_rules(id, &args),
            Prim::Map2 => self.map2_rules(id, &args),
            Prim::Reduce | Prim::Foldl => self.reduce_const(&args),
            Prim::Shift1L | Prim::Shift1R => self
                .scan_const(id, &args)
                .or_else(|| self.shift_const(id, op, &args)),
            _ => self.const_fold(id, op, &args),
        };
        res.or_else(|| self.if_float_prim(id, op, &args))
    }

    fn lit(&self, id: ExprId) -> Option<Lit> {
        match self.m.expr(id) {
            Expr::Real(x) => Some(Lit::Real(*x)),
            Expr::Int(x) => Some(Lit::Int(*x)),
            Expr::Bool(b) => Some(Lit::Bool(*b)),
            _ => None,
        }
    }

    fn is_zero(&self, id: ExprId) -> bool {
        matches!(self.lit(id), Some(Lit::Real(x)) if x == 0.0) || self.lit(id) == Some(Lit::Int(0))
    }

    fn is_one(&self, id: ExprId) -> bool {
        self.lit(id) == Some(Lit::Real(1.0)) || self.lit(id) == Some(Lit::Int(1))
    }

    // ----- algebra -----------------------------------------------------

    fn algebra(&mut self, id: ExprId, op: Prim, args: &[ExprId]) -> Option<ExprId> {
        use RuleName::*;
        match (op, args) {
            (Prim::Mul, &[a, b]) => {
                if self.on(ZeroMul) && self.is_zero(a) {
                    self.fire(ZeroMul);
                    return Some(a);
                }
                if self.on(ZeroMul) && self.is_zero(b) {
                    self.fire(ZeroMul);
                    return Some(b);
                }
                if self.on(OneMul) && self.is_one(a) {
                    self.fire(OneMul);
                    return Some(b);
                }
                if self.on(OneMul) && self.is_one(b) {
                    self.fire(OneMul);
                    return Some(a);
                }
                None
            }
            (Prim::Add, &[a, b]) if self.on(ZeroAdd) => {
                if self.is_zero(a) {
                    self.fire(ZeroAdd);
                    return Some(b);
                }
                if self.is_zero(b) {
                    self.fire(ZeroAdd);
                    return Some(a);
                }
                None
            }
            (Prim::Sub, &[a, b]) if self.on(ZeroAdd) => {
                if self.is_zero(b) {
                    self.fire(ZeroAdd);
                    return Some(a);
                }
                if self.is_zero(a) {
                    self.fire(ZeroAdd);
                    let (ty, span) = (self.ty(id), self.m.span(id));
                    let neg = self.add(
                        Expr::Prim {
                            op: Prim::Neg,
                            args: vec![b],
                        },
                        ty,
                        span,
                    );
                    return Some(neg);
                }
                None
            }
            (Prim::Div, &[a, b]) if self.on(OneMul) && self.is_one(b) => {
                self.fire(OneMul);
                Some(a)
            }
            (Prim::Neg, &[a]) if self.on(NegNeg) => match self.node(a) {
                Expr::Prim {
                    op: Prim::Neg,
                    args,
                } => {
                    self.fire(NegNeg);
                    Some(args[0])
                }
                _ => None,
            },
            _ => None,
        }
    }

    fn const_fold(&mut self, id: ExprId, op: Prim, args: &[ExprId]) -> Option<ExprId> {
        if !self.on(RuleName::ConstFold) || op.function_arg().is_some() {
            return None;
        }
        let lits: Option<Vec<Lit>> = args.iter().map(|&a| self.lit(a)).collect();
        let value = fold(op, &lits?)?;
        self.fire(RuleName::ConstFold);
        let (ty, span) = (self.ty(id), self.m.span(id));
        let e = match value {
            Lit::Real(x) => Expr::Real(x),
            Lit::Int(x) => Expr::Int(x),
            Lit::Bool(b) => Expr::Bool(b),
        };
        Some(self.add(e, ty, span))
    }

    // ----- tuples and conditionals -------------------------------------

    /// `t.index` for a simplified `t`.
    pub(crate) fn proj_node(&mut self, t: ExprId, index: u32, span: Span, ty: Ty) -> ExprId {
        match self.node(t) {
            Expr::Tuple(items) if self.on(RuleName::ProjTuple) => {
                if let Some(&item) = items.get(index as usize - 1) {
                    self.fire(RuleName::ProjTuple);
                    return item;
                }
            }
            Expr::If {
                cond,
                then_branch,
                else_branch,
            } if self.on(RuleName::IfFloat)
                && (matches!(self.m.expr(then_branch), Expr::Tuple(_))
                    || matches!(self.m.expr(else_branch), Expr::Tuple(_))) =>
            {
                self.fire(RuleName::IfFloat);
                let a = self.proj_node(then_branch, index, span, ty.clone());
                let b = self.proj_node(else_branch, index, span, ty.clone());
                return self.if_node(cond, a, b, span, ty);
            }
            _ => {}
        }
        self.add(Expr::Proj { tuple: t, index }, ty, span)
    }

    /// `if c then a else b` for simplified parts.
    pub(crate) fn if_node(
        &mut self,
        c: ExprId,
        a: ExprId,
        b: ExprId,
        span: Span,
        ty: Ty,
    ) -> ExprId {
        if let Some(Lit::Bool(v)) = self.lit(c)
            && self.on(RuleName::IfConst)
        {
            self.fire(RuleName::IfConst);
            return if v { a } else { b };
        }
        if self.on(RuleName::IfSame) && self.alpha_eq(a, b, &mut HashMap::new()) {
            self.fire(RuleName::IfSame);
            return a;
        }
        if self.on(RuleName::IfTuple) && self.leaf(c).is_some() && self.splits_tuple(a, b) {
            self.fire(RuleName::IfTuple);
            return self.if_tuple(c, a, b, span, ty);
        }
        self.add(
            Expr::If {
                cond: c,
                then_branch: a,
                else_branch: b,
            },
            ty,
            span,
        )
    }

    /// A branch as the `let`s it starts with and the tuple it ends in.
    fn branch_tuple(&self, id: ExprId) -> Option<(Vec<ExprId>, Vec<ExprId>)> {
        let mut lets = Vec::new();
        let mut cur = id;
        while let Expr::Let { body, .. } = self.m.expr(cur) {
            lets.push(cur);
            cur = *body;
        }
        match self.m.expr(cur) {
            Expr::Tuple(items) => Some((lets, items.clone())),
            _ => None,
        }
    }

    /// Whether `if _ then a else b` is split by `if-tuple`: both branches
    /// (after their `let`s) tuples of one length, some component a
    /// function, and no function component using a branch's `let`s.
    pub(crate) fn splits_tuple(&self, a: ExprId, b: ExprId) -> bool {
        let (Some((la, xs)), Some((lb, ys))) = (self.branch_tuple(a), self.branch_tuple(b)) else {
            return false;
        };
        if xs.len() != ys.len() || xs.iter().all(|&x| self.ty(x).is_ground()) {
            return false;
        }
        let (na, nb) = (self.binders(&la), self.binders(&lb));
        xs.iter().zip(&ys).all(|(&x, &y)| {
            self.ty(x).is_ground() || (!self.uses_any(x, &na) && !self.uses_any(y, &nb))
        })
    }

    /// The names the `let` nodes `lets` bind.
    fn binders(&self, lets: &[ExprId]) -> FxHashSet<Name> {
        let mut out = FxHashSet::default();
        for &l in lets {
            match self.m.expr(l) {
                Expr::Let {
                    pat: Pat::Var(x), ..
                } => {
                    out.insert(x.clone());
                }
                Expr::Let {
                    pat: Pat::Tuple(xs),
                    ..
                } => out.extend(xs.iter().cloned()),
                _ => {}
            }
        }
        out
    }

    /// Whether a variable of `names` occurs under `id`.
    fn uses_any(&self, id: ExprId, names: &FxHashSet<Name>) -> bool {
        if names.is_empty() {
            return false;
        }
        let mut stack = vec![id];
        while let Some(i) = stack.pop() {
            if matches!(self.m.expr(i), Expr::Var(v) if names.contains(v)) {
                return true;
            }
            self.m.expr(i).for_each_child(|c| stack.push(c));
        }
        false
    }

    /// `if-tuple` on branches `splits_tuple` accepted: the function
    /// components become conditionals of their own; the ground ones stay
    /// under one conditional with the branches' `let`s, bound to a fresh
    /// name and projected.
    fn if_tuple(&mut self, c: ExprId, a: ExprId, b: ExprId, span: Span, ty: Ty) -> ExprId {
        let ((la, xs), (lb, ys)) = match (self.branch_tuple(a), self.branch_tuple(b)) {
            (Some(pa), Some(pb)) => (pa, pb),
            _ => unreachable!("invariant: splits_tuple checked the branches"),
        };
        let ground: Vec<usize> = (0..xs.len())
            .filter(|&i| self.ty(xs[i]).is_ground())
            .collect();
        // The ground components under the branches' own `let`s.
        let part = |r: &mut Self, items: &[ExprId], lets: &[ExprId]| -> ExprId {
            let mut tail = match ground.as_slice() {
                [i] => items[*i],
                _ => {
                    let its: Vec<ExprId> = ground.iter().map(|&i| items[i]).collect();
                    let tys = its.iter().map(|&i| r.ty(i)).collect();
                    r.add(Expr::Tuple(its), Ty::Tuple(tys), span)
                }
            };
            for &l in lets.iter().rev() {
                if let Expr::Let {
                    pat,
                    ty: ann,
                    value,
                    ..
                } = r.node(l)
                {
                    let t = r.ty(tail);
                    tail = r.add(
                        Expr::Let {
                            pat,
                            ty: ann,
                            value,
                            body: tail,
                        },
                        t,
                        span,
                    );
                }
            }
            tail
        };
        let shared = if ground.is_empty() {
            None
        } else {
            let ga = part(self, &xs, &la);
            let gb = part(self, &ys, &lb);
            let gty = self.ty(ga);
            let g = self.if_node(c, ga, gb, span, gty.clone());
            Some((self.fresh("r"), g, gty))
        };
        let mut items = Vec::with_capacity(xs.len());
        for (i, (&x, &y)) in xs.iter().zip(&ys).enumerate() {
            let t = self.ty(x);
            let item = match (&shared, ground.iter().position(|&g| g == i)) {
                (Some((r, _, gty)), Some(j)) => {
                    let var = self.add(Expr::Var(r.clone()), gty.clone(), span);
                    if ground.len() == 1 {
                        var
                    } else {
                        self.add(
                            Expr::Proj {
                                tuple: var,
                                index: j as u32 + 1,
                            },
                            t,
                            span,
                        )
                    }
                }
                _ => {
                    let ci = self.copy_leaf(c);
                    self.if_node(ci, x, y, span, t)
                }
            };
            items.push(item);
        }
        let tuple = self.add(Expr::Tuple(items), ty.clone(), span);
        match shared {
            Some((r, g, _)) => self.add(
                Expr::Let {
                    pat: Pat::Var(r),
                    ty: None,
                    value: g,
                    body: tuple,
                },
                ty,
                span,
            ),
            None => tuple,
        }
    }

    /// `op(.., if c then a else b, ..) ~> if c then op(.., a, ..) else op(.., b, ..)`
    /// when the other arguments are leaves and a branch simplifies.
    fn if_float_prim(&mut self, id: ExprId, op: Prim, args: &[ExprId]) -> Option<ExprId> {
        if !self.on(RuleName::IfFloat) || op.function_arg().is_some() {
            return None;
        }
        let j = args
            .iter()
            .position(|&a| matches!(self.m.expr(a), Expr::If { .. }))?;
        if args
            .iter()
            .enumerate()
            .any(|(i, &a)| i != j && self.leaf(a).is_none())
        {
            return None;
        }
        let Expr::If {
            cond,
            then_branch,
            else_branch,
        } = self.node(args[j])
        else {
            return None;
        };
        let (ty, span) = (self.ty(id), self.m.span(id));
        let fired_before = self.fired.clone();
        let mut left = args.to_vec();
        left[j] = then_branch;
        let mut right: Vec<ExprId> = args
            .iter()
            .map(|&a| if a == args[j] { a } else { self.copy_leaf(a) })
            .collect();
        right[j] = else_branch;
        let pa = self.add(Expr::Prim { op, args: left }, ty.clone(), span);
        let pb = self.add(Expr::Prim { op, args: right }, ty.clone(), span);
        let ra = self.rewrite(pa);
        let rb = self.rewrite(pb);
        if ra == pa && rb == pb {
            // Nothing gained: keep the original node (the copies are garbage).
            self.fired = fired_before;
            return None;
        }
        self.fire(RuleName::IfFloat);
        Some(self.add(
            Expr::If {
                cond,
                then_branch: ra,
                else_branch: rb,
            },
            ty,
            span,
        ))
    }

    // ----- arrays ------------------------------------------------------

    /// The lambda `id` as (parameters, body).
    /// Whether `body` is the parameter `p` itself, or the tuple of all
    /// its components in order, `(p.1, ..., p.n)`.
    fn is_identity(&self, body: ExprId, p: &Param) -> bool {
        let is_p = |id: ExprId| matches!(self.m.expr(id), Expr::Var(v) if *v == p.name);
        if is_p(body) {
            return true;
        }
        let (Expr::Tuple(items), Some(Ty::Tuple(parts))) = (self.m.expr(body), &p.ty) else {
            return false;
        };
        items.len() == parts.len()
            && items.iter().enumerate().all(|(i, &item)| {
                matches!(self.m.expr(item), Expr::Proj { tuple, index }
                    if *index as usize == i + 1 && is_p(*tuple))
            })
    }

    fn lambda_parts(&self, id: ExprId) -> Option<(Vec<Param>, ExprId)> {
        match self.m.expr(id) {
            Expr::Lambda { params, body } => Some((params.clone(), *body)),
            _ => None,
        }
    }

    /// `id` is a constant array `map (fun _ -> c) B`: (c, its type, B).
    pub(crate) fn const_array(&self, id: ExprId) -> Option<(Expr, Ty, Over)> {
        match self.m.expr(id) {
            Expr::Prim {
                op: Prim::Map,
                args,
            } => {
                let (params, body) = self.lambda_parts(args[0])?;
                if params.len() != 1 {
                    return None;
                }
                let (c, t) = self.leaf(body)?;
                if matches!(c, Expr::Var(_)) {
                    return None;
                }
                Some((c, t, Over::Node(args[1])))
            }
            Expr::Var(v) => {
                let fact = self.facts.get(v)?;
                let (c, t) = fact.const_elem.clone()?;
                let (src, st) = fact.size_src.clone()?;
                Some((c, t, Over::Var(src, st)))
            }
            _ => None,
        }
    }

    /// A cheaper array with the length of `id`, when one is known.
    pub(crate) fn size_src(&self, id: ExprId) -> Option<Over> {
        stack::guard(|| match self.m.expr(id) {
            Expr::Prim {
                op: Prim::Map | Prim::Map2,
                args,
            } => Some(self.size_src(args[1]).unwrap_or(Over::Node(args[1]))),
            Expr::Prim {
                op: Prim::Shift1L | Prim::Shift1R,
                args,
            } => match self.m.expr(args[0]) {
                Expr::Prim {
                    op: Prim::Scanl | Prim::Scanr,
                    args: scan,
                } => Some(self.size_src(scan[2]).unwrap_or(Over::Node(scan[2]))),
                _ => None,
            },
            Expr::Var(v) => self
                .facts
                .get(v)
                .and_then(|f| f.size_src.clone())
                .map(|(n, t)| Over::Var(n, t)),
            _ => None,
        })
    }

    fn over_var(&self, over: &Over) -> Option<(Name, Ty)> {
        match over {
            Over::Var(n, t) => Some((n.clone(), t.clone())),
            Over::Node(id) => match self.m.expr(*id) {
                Expr::Var(n) => Some((n.clone(), self.ty(*id))),
                _ => None,
            },
        }
    }

    fn emit_over(&mut self, over: Over, span: Span) -> ExprId {
        match over {
            Over::Node(id) => id,
            Over::Var(n, t) => self.add(Expr::Var(n), t, span),
        }
    }

    /// Records what the rules may later need about `let name = v`.
    pub(crate) fn record_fact(&mut self, name: &Name, v: ExprId) {
        let mut fact = Fact::default();
        if let Some((c, t, over)) = self.const_array(v)
            && let Some(src) = self.over_var(&over)
        {
            fact.const_elem = Some((c, t));
            fact.size_src = Some(src);
        }
        if fact.size_src.is_none() {
            fact.size_src = self.size_src(v).and_then(|o| self.over_var(&o));
        }
        if fact != Fact::default() {
            self.facts.insert(name.clone(), fact);
        }
    }

    /// `fun (p) -> c` over the elements of `over`, as a new lambda.
    fn const_lambda(&mut self, c: Expr, cty: Ty, over_ty: &Ty, span: Span) -> ExprId {
        let elem = element(over_ty);
        let p = self.fresh("x");
        let body = self.add(c, cty.clone(), span);
        self.add(
            Expr::Lambda {
                params: vec![Param {
                    name: p,
                    ty: Some(elem.clone()),
                    span,
                }],
                body,
            },
            Ty::Func(vec![elem], Box::new(cty)),
            span,
        )
    }

    /// `map f a`, typed `ty`.
    fn map_node(&mut self, f: ExprId, a: ExprId, ty: Ty, span: Span) -> ExprId {
        self.add(
            Expr::Prim {
                op: Prim::Map,
                args: vec![f, a],
            },
            ty,
            span,
        )
    }

    /// `fun (params) -> let x = value in body`, typed from its parts.
    fn lambda_with_let(
        &mut self,
        params: Vec<Param>,
        x: Name,
        value: ExprId,
        body: ExprId,
        span: Span,
    ) -> ExprId {
        let bty = self.ty(body);
        let let_ = self.add(
            Expr::Let {
                pat: Pat::Var(x),
                ty: None,
                value,
                body,
            },
            bty.clone(),
            span,
        );
        let ptys = params
            .iter()
            .map(|p| p.ty.clone().unwrap_or(Ty::Tuple(Vec::new())))
            .collect();
        self.add(
            Expr::Lambda { params, body: let_ },
            Ty::Func(ptys, Box::new(bty)),
            span,
        )
    }

    fn map_rules(&mut self, id: ExprId, args: &[ExprId]) -> Option<ExprId> {
        let (f, a) = (args[0], args[1]);
        let (params, body) = self.lambda_parts(f)?;
        let (ty, span) = (self.ty(id), self.m.span(id));
        if params.len() != 1 {
            return None;
        }
        // map (x. x) A ~> A, and map (x. (x.1, ..., x.n)) A ~> A
        if self.on(RuleName::MapIdentity) && self.is_identity(body, &params[0]) {
            self.fire(RuleName::MapIdentity);
            return Some(a);
        }
        // map (fun _ -> c) A ~> map (fun _ -> c) B
        if self.on(RuleName::ConstShape)
            && let Some((c, cty)) = self.leaf(body)
            && !matches!(c, Expr::Var(_))
            && let Some(over) = self.size_src(a)
        {
            self.fire(RuleName::ConstShape);
            let src = self.emit_over(over, span);
            let src_ty = self.ty(src);
            let lam = self.const_lambda(c, cty, &src_ty, span);
            return Some(self.map_node(lam, src, ty, span));
        }
        if self.on(RuleName::MapFusion) {
            match self.node(a) {
                // map (x. e1) (map (y. e2) B) ~> map (y. let x = e2 in e1) B
                Expr::Prim {
                    op: Prim::Map,
                    args: inner,
                } => {
                    let (gparams, gbody) = self.lambda_parts(inner[0])?;
                    self.fire(RuleName::MapFusion);
                    let lam =
                        self.lambda_with_let(gparams, params[0].name.clone(), gbody, body, span);
                    return Some(self.map_node(lam, inner[1], ty, span));
                }
                // map (x. e1) (map2 (y1,y2. e2) B C) ~> map2 (y1,y2. let x = e2 in e1) B C
                Expr::Prim {
                    op: Prim::Map2,
                    args: inner,
                } => {
                    let (gparams, gbody) = self.lambda_parts(inner[0])?;
                    self.fire(RuleName::MapFusion);
                    let lam =
                        self.lambda_with_let(gparams, params[0].name.clone(), gbody, body, span);
                    return Some(self.add(
                        Expr::Prim {
                            op: Prim::Map2,
                            args: vec![lam, inner[1], inner[2]],
                        },
                        ty,
                        span,
                    ));
                }
                _ => {}
            }
        }
        None
    }

    fn map2_rules(&mut self, id: ExprId, args: &[ExprId]) -> Option<ExprId> {
        let (f, a, b) = (args[0], args[1], args[2]);
        let (params, body) = self.lambda_parts(f)?;
        if params.len() != 2 {
            return None;
        }
        let (ty, span) = (self.ty(id), self.m.span(id));
        // map2 (x,y. e) A K(B) ~> map (x. let y = c in e) A, and on the left.
        if self.on(RuleName::Map2Const) {
            for (k, arr, other) in [(1, b, a), (0, a, b)] {
                if let Some((c, cty, _)) = self.const_array(arr) {
                    self.fire(RuleName::Map2Const);
                    let cid = self.add(c, cty, span);
                    let keep = params[1 - k].clone();
                    let lam =
                        self.lambda_with_let(vec![keep], params[k].name.clone(), cid, body, span);
                    return Some(self.map_node(lam, other, ty, span));
                }
            }
        }
        // map2 (x,y. e) A A ~> map (x. let y = x in e) A
        if self.on(RuleName::Map2Same)
            && let (Expr::Var(va), Expr::Var(vb)) = (self.m.expr(a), self.m.expr(b))
            && va == vb
        {
            self.fire(RuleName::Map2Same);
            let keep = params[0].clone();
            let pty = keep.ty.clone().unwrap_or(Ty::Tuple(Vec::new()));
            let xv = self.add(Expr::Var(keep.name.clone()), pty, span);
            let lam = self.lambda_with_let(vec![keep], params[1].name.clone(), xv, body, span);
            return Some(self.map_node(lam, a, ty, span));
        }
        // map2 (x,y. e) A B ~> map (x. e) A when y is unused, and on the left.
        if self.on(RuleName::Map2Unused) {
            for (k, other) in [(1, a), (0, b)] {
                if !self.occurs(&params[k].name, body) {
                    self.fire(RuleName::Map2Unused);
                    let keep = params[1 - k].clone();
                    let pty = keep.ty.clone().unwrap_or(Ty::Tuple(Vec::new()));
                    let lam = self.add(
                        Expr::Lambda {
                            params: vec![keep],
                            body,
                        },
                        Ty::Func(vec![pty], Box::new(self.ty(body))),
                        span,
                    );
                    return Some(self.map_node(lam, other, ty, span));
                }
            }
        }
        // map2 (x,y. e1) (map (z. e2) A) B ~> map2 (z,y. let x = e2 in e1) A B, and on the right.
        if self.on(RuleName::MapFusion) {
            for k in [0, 1] {
                if let Expr::Prim {
                    op: Prim::Map,
                    args: inner,
                } = self.node(args[1 + k])
                    && let Some((gparams, gbody)) = self.lambda_parts(inner[0])
                {
                    self.fire(RuleName::MapFusion);
                    let mut ps = params.clone();
                    ps[k] = gparams[0].clone();
                    let lam = self.lambda_with_let(ps, params[k].name.clone(), gbody, body, span);
                    let mut arrays = [a, b];
                    arrays[k] = inner[1];
                    return Some(self.add(
                        Expr::Prim {
                            op: Prim::Map2,
                            args: vec![lam, arrays[0], arrays[1]],
                        },
                        ty,
                        span,
                    ));
                }
            }
        }
        None
    }

    /// The binary operator a two-parameter lambda computes, if it is one:
    /// `fun (a, b) -> a op b` (or `b op a` for `+` and `*`).
    fn binop(&self, f: ExprId) -> Option<Prim> {
        let (params, body) = self.lambda_parts(f)?;
        if params.len() != 2 {
            return None;
        }
        let Expr::Prim { op, args } = self.m.expr(body) else {
            return None;
        };
        let [x, y] = args.as_slice() else {
            return None;
        };
        let (Expr::Var(x), Expr::Var(y)) = (self.m.expr(*x), self.m.expr(*y)) else {
            return None;
        };
        let (p, q) = (&params[0].name, &params[1].name);
        let straight = x == p && y == q;
        let swapped = x == q && y == p && matches!(op, Prim::Add | Prim::Mul);
        (straight || swapped).then_some(*op)
    }

    /// The constant of the constant array `a` when it is the unit of the
    /// operator `f` computes (`0` for `+`, `1` for `*`), with `a`'s source.
    fn unit_array(&self, f: ExprId, a: ExprId) -> Option<Over> {
        let op = self.binop(f)?;
        let (c, _, over) = self.const_array(a)?;
        let unit = match (op, c) {
            (Prim::Add, Expr::Real(x)) => x == 0.0,
            (Prim::Add, Expr::Int(x)) => x == 0,
            (Prim::Mul, Expr::Real(x)) => x == 1.0,
            (Prim::Mul, Expr::Int(x)) => x == 1,
            _ => false,
        };
        unit.then_some(over)
    }

    fn reduce_const(&mut self, args: &[ExprId]) -> Option<ExprId> {
        if !self.on(RuleName::ReduceConst) {
            return None;
        }
        let (f, z, a) = (args[0], args[1], args[2]);
        self.unit_array(f, a)?;
        self.fire(RuleName::ReduceConst);
        Some(z)
    }

    /// A scan of the unit of its operator repeats its start `z` (one more
    /// time than the scanned array is long); shifted, it is as long as the
    /// scanned array: `shift1L (scanr (*) z OnesLike(A)) ~> map (fun _ -> z) A`.
    /// Exact for every length, the empty array included.
    fn scan_const(&mut self, id: ExprId, args: &[ExprId]) -> Option<ExprId> {
        if !self.on(RuleName::ScanConst) {
            return None;
        }
        let Expr::Prim {
            op: Prim::Scanl | Prim::Scanr,
            args: scan,
        } = self.node(args[0])
        else {
            return None;
        };
        let (f, z, a) = (scan[0], scan[1], scan[2]);
        let over = self.unit_array(f, a)?;
        let (zc, zt) = self.leaf(z)?;
        if matches!(zc, Expr::Var(_)) {
            return None;
        }
        self.fire(RuleName::ScanConst);
        let (ty, span) = (self.ty(id), self.m.span(id));
        let src = self.emit_over(over, span);
        let src_ty = self.ty(src);
        let lam = self.const_lambda(zc, zt, &src_ty, span);
        Some(self.map_node(lam, src, ty, span))
    }

    fn shift_const(&mut self, id: ExprId, op: Prim, args: &[ExprId]) -> Option<ExprId> {
        if !self.on(RuleName::ShiftConst) {
            return None;
        }
        let (c, cty, over) = self.const_array(args[0])?;
        self.fire(RuleName::ShiftConst);
        let (ty, span) = (self.ty(id), self.m.span(id));
        let src = self.emit_over(over, span);
        let src_ty = self.ty(src);
        let shifted_ty = match &src_ty {
            Ty::Array(n, t) => Ty::Array(size_minus_one(n), t.clone()),
            other => other.clone(),
        };
        let shifted = self.add(
            Expr::Prim {
                op,
                args: vec![src],
            },
            shifted_ty.clone(),
            span,
        );
        let lam = self.const_lambda(c, cty, &shifted_ty, span);
        Some(self.map_node(lam, shifted, ty, span))
    }

    // ----- structural helpers ------------------------------------------

    /// Whether `x` occurs in the tree under `id`.
    pub(crate) fn occurs(&self, x: &Name, id: ExprId) -> bool {
        let mut stack = vec![id];
        while let Some(i) = stack.pop() {
            if matches!(self.m.expr(i), Expr::Var(v) if v == x) {
                return true;
            }
            self.m.expr(i).for_each_child(|c| stack.push(c));
        }
        false
    }

    /// Whether two trees are equal up to the names of their binders.
    pub(crate) fn alpha_eq(&self, a: ExprId, b: ExprId, ren: &mut HashMap<Name, Name>) -> bool {
        alpha_eq(&self.m, a, b, ren)
    }
}

/// Whether two trees of `m` are equal up to the names of their binders
/// (`ren` maps the binders of `a` met so far to those of `b`).
pub(crate) fn alpha_eq(m: &Module, a: ExprId, b: ExprId, ren: &mut HashMap<Name, Name>) -> bool {
    stack::guard(|| {
        let (ea, eb) = (m.expr(a), m.expr(b));
        match (ea, eb) {
            (Expr::Var(x), Expr::Var(y)) => ren.get(x).map_or(x == y, |z| z == y),
            (Expr::Real(x), Expr::Real(y)) => x.to_bits() == y.to_bits(),
            (Expr::Int(x), Expr::Int(y)) => x == y,
            (Expr::Bool(x), Expr::Bool(y)) => x == y,
            (
                Expr::Let {
                    pat: p1,
                    value: v1,
                    body: b1,
                    ..
                },
                Expr::Let {
                    pat: p2,
                    value: v2,
                    body: b2,
                    ..
                },
            ) => {
                let pairs: Vec<(Name, Name)> = match (p1, p2) {
                    (Pat::Var(x), Pat::Var(y)) => vec![(x.clone(), y.clone())],
                    (Pat::Tuple(xs), Pat::Tuple(ys)) if xs.len() == ys.len() => {
                        xs.iter().cloned().zip(ys.iter().cloned()).collect()
                    }
                    _ => return false,
                };
                if !alpha_eq(m, *v1, *v2, ren) {
                    return false;
                }
                ren.extend(pairs);
                alpha_eq(m, *b1, *b2, ren)
            }
            (
                Expr::Lambda {
                    params: p1,
                    body: b1,
                },
                Expr::Lambda {
                    params: p2,
                    body: b2,
                },
            ) => {
                if p1.len() != p2.len() {
                    return false;
                }
                ren.extend(
                    p1.iter()
                        .zip(p2)
                        .map(|(x, y)| (x.name.clone(), y.name.clone())),
                );
                alpha_eq(m, *b1, *b2, ren)
            }
            (Expr::Proj { index: i, .. }, Expr::Proj { index: j, .. }) if i != j => false,
            (Expr::Prim { op: o1, .. }, Expr::Prim { op: o2, .. }) if o1 != o2 => false,
            _ => {
                if std::mem::discriminant(ea) != std::mem::discriminant(eb) {
                    return false;
                }
                let (ca, cb) = (ea.children(), eb.children());
                ca.len() == cb.len() && ca.iter().zip(&cb).all(|(&x, &y)| alpha_eq(m, x, y, ren))
            }
        }
    })
}

/// The element type of an array type.
fn element(t: &Ty) -> Ty {
    match t {
        Ty::Array(_, e) => (**e).clone(),
        other => other.clone(),
    }
}

/// `n - 1` for the length of a shifted array.
fn size_minus_one(n: &Size) -> Size {
    match n {
        Size::Lit(k) => Size::Lit(k.saturating_sub(1)),
        Size::Var(v, k) => Size::Var(v.clone(), k - 1),
        Size::Dyn => Size::Dyn,
    }
}

/// A builtin of literals, computed with the operations the evaluator uses.
fn fold(op: Prim, args: &[Lit]) -> Option<Lit> {
    use Lit::*;
    let r = match (op, args) {
        (Prim::Add, &[Real(a), Real(b)]) => Real(a + b),
        (Prim::Sub, &[Real(a), Real(b)]) => Real(a - b),
        (Prim::Mul, &[Real(a), Real(b)]) => Real(a * b),
        (Prim::Div, &[Real(a), Real(b)]) => Real(a / b),
        (Prim::Neg, &[Real(a)]) => Real(-a),
        (Prim::Add, &[Int(a), Int(b)]) => Int(a.checked_add(b)?),
        (Prim::Sub, &[Int(a), Int(b)]) => Int(a.checked_sub(b)?),
        (Prim::Mul, &[Int(a), Int(b)]) => Int(a.checked_mul(b)?),
        (Prim::Neg, &[Int(a)]) => Int(a.checked_neg()?),
        (Prim::Sin, &[Real(a)]) => Real(a.sin()),
        (Prim::Cos, &[Real(a)]) => Real(a.cos()),
        (Prim::Tan, &[Real(a)]) => Real(a.tan()),
        (Prim::Exp, &[Real(a)]) => Real(a.exp()),
        (Prim::Log, &[Real(a)]) => Real(a.ln()),
        (Prim::Sqrt, &[Real(a)]) => Real(a.sqrt()),
        (Prim::Tanh, &[Real(a)]) => Real(a.tanh()),
        (Prim::Abs, &[Real(a)]) => Real(a.abs()),
        (Prim::Pow, &[Real(a), Real(b)]) => Real(a.powf(b)),
        (Prim::DTan | Prim::DTanh | Prim::DAbs, &[Real(a)]) => {
            Real(syntax::partials::eval(op, &[a])?)
        }
        (Prim::D1Pow | Prim::D2Pow | Prim::D2Div, &[Real(a), Real(b)]) => {
            Real(syntax::partials::eval(op, &[a, b])?)
        }
        (Prim::Lt | Prim::Le | Prim::Gt | Prim::Ge | Prim::Eq | Prim::Ne, &[a, b]) => {
            let ord = match (a, b) {
                (Real(x), Real(y)) => x.partial_cmp(&y),
                (Int(x), Int(y)) => Some(x.cmp(&y)),
                (Bool(x), Bool(y)) => Some(x.cmp(&y)),
                _ => return None,
            };
            use std::cmp::Ordering::*;
            Bool(match op {
                Prim::Lt => ord == Some(Less),
                Prim::Le => matches!(ord, Some(Less | Equal)),
                Prim::Gt => ord == Some(Greater),
                Prim::Ge => matches!(ord, Some(Greater | Equal)),
                Prim::Eq => ord == Some(Equal),
                _ => ord != Some(Equal),
            })
        }
        (Prim::And, &[Bool(a), Bool(b)]) => Bool(a && b),
        (Prim::Or, &[Bool(a), Bool(b)]) => Bool(a || b),
        (Prim::Not, &[Bool(a)]) => Bool(!a),
        _ => return None,
    };
    // A fold that makes a non-finite real from finite ones would print as
    // an expression (`1 / 0`), not a literal: leave it to run time.
    match r {
        Real(x) if !x.is_finite() => None,
        _ => Some(r),
    }
}
