//! `prune-accumulator`: the components of a fold's accumulator that
//! nothing needs are not computed.
//!
//! A fold (`ifold f z n`, `foldl f z A`, `reduce f z A`) whose result is
//! only projected, `(ifold f z n).2`, or bound and only projected, may
//! carry components that no use reads and that `f` reads only to compute
//! themselves again. Reverse mode's argmin is the case this is for: the
//! adjoint of `reduce min` picks the index of the smallest element by an
//! `ifold` whose state is `(element, index)` and keeps only the index; in
//! forward mode over it (GradBench's kmeans Hessian diagonal) the element
//! is a pair (distance, tangent), and the tangent, carried along in the
//! state, keeps alive a sum over d for every point and centroid. The same
//! holds of a `reduce` of pairs of which one component is projected (the
//! distance and its tangent summed in one pass).
//!
//! The demand of the uses on the result is propagated backwards through
//! `f`'s body ([`Demand`]: which components of a value are needed) to the
//! accumulator parameter(s), joined with the result's demand, to a
//! fixpoint (at most one round per component). What is left undemanded
//! is dropped: the new fold's accumulator holds the demanded components
//! (a 1-tuple is its component), `f`'s body binds the old parameter to
//! the new one rebuilt with literals (`0`, `false`) in the dropped places,
//! and its result (and `z`) is cut down to the kept components by pushing
//! the projections into its branches, `let`s and tuples; the next round's
//! `split-tuple` and `proj-tuple` do the rest. By construction no kept
//! component depends on a dropped one, so the kept values are those of
//! the original fold, bit for bit; a dropped computation that would have
//! failed (an index out of bounds) no longer fails (docs/optimize.md,
//! "Where the rules are unsound"). Only components of real, integer and
//! boolean type are dropped, for which a literal stands in; an array or
//! function component is kept whole.

use syntax::{Expr, ExprId, Name, Param, Pat, Prim, Span, Ty, stack};

use crate::hash::FxHashMap;
use crate::simplify::Round;

/// Which parts of a value are needed.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Demand {
    /// None of it.
    None,
    /// All of it.
    Full,
    /// The components of a tuple, each with its own demand (one per
    /// component of the type; never all `None` or all `Full`).
    Tup(Vec<Demand>),
}

impl Demand {
    /// Component `index` (1-based) of an `arity`-tuple, fully.
    pub(crate) fn component(index: u32, arity: usize) -> Demand {
        Demand::tup(
            (1..=arity as u32)
                .map(|i| {
                    if i == index {
                        Demand::Full
                    } else {
                        Demand::None
                    }
                })
                .collect(),
        )
    }

    /// A tuple demand, normalised.
    pub(crate) fn tup(ds: Vec<Demand>) -> Demand {
        if ds.iter().all(|d| *d == Demand::Full) {
            Demand::Full
        } else if ds.iter().all(|d| *d == Demand::None) {
            Demand::None
        } else {
            Demand::Tup(ds)
        }
    }

    fn join(&self, other: &Demand) -> Demand {
        match (self, other) {
            (Demand::None, d) | (d, Demand::None) => d.clone(),
            (Demand::Full, _) | (_, Demand::Full) => Demand::Full,
            (Demand::Tup(a), Demand::Tup(b)) if a.len() == b.len() => {
                Demand::tup(a.iter().zip(b).map(|(x, y)| x.join(y)).collect())
            }
            _ => Demand::Full,
        }
    }

    /// The demand on component `i` (0-based).
    fn at(&self, i: usize) -> Demand {
        match self {
            Demand::Tup(ds) => ds.get(i).cloned().unwrap_or(Demand::Full),
            d => d.clone(),
        }
    }
}

/// Whether a literal can stand in for a dropped value of type `t`.
fn droppable(t: &Ty) -> bool {
    match t {
        Ty::Real | Ty::Int | Ty::Bool => true,
        Ty::Tuple(ts) => ts.iter().all(droppable),
        Ty::Array(..) | Ty::Func(..) => false,
    }
}

/// `d` with every undemanded part that cannot be dropped demanded.
fn complete(d: &Demand, t: &Ty) -> Demand {
    match (d, t) {
        (Demand::Full, _) => Demand::Full,
        (Demand::None, t) if droppable(t) => Demand::None,
        (Demand::None, Ty::Tuple(ts)) => {
            Demand::tup(ts.iter().map(|t| complete(&Demand::None, t)).collect())
        }
        (Demand::None, _) => Demand::Full,
        (Demand::Tup(ds), Ty::Tuple(ts)) if ds.len() == ts.len() => {
            Demand::tup(ds.iter().zip(ts).map(|(d, t)| complete(d, t)).collect())
        }
        _ => Demand::Full,
    }
}

/// The type of the kept parts of a value of type `t`.
fn kept_ty(t: &Ty, d: &Demand) -> Ty {
    match (d, t) {
        (Demand::Tup(ds), Ty::Tuple(ts)) => {
            let mut kept: Vec<Ty> = ds
                .iter()
                .zip(ts)
                .filter(|(d, _)| **d != Demand::None)
                .map(|(d, t)| kept_ty(t, d))
                .collect();
            if kept.len() == 1 {
                kept.pop().expect("invariant: one kept")
            } else {
                Ty::Tuple(kept)
            }
        }
        _ => t.clone(),
    }
}

/// The indices (0-based) of the kept components.
fn kept(ds: &[Demand]) -> Vec<usize> {
    (0..ds.len()).filter(|&i| ds[i] != Demand::None).collect()
}

/// A variable and a path of projections into it (1-based), rebuilt as
/// fresh nodes wherever it is used.
#[derive(Clone)]
struct Atom {
    name: Name,
    ty: Ty,
    path: Vec<u32>,
}

impl Atom {
    fn var(name: Name, ty: Ty) -> Atom {
        Atom {
            name,
            ty,
            path: Vec::new(),
        }
    }

    fn then(&self, i: u32) -> Atom {
        let mut a = self.clone();
        a.path.push(i);
        a
    }
}

impl Round<'_> {
    /// `prune-accumulator` of the fold `fold` (simplified) whose result is
    /// needed as `outer` says: the name `r`, the pruned fold to bind it to,
    /// and the original result rebuilt from `r` (a value of the fold's
    /// type). None when the fold is not one of a lambda, or every part of
    /// its accumulator is needed.
    pub(crate) fn prune_accumulator(
        &mut self,
        fold: ExprId,
        outer: &Demand,
    ) -> Option<(Name, ExprId, ExprId)> {
        let Expr::Prim { op, args } = self.m.expr(fold) else {
            return None;
        };
        let (op, args) = (*op, args.clone());
        if !matches!(op, Prim::Ifold | Prim::Foldl | Prim::Reduce) {
            return None;
        }
        let t = self.ty(fold);
        if !matches!(t, Ty::Tuple(_)) || *outer == Demand::Full {
            return None;
        }
        let Expr::Lambda { params, body } = self.node(args[0]) else {
            return None;
        };
        if params.len() != 2 {
            return None;
        }
        // The parameters that hold an accumulator.
        let accs: Vec<Name> = match op {
            Prim::Reduce => vec![params[0].name.clone(), params[1].name.clone()],
            _ => vec![params[0].name.clone()],
        };
        let mut d = complete(outer, &t);
        loop {
            let mut need = FxHashMap::default();
            self.demand(body, &d, &mut need);
            let mut next = d.clone();
            for a in &accs {
                if let Some(da) = need.get(a) {
                    next = next.join(da);
                }
            }
            let next = complete(&next, &t);
            if next == d {
                break;
            }
            d = next;
        }
        if d == Demand::Full || d == Demand::None {
            return None;
        }
        let span = self.m.span(fold);
        let kt = kept_ty(&t, &d);
        // fun (s', ..) -> let s = embed s' in pick body
        let mut new_params = params.clone();
        let mut lets = Vec::new();
        for (k, a) in accs.iter().enumerate() {
            let s = self.fresh(a.as_str());
            new_params[k] = Param {
                name: s.clone(),
                ty: Some(kt.clone()),
                span: params[k].span,
            };
            lets.push((a.clone(), Atom::var(s, kt.clone())));
        }
        let mut lbody = self.pick(body, &t, &d);
        for (a, s) in lets.into_iter().rev() {
            let e = self.embed(&s, &t, &d, span);
            lbody = self.add(
                Expr::Let {
                    pat: Pat::Var(a),
                    ty: None,
                    value: e,
                    body: lbody,
                },
                kt.clone(),
                span,
            );
        }
        let ptys: Vec<Ty> = new_params
            .iter()
            .map(|p| p.ty.clone().expect("invariant: core form types parameters"))
            .collect();
        let lspan = self.m.span(args[0]);
        let lam = self.add(
            Expr::Lambda {
                params: new_params,
                body: lbody,
            },
            Ty::Func(ptys, Box::new(kt.clone())),
            lspan,
        );
        let z = self.pick(args[1], &t, &d);
        let third = if op == Prim::Reduce {
            // The array's elements cut down to the kept components.
            let Ty::Array(size, _) = self.ty(args[2]) else {
                return None;
            };
            let a = self.fresh("a");
            let ra = self.restrict(&Atom::var(a.clone(), t.clone()), &t, &d, span);
            let f = self.add(
                Expr::Lambda {
                    params: vec![Param {
                        name: a,
                        ty: Some(t.clone()),
                        span,
                    }],
                    body: ra,
                },
                Ty::Func(vec![t.clone()], Box::new(kt.clone())),
                span,
            );
            self.add(
                Expr::Prim {
                    op: Prim::Map,
                    args: vec![f, args[2]],
                },
                Ty::array(size, kt.clone()),
                span,
            )
        } else {
            args[2]
        };
        let new_fold = self.add(
            Expr::Prim {
                op,
                args: vec![lam, z, third],
            },
            kt.clone(),
            span,
        );
        let r = self.fresh("r");
        let whole = self.embed(&Atom::var(r.clone(), kt), &t, &d, span);
        Some((r, new_fold, whole))
    }

    /// Records in `need` the demand on every variable that computing the
    /// parts `d` of `e` needs. Anything but tuples, projections, `let`s
    /// and conditionals needs all of its operands.
    fn demand(&self, e: ExprId, d: &Demand, need: &mut FxHashMap<Name, Demand>) {
        if *d == Demand::None {
            return;
        }
        stack::guard(|| match self.m.expr(e) {
            Expr::Var(x) => {
                let j = need.get(x).map_or_else(|| d.clone(), |o| o.join(d));
                need.insert(x.clone(), j);
            }
            Expr::Tuple(items) => {
                for (i, &item) in items.iter().enumerate() {
                    self.demand(item, &d.at(i), need);
                }
            }
            Expr::Proj { tuple, index } => {
                let n = match self.m.types[tuple.index()] {
                    Ty::Tuple(ref ts) => ts.len(),
                    _ => 0,
                };
                let mut ds = vec![Demand::None; n];
                match ds.get_mut(*index as usize - 1) {
                    Some(slot) => *slot = d.clone(),
                    None => return self.demand(*tuple, &Demand::Full, need),
                }
                self.demand(*tuple, &Demand::tup(ds), need);
            }
            Expr::Let {
                pat, value, body, ..
            } => {
                self.demand(*body, d, need);
                let dv = match pat {
                    Pat::Var(x) => need.get(x).cloned().unwrap_or(Demand::None),
                    Pat::Tuple(xs) => Demand::tup(
                        xs.iter()
                            .map(|x| need.get(x).cloned().unwrap_or(Demand::None))
                            .collect(),
                    ),
                };
                self.demand(*value, &dv, need);
            }
            Expr::If {
                cond,
                then_branch,
                else_branch,
            } => {
                self.demand(*cond, &Demand::Full, need);
                self.demand(*then_branch, d, need);
                self.demand(*else_branch, d, need);
            }
            other => other.for_each_child(|c| self.demand(c, &Demand::Full, need)),
        })
    }

    /// Whether every value `e` can end in (through its conditionals and
    /// `let`s) is a tuple literal: [`Round::pick`] then cuts the tuples
    /// themselves, computing less.
    pub(crate) fn ends_in_tuples(&self, e: ExprId) -> bool {
        stack::guard(|| match self.m.expr(e) {
            Expr::Tuple(_) => true,
            Expr::Let { body, .. } => self.ends_in_tuples(*body),
            Expr::If {
                then_branch,
                else_branch,
                ..
            } => self.ends_in_tuples(*then_branch) && self.ends_in_tuples(*else_branch),
            _ => false,
        })
    }

    /// `e` (of type `t`) cut down to the parts `d`, the cut pushed into
    /// its conditionals, `let`s and tuples.
    pub(crate) fn pick(&mut self, e: ExprId, t: &Ty, d: &Demand) -> ExprId {
        if *d == Demand::Full {
            return e;
        }
        let (kt, span) = (kept_ty(t, d), self.m.span(e));
        stack::guard(|| match self.node(e) {
            Expr::If {
                cond,
                then_branch,
                else_branch,
            } => {
                let a = self.pick(then_branch, t, d);
                let b = self.pick(else_branch, t, d);
                self.add(
                    Expr::If {
                        cond,
                        then_branch: a,
                        else_branch: b,
                    },
                    kt,
                    span,
                )
            }
            Expr::Let {
                pat,
                ty,
                value,
                body,
            } => {
                let body = self.pick(body, t, d);
                self.add(
                    Expr::Let {
                        pat,
                        ty,
                        value,
                        body,
                    },
                    kt,
                    span,
                )
            }
            Expr::Tuple(items) => {
                let (Demand::Tup(ds), Ty::Tuple(ts)) = (d, t) else {
                    unreachable!("invariant: a partial demand is on a tuple")
                };
                let mut out: Vec<ExprId> = kept(ds)
                    .into_iter()
                    .map(|i| self.pick(items[i], &ts[i], &ds[i]))
                    .collect();
                if out.len() == 1 {
                    out.pop().expect("invariant: one kept")
                } else {
                    self.add(Expr::Tuple(out), kt, span)
                }
            }
            Expr::Var(x) => self.restrict(&Atom::var(x, t.clone()), t, d, span),
            _ => {
                let x = self.fresh("t");
                let r = self.restrict(&Atom::var(x.clone(), t.clone()), t, d, span);
                self.add(
                    Expr::Let {
                        pat: Pat::Var(x),
                        ty: None,
                        value: e,
                        body: r,
                    },
                    kt,
                    span,
                )
            }
        })
    }

    /// The parts `d` of the value `a` of type `t`, as a value of the kept
    /// type.
    fn restrict(&mut self, a: &Atom, t: &Ty, d: &Demand, span: Span) -> ExprId {
        match (d, t) {
            (Demand::Tup(ds), Ty::Tuple(ts)) => {
                let mut out: Vec<ExprId> = kept(ds)
                    .into_iter()
                    .map(|i| self.restrict(&a.then(i as u32 + 1), &ts[i], &ds[i], span))
                    .collect();
                if out.len() == 1 {
                    out.pop().expect("invariant: one kept")
                } else {
                    self.add(Expr::Tuple(out), kept_ty(t, d), span)
                }
            }
            _ => self.atom(a, span),
        }
    }

    /// The value of type `t` whose parts `d` are the value `a` of the kept
    /// type, the other parts literals.
    fn embed(&mut self, a: &Atom, t: &Ty, d: &Demand, span: Span) -> ExprId {
        match (d, t) {
            (Demand::Tup(ds), Ty::Tuple(ts)) => {
                let ks = kept(ds);
                let mut out = Vec::new();
                for i in 0..ts.len() {
                    let item = match ks.iter().position(|&k| k == i) {
                        None => self.dummy(&ts[i], span),
                        Some(_) if ks.len() == 1 => self.embed(a, &ts[i], &ds[i], span),
                        Some(j) => self.embed(&a.then(j as u32 + 1), &ts[i], &ds[i], span),
                    };
                    out.push(item);
                }
                self.add(Expr::Tuple(out), t.clone(), span)
            }
            _ => self.atom(a, span),
        }
    }

    /// A literal of type `t` standing for a dropped value.
    fn dummy(&mut self, t: &Ty, span: Span) -> ExprId {
        let e = match t {
            Ty::Real => Expr::Real(0.0),
            Ty::Int => Expr::Int(0),
            Ty::Bool => Expr::Bool(false),
            Ty::Tuple(ts) => {
                let items = ts.iter().map(|t| self.dummy(t, span)).collect();
                Expr::Tuple(items)
            }
            _ => unreachable!("invariant: only droppable parts are dropped"),
        };
        self.add(e, t.clone(), span)
    }

    /// Fresh nodes for `a`: the variable and its projections.
    fn atom(&mut self, a: &Atom, span: Span) -> ExprId {
        let mut id = self.add(Expr::Var(a.name.clone()), a.ty.clone(), span);
        let mut ty = a.ty.clone();
        for &i in &a.path {
            let Ty::Tuple(ts) = ty else {
                unreachable!("invariant: a path follows tuple types")
            };
            ty = ts[i as usize - 1].clone();
            id = self.add(
                Expr::Proj {
                    tuple: id,
                    index: i,
                },
                ty.clone(),
                span,
            );
        }
        id
    }
}
