//! The bindings of the simplifier: `let` chains and their values, the
//! parameters of a beta-reduction, tuple patterns, and the decisions the
//! census drives (forward substitution, inlining of a value used once,
//! splitting tuples, `cse`, `unzip-fusion`). Part of `simplify.rs`'s
//! `Round`; see that file for the pass as a whole.

use syntax::{Expr, ExprId, Module, Name, Param, Pat, Prim, Span, Ty};

use super::{Bind, Env, Pos, Round, Step, Subst, size};
use crate::census::{Occ, component};
use crate::rules::RuleName;

/// The largest value (in nodes, and in entries captured) whose
/// `inline-once` substitution keeps only the entries it can look up
/// (note [captured entries]); a larger one keeps the whole environment.
const CAPTURE_NODES: usize = 32;

/// The most reads of an array `gather-fusion` copies its function to
/// (note [gathers]): a triangle's three vertices.
const GATHER_READS: u32 = 3;

impl Round<'_> {
    /// A chain of `let`s: each binding is processed, then the body, in a loop
    /// (chains are as long as programs).
    pub(super) fn let_chain(
        &mut self,
        id: ExprId,
        env: &Env,
        blk: &mut Vec<Bind>,
        pos: Pos,
    ) -> Step {
        if !self.float_ok(pos) {
            // The rule that would float this `let` is off: keep it here.
            return Step::Done(self.block(id, env));
        }
        let mut env = env.clone();
        let mut cur = id;
        while let Expr::Let {
            pat,
            ty: ann,
            value,
            body,
        } = self.node(cur)
        {
            let span = self.m.span(cur);
            let before = blk.len();
            env = self.bind_pattern(&pat, ann, value, env, blk, pos, span);
            self.mark_orig(blk, before, cur);
            cur = body;
        }
        Step::Tail(cur, env)
    }

    /// Peels the `let`s off the front of a `let` value (`let-let`),
    /// returning the unsimplified tail and the environment it sees.
    pub(super) fn peel(
        &mut self,
        mut value: ExprId,
        mut env: Env,
        blk: &mut Vec<Bind>,
    ) -> (ExprId, Env) {
        if !self.on(RuleName::LetLet) {
            return (value, env);
        }
        while let Expr::Let {
            pat,
            ty: ann,
            value: v,
            body,
        } = self.node(value)
        {
            let span = self.m.span(value);
            let before = blk.len();
            env = self.bind_pattern(&pat, ann, v, env, blk, Pos::LetValue, span);
            self.mark_orig(blk, before, value);
            value = body;
        }
        (value, env)
    }

    /// Processes the binding `let pat = value` at `pos`, returning the
    /// environment of its body. The environment is taken by value: held
    /// only here, it is extended in place (note [captured entries]).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn bind_pattern(
        &mut self,
        pat: &Pat,
        ann: Option<Ty>,
        value: ExprId,
        env: Env,
        blk: &mut Vec<Bind>,
        pos: Pos,
        span: Span,
    ) -> Env {
        match pat {
            Pat::Var(x) => {
                let occ = self.occ(x);
                self.bind_var_input(x, occ, ann, value, env, blk, pos, span)
            }
            Pat::Tuple(xs) => {
                let occs: Vec<Occ> = xs.iter().map(|x| self.occ(x)).collect();
                if occs.iter().all(|o| o.count == 0) && self.on(RuleName::DeadLet) {
                    self.fire(RuleName::DeadLet);
                    return env;
                }
                let (tail, tenv) = self.peel(value, env, blk);
                // `let (a, b) = t` with `t` a split tuple: bind the parts.
                if let Expr::Var(t) = self.node(tail)
                    && let Some(Subst::Tuple(parts)) = tenv.get(&t)
                    && parts.len() == xs.len()
                    && self.on(RuleName::TupleLet)
                {
                    self.fire(RuleName::TupleLet);
                    let parts = parts.clone();
                    let ty = self.ty(tail);
                    let mut env = tenv.clone();
                    for ((x, o), part) in xs.iter().zip(occs).zip(&parts) {
                        if o.count == 0 && self.on(RuleName::DeadLet) {
                            self.fire(RuleName::DeadLet);
                            continue;
                        }
                        let pty = self.component_ty(&ty, part, &parts);
                        let step = self.var(part, &env, blk, Pos::Arg, span, pty);
                        let v = self.finish(step, blk, Pos::Arg);
                        env = self.bind_var_output(x, o, None, v, &env, blk, pos, span);
                    }
                    return env;
                }
                if let Expr::Tuple(items) = self.node(tail)
                    && items.len() == xs.len()
                    && self.on(RuleName::TupleLet)
                {
                    self.fire(RuleName::TupleLet);
                    let mut env = tenv;
                    for ((x, o), item) in xs.iter().zip(occs).zip(items) {
                        env = self.bind_var_input(x, o, None, item, env, blk, pos, span);
                    }
                    return env;
                }
                let v = self.simplify(tail, &tenv, blk, Pos::LetValue);
                self.bind_tuple_output(xs, &occs, ann, v, &tenv, blk, pos, span)
            }
        }
    }

    /// `let x = value` with `value` not yet simplified.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn bind_var_input(
        &mut self,
        x: &Name,
        occ: Occ,
        ann: Option<Ty>,
        value: ExprId,
        env: Env,
        blk: &mut Vec<Bind>,
        pos: Pos,
        span: Span,
    ) -> Env {
        if occ.count == 0 && self.on(RuleName::DeadLet) {
            self.fire(RuleName::DeadLet);
            return env;
        }
        let (value, env) = self.peel(value, env, blk);
        // The node's shape, without cloning the nodes no rule below takes
        // apart (a clone of an operator node copies its operand list).
        enum Shape {
            Lambda,
            Tuple(Vec<ExprId>),
            Map(Prim, Vec<ExprId>),
            Other,
        }
        let shape = match self.m.expr(value) {
            Expr::Lambda { .. } => Shape::Lambda,
            Expr::Tuple(items) => Shape::Tuple(items.clone()),
            Expr::Prim {
                op: op @ (Prim::Map | Prim::Map2),
                args,
            } => Shape::Map(*op, args.clone()),
            _ => Shape::Other,
        };
        match shape {
            Shape::Lambda
                if self.on(RuleName::InlineLambda)
                    && (occ.count == 1 || self.copyable(&occ, value)) =>
            {
                self.fire(RuleName::InlineLambda);
                return env.insert(x.clone(), Subst::Susp(value, env.clone()));
            }
            Shape::Tuple(items)
                if self.on(RuleName::SplitTuple)
                    && occ.count == occ.projections
                    && occ.count != u32::MAX =>
            {
                self.fire(RuleName::SplitTuple);
                let mut env = env;
                let mut names = Vec::new();
                for (i, item) in items.iter().enumerate() {
                    let key = component(x, i as u32 + 1);
                    let pocc = self.occ(&key);
                    let n = self.fresh(x.as_str());
                    env = self.bind_var_input_named(&n, pocc, None, *item, env, blk, pos, span);
                    names.push(n);
                }
                return env.insert(x.clone(), Subst::Tuple(names));
            }
            Shape::Map(..) if self.on(RuleName::UnzipFusion) && self.unzipped(x, &occ, value) => {
                // Each projection gets its own copy, which map-fusion then
                // fuses and whose other components die.
                self.fire(RuleName::UnzipFusion);
                return env.insert(x.clone(), Subst::Susp(value, env.clone()));
            }
            Shape::Map(op, args)
                if self.on(RuleName::RecomputeCheap) && self.recomputable(&occ, value) =>
            {
                // The sources are bound once (written out once); the cheap
                // function is copied into every use, where map-fusion puts
                // it into the consumer's loop.
                self.fire(RuleName::RecomputeCheap);
                return self.copy_into_uses(x, &occ, op, &args, value, &env, blk, pos, span);
            }
            Shape::Map(op, args)
                if self.on(RuleName::GatherFusion) && self.gathered(&occ, value) =>
            {
                // Note [gathers]: each read computes its one element
                // (`map-fusion` of the index), the sources bound once.
                self.fire(RuleName::GatherFusion);
                return self.copy_into_uses(x, &occ, op, &args, value, &env, blk, pos, span);
            }
            _ => {}
        }
        if self.used_once(&occ) && self.fits(value) && self.on(RuleName::InlineOnce) {
            // Simplified where it is used, once.
            self.fire(RuleName::InlineOnce);
            let captured = self.captured(value, &env);
            let mut env = env;
            env.insert_mut(x.clone(), Subst::Once(value, captured));
            return env;
        }
        let v = self.simplify(value, &env, blk, Pos::LetValue);
        self.bind_var_output(x, occ, ann, v, &env, blk, pos, span)
    }

    /// The environment `value` is simplified in at its use (note
    /// [captured entries]): the entries of `env` it can look up, or `env`
    /// itself when `value` is larger than [`CAPTURE_NODES`].
    fn captured(&self, value: ExprId, env: &Env) -> Env {
        let mut names: Vec<&Name> = Vec::new();
        let mut todo = vec![value];
        let mut nodes = 0;
        while let Some(i) = todo.pop() {
            nodes += 1;
            if nodes > CAPTURE_NODES {
                return env.clone();
            }
            let e = self.m.expr(i);
            if let Expr::Var(x) = e {
                names.push(x);
            }
            e.for_each_child(|c| todo.push(c));
        }
        let mut out = super::empty_env();
        let mut entries = 0;
        while let Some(x) = names.pop() {
            if out.contains_key(x) {
                continue;
            }
            let Some(s) = env.get(x) else {
                continue;
            };
            entries += 1;
            if entries > CAPTURE_NODES {
                return env.clone();
            }
            // A split tuple is read through its components' entries.
            if let Subst::Tuple(parts) = s {
                names.extend(parts.iter());
            }
            out.insert_mut(x.clone(), s.clone());
        }
        out
    }

    /// Like `bind_var_input`, for a binder the pass made up (already fresh).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn bind_var_input_named(
        &mut self,
        n: &Name,
        occ: Occ,
        ann: Option<Ty>,
        value: ExprId,
        env: Env,
        blk: &mut Vec<Bind>,
        pos: Pos,
        span: Span,
    ) -> Env {
        // The fresh name is already taken by `fresh`; release it so that the
        // binding below keeps it.
        self.emitted.remove(n);
        self.bind_var_input(n, occ, ann, value, env, blk, pos, span)
    }

    /// `let x = v` with `v` already simplified.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn bind_var_output(
        &mut self,
        x: &Name,
        occ: Occ,
        ann: Option<Ty>,
        v: ExprId,
        env: &Env,
        blk: &mut Vec<Bind>,
        pos: Pos,
        span: Span,
    ) -> Env {
        let v = self.pruned_fold(x, &occ, v, span);
        let vty = self.ty(v);
        // Only leaves and tuples are taken apart here: other nodes are not
        // cloned (a clone of an operator node copies its operand list).
        let node = match self.m.expr(v) {
            e @ (Expr::Var(_) | Expr::Real(_) | Expr::Int(_) | Expr::Bool(_) | Expr::Tuple(_)) => {
                Some(e.clone())
            }
            _ => None,
        };
        let is_lambda = matches!(self.m.expr(v), Expr::Lambda { .. });
        match node {
            Some(e @ Expr::Var(_)) if self.on(RuleName::ForwardVar) => {
                self.fire(RuleName::ForwardVar);
                return env.insert(x.clone(), Subst::Leaf(e, vty));
            }
            Some(e @ (Expr::Real(_) | Expr::Int(_) | Expr::Bool(_)))
                if self.on(RuleName::ForwardConst) =>
            {
                self.fire(RuleName::ForwardConst);
                return env.insert(x.clone(), Subst::Leaf(e, vty));
            }
            None if is_lambda && occ.count == 1 && self.on(RuleName::InlineLambda) => {
                self.fire(RuleName::InlineLambda);
                return env.insert(x.clone(), Subst::Done(v));
            }
            Some(Expr::Tuple(items))
                if self.on(RuleName::SplitTuple)
                    && occ.count == occ.projections
                    && occ.count != u32::MAX =>
            {
                self.fire(RuleName::SplitTuple);
                let mut env = env.clone();
                let mut names = Vec::new();
                for (i, item) in items.iter().enumerate() {
                    let key = component(x, i as u32 + 1);
                    let pocc = self.occ(&key);
                    let n = self.fresh(x.as_str());
                    self.emitted.remove(&n);
                    env = self.bind_var_output(&n, pocc, None, *item, &env, blk, pos, span);
                    names.push(n);
                }
                return env.insert(x.clone(), Subst::Tuple(names));
            }
            _ => {}
        }
        if let Some(env) = self.split_branches(x, &occ, v, env, blk, pos, span) {
            return env;
        }
        if self.used_once(&occ)
            && self.leaf(v).is_none()
            && self.fits(v)
            && self.on(RuleName::InlineOnce)
        {
            self.fire(RuleName::InlineOnce);
            return env.insert(x.clone(), Subst::Done(v));
        }
        let key = match self.key_memo.take() {
            Some((id, k)) if id == v => Some(k),
            _ => self.cse_key(v),
        };
        if let Some(k) = &key
            && let Some((e, t)) = self.cse.get(k)
        {
            // The same value is already bound to a name in scope.
            let (e, t) = (e.clone(), t.clone());
            self.fire(RuleName::Cse);
            return env.insert(x.clone(), Subst::Leaf(e, t));
        }
        // The same loop already bound, up to the names of its binders.
        let alpha = (key.is_none() && self.on(RuleName::CseAlpha) && self.alpha_candidate(v))
            .then(|| self.alpha_hash(v));
        if let Some(h) = alpha
            && let Some(list) = self.cse_alpha.get(&h)
        {
            let list = list.clone();
            for (e, n, t) in list {
                if self.alpha_eq(e, v, &mut std::collections::HashMap::new()) {
                    self.fire(RuleName::CseAlpha);
                    return env.insert(x.clone(), Subst::Leaf(Expr::Var(n), t));
                }
            }
        }
        let (n, renamed) = self.binder(x);
        self.record_fact(&n, v);
        if let Some(k) = &key {
            self.cse
                .insert(k.clone(), (Expr::Var(n.clone()), vty.clone()));
        }
        if let Some(h) = alpha {
            self.cse_alpha
                .entry(h)
                .or_default()
                .push((v, n.clone(), vty.clone()));
        }
        self.push(
            blk,
            Bind {
                pat: Pat::Var(n.clone()),
                ann,
                value: v,
                span,
                cse_key: key,
                alpha_key: alpha,
                orig: None,
            },
            pos,
        );
        if renamed {
            env.insert(x.clone(), Subst::Leaf(Expr::Var(n), vty))
        } else {
            env.clone()
        }
    }

    /// The key under which `cse` records the value `v`: a builtin (no
    /// function argument) applied to leaves.
    pub(super) fn cse_key(&self, v: ExprId) -> Option<Name> {
        if !self.on(RuleName::Cse) {
            return None;
        }
        let mut key = String::with_capacity(24);
        write_cse_key(&self.m, v, &mut key).then(|| Name::new(key))
    }

    /// Whether `v` is a loop (`map`, `reduce`, a scan, `build`, ...), a
    /// conditional, or an array literal: what `cse-alpha` looks
    /// for, the values worth comparing that `cse`'s keys (a builtin or an
    /// index of atoms) do not cover. Conditionals and literals because
    /// reverse mode inside a program (a `vjp_rev` per row of a Jacobian
    /// block) writes the primal once per sweep, and its `if`s and its
    /// literals `[p[0], p[1], p[2]]` are where the sweeps' shared values
    /// begin (docs/optimize.md, "cse-alpha").
    fn alpha_candidate(&self, v: ExprId) -> bool {
        match self.m.expr(v) {
            Expr::Prim { op, .. } => op.function_arg().is_some(),
            // Not a tuple: `split-tuple` and `tuple-let` take a tuple's
            // binding apart into its components, so the name recorded
            // here may never be bound (the difftest suite's seed 24301
            // found the free variable).
            Expr::If { .. } => !matches!(self.ty(v), Ty::Tuple(_)),
            Expr::Array(_) => true,
            _ => false,
        }
    }

    /// A hash of the tree under `v` that ignores the names bound inside
    /// it (and keeps the free ones): equal up to bound names, equal hash.
    fn alpha_hash(&self, v: ExprId) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut bound = crate::hash::FxHashSet::default();
        let mut todo = vec![v];
        while let Some(i) = todo.pop() {
            match self.m.expr(i) {
                Expr::Let { pat, .. } => match pat {
                    Pat::Var(x) => {
                        bound.insert(x.clone());
                    }
                    Pat::Tuple(xs) => bound.extend(xs.iter().cloned()),
                },
                Expr::Lambda { params, .. } => bound.extend(params.iter().map(|p| p.name.clone())),
                _ => {}
            }
            self.m.expr(i).for_each_child(|c| todo.push(c));
        }
        let mut h = crate::hash::FxHasher::default();
        let mut todo = vec![v];
        while let Some(i) = todo.pop() {
            let e = self.m.expr(i);
            std::mem::discriminant(e).hash(&mut h);
            match e {
                Expr::Var(x) if !bound.contains(x) => x.hash(&mut h),
                Expr::Real(r) => r.to_bits().hash(&mut h),
                Expr::Int(k) => k.hash(&mut h),
                Expr::Bool(b) => b.hash(&mut h),
                Expr::Proj { index, .. } => index.hash(&mut h),
                Expr::Prim { op, .. } => op.hash(&mut h),
                Expr::Tuple(items) | Expr::Array(items) => items.len().hash(&mut h),
                _ => {}
            }
            e.for_each_child(|c| todo.push(c));
        }
        h.finish()
    }

    /// A builtin node whose value is already bound to a name in scope
    /// becomes that name.
    pub(super) fn cse_use(&mut self, node: ExprId) -> ExprId {
        let Some(k) = self.cse_key(node) else {
            return node;
        };
        if let Some((e, t)) = self.cse.get(&k) {
            let (e, t, span) = (e.clone(), t.clone(), self.m.span(node));
            self.fire(RuleName::Cse);
            return self.add(e, t, span);
        }
        // Kept: its binding, if it is a `let`'s value, asks for this key
        // next. (Nodes do not change once built, so the key stays right.)
        self.key_memo = Some((node, k));
        node
    }

    /// `let (x1, ..., xk) = v` with `v` already simplified.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn bind_tuple_output(
        &mut self,
        xs: &[Name],
        occs: &[Occ],
        ann: Option<Ty>,
        v: ExprId,
        env: &Env,
        blk: &mut Vec<Bind>,
        pos: Pos,
        span: Span,
    ) -> Env {
        if let Expr::Tuple(items) = self.node(v)
            && items.len() == xs.len()
            && self.on(RuleName::TupleLet)
        {
            self.fire(RuleName::TupleLet);
            let mut env = env.clone();
            for ((x, o), item) in xs.iter().zip(occs).zip(items) {
                if o.count == 0 && self.on(RuleName::DeadLet) {
                    self.fire(RuleName::DeadLet);
                    continue;
                }
                env = self.bind_var_output(x, *o, None, item, &env, blk, pos, span);
            }
            return env;
        }
        let vty = self.ty(v);
        let mut env = env.clone();
        let mut names = Vec::new();
        for (i, x) in xs.iter().enumerate() {
            let (n, renamed) = self.binder(x);
            if renamed {
                let t = match &vty {
                    Ty::Tuple(ts) => ts.get(i).cloned().unwrap_or(Ty::Tuple(Vec::new())),
                    _ => Ty::Tuple(Vec::new()),
                };
                env = env.insert(x.clone(), Subst::Leaf(Expr::Var(n.clone()), t));
            }
            names.push(n);
        }
        self.push(
            blk,
            Bind {
                pat: Pat::Tuple(names),
                ann,
                value: v,
                span,
                cse_key: None,
                alpha_key: None,
                orig: None,
            },
            pos,
        );
        env
    }

    /// `let x = op f srcs` replaced by the map itself at every use of `x`
    /// (`recompute-cheap`, `gather-fusion`): the sources that are not
    /// plain variables are bound once here, so that the copies do not
    /// compute them again.
    #[allow(clippy::too_many_arguments)]
    fn copy_into_uses(
        &mut self,
        x: &Name,
        occ: &Occ,
        op: Prim,
        args: &[ExprId],
        value: ExprId,
        env: &Env,
        blk: &mut Vec<Bind>,
        pos: Pos,
        span: Span,
    ) -> Env {
        let mut env = env.clone();
        let mut srcs = Vec::new();
        for &a in &args[1..] {
            // A variable is a leaf unless the environment holds a
            // value to inline there, which would be copied too.
            let plain = match self.m.expr(a) {
                Expr::Var(v) => {
                    matches!(env.get(v), None | Some(Subst::Leaf(..)))
                }
                _ => self.leaf(a).is_some(),
            };
            if plain {
                srcs.push(a);
                continue;
            }
            let n = self.fresh(x.as_str());
            let o = Occ {
                count: occ.count,
                ..Occ::default()
            };
            let t = self.ty(a);
            let sp = self.m.span(a);
            env = self.bind_var_input_named(&n, o, None, a, env, blk, pos, span);
            srcs.push(self.add(Expr::Var(n), t, sp));
        }
        let mut new_args = vec![args[0]];
        new_args.extend(srcs);
        let t = self.ty(value);
        let sp = self.m.span(value);
        let node = self.add(Expr::Prim { op, args: new_args }, t, sp);
        env.insert(x.clone(), Subst::Susp(node, env.clone()))
    }

    /// Note [gathers]. Whether `x = value`, a `map` or `map2` of a lambda,
    /// is only read element by element inside loops over other arrays:
    /// every use an index `x[e]` directly in the function of a `map` or
    /// `map2` one lambda below the binding, at most [`GATHER_READS`] of
    /// them, and the function not structural (those are copied whole,
    /// `recompute-cheap`). Copied to its reads, each computes the one
    /// element it reads (`map-fusion`'s `(map f A)[i]`) instead of the
    /// whole array being computed first: a loop over C that reads k
    /// elements per iteration computes k |C| elements instead of |A|,
    /// cheaper when the reads are fewer than the elements (a gather of a
    /// subset, as GradBench's ht reads 100 of the hand's 544 skinned
    /// vertices), dearer by k |C| / |A| when the loop reads more. Reads
    /// in deeper loops, in a `build`, `reduce` or fold, are not
    /// gathers (they may read every element many times) and keep the array.
    /// One exception: the array's only use `x[i]` directly in the function
    /// of an `ifold`, at its counter `i` (reverse mode's argmin, `ifold
    /// (fun (s, i) -> .. x[i] ..) z (length x)`): no two iterations read
    /// the same element, so each element is computed at most once, in the
    /// loop that reads it, and the array is never written. That one waits
    /// for the other rules to settle (note [late gathers] in `lib.rs`).
    pub(super) fn gathered(&self, occ: &Occ, value: ExprId) -> bool {
        let Expr::Prim { args, .. } = self.m.expr(value) else {
            return false;
        };
        let gather = occ.count <= GATHER_READS && occ.count == occ.gathered;
        let counter = occ.count == 1 && occ.counter_reads == 1;
        let ok = occ.count >= 1
            && occ.count != u32::MAX
            && (gather || counter)
            && matches!(self.m.expr(args[0]), Expr::Lambda { .. })
            && !self.structural(args[0]);
        if ok && !gather && !self.late {
            // Note [late gathers] in `lib.rs`.
            self.deferred.set(true);
            return false;
        }
        ok
    }

    /// `split-tuple` of `let x = v` with `v` a conditional (or `let`s)
    /// whose every branch ends in a tuple, `x` only projected and some
    /// component never: `let y = v'` with `v'` the branches' tuples cut
    /// down to the projected components (`Round::pick`), so that the
    /// others are not computed (forward over reverse mode's kmeans: the
    /// points' cotangents, built in the branches of the adjoint of the
    /// argmin, that nothing reads). `x` then stands for the components of
    /// `y`.
    #[allow(clippy::too_many_arguments)]
    fn split_branches(
        &mut self,
        x: &Name,
        occ: &Occ,
        v: ExprId,
        env: &Env,
        blk: &mut Vec<Bind>,
        pos: Pos,
        span: Span,
    ) -> Option<Env> {
        use crate::local::Demand;
        let Ty::Tuple(ts) = self.ty(v) else {
            return None;
        };
        if !self.on(RuleName::SplitTuple)
            || occ.count == 0
            || occ.count == u32::MAX
            || occ.count != occ.projections
            || matches!(self.m.expr(v), Expr::Tuple(_))
            || !self.ends_in_tuples(v)
        {
            return None;
        }
        let live: Vec<bool> = (1..=ts.len() as u32)
            .map(|i| {
                let c = self.occ(&component(x, i)).count;
                c != u32::MAX && c > 0
            })
            .collect();
        if live.iter().all(|&l| l) || !live.iter().any(|&l| l) {
            return None;
        }
        self.fire(RuleName::SplitTuple);
        let d = Demand::tup(
            live.iter()
                .map(|&l| if l { Demand::Full } else { Demand::None })
                .collect(),
        );
        let t = self.ty(v);
        let cut = self.pick(v, &t, &d);
        let kept: Vec<usize> = (0..ts.len()).filter(|&i| live[i]).collect();
        let y = self.fresh(x.as_str());
        let mut names: Vec<Name> = (0..ts.len()).map(|_| self.fresh(x.as_str())).collect();
        let mut env = env.clone();
        if let [i] = kept.as_slice() {
            let pocc = self.occ(&component(x, *i as u32 + 1));
            names[*i] = y.clone();
            self.emitted.remove(&y);
            env = self.bind_var_output(&y, pocc, None, cut, &env, blk, pos, span);
        } else {
            self.emitted.remove(&y);
            env = self.bind_var_output(&y, Occ::UNKNOWN, None, cut, &env, blk, pos, span);
            let yty = self.ty(cut);
            for (j, &i) in kept.iter().enumerate() {
                let pocc = self.occ(&component(x, i as u32 + 1));
                let yv = self.add(Expr::Var(y.clone()), yty.clone(), span);
                let p = self.add(
                    Expr::Proj {
                        tuple: yv,
                        index: j as u32 + 1,
                    },
                    ts[i].clone(),
                    span,
                );
                let n = names[i].clone();
                self.emitted.remove(&n);
                env = self.bind_var_output(&n, pocc, None, p, &env, blk, pos, span);
            }
        }
        Some(env.insert(x.clone(), Subst::Tuple(names)))
    }

    /// `prune-accumulator` of `let x = v` with `v` a fold and every use
    /// of `x` a projection: `let r = v' in (.., r, ..)`, the components no
    /// projection reads (and the fold does not need) not computed.
    fn pruned_fold(&mut self, x: &Name, occ: &Occ, v: ExprId, span: Span) -> ExprId {
        let Ty::Tuple(ts) = self.ty(v) else {
            return v;
        };
        let is_fold = matches!(
            self.m.expr(v),
            Expr::Prim {
                op: Prim::Ifold | Prim::Foldl | Prim::Reduce,
                ..
            }
        );
        if !is_fold
            || !self.on(RuleName::PruneAccumulator)
            || occ.count == 0
            || occ.count == u32::MAX
            || occ.count != occ.projections
        {
            return v;
        }
        // A component the census did not see is never projected (`x`
        // itself it saw).
        let ds = (1..=ts.len() as u32)
            .map(|i| {
                if self.occ(&component(x, i)).count != u32::MAX
                    && self.occ(&component(x, i)).count > 0
                {
                    crate::local::Demand::Full
                } else {
                    crate::local::Demand::None
                }
            })
            .collect();
        let Some((r, fold, whole)) = self.prune_accumulator(v, &crate::local::Demand::tup(ds))
        else {
            return v;
        };
        self.fire(RuleName::PruneAccumulator);
        let ty = self.ty(v);
        self.add(
            Expr::Let {
                pat: Pat::Var(r),
                ty: None,
                value: fold,
                body: whole,
            },
            ty,
            span,
        )
    }

    /// Whether a binding has one use, outside lambdas: its value can go in
    /// place of the use without being evaluated more often.
    pub(super) fn used_once(&self, occ: &Occ) -> bool {
        occ.count == 1 && !occ.under_lambda
    }

    /// Whether the array of tuples `x = value` is only unzipped: every use
    /// `map (fun t -> t.i) x`, outside lambdas, each component at most
    /// once, and the copies small.
    pub(super) fn unzipped(&self, x: &Name, occ: &Occ, value: ExprId) -> bool {
        let Ty::Array(_, elem) = self.ty(value) else {
            return false;
        };
        let Ty::Tuple(parts) = &*elem else {
            return false;
        };
        occ.count > 1
            && occ.count != u32::MAX
            && occ.count == occ.proj_maps
            && !occ.under_lambda
            && (1..=parts.len() as u32).all(|i| self.occ(&component(x, i)).count <= 1)
            && (occ.count as usize).saturating_mul(size(&self.m, value)) <= self.cfg.inline_budget
    }

    /// Whether `x = value`, a `map`/`map2` used more than once (never
    /// under a lambda), has a function cheap enough to compute again at
    /// each use rather than write the array out: arithmetic without
    /// division or transcendental functions, projections, tuples, `let`s,
    /// conditionals and inner maps of such; the copies within the budget.
    pub(super) fn recomputable(&self, occ: &Occ, value: ExprId) -> bool {
        let Expr::Prim { op, args } = self.m.expr(value) else {
            return false;
        };
        let within_budget = occ.count != u32::MAX
            && (occ.count as usize).saturating_mul(size(&self.m, args[0]))
                <= self.cfg.inline_budget;
        if !within_budget || !matches!(self.m.expr(args[0]), Expr::Lambda { .. }) {
            return false;
        }
        // A map that only rearranges its elements (forward mode's
        // `map (fun v -> (v, 0)) A` for a constant, note [structural
        // maps]) costs nothing per use once fused: it is copied into every
        // use, under lambdas too, however often.
        if *op == Prim::Map && occ.count >= 1 && self.structural(args[0]) {
            return true;
        }
        occ.count > 1 && !occ.under_lambda && cheap(&self.m, args[0])
    }

    /// Note [structural maps]. Whether the lambda `f` of a map only takes
    /// its element apart and puts it together again with literals: its
    /// body is made of the parameters, literals, tuples, projections and
    /// maps of such lambdas over such values, with no arithmetic, indexing
    /// or call. Forward mode lifts every ground value the differentiated
    /// function closes over (and every seed it does not vary) to duals
    /// with a zero tangent this way; copied into its uses, each fuses into
    /// its consumer (`map-fusion`, including the index `(map f A)[i]`) and
    /// the zero tangents meet the ring rules (`zero-mul`, `zero-add`), so
    /// a constant's tangent arithmetic disappears instead of being
    /// computed on zeros. A use that does not fuse writes the copy out
    /// where the use is: at most the one array the `let` wrote, per use.
    fn structural(&self, f: ExprId) -> bool {
        let Expr::Lambda { body, .. } = self.m.expr(f) else {
            return false;
        };
        let mut todo = vec![*body];
        while let Some(i) = todo.pop() {
            match self.m.expr(i) {
                Expr::Var(_) | Expr::Real(_) | Expr::Int(_) | Expr::Bool(_) => {}
                Expr::Tuple(items) => todo.extend(items.iter().copied()),
                Expr::Proj { tuple, .. } => todo.push(*tuple),
                Expr::Prim {
                    op: Prim::Map,
                    args,
                } => {
                    if !self.structural(args[0]) {
                        return false;
                    }
                    todo.push(args[1]);
                }
                _ => return false,
            }
        }
        true
    }

    /// Whether a lambda used several times may be copied into each use.
    pub(super) fn copyable(&self, occ: &Occ, lambda: ExprId) -> bool {
        occ.count != u32::MAX
            && occ.calls == occ.count
            && (occ.count as usize).saturating_mul(size(&self.m, lambda)) <= self.cfg.inline_budget
    }

    pub(super) fn bind_params(
        &mut self,
        params: &[Param],
        args: Vec<ExprId>,
        lenv: &Env,
        blk: &mut Vec<Bind>,
        pos: Pos,
        span: Span,
    ) -> Env {
        let mut env = lenv.clone();
        for (p, a) in params.iter().zip(args) {
            let occ = self.occ(&p.name);
            if occ.count == 0 && self.on(RuleName::DeadLet) {
                self.fire(RuleName::DeadLet);
                continue;
            }
            if self.used_once(&occ)
                && self.leaf(a).is_none()
                && self.fits(a)
                && self.on(RuleName::InlineArg)
            {
                self.fire(RuleName::InlineArg);
                env = env.insert(p.name.clone(), Subst::Done(a));
                continue;
            }
            env = self.bind_var_output(&p.name, occ, None, a, &env, blk, pos, span);
        }
        env
    }
}

/// Whether `op` is a few machine instructions on scalars: the ring
/// operations but division, comparisons, logic and `length` (no division,
/// transcendental function, loop or indexing).
pub(crate) fn arithmetic(op: Prim) -> bool {
    matches!(
        op,
        Prim::Add
            | Prim::Sub
            | Prim::Mul
            | Prim::Neg
            | Prim::Max
            | Prim::Min
            | Prim::Lt
            | Prim::Le
            | Prim::Gt
            | Prim::Ge
            | Prim::Eq
            | Prim::Ne
            | Prim::And
            | Prim::Or
            | Prim::Not
            | Prim::Length
    )
}

/// Writes the `cse` key of the node `v` into `key` (cleared first), if it
/// has one: a builtin (no function argument) applied to leaves, or an
/// index of leaves. `Round::cse_key` and the first round's pre-scan
/// (`quiet.rs`) both build their keys here, so that they agree.
pub(crate) fn write_cse_key(m: &Module, v: ExprId, key: &mut String) -> bool {
    key.clear();
    let pair;
    let (tag, args): (u64, &[ExprId]) = match m.expr(v) {
        Expr::Prim { op, args } => {
            if op.function_arg().is_some() || op.is_derivative_construct() {
                return false;
            }
            (*op as u64, args)
        }
        // `A[i]`, keyed apart from every builtin.
        Expr::Index { array, index } => {
            pair = [*array, *index];
            (u64::MAX, &pair)
        }
        _ => return false,
    };
    // Built by hand: this runs on every builtin node of every round.
    // Syntactic: `x * y` and `y * x` are different keys. Ordering the
    // operands of `+` and `*` would find more (in Example 1.1 the
    // adjoint's `x2 * x1` is the primal's `w1 = x1 * x2`), at the price
    // of the paper's printed forms; see docs/optimize.md.
    key.push('#');
    push_hex(key, tag);
    for &a in args {
        match m.expr(a) {
            Expr::Var(x) => {
                key.push(' ');
                key.push_str(x.as_str());
            }
            Expr::Real(r) => {
                key.push_str(" r");
                push_hex(key, r.to_bits());
            }
            Expr::Int(i) => {
                key.push_str(" i");
                push_hex(key, *i as u64);
            }
            Expr::Bool(b) => key.push_str(if *b { " t" } else { " f" }),
            _ => return false,
        }
    }
    true
}

/// Appends `v` in hexadecimal.
fn push_hex(out: &mut String, mut v: u64) {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut buf = [0u8; 16];
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = DIGITS[(v & 15) as usize];
        v >>= 4;
        if v == 0 {
            break;
        }
    }
    out.push_str(std::str::from_utf8(&buf[i..]).expect("invariant: hex digits are ASCII"));
}

/// Whether evaluating the tree under `id` costs a few arithmetic
/// operations per scalar it produces (see `Round::recomputable`; `share-inner-loop` does
/// not share what this calls cheap, which `recompute-cheap` would copy back).
pub(crate) fn cheap(m: &Module, id: ExprId) -> bool {
    let mut todo = vec![id];
    // The counters of the `build`s seen so far (binders are unique):
    // `0 <= c < n` in the body.
    let mut counters: Vec<&Name> = Vec::new();
    while let Some(i) = todo.pop() {
        if let Some((cond, els)) = padded_read(m, i, &counters) {
            // `if c < length r then r[c] else e`: a load that cannot
            // fail (reverse mode's padding of rows to a common length).
            todo.push(cond);
            todo.push(els);
            continue;
        }
        let ok = match m.expr(i) {
            Expr::Var(_)
            | Expr::Real(_)
            | Expr::Int(_)
            | Expr::Bool(_)
            | Expr::Tuple(_)
            | Expr::Proj { .. }
            | Expr::Let { .. }
            | Expr::If { .. }
            | Expr::Lambda { .. } => true,
            Expr::Prim { op, args } => match op {
                Prim::Map | Prim::Map2 => {
                    matches!(m.expr(args[0]), Expr::Lambda { .. })
                }
                // `build n (fun c -> e)`, e cheap: as cheap per scalar
                // as a map (it fails, on a negative n, as `map2` does
                // on unequal lengths: at the use, with the same error).
                Prim::Build => match m.expr(args[1]) {
                    Expr::Lambda { params, .. } if params.len() == 1 => {
                        counters.push(&params[0].name);
                        true
                    }
                    _ => false,
                },
                op => arithmetic(*op),
            },
            Expr::App { .. }
            | Expr::Section(_)
            | Expr::Array(_)
            | Expr::Reals(_)
            | Expr::Index { .. } => false,
        };
        if !ok {
            return false;
        }
        m.expr(i).for_each_child(|c| todo.push(c));
    }
    true
}

/// `if c < length r then r[c] else e`, c the counter of an enclosing
/// `build` in `counters` and r a variable: the condition and `e` (the
/// read is in bounds, so it costs a load and cannot fail).
fn padded_read(m: &Module, i: ExprId, counters: &[&Name]) -> Option<(ExprId, ExprId)> {
    let Expr::If {
        cond,
        then_branch,
        else_branch,
    } = m.expr(i)
    else {
        return None;
    };
    let Expr::Prim { op: Prim::Lt, args } = m.expr(*cond) else {
        return None;
    };
    let (
        Expr::Var(c),
        Expr::Prim {
            op: Prim::Length,
            args: len,
        },
    ) = (m.expr(args[0]), m.expr(args[1]))
    else {
        return None;
    };
    let (Expr::Var(r), Expr::Index { array, index }) = (m.expr(len[0]), m.expr(*then_branch))
    else {
        return None;
    };
    let same = |e: ExprId, n: &Name| matches!(m.expr(e), Expr::Var(v) if v == n);
    (counters.contains(&c) && same(*array, r) && same(*index, c)).then_some((*cond, *else_branch))
}

// Note [captured entries]
// ~~~~~~~~~~~~~~~~~~~~~~~~
// `inline-once` puts `let x = e` into the environment as `Subst::Once(e,
// env)`, to be simplified at x's one use in the environment of its
// binding. Keeping `env` itself is free (a persistent map), but it keeps
// that version of the map alive until the use, and the map in force goes
// on being extended: on the gradient of a 20,000-`let` chain, 80,000 such
// values held every version of an 80,000-entry trie, each insertion
// copying a path of 4 to 5 nodes that stayed alive (a sixth of the
// optimizer's time went to page faults). Simplifying e looks up only the
// names of its variables (`step`, `var`, `proj`, `app`, `bind_pattern`,
// `copy_into_uses` read the environment at a variable of the tree they
// simplify, and nowhere else) and, for a split tuple, the names of its
// components (`Subst::Tuple`, read through their own entries). So a small
// value keeps a map of just those entries, equal to `env` on every name
// its simplification asks about: the same lookups, the same output, and
// the older versions of the map are freed as it grows; held by nothing
// else, the map is then extended in place (`insert_mut`: the binding
// functions take it by value) instead of copying a path per binding. A
// value of more
// than `CAPTURE_NODES` nodes keeps `env`, so that the walk stays a
// bounded cost per binding (a value can be nested in another one's
// subtree only as deep as it is tall).
