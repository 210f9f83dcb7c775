//! Environments of the evaluator: persistent maps from interned names to
//! values.
//!
//! Every name of a module is interned once per evaluation into a [`Sym`]
//! (a `u32`), in a deterministic order (definitions' parameters, then the
//! arena in id order), so the same module always gets the same symbols and
//! a closure returned by one call can be passed to another call on the same
//! module. Environments are `rpds::HashTrieMap<Sym, Value>`: extending one
//! is O(log n) and shares structure, and a closure captures its
//! environment by an O(1) clone.
//!
//! [`Symbols`] also keeps, per node, the symbols its binders and its
//! variable use, so the evaluator never hashes a string.

use std::collections::HashMap;

use syntax::{Expr, Module, Pat};

use crate::value::Value;

/// An interned name.
pub(crate) type Sym = u32;

/// A persistent environment. (rpds's default hasher is SipHash with a
/// random key; symbols are small integers, so hashing is cheap either way.)
pub(crate) type Env = rpds::HashTrieMap<Sym, Value>;

/// An empty environment.
pub(crate) fn empty_env() -> Env {
    Env::new()
}

/// The interned names of one module.
pub(crate) struct Symbols {
    table: HashMap<String, Sym>,
    /// Per node: the symbol a `Var` reads.
    var: Vec<Sym>,
    /// Per node: the range in `binders` of the names a `Let` or `Lambda` binds.
    binder_range: Vec<(u32, u32)>,
    binders: Vec<Sym>,
}

impl Symbols {
    /// Interns every name of `m`.
    pub(crate) fn new(m: &Module) -> Symbols {
        let mut s = Symbols {
            table: HashMap::new(),
            var: Vec::with_capacity(m.exprs.len()),
            binder_range: Vec::with_capacity(m.exprs.len()),
            binders: Vec::new(),
        };
        for def in &m.defs {
            for p in &def.params {
                s.intern(p.name.as_str());
            }
        }
        for e in &m.exprs {
            let var = match e {
                Expr::Var(n) => s.intern(n.as_str()),
                _ => Sym::MAX,
            };
            s.var.push(var);
            let start = s.binders.len() as u32;
            match e {
                Expr::Let {
                    pat: Pat::Var(n), ..
                } => {
                    let sym = s.intern(n.as_str());
                    s.binders.push(sym);
                }
                Expr::Let {
                    pat: Pat::Tuple(ns),
                    ..
                } => {
                    for n in ns {
                        let sym = s.intern(n.as_str());
                        s.binders.push(sym);
                    }
                }
                Expr::Lambda { params, .. } => {
                    for p in params {
                        let sym = s.intern(p.name.as_str());
                        s.binders.push(sym);
                    }
                }
                _ => {}
            }
            s.binder_range.push((start, s.binders.len() as u32));
        }
        s
    }

    fn intern(&mut self, name: &str) -> Sym {
        if let Some(&sym) = self.table.get(name) {
            return sym;
        }
        let sym = self.table.len() as Sym;
        self.table.insert(name.to_string(), sym);
        sym
    }

    /// The symbol of a name, if the module uses it.
    pub(crate) fn lookup(&self, name: &str) -> Option<Sym> {
        self.table.get(name).copied()
    }

    /// The symbol a `Var` node reads (`Sym::MAX` for other nodes).
    pub(crate) fn var(&self, index: usize) -> Sym {
        self.var.get(index).copied().unwrap_or(Sym::MAX)
    }

    /// The symbols a `Let` or `Lambda` node binds, in order.
    pub(crate) fn binders(&self, index: usize) -> &[Sym] {
        match self.binder_range.get(index) {
            Some(&(lo, hi)) => self.binders.get(lo as usize..hi as usize).unwrap_or(&[]),
            None => &[],
        }
    }
}
