//! The free variables of an expression: the one definition every crate
//! uses (UNF's contexts of function bodies, the residuals of `inspect`,
//! the closures `forward` builds for reverse mode inside the language).

use std::collections::{BTreeMap, HashMap};

use crate::ir::{Expr, ExprId, Module, Name, Pat};
use crate::stack::guard;

/// The variables free in `e`, each with its first use (in the order the
/// tree is read, operands first), whose type and span stand for the
/// variable's.
pub fn free_vars(m: &Module, e: ExprId) -> BTreeMap<Name, ExprId> {
    let mut walk = Walk {
        m,
        bound: HashMap::new(),
        out: BTreeMap::new(),
    };
    walk.expr(e);
    walk.out
}

struct Walk<'m> {
    m: &'m Module,
    /// How many binders in scope bind each name (a name may be bound in
    /// nested scopes of a surface-form module).
    bound: HashMap<Name, usize>,
    out: BTreeMap<Name, ExprId>,
}

impl Walk<'_> {
    fn expr(&mut self, e: ExprId) {
        guard(|| match self.m.expr(e) {
            Expr::Var(x) => {
                if self.bound.get(x).copied().unwrap_or(0) == 0 {
                    self.out.entry(x.clone()).or_insert(e);
                }
            }
            Expr::Let {
                pat, value, body, ..
            } => {
                self.expr(*value);
                let names: Vec<Name> = match pat {
                    Pat::Var(x) => vec![x.clone()],
                    Pat::Tuple(xs) => xs.clone(),
                };
                self.under(&names, *body);
            }
            Expr::Lambda { params, body } => {
                let names: Vec<Name> = params.iter().map(|p| p.name.clone()).collect();
                self.under(&names, *body);
            }
            other => other.for_each_child(|c| self.expr(c)),
        })
    }

    /// `body` with `names` bound.
    fn under(&mut self, names: &[Name], body: ExprId) {
        for n in names {
            *self.bound.entry(n.clone()).or_insert(0) += 1;
        }
        self.expr(body);
        for n in names {
            if let Some(c) = self.bound.get_mut(n) {
                *c -= 1;
            }
        }
    }
}
