//! One round of the simplifier: a single pass over every definition that
//! rebuilds its tree, firing the rules of `rules.rs` on the way.
//!
//! The pass is the classic "simplifier with a substitution" (GHC's
//! simplifier, Peyton Jones & Marlow, *Secrets of the GHC inliner*):
//! - the census (`census.rs`) says how often each name is used;
//! - an environment ([`Env`], a persistent `rpds` map, so that closures can
//!   keep a snapshot for free) maps a bound name to what replaces it: a
//!   leaf to copy (forward substitution), an unsimplified expression with
//!   its own environment to simplify at the single use (inlining of a
//!   lambda used once, Lemma 5.1), or an already simplified expression to
//!   put at the single use (an argument of a beta-reduction);
//! - `let`s float: a `let` met in an evaluation context (the value of a
//!   `let`, an argument) is pushed onto the current *block*, the list of
//!   bindings that is wrapped around the expression at the nearest lambda
//!   body, `if` branch or definition body. This is let normalisation, done
//!   once per binding instead of once per level.
//!
//! Every node is visited a bounded number of times per round (a lambda is
//! simplified where it is used, never before; copies are made only of
//! leaves, or of lambdas under [`crate::Config::inline_budget`]), so a round
//! is linear in the size of the program.
//!
//! The new nodes are appended to the same arena as the old ones; the old
//! ones become unreachable, and `Module::compact` drops them once the last
//! round is done (compacting after every round would cost as much as the
//! round itself). Each new node gets its type at creation: the type of the node it
//! replaces (rewrites preserve meaning, hence types), or the type built from
//! its parts.
//!
//! Invariants kept: every child id is smaller than its parent's, every node
//! has one parent (an already built node is used once, leaves are copied),
//! and binders stay unique within a definition: a binder that is built a
//! second time (a copied lambda) gets a fresh name.

mod bind;

pub(crate) use bind::{arithmetic, cheap, write_cse_key};

use std::collections::BTreeMap;
use std::hash::BuildHasherDefault;

use rpds::HashTrieMap;
use syntax::ir::NameGen;
use syntax::{Expr, ExprId, Module, Name, Param, Pat, Span, Ty, stack};

use crate::Config;
use crate::census::{Occ, census};
use crate::hash::{FxHashMap, FxHashSet, FxHasher};
use crate::rules::RuleName;

/// What replaces a bound name.
#[derive(Debug, Clone)]
pub(crate) enum Subst {
    /// A copy of this leaf (a variable or a literal) at every use.
    Leaf(Expr, Ty),
    /// This unsimplified expression, simplified in its own environment at
    /// the use (a lambda used once, or an array used once).
    Susp(ExprId, Env),
    /// This already simplified expression, at the single use.
    Done(ExprId),
    /// The value of `let x = e` with `x` used once (`inline-once`):
    /// simplified at the use, and put there unless it is taller than
    /// `Config::inline_height`, in which case it is bound to `x` there
    /// (the name it is found under: not stored, a `String` fewer to copy
    /// at every such binding and every lookup of it).
    Once(ExprId, Env),
    /// A tuple split into components, bound to these names; the tuple is
    /// only ever projected.
    Tuple(Vec<Name>),
}

/// The substitution in force, persistent so that snapshots are free.
/// Hashed with the pass's Fx hasher: with rpds' default SipHash, hashing
/// names for the environment's lookups and insertions was 3% of the
/// optimizer's instructions on the let chain (docs/scale.md). Nothing
/// iterates over the environment, so the hash decides nothing but speed.
pub(crate) type Env = HashTrieMap<Name, Subst, archery::RcK, BuildHasherDefault<FxHasher>>;

/// An empty environment. The trie's degree is 16 rather than rpds' default
/// 64: an insertion copies one node per level, and narrower nodes make the
/// copies cheaper than the extra level costs (measured on the let-chain
/// benchmark: a third of the time of a round went to insertions at 64).
pub(crate) fn empty_env() -> Env {
    HashTrieMap::new_with_hasher_and_degree_and_ptr_kind(BuildHasherDefault::default(), 16)
}

/// The result of simplifying one node: done, or an expression in tail
/// position left to simplify in its environment (see `Round::simplify`).
pub(crate) enum Step {
    Done(ExprId),
    Tail(ExprId, Env),
}

/// Where an expression sits, for let normalisation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Pos {
    /// The expression a block evaluates to: `let`s here are simply bindings.
    Root,
    /// The value of a `let`: a `let` here floats out by `let-let`.
    LetValue,
    /// An argument of a call, builtin, tuple or projection: a `let` here
    /// floats out by `let-float`.
    Arg,
}

/// A binding waiting to be wrapped around the result of its block.
#[derive(Debug, Clone)]
pub(crate) struct Bind {
    pub pat: Pat,
    pub ann: Option<Ty>,
    pub value: ExprId,
    pub span: Span,
    /// The `cse` key this binding recorded, dropped when it is wrapped.
    pub cse_key: Option<Name>,
    /// The `cse-alpha` hash this binding recorded, dropped likewise.
    pub alpha_key: Option<u64>,
    /// The input `let` this binding came from, which `wrap` hands on
    /// instead of a copy when it is unchanged (note [unchanged nodes]).
    pub orig: Option<ExprId>,
}

/// What is known of a `let`-bound array, for the array rules.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Fact {
    /// The array is `map (fun _ -> c) B` with this literal `c`, and
    /// `size_src` is `B`.
    pub const_elem: Option<(Expr, Ty)>,
    /// A variable bound to an array of the same length, cheaper to walk.
    pub size_src: Option<(Name, Ty)>,
    /// The array is `build n f` with `n` this integer term (`length-of`).
    pub length: Option<crate::local::LenTerm>,
}

/// The operands of a node, copied out of the arena so that the round can
/// append to it while it walks them: on the stack for up to four (every
/// arithmetic builtin), instead of a clone of the node's operand list
/// (an allocation per node visited, every round).
pub(crate) enum Args {
    Small([ExprId; 4], usize),
    Big(Vec<ExprId>),
}

impl Args {
    pub(crate) fn of(items: &[ExprId]) -> Args {
        if items.len() <= 4 {
            let mut buf = [ExprId(0); 4];
            buf[..items.len()].copy_from_slice(items);
            Args::Small(buf, items.len())
        } else {
            Args::Big(items.to_vec())
        }
    }
}

impl std::ops::Deref for Args {
    type Target = [ExprId];
    fn deref(&self) -> &[ExprId] {
        match self {
            Args::Small(buf, n) => &buf[..*n],
            Args::Big(v) => v,
        }
    }
}

/// The state of one round.
pub(crate) struct Round<'c> {
    /// The arena: the old nodes, then the new ones.
    pub m: Module,
    /// The census of the definition being simplified.
    occ: FxHashMap<Name, Occ>,
    /// Censuses of output subtrees being simplified again (innermost last).
    overlays: Vec<FxHashMap<Name, Occ>>,
    /// Facts about output names.
    pub facts: FxHashMap<Name, Fact>,
    /// The binders already built in this definition.
    emitted: FxHashSet<Name>,
    /// The `Subst::Done` nodes already placed.
    done_used: FxHashSet<ExprId>,
    /// The height of each node of the arena.
    heights: Vec<u16>,
    /// `cse`: the values bound by the `let`s in scope, by key, and the
    /// variable each is bound to. An entry lives as long as the block that
    /// holds its `let` (see `wrap`); binders are unique, so nothing else
    /// limits its scope.
    cse: FxHashMap<Name, (Expr, Ty)>,
    /// `cse-alpha`: the loop values bound by the `let`s in scope, by a
    /// hash that ignores the names of their binders, with the variable
    /// each is bound to; scoped like `cse`.
    pub(crate) cse_alpha: FxHashMap<u64, Vec<(ExprId, Name, Ty)>>,
    /// The `cse` key `cse_use` computed last, with its node: the binding
    /// of that node asks for the same key next (`bind_var_output`).
    pub(crate) key_memo: Option<(ExprId, Name)>,
    /// Fresh names, made on first use (collecting every name of a large
    /// module costs as much as a fifth of a round).
    names: Option<NameGen>,
    cfg: &'c Config,
    /// How often each rule fired.
    pub fired: BTreeMap<RuleName, usize>,
    /// Whether `gather-fusion` may take an `ifold`'s read at its counter
    /// (only once the other rules have settled: note [late gathers] in
    /// `lib.rs`), and whether it would have.
    pub(crate) late: bool,
    pub(crate) deferred: std::cell::Cell<bool>,
    /// Note [unchanged nodes]: which input nodes the round has handed on
    /// as they are (one entry per input node; empty when the round builds
    /// every node anew).
    kept: Vec<bool>,
}

/// Runs one round over every definition of `m`, appending the new trees
/// to its arena (the old ones stay, unreachable, until the caller
/// compacts). `names` persists across rounds so that fresh names stay fresh.
pub(crate) fn round(
    m: Module,
    names: Option<NameGen>,
    cfg: &Config,
    late: bool,
    share: bool,
    censuses: Option<Vec<FxHashMap<Name, Occ>>>,
) -> (Module, Option<NameGen>, BTreeMap<RuleName, usize>, bool) {
    // Heights of the existing nodes, children first (ids point backwards).
    let mut m = m;
    // A round about doubles the arena: reserving now spares copying the
    // old nodes at every growth (and the allocator's consolidations that a
    // large reallocation sets off).
    let n = m.exprs.len();
    m.exprs.reserve(n);
    m.spans.reserve(n);
    m.types.reserve(n);
    let mut heights: Vec<u16> = Vec::with_capacity(m.exprs.len() * 2);
    for e in &m.exprs {
        let mut h = 0u16;
        e.for_each_child(|c| h = h.max(heights[c.index()]));
        heights.push(h.saturating_add(1));
    }
    let mut r = Round {
        heights,
        cse: FxHashMap::default(),
        cse_alpha: FxHashMap::default(),
        m,
        occ: FxHashMap::default(),
        overlays: Vec::new(),
        facts: FxHashMap::default(),
        emitted: FxHashSet::default(),
        done_used: FxHashSet::default(),
        key_memo: None,
        names,
        cfg,
        fired: BTreeMap::new(),
        late,
        deferred: std::cell::Cell::new(false),
        kept: if share { vec![false; n] } else { Vec::new() },
    };
    // The censuses of the program as it is, when the caller has them
    // (note [quiet first round]).
    let mut given = censuses
        .filter(|c| c.len() == r.m.defs.len())
        .map(Vec::into_iter);
    for i in 0..r.m.defs.len() {
        let root = r.m.defs[i].body;
        // About one binder per four live nodes in reverse mode's output,
        // the arena holds older rounds' nodes too.
        r.occ = match given.as_mut().and_then(Iterator::next) {
            Some(occ) => occ,
            None => census(&r.m, root, r.m.exprs.len() / 8),
        };
        r.facts.clear();
        r.cse.clear();
        r.cse_alpha.clear();
        r.emitted = r.m.defs[i].params.iter().map(|p| p.name.clone()).collect();
        let body = r.block(root, &empty_env());
        r.m.defs[i].body = body;
    }
    let deferred = r.deferred.get();
    (r.m, r.names, r.fired, deferred)
}

impl Round<'_> {
    // ----- bookkeeping -------------------------------------------------

    /// Whether `rule` may fire.
    pub(crate) fn on(&self, rule: RuleName) -> bool {
        self.cfg.rules.contains(rule)
    }

    /// Records a firing of `rule`.
    pub(crate) fn fire(&mut self, rule: RuleName) {
        *self.fired.entry(rule).or_insert(0) += 1;
    }

    /// Takes back a firing of `rule` recorded by a rewrite that was then
    /// not made.
    fn unfire(&mut self, rule: RuleName) {
        if let Some(n) = self.fired.get_mut(&rule) {
            *n -= 1;
            if *n == 0 {
                self.fired.remove(&rule);
            }
        }
    }

    /// Whether the input node `id` may be handed on as it is, in place of
    /// a new copy of it (note [unchanged nodes]); if so, it is taken.
    fn keep(&mut self, id: ExprId) -> bool {
        match self.kept.get_mut(id.index()) {
            Some(k @ false) => {
                *k = true;
                true
            }
            _ => false,
        }
    }

    /// Records that the binding `let_chain` or `peel` has just pushed (if
    /// it pushed exactly one) came from the input `let` at `id`.
    pub(super) fn mark_orig(&self, blk: &mut [Bind], before: usize, id: ExprId) {
        if !self.kept.is_empty()
            && blk.len() == before + 1
            && let Some(b) = blk.last_mut()
        {
            b.orig = Some(id);
        }
    }

    /// Whether the binding `b` around `body` is the input `let` at `b.orig`
    /// unchanged, which is then handed on as it is.
    fn keep_let(&mut self, b: &Bind, body: ExprId) -> Option<ExprId> {
        let o = b.orig?;
        let Expr::Let {
            pat,
            ty,
            value,
            body: ob,
        } = self.m.expr(o)
        else {
            return None;
        };
        let same = *pat == b.pat
            && *ty == b.ann
            && *value == b.value
            && *ob == body
            && self.m.span(o) == b.span
            && self.m.types[o.index()] == self.m.types[body.index()];
        (same && self.keep(o)).then_some(o)
    }

    /// Appends a node with its type.
    pub(crate) fn add(&mut self, e: Expr, ty: Ty, span: Span) -> ExprId {
        let mut h = 0u16;
        e.for_each_child(|c| h = h.max(self.heights[c.index()]));
        self.heights.push(h.saturating_add(1));
        let id = self.m.add(e, span);
        self.m.types.push(ty);
        id
    }

    /// Whether a built expression is short enough to be moved into a use
    /// (`inline-once`, `inline-arg`): chains of single-use `let`s stay
    /// `let`s past `Config::inline_height`, so that no expression grows as
    /// deep as the program is long.
    fn fits(&self, v: ExprId) -> bool {
        // A function value must reach its call however tall it is: calls
        // are where it disappears (Lemma 5.3).
        usize::from(self.heights[v.index()]) <= self.cfg.inline_height
            || matches!(self.m.types[v.index()], Ty::Func(..))
    }

    /// The type of a node.
    pub(crate) fn ty(&self, id: ExprId) -> Ty {
        self.m.types[id.index()].clone()
    }

    /// The node behind an id, cloned.
    pub(crate) fn node(&self, id: ExprId) -> Expr {
        self.m.expr(id).clone()
    }

    /// The node as a leaf (variable or literal), with its type.
    pub(crate) fn leaf(&self, id: ExprId) -> Option<(Expr, Ty)> {
        match self.m.expr(id) {
            e @ (Expr::Var(_) | Expr::Real(_) | Expr::Int(_) | Expr::Bool(_)) => {
                Some((e.clone(), self.ty(id)))
            }
            _ => None,
        }
    }

    /// A fresh copy of a leaf node.
    pub(crate) fn copy_leaf(&mut self, id: ExprId) -> ExprId {
        let (e, t) = self.leaf(id).expect("invariant: only leaves are copied");
        let span = self.m.span(id);
        self.add(e, t, span)
    }

    fn occ(&self, x: &Name) -> Occ {
        for o in self.overlays.iter().rev() {
            if let Some(v) = o.get(x) {
                return *v;
            }
        }
        self.occ.get(x).copied().unwrap_or(Occ::UNKNOWN)
    }

    /// The name a binder gets in the output: its own the first time,
    /// a fresh one when the binder is built again (a copy).
    pub(crate) fn binder(&mut self, x: &Name) -> (Name, bool) {
        if self.emitted.insert(x.clone()) {
            (x.clone(), false)
        } else {
            let n = self.name_gen().fresh(x.as_str());
            self.emitted.insert(n.clone());
            (n, true)
        }
    }

    fn name_gen(&mut self) -> &mut NameGen {
        // Every name of the arena: the input's, and the output's so far.
        self.names.get_or_insert_with(|| self.m.name_gen())
    }

    /// A fresh binder name derived from `base`.
    pub(crate) fn fresh(&mut self, base: &str) -> Name {
        let n = self.name_gen().fresh(base);
        self.emitted.insert(n.clone());
        n
    }

    fn float_ok(&self, pos: Pos) -> bool {
        match pos {
            Pos::Root => true,
            Pos::LetValue => self.on(RuleName::LetLet),
            Pos::Arg => self.on(RuleName::LetFloat),
        }
    }

    fn push(&mut self, blk: &mut Vec<Bind>, bind: Bind, pos: Pos) {
        match pos {
            Pos::Root => {}
            Pos::LetValue => self.fire(RuleName::LetLet),
            Pos::Arg => self.fire(RuleName::LetFloat),
        }
        blk.push(bind);
    }

    /// Simplifies `id` as a block: its `let`s are wrapped around it here.
    pub(crate) fn block(&mut self, id: ExprId, env: &Env) -> ExprId {
        let mut blk = Vec::new();
        let r = self.simplify(id, env, &mut blk, Pos::Root);
        self.wrap(blk, r)
    }

    fn wrap(&mut self, mut blk: Vec<Bind>, mut r: ExprId) -> ExprId {
        // The block's `let`s go out of scope here.
        for b in &blk {
            if let Some(k) = &b.cse_key {
                self.cse.remove(k);
            }
            if let Some(h) = b.alpha_key
                && let Some(list) = self.cse_alpha.get_mut(&h)
            {
                list.retain(|(e, ..)| *e != b.value);
            }
        }
        // let x = e in x ~> e
        while self.on(RuleName::LetVar)
            && let Some(last) = blk.last()
            && let (Pat::Var(x), Expr::Var(y)) = (&last.pat, self.m.expr(r))
            && x == y
        {
            self.fire(RuleName::LetVar);
            r = last.value;
            blk.pop();
        }
        for b in blk.into_iter().rev() {
            if let Some(o) = self.keep_let(&b, r) {
                r = o;
                continue;
            }
            let t = self.ty(r);
            r = self.add(
                Expr::Let {
                    pat: b.pat,
                    ty: b.ann,
                    value: b.value,
                    body: r,
                },
                t,
                b.span,
            );
        }
        r
    }

    /// Simplifies an output subtree again (a lambda built before its call
    /// was known), with a census of that subtree in force.
    fn resimplify(&mut self, id: ExprId, env: &Env, blk: &mut Vec<Bind>, pos: Pos) -> ExprId {
        let local = census(&self.m, id, 0);
        self.overlays.push(local);
        let r = self.simplify(id, env, blk, pos);
        self.overlays.pop();
        r
    }

    // ----- the traversal -----------------------------------------------

    /// Simplifies `id` under `env`, pushing floated bindings onto `blk`.
    ///
    /// A loop over tail positions (the body of a `let`, of a beta-reduced
    /// lambda, an inlined lambda, the taken branch of an `if`): the
    /// continuations of reverse mode call each other in tail position, and a
    /// chain of 20,000 of them must not nest 20,000 calls deep.
    pub(crate) fn simplify(
        &mut self,
        id: ExprId,
        env: &Env,
        blk: &mut Vec<Bind>,
        pos: Pos,
    ) -> ExprId {
        stack::guard(|| {
            let mut step = self.step(id, env, blk, pos);
            loop {
                match step {
                    Step::Done(r) => return r,
                    Step::Tail(next, env) => step = self.step(next, &env, blk, pos),
                }
            }
        })
    }

    /// Finishes a step: simplifies the tail it leaves, if any.
    fn finish(&mut self, step: Step, blk: &mut Vec<Bind>, pos: Pos) -> ExprId {
        match step {
            Step::Done(r) => r,
            Step::Tail(next, env) => self.simplify(next, &env, blk, pos),
        }
    }

    /// One node: its result, or the tail expression left to simplify.
    fn step(&mut self, id: ExprId, env: &Env, blk: &mut Vec<Bind>, pos: Pos) -> Step {
        let span = self.m.span(id);
        let ty = self.ty(id);
        // A variable the environment leaves as it is: handed on (note
        // [unchanged nodes]).
        if let Expr::Var(x) = self.m.expr(id)
            && env.get(x).is_none()
            && self.kept.get(id.index()) == Some(&false)
        {
            self.kept[id.index()] = true;
            return Step::Done(id);
        }
        // The shapes met most, read without cloning the node.
        match self.m.expr(id) {
            Expr::Var(x) => {
                if env.get(x).is_none() {
                    // Kept: the name is cloned once, into the new node.
                    let e = Expr::Var(x.clone());
                    return Step::Done(self.add(e, ty, span));
                }
                let x = x.clone();
                return self.var(&x, env, blk, pos, span, ty);
            }
            Expr::Let { .. } => return self.let_chain(id, env, blk, pos),
            Expr::Prim { op, args } => {
                let (op, old) = (*op, Args::of(args));
                let args = self.args(&old, env, blk);
                let node = if args[..] == old[..] && self.keep(id) {
                    id
                } else {
                    self.add(Expr::Prim { op, args }, ty, span)
                };
                let node = self.rewrite(node);
                return Step::Done(self.cse_use(node));
            }
            _ => {}
        }
        Step::Done(match self.node(id) {
            Expr::Var(x) => return self.var(&x, env, blk, pos, span, ty),
            e @ (Expr::Real(_)
            | Expr::Int(_)
            | Expr::Bool(_)
            | Expr::Section(_)
            | Expr::Reals(_)) => {
                if self.keep(id) {
                    return Step::Done(id);
                }
                self.add(e, ty, span)
            }
            Expr::Let { .. } => return self.let_chain(id, env, blk, pos),
            Expr::Tuple(old) => {
                let items = self.args(&old, env, blk);
                if items == old && self.keep(id) {
                    return Step::Done(id);
                }
                self.add(Expr::Tuple(items), ty, span)
            }
            Expr::Array(items) => {
                let items = self.args(&items, env, blk);
                self.add(Expr::Array(items), ty, span)
            }
            Expr::Index { array, index } => {
                let array = self.simplify(array, env, blk, Pos::Arg);
                let index = self.simplify(index, env, blk, Pos::Arg);
                if let Some(r) = self.index_of_map(array, index, span, &ty) {
                    return Step::Done(r);
                }
                let node = self.add(Expr::Index { array, index }, ty, span);
                self.cse_use(node)
            }
            Expr::Proj { tuple, index } => {
                return self.proj(tuple, index, env, blk, pos, span, ty);
            }
            Expr::If {
                cond,
                then_branch,
                else_branch,
            } => return self.if_(cond, then_branch, else_branch, env, blk, pos, span, ty),
            Expr::Lambda { params, body } => self.lambda(&params, body, env, span, ty),
            Expr::App { func, args } => return self.app(func, &args, env, blk, pos, span, ty),
            Expr::Prim { op, args } => {
                let args = self.args(&args, env, blk);
                let node = self.add(Expr::Prim { op, args }, ty, span);
                let node = self.rewrite(node);
                self.cse_use(node)
            }
        })
    }

    fn args(&mut self, ids: &[ExprId], env: &Env, blk: &mut Vec<Bind>) -> Vec<ExprId> {
        ids.iter()
            .map(|&a| self.simplify(a, env, blk, Pos::Arg))
            .collect()
    }

    fn var(
        &mut self,
        x: &Name,
        env: &Env,
        blk: &mut Vec<Bind>,
        pos: Pos,
        span: Span,
        ty: Ty,
    ) -> Step {
        Step::Done(match env.get(x).cloned() {
            Some(Subst::Leaf(e, t)) => self.add(e, t, span),
            Some(Subst::Susp(e, senv)) => return Step::Tail(e, senv),
            Some(Subst::Once(e, senv)) => {
                let v = self.simplify(e, &senv, blk, pos);
                if self.fits(v) || self.leaf(v).is_some() {
                    v
                } else {
                    // Taller once simplified (it took in other inlined
                    // values): bound to its own name here, and not counted
                    // as inlined, so that the next round, seeing the taller
                    // value, keeps the `let`.
                    self.unfire(RuleName::InlineOnce);
                    let (n, _) = self.binder(x);
                    let t = self.ty(v);
                    blk.push(Bind {
                        pat: Pat::Var(n.clone()),
                        ann: None,
                        value: v,
                        span,
                        cse_key: None,
                        alpha_key: None,
                        orig: None,
                    });
                    self.add(Expr::Var(n), t, span)
                }
            }
            Some(Subst::Done(v)) => {
                if self.done_used.insert(v) {
                    v
                } else {
                    // The census promised one use; a second one gets a copy
                    // rather than a node with two parents.
                    self.resimplify(v, &empty_env(), blk, pos)
                }
            }
            Some(Subst::Tuple(names)) => {
                let items: Vec<ExprId> = names
                    .iter()
                    .map(|n| {
                        let t = self.component_ty(&ty, n, &names);
                        let step = self.var(n, env, blk, Pos::Arg, span, t);
                        self.finish(step, blk, Pos::Arg)
                    })
                    .collect();
                self.add(Expr::Tuple(items), ty, span)
            }
            None => self.add(Expr::Var(x.clone()), ty, span),
        })
    }

    fn component_ty(&self, tuple_ty: &Ty, n: &Name, names: &[Name]) -> Ty {
        let i = names.iter().position(|m| m == n).unwrap_or(0);
        match tuple_ty {
            Ty::Tuple(ts) => ts.get(i).cloned().unwrap_or(Ty::Tuple(Vec::new())),
            _ => Ty::Tuple(Vec::new()),
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn proj(
        &mut self,
        tuple: ExprId,
        index: u32,
        env: &Env,
        blk: &mut Vec<Bind>,
        pos: Pos,
        span: Span,
        ty: Ty,
    ) -> Step {
        if let Expr::Var(x) = self.m.expr(tuple)
            && let Some(Subst::Tuple(names)) = env.get(x)
            && let Some(n) = names.get(index as usize - 1)
        {
            let n = n.clone();
            return self.var(&n, env, blk, pos, span, ty);
        }
        let t = self.simplify(tuple, env, blk, Pos::Arg);
        Step::Done(self.proj_node(t, index, span, ty))
    }

    #[allow(clippy::too_many_arguments)]
    fn if_(
        &mut self,
        cond: ExprId,
        then_branch: ExprId,
        else_branch: ExprId,
        env: &Env,
        blk: &mut Vec<Bind>,
        pos: Pos,
        span: Span,
        ty: Ty,
    ) -> Step {
        let c = self.simplify(cond, env, blk, Pos::Arg);
        if let Expr::Bool(b) = *self.m.expr(c)
            && self.on(RuleName::IfConst)
        {
            self.fire(RuleName::IfConst);
            let taken = if b { then_branch } else { else_branch };
            return Step::Tail(taken, env.clone());
        }
        let a = self.block(then_branch, env);
        let b = self.block(else_branch, env);
        // `if-tuple` copies the condition into each component: make it a
        // leaf first.
        let c = if self.on(RuleName::IfTuple) && self.splits_tuple(a, b) {
            self.atomize(c, blk, pos, span)
        } else {
            c
        };
        Step::Done(self.if_node(c, a, b, span, ty))
    }

    fn lambda(&mut self, params: &[Param], body: ExprId, env: &Env, span: Span, ty: Ty) -> ExprId {
        let mut env = env.clone();
        let mut ps = Vec::with_capacity(params.len());
        for p in params {
            let (n, renamed) = self.binder(&p.name);
            if renamed {
                let t = p.ty.clone().unwrap_or(Ty::Tuple(Vec::new()));
                env = env.insert(p.name.clone(), Subst::Leaf(Expr::Var(n.clone()), t));
            }
            ps.push(Param {
                name: n,
                ty: p.ty.clone(),
                span: p.span,
            });
        }
        let body = self.block(body, &env);
        self.add(Expr::Lambda { params: ps, body }, ty, span)
    }

    #[allow(clippy::too_many_arguments)]
    fn app(
        &mut self,
        func: ExprId,
        args: &[ExprId],
        env: &Env,
        blk: &mut Vec<Bind>,
        pos: Pos,
        span: Span,
        ty: Ty,
    ) -> Step {
        if self.on(RuleName::Beta) {
            let callee = match self.node(func) {
                Expr::Lambda { .. } => Some((func, env.clone())),
                Expr::Var(f) => match env.get(&f) {
                    Some(Subst::Susp(e, senv))
                        if matches!(self.m.expr(*e), Expr::Lambda { .. }) =>
                    {
                        Some((*e, senv.clone()))
                    }
                    _ => None,
                },
                _ => None,
            };
            if let Some((lam, lenv)) = callee {
                self.fire(RuleName::Beta);
                let args = self.args(args, env, blk);
                return self.beta(lam, &lenv, args, blk, pos);
            }
        }
        let f = self.simplify(func, env, blk, Pos::Arg);
        let args = self.args(args, env, blk);
        Step::Done(self.app_node(f, args, blk, pos, span, ty))
    }

    /// A call of an already simplified function: beta-reduces a lambda,
    /// pushes a call of a conditional into its branches.
    pub(crate) fn app_node(
        &mut self,
        f: ExprId,
        args: Vec<ExprId>,
        blk: &mut Vec<Bind>,
        pos: Pos,
        span: Span,
        ty: Ty,
    ) -> ExprId {
        match self.node(f) {
            Expr::Lambda { .. } if self.on(RuleName::Beta) => {
                self.fire(RuleName::Beta);
                let local = census(&self.m, f, 0);
                self.overlays.push(local);
                let step = self.beta(f, &empty_env(), args, blk, pos);
                let r = self.finish(step, blk, pos);
                self.overlays.pop();
                r
            }
            Expr::If {
                cond,
                then_branch,
                else_branch,
            } if self.on(RuleName::IfFloat) => {
                self.fire(RuleName::IfFloat);
                // Arguments are evaluated once, before the branch.
                let atoms: Vec<ExprId> = args
                    .into_iter()
                    .map(|a| self.atomize(a, blk, pos, span))
                    .collect();
                let copies: Vec<ExprId> = atoms.iter().map(|&a| self.copy_leaf(a)).collect();
                let a = self.branch_call(then_branch, atoms, span, ty.clone());
                let b = self.branch_call(else_branch, copies, span, ty.clone());
                self.add(
                    Expr::If {
                        cond,
                        then_branch: a,
                        else_branch: b,
                    },
                    ty,
                    span,
                )
            }
            _ => self.add(Expr::App { func: f, args }, ty, span),
        }
    }

    fn branch_call(&mut self, f: ExprId, args: Vec<ExprId>, span: Span, ty: Ty) -> ExprId {
        let mut blk = Vec::new();
        let r = self.app_node(f, args, &mut blk, Pos::Root, span, ty);
        self.wrap(blk, r)
    }

    /// Binds a non-leaf expression to a fresh name, returning a leaf.
    fn atomize(&mut self, a: ExprId, blk: &mut Vec<Bind>, pos: Pos, span: Span) -> ExprId {
        if self.leaf(a).is_some() {
            return a;
        }
        let n = self.fresh("a");
        let t = self.ty(a);
        self.push(
            blk,
            Bind {
                pat: Pat::Var(n.clone()),
                ann: None,
                value: a,
                span,
                cse_key: None,
                alpha_key: None,
                orig: None,
            },
            pos,
        );
        self.add(Expr::Var(n), t, span)
    }

    /// `(fun (x1, ..., xn) -> body)(a1, ..., an)` with the arguments
    /// simplified: binds each parameter (by substitution when the argument
    /// is a leaf or the parameter is used once outside lambdas) and
    /// simplifies the body.
    fn beta(
        &mut self,
        lam: ExprId,
        lenv: &Env,
        args: Vec<ExprId>,
        blk: &mut Vec<Bind>,
        pos: Pos,
    ) -> Step {
        let Expr::Lambda { params, body } = self.node(lam) else {
            unreachable!("invariant: beta is called on lambdas")
        };
        let span = self.m.span(lam);
        if self.float_ok(pos) {
            let env = self.bind_params(&params, args, lenv, blk, pos, span);
            Step::Tail(body, env)
        } else {
            let mut local = Vec::new();
            let env = self.bind_params(&params, args, lenv, &mut local, Pos::Root, span);
            let r = self.simplify(body, &env, &mut local, Pos::Root);
            Step::Done(self.wrap(local, r))
        }
    }
}

/// The number of nodes under `id`.
pub(crate) fn size(m: &Module, id: ExprId) -> usize {
    let mut n = 0;
    let mut stack = vec![id];
    while let Some(i) = stack.pop() {
        n += 1;
        m.expr(i).for_each_child(|c| stack.push(c));
    }
    n
}

// Note [unchanged nodes]
// ~~~~~~~~~~~~~~~~~~~~~~~
// A round builds its output as new nodes appended to the arena, in the
// order it makes them; the final compaction keeps that order, so the
// output's bytes depend on it. The first round (every rule but
// `inline-once`, note [phases] in `lib.rs`) often fires nothing: on the
// 20,000-`let` chain it copied half a million nodes unchanged, doubling
// the arena the later rounds walk. In that round a node whose operands
// come back as they were (a kept variable, a literal, a builtin no rule
// rewrote, a tuple, a `let` whose value and body are its own) is handed
// on as it is instead of copied, each input node at most once (`kept`), so that the
// output is still a tree. The output differs from a round of copies only
// in the ids of its nodes, not in its tree; the next round reads trees
// and builds every node anew, so the final order is the same. Hence only
// a round that another is sure to follow hands nodes on (`share` in
// `lib.rs`: the first round, when `inline-once` is allowed and a second
// round may run).
