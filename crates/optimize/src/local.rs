//! The local rules: rewrites of one freshly built node whose children are
//! already simplified (algebra, constant folding, tuple projections,
//! conditionals; the array identities and map fusion are in `local/arrays.rs`).
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

use syntax::{Expr, ExprId, Module, Name, Pat, Prim, Span, Ty, stack};

use crate::rules::RuleName;
use crate::simplify::Round;

mod accumulator;
mod arrays;
mod hist;
mod length;

pub(crate) use accumulator::Demand;

pub(crate) use length::LenTerm;

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
        let Expr::Prim { op, args } = self.m.expr(id) else {
            return None;
        };
        let (op, args) = (*op, crate::simplify::Args::of(args));
        let res = match op {
            Prim::Add | Prim::Sub | Prim::Mul | Prim::Div | Prim::Neg => self
                .const_fold(id, op, &args)
                .or_else(|| self.algebra(id, op, &args)),
            Prim::Map => self.map_rules(id, &args),
            Prim::Map2 => self.map2_rules(id, &args),
            Prim::Reduce | Prim::Foldl => self.reduce_const(&args),
            Prim::Length => self.length_of(id, &args),
            Prim::Build => self.hist_interchange(id, &args),
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
        if self.on(RuleName::PruneAccumulator)
            && let Ty::Tuple(ts) = self.ty(t)
            && let Some((r, fold, whole)) =
                self.prune_accumulator(t, &Demand::component(index, ts.len()))
        {
            // `(fold ..).i`: only component i of the result is needed.
            self.fire(RuleName::PruneAccumulator);
            let item = self.proj_node(whole, index, span, ty.clone());
            return self.add(
                Expr::Let {
                    pat: Pat::Var(r),
                    ty: None,
                    value: fold,
                    body: item,
                },
                ty,
                span,
            );
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
    alpha_eq_by(m, a, b, ren, &mut Plain)
}

/// What [`alpha_eq_by`] asks of the caller: a decision on a pair of nodes
/// before their structure is compared, and the equality of two names not
/// bound inside the compared trees.
pub(crate) trait Equiv {
    /// `Some` to decide the pair `a`, `b` without looking inside.
    fn decide(&mut self, _m: &Module, _a: ExprId, _b: ExprId) -> Option<bool> {
        None
    }
    /// Whether the free names `x` and `y` stand for the same value.
    fn free(&mut self, _m: &Module, x: &Name, y: &Name, _ren: &mut HashMap<Name, Name>) -> bool {
        x == y
    }
}

/// Free names are equal when they are the same name.
struct Plain;

impl Equiv for Plain {}

/// [`alpha_eq`], with `eq` deciding what the structure does not.
pub(crate) fn alpha_eq_by(
    m: &Module,
    a: ExprId,
    b: ExprId,
    ren: &mut HashMap<Name, Name>,
    eq: &mut impl Equiv,
) -> bool {
    stack::guard(|| {
        if let Some(d) = eq.decide(m, a, b) {
            return d;
        }
        let (ea, eb) = (m.expr(a), m.expr(b));
        match (ea, eb) {
            (Expr::Var(x), Expr::Var(y)) => match ren.get(x) {
                Some(z) => z == y,
                None => eq.free(m, x, y, ren),
            },
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
                if !alpha_eq_by(m, *v1, *v2, ren, eq) {
                    return false;
                }
                ren.extend(pairs);
                alpha_eq_by(m, *b1, *b2, ren, eq)
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
                alpha_eq_by(m, *b1, *b2, ren, eq)
            }
            (Expr::Proj { index: i, .. }, Expr::Proj { index: j, .. }) if i != j => false,
            (Expr::Prim { op: o1, .. }, Expr::Prim { op: o2, .. }) if o1 != o2 => false,
            _ => {
                if std::mem::discriminant(ea) != std::mem::discriminant(eb) {
                    return false;
                }
                let (ca, cb) = (ea.children(), eb.children());
                ca.len() == cb.len()
                    && ca
                        .iter()
                        .zip(&cb)
                        .all(|(&x, &y)| alpha_eq_by(m, x, y, ren, eq))
            }
        }
    })
}

/// A builtin of literals, computed with the operations the evaluator uses.
fn fold(op: Prim, args: &[Lit]) -> Option<Lit> {
    use Lit::*;
    let r = match (op, args) {
        (Prim::Add, &[Int(a), Int(b)]) => Int(a.checked_add(b)?),
        (Prim::Sub, &[Int(a), Int(b)]) => Int(a.checked_sub(b)?),
        (Prim::Mul, &[Int(a), Int(b)]) => Int(a.checked_mul(b)?),
        (Prim::Neg, &[Int(a)]) => Int(a.checked_neg()?),
        // Comparisons before the real functions: `1 < 2` of reals is a
        // truth value, which the table of real functions does not give.
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
        // `max` and `min` of literals stay as written, as they always have.
        (Prim::Max | Prim::Min, _) => return None,
        (_, &[Real(a)]) => Real(syntax::derivatives::eval(op, &[a])?),
        (_, &[Real(a), Real(b)]) => Real(syntax::derivatives::eval(op, &[a, b])?),
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
