//! Which bound names may stay delayed arrays.
//!
//! A delayed array (see `val.rs`) recomputes its elements each time it is
//! read. That is free when it is read once, and wasteful otherwise, so a
//! name bound to an array (by `let`, a lambda parameter or a tuple
//! pattern) keeps its delayed form only if it is used exactly once and
//! that use is not inside a lambda that the binding is outside of (a
//! lambda body runs once per element, so a use there is a use per
//! element). Every other binding materializes the array first.
//!
//! Invariant: binders are unique within a definition (core form), so one
//! count per name is exact.

use std::collections::HashMap;

use syntax::{Def, Expr, ExprId, Module, Name, Pat};

/// What is known about the uses of each binder of one definition.
#[derive(Debug, Default)]
pub(crate) struct Uses {
    /// (lambda depth of the binder, number of uses, deepest lambda depth of a use).
    info: HashMap<Name, (usize, usize, usize)>,
    /// Uses of a name that are not a projection `x.i`: (count, deepest).
    whole: HashMap<Name, (usize, usize)>,
    /// Uses as a projection `x.i`, by component: (count, deepest).
    parts: HashMap<(Name, u32), (usize, usize)>,
}

impl Uses {
    /// Counts the uses in one definition.
    pub fn of(m: &Module, def: &Def) -> Uses {
        let mut uses = Uses::default();
        for p in &def.params {
            uses.bind(&p.name, 0);
        }
        uses.walk(m, def.body, 0);
        uses
    }

    /// Whether a value bound to `name` may stay delayed.
    pub fn may_delay(&self, name: &Name) -> bool {
        matches!(self.info.get(name), Some(&(depth, 1, deepest)) if deepest <= depth)
    }

    /// For a tuple bound to `name` that is only ever projected (`x.i`):
    /// whether component `i` (1-based) may stay delayed, i.e. is projected
    /// once, outside lambdas the binding is outside of. `None` when the
    /// name is also used whole.
    pub fn may_delay_part(&self, name: &Name, i: u32) -> Option<bool> {
        let &(depth, _, _) = self.info.get(name)?;
        if self.whole.get(name).is_some_and(|&(c, _)| c > 0) {
            return None;
        }
        Some(match self.parts.get(&(name.clone(), i)) {
            None => true,
            Some(&(count, deepest)) => count <= 1 && deepest <= depth,
        })
    }

    fn bind(&mut self, name: &Name, depth: usize) {
        self.info.insert(name.clone(), (depth, 0, 0));
    }

    fn note(map: &mut HashMap<Name, (usize, usize, usize)>, name: &Name, depth: usize) -> bool {
        match map.get_mut(name) {
            Some((_, count, deepest)) => {
                *count += 1;
                *deepest = (*deepest).max(depth);
                true
            }
            None => false,
        }
    }

    fn walk(&mut self, m: &Module, id: ExprId, depth: usize) {
        syntax::stack::guard(|| match m.expr(id) {
            Expr::Var(name) => {
                if Self::note(&mut self.info, name, depth) {
                    let w = self.whole.entry(name.clone()).or_default();
                    w.0 += 1;
                    w.1 = w.1.max(depth);
                }
            }
            Expr::Proj { tuple, index } if matches!(m.expr(*tuple), Expr::Var(_)) => {
                let Expr::Var(name) = m.expr(*tuple) else {
                    return;
                };
                if Self::note(&mut self.info, name, depth) {
                    let p = self.parts.entry((name.clone(), *index)).or_default();
                    p.0 += 1;
                    p.1 = p.1.max(depth);
                }
            }
            Expr::Let {
                pat, value, body, ..
            } => {
                self.walk(m, *value, depth);
                match pat {
                    Pat::Var(n) => self.bind(n, depth),
                    Pat::Tuple(ns) => ns.iter().for_each(|n| self.bind(n, depth)),
                }
                self.walk(m, *body, depth);
            }
            Expr::Lambda { params, body } => {
                for p in params {
                    self.bind(&p.name, depth + 1);
                }
                self.walk(m, *body, depth + 1);
            }
            e => e.for_each_child(|c| self.walk(m, c, depth)),
        })
    }
}
