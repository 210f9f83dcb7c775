//! The shared type and context tables, with the lookups every pass needs.
//!
//! [`Tables`] owns `Module::tys` and `Module::ctxs` while a pass builds or
//! reads a module. It keeps them canonical (interning a type or a snoc that
//! exists returns the existing id) and answers, in O(log n), the i-th entry
//! of a context and its prefix of a given length, by the jump pointers of
//! Myers' applicative random-access stacks: each context points to its
//! parent and to one farther ancestor, chosen so that any ancestor is
//! reached in O(log n) jumps. Nothing here is serialized but the two tables.

use crate::hashcons::Shapes;
use crate::ir::{Ctx, CtxId, TyId, UTy};
use syntax::Ty;
use syntax::fxhash::FxHashMap;

/// The type and context tables, interned, with random access into contexts.
#[derive(Debug, Clone)]
pub struct Tables {
    tys: Vec<UTy>,
    ctxs: Vec<Ctx>,
    // Fx, not SipHash: a literal of n reals interns n contexts, and these
    // lookups were a quarter of its gradient's time (docs/scale.md).
    // Keyed by structure, not by the whole `UTy`: hashing a whole ground
    // type walks it, d² for the types of a nested literal (crate::hashcons).
    ty_index: FxHashMap<TyKey, TyId>,
    shapes: Shapes,
    ctx_index: FxHashMap<(CtxId, TyId), CtxId>,
    /// Length of each context.
    len: Vec<u32>,
    /// Jump pointer of each context (itself for the empty one).
    jump: Vec<CtxId>,
    /// The largest type id occurring in each context (for well-foundedness).
    max_ty: Vec<Option<TyId>>,
}

/// The key of a type in the index: a ground type by its structural id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum TyKey {
    Ground(u32),
    Cont(CtxId, TyId),
}

/// Why a pair of tables cannot be loaded.
#[derive(Debug, Clone, PartialEq)]
pub enum TableError {
    /// A type entry is wrong.
    Ty(TyId, String),
    /// A context entry is wrong.
    Ctx(CtxId, String),
}

impl Default for Tables {
    fn default() -> Self {
        Tables::new()
    }
}

impl Tables {
    /// Tables holding only the empty context.
    pub fn new() -> Tables {
        Tables {
            tys: Vec::new(),
            ctxs: vec![Ctx::Empty],
            ty_index: FxHashMap::default(),
            shapes: Shapes::default(),
            ctx_index: FxHashMap::default(),
            len: vec![0],
            jump: vec![CtxId::EMPTY],
            max_ty: vec![None],
        }
    }

    /// Loads the tables of a module, checking that they are canonical and
    /// well founded: entry 0 and only it is empty, parents and types point
    /// backward, a continuation type names only earlier types, and nothing
    /// occurs twice.
    pub fn load(tys: &[UTy], ctxs: &[Ctx]) -> Result<Tables, Vec<TableError>> {
        let mut errors = Vec::new();
        let mut t = Tables {
            tys: Vec::with_capacity(tys.len()),
            ctxs: vec![Ctx::Empty],
            ty_index: FxHashMap::default(),
            shapes: Shapes::default(),
            ctx_index: FxHashMap::default(),
            len: vec![0],
            jump: vec![CtxId::EMPTY],
            max_ty: vec![None],
        };
        if ctxs.first() != Some(&Ctx::Empty) {
            errors.push(TableError::Ctx(
                CtxId::EMPTY,
                "context 0 must be the empty context".to_string(),
            ));
            return Err(errors);
        }
        // Types and contexts refer to each other (a continuation type names
        // a context), so they are loaded together: a type may name a context
        // whose entries are all earlier types, a context entry may name any
        // type that exists.
        for (i, ty) in tys.iter().enumerate() {
            let id = TyId(i as u32);
            if let UTy::Cont(arg, ret) = ty {
                if ret.index() >= i {
                    errors.push(TableError::Ty(
                        id,
                        format!("result type {ret} is not earlier"),
                    ));
                }
                if ctxs.get(arg.index()).is_none() {
                    errors.push(TableError::Ty(id, format!("context {arg} does not exist")));
                }
            }
            let key = t.key(ty);
            if t.ty_index.insert(key, id).is_some() {
                errors.push(TableError::Ty(
                    id,
                    "this type occurs twice in the table".to_string(),
                ));
            }
            t.tys.push(ty.clone());
        }
        for (i, c) in ctxs.iter().enumerate().skip(1) {
            let id = CtxId(i as u32);
            match *c {
                Ctx::Empty => {
                    errors.push(TableError::Ctx(
                        id,
                        "only context 0 may be empty".to_string(),
                    ));
                    // Keep ids aligned with a harmless stand-in.
                    t.push_ctx(CtxId::EMPTY, None);
                }
                Ctx::Snoc(parent, ty) => {
                    if parent.index() >= i {
                        errors.push(TableError::Ctx(
                            id,
                            format!("parent {parent} is not earlier"),
                        ));
                        t.push_ctx(CtxId::EMPTY, None);
                        continue;
                    }
                    if ty.index() >= tys.len() {
                        errors.push(TableError::Ctx(id, format!("type {ty} does not exist")));
                        t.push_ctx(parent, None);
                        continue;
                    }
                    if t.ctx_index.insert((parent, ty), id).is_some() {
                        errors.push(TableError::Ctx(
                            id,
                            "this context occurs twice in the table".to_string(),
                        ));
                    }
                    t.push_ctx(parent, Some(ty));
                }
            }
        }
        // A continuation type must not (even indirectly) contain itself.
        for (i, ty) in tys.iter().enumerate() {
            if let UTy::Cont(arg, _) = ty
                && let Some(max) = t.max_ty.get(arg.index()).copied().flatten()
                && max.index() >= i
            {
                errors.push(TableError::Ty(
                    TyId(i as u32),
                    format!("the argument context {arg} holds type {max}, which is not earlier"),
                ));
            }
        }
        if errors.is_empty() {
            t.ctxs = ctxs.to_vec();
            Ok(t)
        } else {
            Err(errors)
        }
    }

    fn push_ctx(&mut self, parent: CtxId, ty: Option<TyId>) -> CtxId {
        let id = CtxId(self.len.len() as u32);
        let p = parent.index();
        let len = self.len[p] + 1;
        // Myers' jump pointers: jump over the parent's jump twice when the
        // two jumps below have the same length, else jump to the parent.
        let pj = self.jump[p];
        let pjj = self.jump[pj.index()];
        let jump = if p != 0
            && self.len[p] - self.len[pj.index()] == self.len[pj.index()] - self.len[pjj.index()]
        {
            pjj
        } else {
            parent
        };
        self.len.push(len);
        self.jump.push(jump);
        let max = match (self.max_ty[p], ty) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
        self.max_ty.push(max);
        if let Some(ty) = ty {
            self.ctxs.push(Ctx::Snoc(parent, ty));
        }
        id
    }

    /// The tables as stored in a module.
    pub fn into_parts(self) -> (Vec<UTy>, Vec<Ctx>) {
        (self.tys, self.ctxs)
    }

    /// The type table.
    pub fn tys(&self) -> &[UTy] {
        &self.tys
    }

    /// The number of contexts.
    pub fn n_ctxs(&self) -> usize {
        self.len.len()
    }

    fn key(&mut self, ty: &UTy) -> TyKey {
        match ty {
            UTy::Ground(g) => TyKey::Ground(self.shapes.id(g)),
            UTy::Cont(arg, ret) => TyKey::Cont(*arg, *ret),
        }
    }

    /// The id of a type, interning it.
    pub fn intern(&mut self, ty: UTy) -> TyId {
        let key = self.key(&ty);
        if let Some(&id) = self.ty_index.get(&key) {
            return id;
        }
        let id = TyId(self.tys.len() as u32);
        self.ty_index.insert(key, id);
        self.tys.push(ty);
        id
    }

    /// The id of a ground type, interning it.
    pub fn ground(&mut self, ty: &Ty) -> TyId {
        self.intern(UTy::Ground(ty.clone()))
    }

    /// The id of a continuation type `underline(arg) → ret`.
    pub fn cont(&mut self, arg: CtxId, ret: TyId) -> TyId {
        self.intern(UTy::Cont(arg, ret))
    }

    /// The type behind an id.
    pub fn ty(&self, id: TyId) -> &UTy {
        &self.tys[id.index()]
    }

    /// The ground type behind an id, if it is one.
    pub fn ground_ty(&self, id: TyId) -> Option<&Ty> {
        match self.ty(id) {
            UTy::Ground(ty) => Some(ty),
            UTy::Cont(..) => None,
        }
    }

    /// Whether a type id exists.
    pub fn has_ty(&self, id: TyId) -> bool {
        id.index() < self.tys.len()
    }

    /// Whether a context id exists.
    pub fn has_ctx(&self, id: CtxId) -> bool {
        id.index() < self.len.len()
    }

    /// `c · ty`, interned.
    pub fn snoc(&mut self, c: CtxId, ty: TyId) -> CtxId {
        if let Some(&id) = self.ctx_index.get(&(c, ty)) {
            return id;
        }
        let id = self.push_ctx(c, Some(ty));
        self.ctx_index.insert((c, ty), id);
        id
    }

    /// The list of the given types, as a context.
    pub fn list(&mut self, tys: &[TyId]) -> CtxId {
        tys.iter().fold(CtxId::EMPTY, |c, &t| self.snoc(c, t))
    }

    /// The length of a context.
    pub fn len(&self, c: CtxId) -> u32 {
        self.len[c.index()]
    }

    /// The parent and last type of a non-empty context.
    pub fn split_last(&self, c: CtxId) -> Option<(CtxId, TyId)> {
        match self.ctxs.get(c.index()) {
            Some(Ctx::Snoc(p, t)) => Some((*p, *t)),
            _ => None,
        }
    }

    /// The prefix of `c` of length `n` (`n <= len(c)`), in O(log len(c)).
    pub fn prefix(&self, c: CtxId, n: u32) -> Option<CtxId> {
        let mut c = c;
        if n > self.len(c) {
            return None;
        }
        while self.len(c) > n {
            let j = self.jump[c.index()];
            if self.len(j) >= n {
                c = j;
            } else {
                c = self.split_last(c)?.0;
            }
        }
        Some(c)
    }

    /// The i-th entry (1-based) of `c`.
    pub fn entry(&self, c: CtxId, i: u32) -> Option<TyId> {
        if i == 0 || i > self.len(c) {
            return None;
        }
        let p = self.prefix(c, i)?;
        self.split_last(p).map(|(_, t)| t)
    }

    /// Whether `p` is a prefix of `c`.
    pub fn is_prefix(&self, p: CtxId, c: CtxId) -> bool {
        self.prefix(c, self.len(p)) == Some(p)
    }

    /// The entries of `c`, first to last. O(len(c)).
    pub fn entries(&self, c: CtxId) -> Vec<TyId> {
        let mut out = Vec::with_capacity(self.len(c) as usize);
        let mut c = c;
        while let Some((p, t)) = self.split_last(c) {
            out.push(t);
            c = p;
        }
        out.reverse();
        out
    }

    /// The entries of `c` after its first `from` ones. O(len(c) - from).
    pub fn entries_from(&self, c: CtxId, from: u32) -> Vec<TyId> {
        let mut out = Vec::new();
        let mut c = c;
        while self.len(c) > from {
            let Some((p, t)) = self.split_last(c) else {
                break;
            };
            out.push(t);
            c = p;
        }
        out.reverse();
        out
    }

    /// `a ++ b`, in O(len(b)) (O(1) when `a` is empty).
    pub fn append(&mut self, a: CtxId, b: CtxId) -> CtxId {
        if a == CtxId::EMPTY {
            return b;
        }
        // Most contexts appended are a primitive's operands, a few
        // entries: those are read onto the stack instead of into a `Vec`
        // (the UNF check appends one per primitive).
        const SHORT: usize = 8;
        let n = self.len(b) as usize;
        if n > SHORT {
            let entries = self.entries(b);
            return entries.into_iter().fold(a, |c, t| self.snoc(c, t));
        }
        let mut short = [TyId(0); SHORT];
        let mut c = b;
        for slot in short[..n].iter_mut().rev() {
            let (p, t) = self
                .split_last(c)
                .expect("invariant: a context has as many entries as its length");
            *slot = t;
            c = p;
        }
        short[..n].iter().fold(a, |c, &t| self.snoc(c, t))
    }
}
