//! Environments of the evaluator: persistent maps from interned names to
//! values.
//!
//! Every name of a module is interned once per evaluation into a [`Sym`]
//! (a `u32`), in a deterministic order (definitions' parameters, then the
//! arena in id order), so the same module always gets the same symbols and
//! a closure returned by one call can be passed to another call on the same
//! module. Environments are persistent ([`Env`]): a short list of the most
//! recent bindings over an `rpds::HashTrieMap<Sym, Value>`; extending one
//! is O(1) amortised plus O(log n) map updates, lookups are O(log n), and
//! a closure captures its environment by an O(1) clone.
//!
//! [`Symbols`] also keeps, per node, the symbols its binders and its
//! variable use, so the evaluator never hashes a string.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::rc::Rc;

use syntax::{Expr, Module, Pat};

use crate::value::Value;

/// An interned name.
pub(crate) type Sym = u32;

/// The persistent map under an environment. Symbols are small integers,
/// hashed by [`SymHasher`]. (rpds names its `Rc` pointer kind only through
/// the `archery` crate; the `Sync` alias takes a hasher without naming it,
/// and its atomic counts cost less than SipHash would.)
type Map = rpds::HashTrieMapSync<Sym, Value, BuildHasherDefault<SymHasher>>;

/// How many recent bindings an environment keeps in its list before
/// moving them into the map.
const MAX_LINKS: usize = 8;

/// A persistent environment: the most recent bindings (at most
/// [`MAX_LINKS`]) in a shared linked list, the older ones in a persistent
/// hash map. Binding a name allocates one list cell; a lookup scans at
/// most `MAX_LINKS` cells and then the map. See note [environments].
#[derive(Clone)]
pub(crate) struct Env {
    map: Map,
    links: Option<Rc<Link>>,
    n_links: usize,
}

struct Link {
    sym: Sym,
    value: Value,
    next: Option<Rc<Link>>,
}

impl Env {
    /// The value bound to `sym`, the most recent binding first.
    pub(crate) fn get(&self, sym: Sym) -> Option<&Value> {
        let mut link = self.links.as_deref();
        while let Some(l) = link {
            if l.sym == sym {
                return Some(&l.value);
            }
            link = l.next.as_deref();
        }
        self.map.get(&sym)
    }

    /// Binds `sym` to `value`, shadowing any earlier binding.
    pub(crate) fn bind(&mut self, sym: Sym, value: Value) {
        if self.n_links == MAX_LINKS {
            self.flatten();
        }
        self.links = Some(Rc::new(Link {
            sym,
            value,
            next: self.links.take(),
        }));
        self.n_links += 1;
    }

    /// Moves the list into the map, so that a closure capturing this
    /// environment starts with an empty list.
    pub(crate) fn flatten(&mut self) {
        let mut pending = Vec::with_capacity(self.n_links);
        let mut link = self.links.take();
        while let Some(l) = link {
            // Taking the cells apart one at a time keeps dropping them flat.
            link = match Rc::try_unwrap(l) {
                Ok(Link { sym, value, next }) => {
                    pending.push((sym, value));
                    next
                }
                Err(shared) => {
                    pending.push((shared.sym, shared.value.clone()));
                    shared.next.clone()
                }
            };
        }
        // Oldest first, so that newer bindings shadow older ones.
        for (sym, value) in pending.into_iter().rev() {
            self.map.insert_mut(sym, value);
        }
        self.n_links = 0;
    }
}

/// An empty environment.
pub(crate) fn empty_env() -> Env {
    Env {
        map: Map::new_with_hasher_and_ptr_kind(BuildHasherDefault::default()),
        links: None,
        n_links: 0,
    }
}

/// A hasher for small integer keys: a SplitMix64 finaliser, which spreads
/// every input bit over the whole hash (the trie indexes by hash bits).
#[derive(Default, Clone, Copy)]
pub(crate) struct SymHasher(u64);

impl Hasher for SymHasher {
    fn finish(&self) -> u64 {
        let mut z = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 << 8) | u64::from(b);
        }
    }

    fn write_u32(&mut self, i: u32) {
        self.0 = u64::from(i);
    }
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

    /// The symbol of `name`, made up if the module does not use it yet.
    pub(crate) fn intern(&mut self, name: &str) -> Sym {
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

// Note [environments]
//
// A call of a closure binds its parameters on top of the environment the
// closure captured, evaluates a small body and drops the result: this is
// the inner loop of every `map`, `map2` and `reduce`. With a hash trie
// alone each binding copied a trie node and allocated an entry (about 600
// instructions); with the list in front it is one allocation. Closures
// flatten the environment they capture, so a call never starts with a
// full list; long `let` chains move eight bindings at a time into the map,
// so lookups stay O(log n) however deep the program.
