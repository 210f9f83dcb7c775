//! The rules that look at every use of an array at once, run after each
//! round of the simplifier (`lib.rs`): `reduce-fusion`,
//! `prune-components`, `share-elementwise` (`fuse/share.rs`),
//! `share-inner-loop` (`fuse/inner.rs`), and `reduce-from-scan`
//! (`fuse/scan.rs`). The simplifier sees one binding and its environment
//! at a time; these rules need the whole scope of a binding (every use of
//! `X`, and where in the `let` chain each one is), so they are a pass of
//! their own over each definition: an analysis ([`Analysis`]), a plan for
//! one binding ([`Plan`]), and a rebuild that copies the path from the
//! definition's root to every changed node.
//!
//! - `reduce-fusion`: `let X = map f A in .. reduce g1 z1 (map p1 X) ..
//!   reduce g2 z2 (map p2 X) ..` becomes one reduction over the pairs,
//!   `let (r1, r2) = reduce (fun (u, v) -> (g1 u.1 v.1, g2 u.2 v.2)) (z1,
//!   z2) (map (fun a -> (p1 a, p2 a)) (map f A))`, placed before the first
//!   `let` of the chain that contains a use. `X` is then never written out:
//!   reverse mode sums the per-element contributions of a `map`'s body
//!   with one reduction per component, and a backend that writes `X` to
//!   memory spends its time there (GMM: n k (d^2 + 2d + 2) reals).
//!   `reduce` is a left fold in the evaluator and in C, so the fused
//!   reduction computes each component exactly as before. Also for
//!   reductions at the definition's level over one variable, and, for two
//!   lifted reductions, with one accumulator of pairs (`fuse/reduce.rs`).
//! - `prune-components`: `let X = map f A` whose every use is a projection
//!   map `map (fun t -> t.i) X`, or a map whose function reads its element
//!   only through projections `t.i` (reverse mode's `hist_add` readers of
//!   per-point contributions, `map (fun t -> .. t.1.2 ..) X`), keeps only
//!   the components some use reads; the dead ones then go with `dead-let`.
//!
//! Invariants kept: nodes are appended (children before parents), every
//! node keeps one parent (subtrees are moved, never copied), binders stay
//! unique (the new ones are fresh), every new node is typed.
//!
//! Conditions, and why: the uses must not be under a lambda or in a
//! branch of a conditional (the fused reduction runs where the first use
//! was, unconditionally, so nothing runs that did not run before); the
//! functions, initial values and projections of the later uses must only
//! mention names bound before the first use (checked against the binders
//! of the rest of the chain). Two reductions that both fail are then
//! reported in another order, the one difference.

use std::collections::BTreeMap;

use syntax::ir::NameGen;
use syntax::{Expr, ExprId, Module, Name, Param, Pat, Prim, Span, Ty, stack};

use crate::hash::{FxHashMap, FxHashSet};
use crate::rules::{RuleName, RuleSet};

mod inner;
mod reduce;
mod scan;
mod share;

/// A use of a candidate array.
#[derive(Debug, Clone)]
struct Use {
    /// `map (fun t -> t.i) X`: the `map` node and `i`.
    proj: Option<(ExprId, u32)>,
    /// `map (fun t -> e) X` with every occurrence of `t` in `e` a
    /// projection `t.i`: the `map` node and those projections with their
    /// `i` (`prune-components` rewrites them).
    fields: Option<(ExprId, Vec<(ExprId, u32)>)>,
    /// The reduction (`reduce` or `foldl`) whose array is `X` or `map p X`.
    site: Option<Site>,
    /// Under a lambda or in a branch that the binding is outside of.
    guarded: bool,
}

/// A reduction over a variable: `reduce g z X` or `reduce g z (map p X)`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Site {
    /// The `reduce`/`foldl` node.
    pub node: ExprId,
    /// `Reduce` or `Foldl`.
    pub op: Prim,
    /// The `map p X` between the reduction and `X`, if any.
    pub map: Option<ExprId>,
}

/// A binding `let X = map/map2/build (fun ..) ..`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Binding {
    pub let_node: ExprId,
    /// Lambdas and branches around the binding.
    pub depth: u32,
}

/// The candidates of one definition and their uses.
struct Analysis<'m> {
    m: &'m Module,
    bindings: FxHashMap<Name, Binding>,
    uses: FxHashMap<Name, Vec<Use>>,
    /// Every reduction over a variable outside lambdas and branches (the
    /// definition's own level), with the variable.
    top_sites: Vec<(Site, Name)>,
}

impl Analysis<'_> {
    fn candidate(&self, x: &Name) -> Option<Binding> {
        self.bindings.get(x).copied()
    }

    fn record(&mut self, x: &Name, depth: u32, proj: Option<(ExprId, u32)>, site: Option<Site>) {
        self.record_fields(x, depth, proj, None, site);
    }

    fn record_fields(
        &mut self,
        x: &Name,
        depth: u32,
        proj: Option<(ExprId, u32)>,
        fields: Option<(ExprId, Vec<(ExprId, u32)>)>,
        site: Option<Site>,
    ) {
        if let Some(b) = self.candidate(x) {
            self.uses.entry(x.clone()).or_default().push(Use {
                proj,
                fields,
                site,
                guarded: depth > b.depth,
            });
        }
    }

    /// The projections `t.i` of `f = fun t -> e` when they are every
    /// occurrence of `t` in `e`.
    fn fields(&self, f: ExprId) -> Option<Vec<(ExprId, u32)>> {
        let Expr::Lambda { params, body } = self.m.expr(f) else {
            return None;
        };
        let [p] = params.as_slice() else {
            return None;
        };
        let (mut projs, mut vars) = (Vec::new(), 0usize);
        let mut todo = vec![*body];
        while let Some(i) = todo.pop() {
            match self.m.expr(i) {
                Expr::Var(t) if *t == p.name => vars += 1,
                Expr::Proj { tuple, index } if matches!(self.m.expr(*tuple), Expr::Var(t) if *t == p.name) =>
                {
                    projs.push((i, *index));
                }
                e => e.for_each_child(|c| todo.push(c)),
            }
        }
        (vars == 0 && !projs.is_empty()).then_some(projs)
    }

    /// `i` when `f` is `fun t -> t.i`.
    fn proj_index(&self, f: ExprId) -> Option<u32> {
        let Expr::Lambda { params, body } = self.m.expr(f) else {
            return None;
        };
        match (params.as_slice(), self.m.expr(*body)) {
            ([p], Expr::Proj { tuple, index }) if matches!(self.m.expr(*tuple), Expr::Var(t) if *t == p.name) => {
                Some(*index)
            }
            _ => None,
        }
    }

    /// The candidate variable `X` of `map p X`, if `id` is that.
    fn map_of_var(&self, id: ExprId) -> Option<(Name, ExprId)> {
        match self.m.expr(id) {
            Expr::Prim {
                op: Prim::Map,
                args,
            } => match self.m.expr(args[1]) {
                Expr::Var(x) if self.bindings.contains_key(x) => Some((x.clone(), args[0])),
                _ => None,
            },
            _ => None,
        }
    }

    fn walk(&mut self, id: ExprId, depth: u32) {
        stack::guard(|| match self.m.expr(id) {
            Expr::Var(x) => self.record(x, depth, None, None),
            Expr::Let {
                pat, value, body, ..
            } => {
                self.walk(*value, depth);
                if let Pat::Var(x) = pat
                    && producer(self.m, *value).is_some()
                {
                    self.bindings.insert(
                        x.clone(),
                        Binding {
                            let_node: id,
                            depth,
                        },
                    );
                }
                self.walk(*body, depth);
            }
            Expr::Lambda { body, .. } => self.walk(*body, depth + 1),
            Expr::If {
                cond,
                then_branch,
                else_branch,
            } => {
                self.walk(*cond, depth);
                self.walk(*then_branch, depth + 1);
                self.walk(*else_branch, depth + 1);
            }
            Expr::Prim {
                op: op @ (Prim::Reduce | Prim::Foldl),
                args,
            } => {
                let (op, args) = (*op, args.clone());
                self.walk(args[0], depth);
                self.walk(args[1], depth);
                if depth == 0 {
                    let x = match self.m.expr(args[2]) {
                        Expr::Var(x) => Some((x.clone(), None)),
                        Expr::Prim {
                            op: Prim::Map,
                            args: margs,
                        } => match self.m.expr(margs[1]) {
                            Expr::Var(x) => Some((x.clone(), Some(args[2]))),
                            _ => None,
                        },
                        _ => None,
                    };
                    if let Some((x, map)) = x {
                        self.top_sites.push((Site { node: id, op, map }, x));
                    }
                }
                if let Expr::Var(x) = self.m.expr(args[2])
                    && self.bindings.contains_key(x)
                {
                    let site = Site {
                        node: id,
                        op,
                        map: None,
                    };
                    self.record(&x.clone(), depth, None, Some(site));
                } else if let Some((x, p)) = self.map_of_var(args[2]) {
                    let site = Site {
                        node: id,
                        op,
                        map: Some(args[2]),
                    };
                    let proj = self.proj_index(p).map(|i| (args[2], i));
                    let fields = proj
                        .is_none()
                        .then(|| self.fields(p).map(|f| (args[2], f)))
                        .flatten();
                    self.record_fields(&x, depth, proj, fields, Some(site));
                    self.walk(p, depth);
                } else {
                    self.walk(args[2], depth);
                }
            }
            Expr::Prim { op: Prim::Map, .. } if self.map_of_var(id).is_some() => {
                let (x, p) = self
                    .map_of_var(id)
                    .expect("invariant: checked by the guard");
                let proj = self.proj_index(p).map(|i| (id, i));
                let fields = proj
                    .is_none()
                    .then(|| self.fields(p).map(|f| (id, f)))
                    .flatten();
                self.record_fields(&x, depth, proj, fields, None);
                self.walk(p, depth);
            }
            e => e.for_each_child(|c| self.walk(c, depth)),
        })
    }
}

/// The position of the function argument when `id` is `map`, `map2` or
/// `build` of a lambda.
fn producer(m: &Module, id: ExprId) -> Option<usize> {
    let Expr::Prim { op, args } = m.expr(id) else {
        return None;
    };
    let pos = match op {
        Prim::Map | Prim::Map2 => 0,
        Prim::Build => 1,
        _ => return None,
    };
    matches!(m.expr(args[pos]), Expr::Lambda { .. }).then_some(pos)
}

/// What a rewrite changes, for [`rebuild`].
#[derive(Default)]
pub(crate) struct Plan {
    /// Nodes replaced by new ones (whose subtrees are not visited).
    pub replace: FxHashMap<ExprId, ExprId>,
    /// `let X = ..` nodes to drop (their body takes their place).
    pub drop_lets: FxHashSet<ExprId>,
    /// A `let` whose value is replaced.
    pub new_value: Option<(ExprId, ExprId)>,
    /// A binding to put in front of a node: the node, the pattern, the value.
    pub insert: Option<(ExprId, Pat, ExprId)>,
}

/// Runs both rules over every definition, at most one rewrite per
/// definition (a rewrite moves subtrees; the next round sees the result).
pub(crate) fn run(
    m: &mut Module,
    names: &mut Option<NameGen>,
    rules: RuleSet,
    fired: &mut BTreeMap<RuleName, usize>,
) {
    let fusion = rules.contains(RuleName::ReduceFusion);
    let prune = rules.contains(RuleName::PruneComponents);
    let share = rules.contains(RuleName::ShareElementwise);
    let inner = rules.contains(RuleName::ShareInnerLoop);
    let from_scan = rules.contains(RuleName::ReduceFromScan);
    if !fusion && !prune && !share && !inner && !from_scan {
        return;
    }
    // Every rule here takes apart a loop (a builtin with a function
    // argument: `map`, `reduce`, a scan, `build`...): without one in the
    // arena none can fire, and the analyses would walk the whole program
    // three times for nothing (a sixth of the optimizer's time on the
    // straight-line gradient of a long `let` chain, docs/scale.md).
    let has_loop = m
        .exprs
        .iter()
        .any(|e| matches!(e, Expr::Prim { op, .. } if op.function_arg().is_some()));
    if !has_loop {
        return;
    }
    for d in 0..m.defs.len() {
        let root = m.defs[d].body;
        // A fold read from a scan is no loop at all: before fusing it
        // with other reductions.
        if from_scan && let Some(plan) = scan::plan_reduce_from_scan(m, names, root) {
            let body = rebuild(m, root, &plan);
            m.defs[d].body = body;
            *fired.entry(RuleName::ReduceFromScan).or_insert(0) += 1;
            continue;
        }
        let mut a = Analysis {
            m,
            bindings: FxHashMap::default(),
            uses: FxHashMap::default(),
            top_sites: Vec::new(),
        };
        a.walk(root, 0);
        let top_sites = std::mem::take(&mut a.top_sites);
        let mut cands: Vec<(Name, Binding)> =
            a.bindings.iter().map(|(x, b)| (x.clone(), *b)).collect();
        cands.sort_by_key(|(_, b)| b.let_node);
        let uses = std::mem::take(&mut a.uses);
        let mut done = None;
        for (x, b) in &cands {
            let us = uses.get(x).map(Vec::as_slice).unwrap_or(&[]);
            if fusion && let Some(plan) = reduce::plan_fusion(m, names, x, *b, us) {
                done = Some((plan, RuleName::ReduceFusion));
                break;
            }
            if prune && let Some(plan) = plan_prune(m, names, x, *b, us) {
                done = Some((plan, RuleName::PruneComponents));
                break;
            }
        }
        if done.is_none() && fusion {
            let single: FxHashMap<Name, Binding> = cands
                .iter()
                .filter(|(x, b)| {
                    b.depth == 0
                        && uses
                            .get(x)
                            .is_some_and(|u| u.len() == 1 && u[0].site.is_some() && !u[0].guarded)
                })
                .map(|(x, b)| (x.clone(), *b))
                .collect();
            if let Some(plan) = reduce::plan_source_fusion(m, names, root, &top_sites, &single) {
                done = Some((plan, RuleName::ReduceFusion));
            }
        }
        if done.is_none()
            && share
            && let Some(plan) = share::plan_share(m, names, root)
        {
            done = Some((plan, RuleName::ShareElementwise));
        }
        if done.is_none()
            && inner
            && let Some(plan) = inner::plan_inner(m, names, root)
        {
            done = Some((plan, RuleName::ShareInnerLoop));
        }
        if let Some((plan, rule)) = done {
            let body = rebuild(m, root, &plan);
            m.defs[d].body = body;
            *fired.entry(rule).or_insert(0) += 1;
        }
    }
}

fn add(m: &mut Module, e: Expr, ty: Ty, span: Span) -> ExprId {
    let id = m.add(e, span);
    m.types.push(ty);
    id
}

fn fresh(m: &Module, names: &mut Option<NameGen>, base: &str) -> Name {
    names.get_or_insert_with(|| m.name_gen()).fresh(base)
}

fn elem_ty(t: &Ty) -> Option<(syntax::Size, Ty)> {
    match t {
        Ty::Array(s, e) => Some((s.clone(), (**e).clone())),
        _ => None,
    }
}

/// The names bound in the tree under `id` (lets and lambdas).
fn binders(m: &Module, id: ExprId, out: &mut FxHashSet<Name>) {
    let mut todo = vec![id];
    while let Some(i) = todo.pop() {
        match m.expr(i) {
            Expr::Let { pat, .. } => match pat {
                Pat::Var(x) => {
                    out.insert(x.clone());
                }
                Pat::Tuple(xs) => out.extend(xs.iter().cloned()),
            },
            Expr::Lambda { params, .. } => out.extend(params.iter().map(|p| p.name.clone())),
            _ => {}
        }
        m.expr(i).for_each_child(|c| todo.push(c));
    }
}

/// The variables occurring in the tree under `id`.
fn vars(m: &Module, id: ExprId, out: &mut FxHashSet<Name>) {
    let mut todo = vec![id];
    while let Some(i) = todo.pop() {
        if let Expr::Var(x) = m.expr(i) {
            out.insert(x.clone());
        }
        m.expr(i).for_each_child(|c| todo.push(c));
    }
}

/// Whether the tree under `id` contains one of `nodes`.
fn contains(m: &Module, id: ExprId, nodes: &FxHashSet<ExprId>) -> bool {
    let mut todo = vec![id];
    while let Some(i) = todo.pop() {
        if nodes.contains(&i) {
            return true;
        }
        m.expr(i).for_each_child(|c| todo.push(c));
    }
    false
}

/// `prune-components` for `X`, if its uses allow it.
fn plan_prune(
    m: &mut Module,
    names: &mut Option<NameGen>,
    x: &Name,
    b: Binding,
    uses: &[Use],
) -> Option<Plan> {
    if uses.is_empty() || uses.iter().any(|u| u.proj.is_none() && u.fields.is_none()) {
        return None;
    }
    // A use inside another's function would be rewritten twice.
    let nodes: FxHashSet<ExprId> = uses
        .iter()
        .filter_map(|u| u.proj.map(|p| p.0).or(u.fields.as_ref().map(|f| f.0)))
        .collect();
    for u in uses {
        if let Some((node, _)) = &u.fields
            && let Expr::Prim { args, .. } = m.expr(*node)
            && contains(m, args[0], &nodes)
        {
            return None;
        }
    }
    let Expr::Let { value: v, .. } = m.expr(b.let_node).clone() else {
        return None;
    };
    let (size, elem) = elem_ty(&m.types[v.index()])?;
    let Ty::Tuple(parts) = elem.clone() else {
        return None;
    };
    let mut used: Vec<u32> = uses
        .iter()
        .flat_map(|u| match (&u.proj, &u.fields) {
            (Some(p), _) => vec![p.1],
            (None, Some((_, fs))) => fs.iter().map(|f| f.1).collect(),
            (None, None) => Vec::new(),
        })
        .collect();
    used.sort_unstable();
    used.dedup();
    if used.len() == parts.len() || used.iter().any(|&i| i == 0 || i as usize > parts.len()) {
        return None;
    }
    let pos = producer(m, v)?;
    let Expr::Prim { op, args } = m.expr(v).clone() else {
        return None;
    };
    let Expr::Lambda { params, body } = m.expr(args[pos]).clone() else {
        return None;
    };
    let span = m.span(v);
    let new_elem = if used.len() == 1 {
        parts[used[0] as usize - 1].clone()
    } else {
        Ty::Tuple(
            used.iter()
                .map(|&i| parts[i as usize - 1].clone())
                .collect(),
        )
    };
    // fun .. -> let t = body in (t.i, ..)
    let t = fresh(m, names, "t");
    let mut items = Vec::new();
    for &i in &used {
        let tv = add(m, Expr::Var(t.clone()), elem.clone(), span);
        items.push(add(
            m,
            Expr::Proj {
                tuple: tv,
                index: i,
            },
            parts[i as usize - 1].clone(),
            span,
        ));
    }
    let result = if items.len() == 1 {
        items[0]
    } else {
        add(m, Expr::Tuple(items), new_elem.clone(), span)
    };
    let lbody = add(
        m,
        Expr::Let {
            pat: Pat::Var(t),
            ty: None,
            value: body,
            body: result,
        },
        new_elem.clone(),
        span,
    );
    let ptys: Vec<Ty> = params
        .iter()
        .map(|p| p.ty.clone().unwrap_or(Ty::Tuple(Vec::new())))
        .collect();
    let lam = add(
        m,
        Expr::Lambda {
            params,
            body: lbody,
        },
        Ty::Func(ptys, Box::new(new_elem.clone())),
        m.span(args[pos]),
    );
    let mut new_args = args.clone();
    new_args[pos] = lam;
    let xty = Ty::array(size, new_elem.clone());
    let new_v = add(m, Expr::Prim { op, args: new_args }, xty.clone(), span);
    let mut plan = Plan {
        new_value: Some((b.let_node, new_v)),
        ..Plan::default()
    };
    for u in uses {
        if let Some((node, fs)) = &u.fields {
            let repl = refield(m, *node, fs, &used, x, &xty, &new_elem, &parts);
            plan.replace.insert(*node, repl);
            continue;
        }
        let (node, i) = u.proj.expect("invariant: every use is a projection map");
        let nspan = m.span(node);
        let xv = add(m, Expr::Var(x.clone()), xty.clone(), nspan);
        let j = used
            .iter()
            .position(|&k| k == i)
            .expect("invariant: i is used") as u32
            + 1;
        let repl = if used.len() == 1 {
            xv
        } else {
            let s = fresh(m, names, "t");
            let sv = add(m, Expr::Var(s.clone()), new_elem.clone(), nspan);
            let pty = parts[i as usize - 1].clone();
            let pr = add(
                m,
                Expr::Proj {
                    tuple: sv,
                    index: j,
                },
                pty.clone(),
                nspan,
            );
            let l = add(
                m,
                Expr::Lambda {
                    params: vec![Param {
                        name: s,
                        ty: Some(new_elem.clone()),
                        span: nspan,
                    }],
                    body: pr,
                },
                Ty::Func(vec![new_elem.clone()], Box::new(pty)),
                nspan,
            );
            let nty = m.types[node.index()].clone();
            add(
                m,
                Expr::Prim {
                    op: Prim::Map,
                    args: vec![l, xv],
                },
                nty,
                nspan,
            )
        };
        plan.replace.insert(node, repl);
    }
    Some(plan)
}

/// The use `map (fun t -> e) X` of a pruned `X` (elements now `new_elem`,
/// the components `used` of `parts`): `e`'s projections `t.i` read the
/// kept component (`t` itself when only one is kept).
#[allow(clippy::too_many_arguments)]
fn refield(
    m: &mut Module,
    node: ExprId,
    fs: &[(ExprId, u32)],
    used: &[u32],
    x: &Name,
    xty: &Ty,
    new_elem: &Ty,
    parts: &[Ty],
) -> ExprId {
    let Expr::Prim { op, args } = m.expr(node).clone() else {
        unreachable!("invariant: a field use is a map")
    };
    let Expr::Lambda { params, body } = m.expr(args[0]).clone() else {
        unreachable!("invariant: a field use maps a lambda")
    };
    let t = params[0].name.clone();
    let mut inner = Plan::default();
    for &(p, i) in fs {
        let span = m.span(p);
        let tv = add(m, Expr::Var(t.clone()), new_elem.clone(), span);
        let r = if used.len() == 1 {
            tv
        } else {
            let j = used
                .iter()
                .position(|&k| k == i)
                .expect("invariant: i is used") as u32
                + 1;
            add(
                m,
                Expr::Proj {
                    tuple: tv,
                    index: j,
                },
                parts[i as usize - 1].clone(),
                span,
            )
        };
        inner.replace.insert(p, r);
    }
    let body = rebuild(m, body, &inner);
    let ret = match &m.types[args[0].index()] {
        Ty::Func(_, r) => (**r).clone(),
        _ => unreachable!("invariant: a lambda has a function type"),
    };
    let lspan = m.span(args[0]);
    let lam = add(
        m,
        Expr::Lambda {
            params: vec![Param {
                name: t,
                ty: Some(new_elem.clone()),
                span: params[0].span,
            }],
            body,
        },
        Ty::Func(vec![new_elem.clone()], Box::new(ret)),
        lspan,
    );
    let span = m.span(node);
    let xv = add(m, Expr::Var(x.clone()), xty.clone(), span);
    let ty = m.types[node.index()].clone();
    add(
        m,
        Expr::Prim {
            op,
            args: vec![lam, xv],
        },
        ty,
        span,
    )
}

/// The tree under `id` with the plan applied: the path to every changed
/// node is copied, the rest is shared.
fn rebuild(m: &mut Module, id: ExprId, plan: &Plan) -> ExprId {
    stack::guard(|| {
        if let Some(&r) = plan.replace.get(&id) {
            return r;
        }
        if plan.drop_lets.contains(&id)
            && let Expr::Let { body, .. } = m.expr(id)
        {
            let body = *body;
            return rebuild(m, body, plan);
        }
        let e = m.expr(id).clone();
        let e = match (plan.new_value, e) {
            (Some((node, v)), Expr::Let { pat, body, .. }) if node == id => Expr::Let {
                pat,
                ty: None,
                value: v,
                body,
            },
            (_, e) => e,
        };
        let mut changed = matches!(plan.new_value, Some((node, _)) if node == id);
        let e2 = e.map_children(|c| {
            let n = rebuild(m, c, plan);
            changed |= n != c;
            n
        });
        let (ty, span) = (m.types[id.index()].clone(), m.span(id));
        let inner = if changed {
            add(m, e2, ty.clone(), span)
        } else {
            id
        };
        match &plan.insert {
            Some((at, pat, value)) if *at == id => add(
                m,
                Expr::Let {
                    pat: pat.clone(),
                    ty: None,
                    value: *value,
                    body: inner,
                },
                ty,
                span,
            ),
            _ => inner,
        }
    })
}
