//! Equality of two inner loops of two loops' bodies (`share-inner-loop`):
//! up to the names of their binders, the names each body gives the
//! elements, and the body's own `let`s, compared by their values.

use syntax::{Expr, ExprId, Module, Name, Pat, stack};

use super::{Alias, Loop, path};
use crate::hash::{FxHashMap, FxHashSet};

/// Compares two expressions of two loops' bodies.
pub(super) struct Cmp<'a> {
    pub(super) m: &'a Module,
    pub(super) l1: &'a Loop,
    pub(super) l2: &'a Loop,
    /// Binders of the compared expressions, the first's to the second's.
    pub(super) ren: FxHashMap<Name, Name>,
    /// Pairs of body `let`s found equal.
    pub(super) same_defs: FxHashSet<(ExprId, ExprId)>,
    /// Nodes left to visit before giving up.
    pub(super) budget: usize,
}

impl Cmp<'_> {
    pub(super) fn bind(&mut self, a: &Name, b: &Name) {
        self.ren.insert(a.clone(), b.clone());
    }

    pub(super) fn eq(&mut self, a: ExprId, b: ExprId) -> bool {
        stack::guard(|| {
            if self.budget == 0 {
                return false;
            }
            self.budget -= 1;
            let (m, l1, l2) = (self.m, self.l1, self.l2);
            match (path(m, l1, a), path(m, l2, b)) {
                (Some(x), Some(y)) => return same_alias(&x, &y),
                (None, None) => {}
                _ => return false,
            }
            match (m.expr(a), m.expr(b)) {
                (Expr::Var(x), Expr::Var(y)) => self.eq_var(x, y),
                (Expr::Real(x), Expr::Real(y)) => x.to_bits() == y.to_bits(),
                (Expr::Int(x), Expr::Int(y)) => x == y,
                (Expr::Bool(x), Expr::Bool(y)) => x == y,
                (Expr::Section(x), Expr::Section(y)) => x == y,
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
                    if !self.eq(*v1, *v2) {
                        return false;
                    }
                    match (p1, p2) {
                        (Pat::Var(x), Pat::Var(y)) => self.bind(x, y),
                        (Pat::Tuple(xs), Pat::Tuple(ys)) if xs.len() == ys.len() => {
                            xs.iter().zip(ys).for_each(|(x, y)| self.bind(x, y));
                        }
                        _ => return false,
                    }
                    self.eq(*b1, *b2)
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
                    p1.iter()
                        .zip(p2)
                        .for_each(|(x, y)| self.bind(&x.name, &y.name));
                    self.eq(*b1, *b2)
                }
                (Expr::Prim { op: o1, args: a1 }, Expr::Prim { op: o2, args: a2 }) => {
                    o1 == o2 && self.all(a1, a2)
                }
                (Expr::Tuple(a1), Expr::Tuple(a2)) | (Expr::Array(a1), Expr::Array(a2)) => {
                    self.all(a1, a2)
                }
                (
                    Expr::Proj {
                        tuple: t1,
                        index: i1,
                    },
                    Expr::Proj {
                        tuple: t2,
                        index: i2,
                    },
                ) => i1 == i2 && self.eq(*t1, *t2),
                (
                    Expr::Index {
                        array: a1,
                        index: i1,
                    },
                    Expr::Index {
                        array: a2,
                        index: i2,
                    },
                ) => self.eq(*a1, *a2) && self.eq(*i1, *i2),
                (
                    Expr::If {
                        cond: c1,
                        then_branch: t1,
                        else_branch: e1,
                    },
                    Expr::If {
                        cond: c2,
                        then_branch: t2,
                        else_branch: e2,
                    },
                ) => self.eq(*c1, *c2) && self.eq(*t1, *t2) && self.eq(*e1, *e2),
                (Expr::App { func: f1, args: a1 }, Expr::App { func: f2, args: a2 }) => {
                    self.eq(*f1, *f2) && self.all(a1, a2)
                }
                _ => false,
            }
        })
    }

    pub(super) fn all(&mut self, a: &[ExprId], b: &[ExprId]) -> bool {
        a.len() == b.len() && a.iter().zip(b).all(|(&x, &y)| self.eq(x, y))
    }

    fn eq_var(&mut self, x: &Name, y: &Name) -> bool {
        if let Some(z) = self.ren.get(x) {
            return z == y;
        }
        let (d1, d2) = (self.l1.alias.get(x), self.l2.alias.get(y));
        match (d1, d2) {
            (Some(Alias::Def(v1, i1)), Some(Alias::Def(v2, i2))) => {
                let (v1, v2) = (*v1, *v2);
                if i1 != i2 {
                    return false;
                }
                if self.same_defs.contains(&(v1, v2)) {
                    return true;
                }
                let ok = self.eq(v1, v2);
                if ok {
                    self.same_defs.insert((v1, v2));
                }
                ok
            }
            (None, None) => {
                // Free in both loops' bodies (or a parameter without an
                // alias, which the check of free names rules out).
                x == y && !self.l1.bound_by.contains_key(x)
            }
            _ => false,
        }
    }
}

fn same_alias(a: &Alias, b: &Alias) -> bool {
    stack::guard(|| match (a, b) {
        (Alias::Elem(x, p), Alias::Elem(y, q)) => x == y && p == q,
        (Alias::Tuple(xs), Alias::Tuple(ys)) => {
            xs.len() == ys.len()
                && xs.iter().zip(ys).all(|(x, y)| match (x, y) {
                    (Some(x), Some(y)) => same_alias(x, y),
                    _ => false,
                })
        }
        _ => false,
    })
}
