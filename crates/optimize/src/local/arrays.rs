//! The local rules on arrays (`local.rs` has the others): the identities
//! of `map`, `map2` and constant arrays (`map-identity`, `const-shape`,
//! `map2-const`, `map2-same`, `map2-unused`, `reduce-const`, `scan-const`,
//! `shift-const`), map fusion, and the facts recorded about `let`-bound
//! arrays that they read.

use syntax::{Expr, ExprId, Name, Param, Pat, Prim, Size, Span, Ty, stack};

use super::Over;
use crate::rules::RuleName;
use crate::simplify::{Fact, Round};

impl Round<'_> {
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

    /// A cheaper array with the length of `id`, when one is known, and of
    /// the same length in its type too: `map2 f A L` with `A : [m]T` and
    /// a literal `L : [3]T` has both lengths at run time, but a constant
    /// over `L` typed `[m]C` would not verify (a gradient's parameter
    /// meeting a literal, found by the histrow helper).
    pub(crate) fn size_src(&self, id: ExprId) -> Option<Over> {
        let over = self.any_size_src(id)?;
        let outer = |t: &Ty| match t {
            Ty::Array(n, _) => Some(n.clone()),
            _ => None,
        };
        let ty = match &over {
            Over::Var(_, t) => t.clone(),
            Over::Node(o) => self.ty(*o),
        };
        (outer(&ty).is_some() && outer(&ty) == outer(&self.ty(id))).then_some(over)
    }

    /// [`Self::size_src`] without the check of the types' lengths.
    fn any_size_src(&self, id: ExprId) -> Option<Over> {
        stack::guard(|| match self.m.expr(id) {
            Expr::Prim {
                op: Prim::Map | Prim::Map2,
                args,
            } => Some(self.any_size_src(args[1]).unwrap_or(Over::Node(args[1]))),
            Expr::Prim {
                op: Prim::Shift1L | Prim::Shift1R,
                args,
            } => match self.m.expr(args[0]) {
                Expr::Prim {
                    op: Prim::Scanl | Prim::Scanr,
                    args: scan,
                } => Some(self.any_size_src(scan[2]).unwrap_or(Over::Node(scan[2]))),
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

    pub(super) fn over_var(&self, over: &Over) -> Option<(Name, Ty)> {
        match over {
            Over::Var(n, t) => Some((n.clone(), t.clone())),
            Over::Node(id) => match self.m.expr(*id) {
                Expr::Var(n) => Some((n.clone(), self.ty(*id))),
                _ => None,
            },
        }
    }

    pub(super) fn emit_over(&mut self, over: Over, span: Span) -> ExprId {
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
        fact.length = self.build_length(v);
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

    /// `map-fusion` into an index: `(map (x. e) A)[i] ~> let x = A[i] in e`,
    /// the one element computed instead of every element (the index's
    /// bounds check is A's: the lengths are equal), and `(map2 (x, y. e) A
    /// B)[i] ~> let j = i in let x = A[j] in let y = B[j] in e` (A and B
    /// each checked; arrays of different lengths, which `map2` refuses,
    /// are no longer an error when the index is in both). The `let`s are
    /// left to the next round.
    pub(crate) fn index_of_map(
        &mut self,
        array: ExprId,
        index: ExprId,
        span: Span,
        ty: &Ty,
    ) -> Option<ExprId> {
        if !self.on(RuleName::MapFusion) {
            return None;
        }
        let Expr::Prim {
            op: op @ (Prim::Map | Prim::Map2),
            args,
        } = self.m.expr(array)
        else {
            return None;
        };
        let (op, args) = (*op, args.clone());
        let (params, body) = self.lambda_parts(args[0])?;
        if params.len() != args.len() - 1 {
            return None;
        }
        let mut elems = Vec::new();
        for &a in &args[1..] {
            match self.ty(a) {
                Ty::Array(_, e) => elems.push(Ty::clone(&e)),
                _ => return None,
            }
        }
        self.fire(RuleName::MapFusion);
        // One read of `index` per array: a second one goes through a name.
        let (index, shared) = if op == Prim::Map2 {
            let j = self.fresh("j");
            let ity = self.ty(index);
            (
                self.add(Expr::Var(j.clone()), ity.clone(), span),
                Some((j, index, ity)),
            )
        } else {
            (index, None)
        };
        let mut out = body;
        for (k, (p, elem)) in params.iter().zip(elems).enumerate().rev() {
            // The first array reads `index` itself, the second a new
            // node of the shared name.
            let ix = match &shared {
                Some((j, _, ity)) if k > 0 => self.add(Expr::Var(j.clone()), ity.clone(), span),
                _ => index,
            };
            let at = self.add(
                Expr::Index {
                    array: args[1 + k],
                    index: ix,
                },
                elem,
                span,
            );
            out = self.add(
                Expr::Let {
                    pat: Pat::Var(p.name.clone()),
                    ty: None,
                    value: at,
                    body: out,
                },
                ty.clone(),
                span,
            );
        }
        if let Some((j, value, _)) = shared {
            out = self.add(
                Expr::Let {
                    pat: Pat::Var(j),
                    ty: None,
                    value,
                    body: out,
                },
                ty.clone(),
                span,
            );
        }
        Some(out)
    }

    pub(super) fn map_rules(&mut self, id: ExprId, args: &[ExprId]) -> Option<ExprId> {
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
            // map (x. e1) (map (y. e2) B) ~> map (y. let x = e2 in e1) B, and
            // map (x. e1) (map2 (y1,y2. e2) B C) ~> map2 (y1,y2. let x = e2 in e1) B C
            if let Expr::Prim {
                op: op @ (Prim::Map | Prim::Map2),
                args: inner,
            } = self.node(a)
            {
                let (gparams, gbody) = self.lambda_parts(inner[0])?;
                self.fire(RuleName::MapFusion);
                let lam = self.lambda_with_let(gparams, params[0].name.clone(), gbody, body, span);
                let mut args = vec![lam];
                args.extend_from_slice(&inner[1..]);
                return Some(self.add(Expr::Prim { op, args }, ty, span));
            }
        }
        None
    }

    /// Whether the array `kept` has, in its type, the length of the type
    /// `ty` of the `map2` it would replace. `map2 f A L` with `A : [m]T`
    /// and a literal `L : [3]T` has both lengths at run time (or fails),
    /// but `map g L` is typed `[3]`, not the `[m]` the `map2` is stored
    /// with, and would not verify (a gradient's parameter meeting a
    /// literal, found by the histrow helper).
    fn same_length_type(&self, kept: ExprId, ty: &Ty) -> bool {
        match (self.ty(kept), ty) {
            (Ty::Array(n, _), Ty::Array(m, _)) => n == *m,
            _ => false,
        }
    }

    pub(super) fn map2_rules(&mut self, id: ExprId, args: &[ExprId]) -> Option<ExprId> {
        let (f, a, b) = (args[0], args[1], args[2]);
        let (params, body) = self.lambda_parts(f)?;
        if params.len() != 2 {
            return None;
        }
        let (ty, span) = (self.ty(id), self.m.span(id));
        // map2 (x,y. e) A K(B) ~> map (x. let y = c in e) A, and on the left.
        if self.on(RuleName::Map2Const) {
            for (k, arr, other) in [(1, b, a), (0, a, b)] {
                if let Some((c, cty, _)) = self.const_array(arr)
                    && self.same_length_type(other, &ty)
                {
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
                if !self.occurs(&params[k].name, body) && self.same_length_type(other, &ty) {
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

    pub(super) fn reduce_const(&mut self, args: &[ExprId]) -> Option<ExprId> {
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
    pub(super) fn scan_const(&mut self, id: ExprId, args: &[ExprId]) -> Option<ExprId> {
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

    pub(super) fn shift_const(&mut self, id: ExprId, op: Prim, args: &[ExprId]) -> Option<ExprId> {
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
