//! Equality of two inner loops of two loops' bodies (`share-inner-loop`):
//! `local::alpha_eq_by` (equal up to the names of their binders), with
//! the names each body gives the elements resolved to the arrays they
//! come from, and the body's own `let`s compared by their values.

use std::collections::HashMap;

use syntax::{ExprId, Module, Name, stack};

use super::{Alias, Loop, path};
use crate::hash::FxHashSet;
use crate::local::{Equiv, alpha_eq_by};

/// Compares two expressions of two loops' bodies.
pub(super) struct Cmp<'a> {
    pub(super) l1: &'a Loop,
    pub(super) l2: &'a Loop,
    /// Binders of the compared expressions, the first's to the second's.
    pub(super) ren: HashMap<Name, Name>,
    /// Pairs of body `let`s found equal.
    pub(super) same_defs: FxHashSet<(ExprId, ExprId)>,
    /// Nodes left to visit before giving up.
    pub(super) budget: usize,
}

impl Cmp<'_> {
    pub(super) fn bind(&mut self, a: &Name, b: &Name) {
        self.ren.insert(a.clone(), b.clone());
    }

    pub(super) fn eq(&mut self, m: &Module, a: ExprId, b: ExprId) -> bool {
        let mut ren = std::mem::take(&mut self.ren);
        let same = alpha_eq_by(m, a, b, &mut ren, self);
        self.ren = ren;
        same
    }

    pub(super) fn all(&mut self, m: &Module, a: &[ExprId], b: &[ExprId]) -> bool {
        a.len() == b.len() && a.iter().zip(b).all(|(&x, &y)| self.eq(m, x, y))
    }
}

impl Equiv for Cmp<'_> {
    /// Names and projections of the elements are equal when they reach
    /// the same part of the same array's element.
    fn decide(&mut self, m: &Module, a: ExprId, b: ExprId) -> Option<bool> {
        if self.budget == 0 {
            return Some(false);
        }
        self.budget -= 1;
        match (path(m, self.l1, a), path(m, self.l2, b)) {
            (Some(x), Some(y)) => Some(same_alias(&x, &y)),
            (None, None) => None,
            _ => Some(false),
        }
    }

    /// A body's `let`s are equal when their values are; other free names
    /// when they are the same name bound outside both loops.
    fn free(&mut self, m: &Module, x: &Name, y: &Name, ren: &mut HashMap<Name, Name>) -> bool {
        match (self.l1.alias.get(x), self.l2.alias.get(y)) {
            (Some(Alias::Def(v1, i1)), Some(Alias::Def(v2, i2))) => {
                let (v1, v2) = (*v1, *v2);
                if i1 != i2 {
                    return false;
                }
                if self.same_defs.contains(&(v1, v2)) {
                    return true;
                }
                let ok = alpha_eq_by(m, v1, v2, ren, self);
                if ok {
                    self.same_defs.insert((v1, v2));
                }
                ok
            }
            // A parameter without an alias is bound in the body: never
            // equal to a name of the other loop.
            (None, None) => x == y && !self.l1.bound_by.contains_key(x),
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
