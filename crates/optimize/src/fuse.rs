//! The two rules that look at every use of an array at once, run after each
//! round of the simplifier (`lib.rs`): `reduce-fusion` and
//! `prune-components`. The simplifier sees one binding and its environment
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
//!   reduction computes each component exactly as before.
//! - `prune-components`: `let X = map f A` whose every use is a projection
//!   map `map (fun t -> t.i) X` keeps only the components some use reads;
//!   the dead ones then go with `dead-let`.
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

/// A use of a candidate array.
#[derive(Debug, Clone, Copy)]
struct Use {
    /// `map (fun t -> t.i) X`: the `map` node and `i`.
    proj: Option<(ExprId, u32)>,
    /// The reduction (`reduce` or `foldl`) whose array is `X` or `map p X`.
    site: Option<Site>,
    /// Under a lambda or in a branch that the binding is outside of.
    guarded: bool,
}

/// A reduction over a candidate array.
#[derive(Debug, Clone, Copy)]
struct Site {
    /// The `reduce`/`foldl` node.
    node: ExprId,
    /// `Reduce` or `Foldl`.
    op: Prim,
    /// The `map p X` between the reduction and `X`, if any.
    map: Option<ExprId>,
}

/// A binding `let X = map/map2/build (fun ..) ..`.
#[derive(Debug, Clone, Copy)]
struct Binding {
    let_node: ExprId,
    /// Lambdas and branches around the binding.
    depth: u32,
}

/// The candidates of one definition and their uses.
struct Analysis<'m> {
    m: &'m Module,
    bindings: FxHashMap<Name, Binding>,
    uses: FxHashMap<Name, Vec<Use>>,
}

impl Analysis<'_> {
    fn candidate(&self, x: &Name) -> Option<Binding> {
        self.bindings.get(x).copied()
    }

    fn record(&mut self, x: &Name, depth: u32, proj: Option<(ExprId, u32)>, site: Option<Site>) {
        if let Some(b) = self.candidate(x) {
            self.uses.entry(x.clone()).or_default().push(Use {
                proj,
                site,
                guarded: depth > b.depth,
            });
        }
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
                    self.record(&x, depth, proj, Some(site));
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
                self.record(&x, depth, proj, None);
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
struct Plan {
    /// Nodes replaced by new ones (whose subtrees are not visited).
    replace: FxHashMap<ExprId, ExprId>,
    /// `let X = ..` nodes to drop (their body takes their place).
    drop_let: Option<ExprId>,
    /// A `let` whose value is replaced.
    new_value: Option<(ExprId, ExprId)>,
    /// A binding to put in front of a node: the node, the pattern, the value.
    insert: Option<(ExprId, Pat, ExprId)>,
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
    if !fusion && !prune {
        return;
    }
    for d in 0..m.defs.len() {
        let root = m.defs[d].body;
        let mut a = Analysis {
            m,
            bindings: FxHashMap::default(),
            uses: FxHashMap::default(),
        };
        a.walk(root, 0);
        let mut cands: Vec<(Name, Binding)> =
            a.bindings.iter().map(|(x, b)| (x.clone(), *b)).collect();
        cands.sort_by_key(|(_, b)| b.let_node);
        let uses = std::mem::take(&mut a.uses);
        let mut done = None;
        for (x, b) in cands {
            let us = uses.get(&x).map(Vec::as_slice).unwrap_or(&[]);
            if fusion && let Some(plan) = plan_fusion(m, names, &x, b, us) {
                done = Some((plan, RuleName::ReduceFusion));
                break;
            }
            if prune && let Some(plan) = plan_prune(m, names, &x, b, us) {
                done = Some((plan, RuleName::PruneComponents));
                break;
            }
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

/// `reduce-fusion` for `X`, if its uses allow it.
fn plan_fusion(
    m: &mut Module,
    names: &mut Option<NameGen>,
    x: &Name,
    b: Binding,
    uses: &[Use],
) -> Option<Plan> {
    if uses.len() < 2 || uses.iter().any(|u| u.guarded || u.site.is_none()) {
        return None;
    }
    let sites: Vec<Site> = uses.iter().filter_map(|u| u.site).collect();
    let op = sites[0].op;
    if sites.iter().any(|s| s.op != op) {
        return None;
    }
    let Expr::Let { value: v, body, .. } = m.expr(b.let_node).clone() else {
        return None;
    };
    // The chain of `let`s after the binding, and the first element that
    // holds a use.
    let site_nodes: FxHashSet<ExprId> = sites.iter().map(|s| s.node).collect();
    let mut chain = Vec::new();
    let mut cur = body;
    while let Expr::Let { body, .. } = m.expr(cur) {
        chain.push(cur);
        cur = *body;
    }
    chain.push(cur);
    let holds = |id: ExprId| match m.expr(id) {
        Expr::Let { value, .. } => contains(m, *value, &site_nodes),
        _ => contains(m, id, &site_nodes),
    };
    let first = chain.iter().position(|&c| holds(c))?;
    let at = chain[first];
    // The names bound from there on: the parts of the uses must not
    // mention them (nor X).
    let mut after = FxHashSet::default();
    for &c in &chain[first..] {
        match m.expr(c) {
            Expr::Let { pat, value, .. } => {
                match pat {
                    Pat::Var(y) => {
                        after.insert(y.clone());
                    }
                    Pat::Tuple(ys) => after.extend(ys.iter().cloned()),
                }
                binders(m, *value, &mut after);
            }
            _ => binders(m, c, &mut after),
        }
    }
    let mut parts = Vec::new();
    for s in &sites {
        let Expr::Prim { args, .. } = m.expr(s.node) else {
            return None;
        };
        let f = args[0];
        let z = args[1];
        let Expr::Lambda { params, .. } = m.expr(f) else {
            return None;
        };
        if params.len() != 2 {
            return None;
        }
        let p = match s.map {
            Some(mp) => {
                let Expr::Prim { args: margs, .. } = m.expr(mp) else {
                    return None;
                };
                let p = margs[0];
                if !matches!(m.expr(p), Expr::Lambda { params, .. } if params.len() == 1) {
                    return None;
                }
                Some(p)
            }
            None => None,
        };
        for part in [Some(f), Some(z), p].into_iter().flatten() {
            let (mut vs, mut own) = (FxHashSet::default(), FxHashSet::default());
            vars(m, part, &mut vs);
            binders(m, part, &mut own);
            if vs.contains(x) || vs.iter().any(|n| after.contains(n) && !own.contains(n)) {
                return None;
            }
        }
        parts.push((f, z, p, s.node));
    }
    // Build the fused reduction.
    let span = m.span(b.let_node);
    let xty = m.types[v.index()].clone();
    let (size, xelem) = elem_ty(&xty)?;
    let acc_tys: Vec<Ty> = parts
        .iter()
        .map(|&(_, _, _, n)| m.types[n.index()].clone())
        .collect();
    let mut el_tys = Vec::new();
    for &(_, _, p, _) in &parts {
        match p {
            Some(p) => match &m.types[p.index()] {
                Ty::Func(_, r) => el_tys.push((**r).clone()),
                _ => return None,
            },
            None => el_tys.push(xelem.clone()),
        }
    }
    if let Some(plan) = zipped(
        m, names, b, at, v, op, &parts, &acc_tys, &el_tys, &xelem, &size,
    ) {
        return Some(plan);
    }
    let acc_t = Ty::Tuple(acc_tys.clone());
    let el_t = Ty::Tuple(el_tys.clone());
    let (u, w, a) = (
        fresh(m, names, "u"),
        fresh(m, names, "v"),
        fresh(m, names, "a"),
    );
    let mut comps = Vec::new();
    for (j, &(f, _, _, _)) in parts.iter().enumerate() {
        let uv = add(m, Expr::Var(u.clone()), acc_t.clone(), span);
        let uj = add(
            m,
            Expr::Proj {
                tuple: uv,
                index: j as u32 + 1,
            },
            acc_tys[j].clone(),
            span,
        );
        let vv = add(m, Expr::Var(w.clone()), el_t.clone(), span);
        let vj = add(
            m,
            Expr::Proj {
                tuple: vv,
                index: j as u32 + 1,
            },
            el_tys[j].clone(),
            span,
        );
        comps.push(add(
            m,
            Expr::App {
                func: f,
                args: vec![uj, vj],
            },
            acc_tys[j].clone(),
            span,
        ));
    }
    let fbody = add(m, Expr::Tuple(comps), acc_t.clone(), span);
    let flam = add(
        m,
        Expr::Lambda {
            params: vec![
                Param {
                    name: u,
                    ty: Some(acc_t.clone()),
                    span,
                },
                Param {
                    name: w,
                    ty: Some(el_t.clone()),
                    span,
                },
            ],
            body: fbody,
        },
        Ty::Func(vec![acc_t.clone(), el_t.clone()], Box::new(acc_t.clone())),
        span,
    );
    let zs: Vec<ExprId> = parts.iter().map(|&(_, z, _, _)| z).collect();
    let ztup = add(m, Expr::Tuple(zs), acc_t.clone(), span);
    let mut items = Vec::new();
    for (j, &(_, _, p, _)) in parts.iter().enumerate() {
        let av = add(m, Expr::Var(a.clone()), xelem.clone(), span);
        items.push(match p {
            Some(p) => add(
                m,
                Expr::App {
                    func: p,
                    args: vec![av],
                },
                el_tys[j].clone(),
                span,
            ),
            None => av,
        });
    }
    let mbody = add(m, Expr::Tuple(items), el_t.clone(), span);
    let mlam = add(
        m,
        Expr::Lambda {
            params: vec![Param {
                name: a,
                ty: Some(xelem.clone()),
                span,
            }],
            body: mbody,
        },
        Ty::Func(vec![xelem], Box::new(el_t.clone())),
        span,
    );
    let mapped = add(
        m,
        Expr::Prim {
            op: Prim::Map,
            args: vec![mlam, v],
        },
        Ty::Array(size, Box::new(el_t)),
        span,
    );
    let fused = add(
        m,
        Expr::Prim {
            op,
            args: vec![flam, ztup, mapped],
        },
        acc_t,
        span,
    );
    let mut plan = Plan {
        drop_let: Some(b.let_node),
        ..Plan::default()
    };
    let mut rs = Vec::new();
    for (j, &(_, _, _, node)) in parts.iter().enumerate() {
        let r = fresh(m, names, "r");
        let rv = add(m, Expr::Var(r.clone()), acc_tys[j].clone(), m.span(node));
        plan.replace.insert(node, rv);
        rs.push(r);
    }
    plan.insert = Some((at, Pat::Tuple(rs), fused));
    Some(plan)
}

/// The function `h` when `f` is `fun (u, v) -> map2 h u v`.
fn lifted(m: &Module, f: ExprId) -> Option<ExprId> {
    let Expr::Lambda { params, body } = m.expr(f) else {
        return None;
    };
    let [pu, pv] = params.as_slice() else {
        return None;
    };
    let Expr::Prim {
        op: Prim::Map2,
        args,
    } = m.expr(*body)
    else {
        return None;
    };
    let is = |id: ExprId, p: &Param| matches!(m.expr(id), Expr::Var(x) if *x == p.name);
    (is(args[1], pu)
        && is(args[2], pv)
        && matches!(m.expr(args[0]), Expr::Lambda { params, .. } if params.len() == 2))
    .then_some(args[0])
}

/// `reduce-fusion` of two reductions whose functions are both lifted,
/// `fun (u, v) -> map2 h u v`, over arrays of one length (by their
/// types): the accumulator is one array of pairs rather than a pair of
/// arrays, `reduce (fun (u, v) -> map2 (fun (a, b) -> (h1 a.1 b.1, h2
/// a.2 b.2)) u v) (zip z1 z2) (map (fun a -> zip (p1 a) (p2 a)) X)`, so
/// that each element's two parts are computed in one loop (in the
/// backend, one pass over the element instead of writing it out).
#[allow(clippy::too_many_arguments)]
fn zipped(
    m: &mut Module,
    names: &mut Option<NameGen>,
    b: Binding,
    at: ExprId,
    v: ExprId,
    op: Prim,
    parts: &[(ExprId, ExprId, Option<ExprId>, ExprId)],
    acc_tys: &[Ty],
    el_tys: &[Ty],
    xelem: &Ty,
    xsize: &syntax::Size,
) -> Option<Plan> {
    if parts.len() != 2 {
        return None;
    }
    let hs: Vec<ExprId> = parts
        .iter()
        .map(|&(f, ..)| lifted(m, f))
        .collect::<Option<_>>()?;
    let (s, accs): (Vec<syntax::Size>, Vec<Ty>) = acc_tys
        .iter()
        .map(elem_ty)
        .collect::<Option<Vec<_>>>()?
        .into_iter()
        .unzip();
    let (e, els): (Vec<syntax::Size>, Vec<Ty>) = el_tys
        .iter()
        .map(elem_ty)
        .collect::<Option<Vec<_>>>()?
        .into_iter()
        .unzip();
    let size = s[0].clone();
    if size == syntax::Size::Dyn || s.iter().chain(&e).any(|x| *x != size) {
        return None;
    }
    let span = m.span(b.let_node);
    let pair_s = Ty::Tuple(accs.clone());
    let pair_e = Ty::Tuple(els.clone());
    let acc_z = Ty::Array(size.clone(), Box::new(pair_s.clone()));
    let el_z = Ty::Array(size.clone(), Box::new(pair_e.clone()));
    // zip x y = map2 (fun (a, b) -> (a, b)) x y
    let zip = |m: &mut Module,
               names: &mut Option<NameGen>,
               x: ExprId,
               y: ExprId,
               tys: &[Ty],
               out: &Ty| {
        let (a, c) = (fresh(m, names, "a"), fresh(m, names, "b"));
        let av = add(m, Expr::Var(a.clone()), tys[0].clone(), span);
        let cv = add(m, Expr::Var(c.clone()), tys[1].clone(), span);
        let pair = Ty::Tuple(tys.to_vec());
        let body = add(m, Expr::Tuple(vec![av, cv]), pair.clone(), span);
        let lam = add(
            m,
            Expr::Lambda {
                params: vec![
                    Param {
                        name: a,
                        ty: Some(tys[0].clone()),
                        span,
                    },
                    Param {
                        name: c,
                        ty: Some(tys[1].clone()),
                        span,
                    },
                ],
                body,
            },
            Ty::Func(tys.to_vec(), Box::new(pair)),
            span,
        );
        add(
            m,
            Expr::Prim {
                op: Prim::Map2,
                args: vec![lam, x, y],
            },
            out.clone(),
            span,
        )
    };
    // The function: fun (u, w) -> map2 (fun (a, c) -> (h1 a.1 c.1, h2 a.2 c.2)) u w
    let (u, w, a, c) = (
        fresh(m, names, "u"),
        fresh(m, names, "v"),
        fresh(m, names, "a"),
        fresh(m, names, "b"),
    );
    let mut comps = Vec::new();
    for j in 0..2 {
        let av = add(m, Expr::Var(a.clone()), pair_s.clone(), span);
        let aj = add(
            m,
            Expr::Proj {
                tuple: av,
                index: j as u32 + 1,
            },
            accs[j].clone(),
            span,
        );
        let cv = add(m, Expr::Var(c.clone()), pair_e.clone(), span);
        let cj = add(
            m,
            Expr::Proj {
                tuple: cv,
                index: j as u32 + 1,
            },
            els[j].clone(),
            span,
        );
        comps.push(add(
            m,
            Expr::App {
                func: hs[j],
                args: vec![aj, cj],
            },
            accs[j].clone(),
            span,
        ));
    }
    let inner_body = add(m, Expr::Tuple(comps), pair_s.clone(), span);
    let inner = add(
        m,
        Expr::Lambda {
            params: vec![
                Param {
                    name: a,
                    ty: Some(pair_s.clone()),
                    span,
                },
                Param {
                    name: c,
                    ty: Some(pair_e.clone()),
                    span,
                },
            ],
            body: inner_body,
        },
        Ty::Func(
            vec![pair_s.clone(), pair_e.clone()],
            Box::new(pair_s.clone()),
        ),
        span,
    );
    let uv = add(m, Expr::Var(u.clone()), acc_z.clone(), span);
    let wv = add(m, Expr::Var(w.clone()), el_z.clone(), span);
    let fbody = add(
        m,
        Expr::Prim {
            op: Prim::Map2,
            args: vec![inner, uv, wv],
        },
        acc_z.clone(),
        span,
    );
    let flam = add(
        m,
        Expr::Lambda {
            params: vec![
                Param {
                    name: u,
                    ty: Some(acc_z.clone()),
                    span,
                },
                Param {
                    name: w,
                    ty: Some(el_z.clone()),
                    span,
                },
            ],
            body: fbody,
        },
        Ty::Func(vec![acc_z.clone(), el_z.clone()], Box::new(acc_z.clone())),
        span,
    );
    let z = zip(m, names, parts[0].1, parts[1].1, &accs, &acc_z);
    // The elements: map (fun x -> zip (p1 x) (p2 x)) V
    let x = fresh(m, names, "a");
    let mut ps = Vec::new();
    for (j, &(_, _, p, _)) in parts.iter().enumerate() {
        let xv = add(m, Expr::Var(x.clone()), xelem.clone(), span);
        ps.push(match p {
            Some(p) => add(
                m,
                Expr::App {
                    func: p,
                    args: vec![xv],
                },
                el_tys[j].clone(),
                span,
            ),
            None => xv,
        });
    }
    let mbody = zip(m, names, ps[0], ps[1], &els, &el_z);
    let mlam = add(
        m,
        Expr::Lambda {
            params: vec![Param {
                name: x,
                ty: Some(xelem.clone()),
                span,
            }],
            body: mbody,
        },
        Ty::Func(vec![xelem.clone()], Box::new(el_z.clone())),
        span,
    );
    let mapped = add(
        m,
        Expr::Prim {
            op: Prim::Map,
            args: vec![mlam, v],
        },
        Ty::Array(xsize.clone(), Box::new(el_z)),
        span,
    );
    let fused = add(
        m,
        Expr::Prim {
            op,
            args: vec![flam, z, mapped],
        },
        acc_z.clone(),
        span,
    );
    // Each use: map (fun t -> t.j) r
    let r = fresh(m, names, "r");
    let mut plan = Plan {
        drop_let: Some(b.let_node),
        ..Plan::default()
    };
    for (j, &(_, _, _, node)) in parts.iter().enumerate() {
        let nspan = m.span(node);
        let t = fresh(m, names, "t");
        let tv = add(m, Expr::Var(t.clone()), pair_s.clone(), nspan);
        let pr = add(
            m,
            Expr::Proj {
                tuple: tv,
                index: j as u32 + 1,
            },
            accs[j].clone(),
            nspan,
        );
        let lam = add(
            m,
            Expr::Lambda {
                params: vec![Param {
                    name: t,
                    ty: Some(pair_s.clone()),
                    span: nspan,
                }],
                body: pr,
            },
            Ty::Func(vec![pair_s.clone()], Box::new(accs[j].clone())),
            nspan,
        );
        let rv = add(m, Expr::Var(r.clone()), acc_z.clone(), nspan);
        let proj = add(
            m,
            Expr::Prim {
                op: Prim::Map,
                args: vec![lam, rv],
            },
            acc_tys[j].clone(),
            nspan,
        );
        plan.replace.insert(node, proj);
    }
    plan.insert = Some((at, Pat::Var(r), fused));
    Some(plan)
}

/// `prune-components` for `X`, if its uses allow it.
fn plan_prune(
    m: &mut Module,
    names: &mut Option<NameGen>,
    x: &Name,
    b: Binding,
    uses: &[Use],
) -> Option<Plan> {
    if uses.is_empty() || uses.iter().any(|u| u.proj.is_none()) {
        return None;
    }
    let Expr::Let { value: v, .. } = m.expr(b.let_node).clone() else {
        return None;
    };
    let (size, elem) = elem_ty(&m.types[v.index()])?;
    let Ty::Tuple(parts) = elem.clone() else {
        return None;
    };
    let mut used: Vec<u32> = uses.iter().filter_map(|u| u.proj.map(|p| p.1)).collect();
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
    let xty = Ty::Array(size, Box::new(new_elem.clone()));
    let new_v = add(m, Expr::Prim { op, args: new_args }, xty.clone(), span);
    let mut plan = Plan {
        new_value: Some((b.let_node, new_v)),
        ..Plan::default()
    };
    for u in uses {
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

/// The tree under `id` with the plan applied: the path to every changed
/// node is copied, the rest is shared.
fn rebuild(m: &mut Module, id: ExprId, plan: &Plan) -> ExprId {
    stack::guard(|| {
        if let Some(&r) = plan.replace.get(&id) {
            return r;
        }
        if plan.drop_let == Some(id)
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
