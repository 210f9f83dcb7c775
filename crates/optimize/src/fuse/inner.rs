//! `share-inner-loop` (see `fuse.rs`): an inner loop that two loops over
//! the same arrays both compute for each element, computed once into an
//! array that both read.
//!
//! Reverse mode differentiates `map2 (fun (c, mu) -> h (g c mu)) C M` into
//! a forward loop that computes `h (g c mu)` and a backward loop over the
//! same elements that needs `g c mu` again (for the derivative of `h` at
//! it), so it computes it again: in GMM, `g` is the product `Q (x - mu)`,
//! d^2 multiplications per point and component, done twice. The rule
//! finds, in one chain of `let`s, a loop `L1 = map/map2 (fun ps -> ..) ..`
//! and a later loop `L2` over the same array variables (directly or through
//! a zip `map2 (fun (a, b) -> (a, b)) A B`), whose bodies hold an equal
//! inner loop `e` (a `map`, `map2`, `reduce`, `build`, scan or fold that is
//! not just arithmetic on the elements): equal up to the names of its
//! binders, the names each body gives the elements (`c`, `let (c', m') =
//! p`, `let q = c'.2`), and the body's own `let`s it reads (compared by
//! their values). `L1` may also hold `e` fused with what it does next:
//! `map2 (fun (r, s) -> let a = E in G) ..` with `G` mentioning only `a`
//! (map fusion's result) shares `map2 (fun (r, s) -> E) ..` and becomes
//! `map (fun a -> G) q`. Then
//!
//! `let S = map/map2 (fun ps -> let <the body's lets e reads> in e) <L1's
//! arrays> in`
//!
//! goes before `L1`'s element of the chain, and both loops read `S`
//! alongside their first array (`share.rs`'s `read_alongside`).
//!
//! Why it is safe: `e` sits in `L1`'s body outside lambdas and branches, so
//! `L1` computed it for every element; `S` computes the same values (the
//! same operations on the same operands), once, ahead of `L1`. What `e`
//! reads from outside `L1` is bound before it (checked). The one
//! difference is the order of two failures, as with `reduce-fusion`.

use syntax::ir::NameGen;
use syntax::{Expr, ExprId, Module, Name, Param, Pat, Prim, Ty, stack};

use super::share::{chains, read_alongside};
use super::{Plan, add, elem_ty, fresh};
use crate::hash::{FxHashMap, FxHashSet};

/// How a name bound in a loop's lambda relates to the loop's elements.
#[derive(Debug, Clone)]
enum Alias {
    /// The element of an array variable the loop iterates, projected.
    Elem(Name, Vec<u32>),
    /// A zip's element: the components' aliases.
    Tuple(Vec<Option<Alias>>),
    /// A `let` of the body's chain: its value, and the component a tuple
    /// pattern takes.
    Def(ExprId, Option<u32>),
}

impl Alias {
    fn proj(&self, i: u32) -> Option<Alias> {
        match self {
            Alias::Elem(a, ps) => {
                let mut ps = ps.clone();
                ps.push(i);
                Some(Alias::Elem(a.clone(), ps))
            }
            Alias::Tuple(cs) => cs.get(i as usize - 1).cloned().flatten(),
            Alias::Def(v, None) => Some(Alias::Def(*v, Some(i))),
            Alias::Def(_, Some(_)) => None,
        }
    }
}

/// A `map`/`map2` of a lambda in a chain element, with what its body's
/// names mean.
struct Loop {
    /// The chain element it is in.
    at: usize,
    node: ExprId,
    /// The array variables it iterates.
    sources: FxHashSet<Name>,
    alias: FxHashMap<Name, Alias>,
    /// The body chain's `let` node binding each name.
    bound_by: FxHashMap<Name, ExprId>,
    /// The body chain's `let` nodes, in order.
    lets: Vec<ExprId>,
    /// The inner loops of the body (outside lambdas and branches).
    cands: Vec<ExprId>,
}

/// The arrays a loop's argument iterates: a variable, or a zip of two.
fn arg_alias(m: &Module, a: ExprId) -> Option<Alias> {
    match m.expr(a) {
        Expr::Var(x) => Some(Alias::Elem(x.clone(), Vec::new())),
        Expr::Prim {
            op: Prim::Map2,
            args,
        } => {
            let Expr::Lambda { params, body } = m.expr(args[0]) else {
                return None;
            };
            let Expr::Tuple(items) = m.expr(*body) else {
                return None;
            };
            let zip = params.len() == 2
                && items.len() == 2
                && items
                    .iter()
                    .zip(params)
                    .all(|(&i, p)| matches!(m.expr(i), Expr::Var(x) if *x == p.name));
            if !zip {
                return None;
            }
            Some(Alias::Tuple(vec![
                arg_alias(m, args[1]),
                arg_alias(m, args[2]),
            ]))
        }
        _ => None,
    }
}

fn collect_sources(a: &Alias, out: &mut FxHashSet<Name>) {
    match a {
        Alias::Elem(x, _) => {
            out.insert(x.clone());
        }
        Alias::Tuple(cs) => cs.iter().flatten().for_each(|c| collect_sources(c, out)),
        Alias::Def(..) => {}
    }
}

/// The alias of a variable or projection chain, in `lp`.
fn path(m: &Module, lp: &Loop, id: ExprId) -> Option<Alias> {
    match m.expr(id) {
        Expr::Var(x) => match lp.alias.get(x) {
            Some(a @ (Alias::Elem(..) | Alias::Tuple(_))) => Some(a.clone()),
            _ => None,
        },
        Expr::Proj { tuple, index } => path(m, lp, *tuple)?.proj(*index),
        _ => None,
    }
}

/// Whether the tree under `id` does more than arithmetic on what it reads:
/// a reduction, scan, fold, indexing, division or a transcendental function.
fn costly(m: &Module, id: ExprId) -> bool {
    let mut todo = vec![id];
    while let Some(i) = todo.pop() {
        match m.expr(i) {
            Expr::Index { .. } | Expr::App { .. } => return true,
            Expr::Prim { op, .. }
                if !matches!(
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
                        | Prim::Map
                        | Prim::Map2
                ) =>
            {
                return true;
            }
            _ => {}
        }
        m.expr(i).for_each_child(|c| todo.push(c));
    }
    false
}

/// The loop of `node`, if it is `map`/`map2` of a lambda over variables or
/// zips of them.
fn analyse(m: &Module, at: usize, node: ExprId) -> Option<Loop> {
    let Expr::Prim {
        op: Prim::Map | Prim::Map2,
        args,
    } = m.expr(node)
    else {
        return None;
    };
    let Expr::Lambda { params, body } = m.expr(args[0]) else {
        return None;
    };
    if params.len() != args.len() - 1 {
        return None;
    }
    let mut lp = Loop {
        at,
        node,
        sources: FxHashSet::default(),
        alias: FxHashMap::default(),
        bound_by: FxHashMap::default(),
        lets: Vec::new(),
        cands: Vec::new(),
    };
    for (p, &a) in params.iter().zip(&args[1..]) {
        if let Some(al) = arg_alias(m, a) {
            collect_sources(&al, &mut lp.sources);
            lp.alias.insert(p.name.clone(), al);
        }
    }
    if lp.sources.is_empty() {
        return None;
    }
    // The body's chain of `let`s.
    let mut cur = *body;
    while let Expr::Let {
        pat, value, body, ..
    } = m.expr(cur)
    {
        lp.lets.push(cur);
        let al = path(m, &lp, *value);
        let names: Vec<(Name, Option<u32>)> = match pat {
            Pat::Var(x) => vec![(x.clone(), None)],
            Pat::Tuple(xs) => xs
                .iter()
                .enumerate()
                .map(|(i, x)| (x.clone(), Some(i as u32 + 1)))
                .collect(),
        };
        for (x, i) in names {
            let a = match (&al, i) {
                (Some(a), None) => Some(a.clone()),
                (Some(a), Some(i)) => a.proj(i),
                (None, i) => Some(Alias::Def(*value, i)),
            };
            if let Some(a) = a {
                lp.alias.insert(x.clone(), a);
            }
            lp.bound_by.insert(x, cur);
        }
        cur = *body;
    }
    // The inner loops, not entering lambdas or branches.
    let mut todo = vec![*body];
    while let Some(i) = todo.pop() {
        match m.expr(i) {
            Expr::Lambda { .. } => continue,
            Expr::If { cond, .. } => {
                todo.push(*cond);
                continue;
            }
            Expr::Prim { op, args } => {
                if let Some(f) = op.function_arg()
                    && matches!(m.expr(args[f]), Expr::Lambda { .. })
                    && !op.is_derivative_construct()
                    && costly(m, i)
                {
                    lp.cands.push(i);
                }
            }
            _ => {}
        }
        m.expr(i).for_each_child(|c| todo.push(c));
    }
    lp.cands.sort_unstable();
    Some(lp)
}

/// Compares two expressions of two loops' bodies.
struct Cmp<'a> {
    m: &'a Module,
    l1: &'a Loop,
    l2: &'a Loop,
    /// Binders of the compared expressions, the first's to the second's.
    ren: FxHashMap<Name, Name>,
    /// Pairs of body `let`s found equal.
    same_defs: FxHashSet<(ExprId, ExprId)>,
    /// Nodes left to visit before giving up.
    budget: usize,
}

impl Cmp<'_> {
    fn bind(&mut self, a: &Name, b: &Name) {
        self.ren.insert(a.clone(), b.clone());
    }

    fn eq(&mut self, a: ExprId, b: ExprId) -> bool {
        stack::guard(|| {
            if self.budget == 0 {
                return false;
            }
            self.budget -= 1;
            let (m, l1, l2) = (self.m, self.l1, self.l2);
            match (path(m, l1, a), path(m, l2, b)) {
                (Some(x), Some(y)) => return same_alias(&x, &y),
                (None, None) => {}
                _ => return false,
            }
            match (m.expr(a), m.expr(b)) {
                (Expr::Var(x), Expr::Var(y)) => self.eq_var(x, y),
                (Expr::Real(x), Expr::Real(y)) => x.to_bits() == y.to_bits(),
                (Expr::Int(x), Expr::Int(y)) => x == y,
                (Expr::Bool(x), Expr::Bool(y)) => x == y,
                (Expr::Section(x), Expr::Section(y)) => x == y,
                (
                    Expr::Let {
                        pat: p1,
                        value: v1,
                        body: b1,
                        ..
                    },
                    Expr::Let {
                        pat: p2,
                        value: v2,
                        body: b2,
                        ..
                    },
                ) => {
                    if !self.eq(*v1, *v2) {
                        return false;
                    }
                    match (p1, p2) {
                        (Pat::Var(x), Pat::Var(y)) => self.bind(x, y),
                        (Pat::Tuple(xs), Pat::Tuple(ys)) if xs.len() == ys.len() => {
                            xs.iter().zip(ys).for_each(|(x, y)| self.bind(x, y));
                        }
                        _ => return false,
                    }
                    self.eq(*b1, *b2)
                }
                (
                    Expr::Lambda {
                        params: p1,
                        body: b1,
                    },
                    Expr::Lambda {
                        params: p2,
                        body: b2,
                    },
                ) => {
                    if p1.len() != p2.len() {
                        return false;
                    }
                    p1.iter()
                        .zip(p2)
                        .for_each(|(x, y)| self.bind(&x.name, &y.name));
                    self.eq(*b1, *b2)
                }
                (Expr::Prim { op: o1, args: a1 }, Expr::Prim { op: o2, args: a2 }) => {
                    o1 == o2 && self.all(a1, a2)
                }
                (Expr::Tuple(a1), Expr::Tuple(a2)) | (Expr::Array(a1), Expr::Array(a2)) => {
                    self.all(a1, a2)
                }
                (
                    Expr::Proj {
                        tuple: t1,
                        index: i1,
                    },
                    Expr::Proj {
                        tuple: t2,
                        index: i2,
                    },
                ) => i1 == i2 && self.eq(*t1, *t2),
                (
                    Expr::Index {
                        array: a1,
                        index: i1,
                    },
                    Expr::Index {
                        array: a2,
                        index: i2,
                    },
                ) => self.eq(*a1, *a2) && self.eq(*i1, *i2),
                (
                    Expr::If {
                        cond: c1,
                        then_branch: t1,
                        else_branch: e1,
                    },
                    Expr::If {
                        cond: c2,
                        then_branch: t2,
                        else_branch: e2,
                    },
                ) => self.eq(*c1, *c2) && self.eq(*t1, *t2) && self.eq(*e1, *e2),
                (Expr::App { func: f1, args: a1 }, Expr::App { func: f2, args: a2 }) => {
                    self.eq(*f1, *f2) && self.all(a1, a2)
                }
                _ => false,
            }
        })
    }

    fn all(&mut self, a: &[ExprId], b: &[ExprId]) -> bool {
        a.len() == b.len() && a.iter().zip(b).all(|(&x, &y)| self.eq(x, y))
    }

    fn eq_var(&mut self, x: &Name, y: &Name) -> bool {
        if let Some(z) = self.ren.get(x) {
            return z == y;
        }
        let (d1, d2) = (self.l1.alias.get(x), self.l2.alias.get(y));
        match (d1, d2) {
            (Some(Alias::Def(v1, i1)), Some(Alias::Def(v2, i2))) => {
                let (v1, v2) = (*v1, *v2);
                if i1 != i2 {
                    return false;
                }
                if self.same_defs.contains(&(v1, v2)) {
                    return true;
                }
                let ok = self.eq(v1, v2);
                if ok {
                    self.same_defs.insert((v1, v2));
                }
                ok
            }
            (None, None) => {
                // Free in both loops' bodies (or a parameter without an
                // alias, which the check of free names rules out).
                x == y && !self.l1.bound_by.contains_key(x)
            }
            _ => false,
        }
    }
}

fn same_alias(a: &Alias, b: &Alias) -> bool {
    match (a, b) {
        (Alias::Elem(x, p), Alias::Elem(y, q)) => x == y && p == q,
        (Alias::Tuple(xs), Alias::Tuple(ys)) => {
            xs.len() == ys.len()
                && xs.iter().zip(ys).all(|(x, y)| match (x, y) {
                    (Some(x), Some(y)) => same_alias(x, y),
                    _ => false,
                })
        }
        _ => false,
    }
}

/// A match: `c1` in `L1` (whole, or its lambda's `let`'s value when
/// `fission`) equals `c2` in `L2`.
struct Match {
    c1: ExprId,
    c2: ExprId,
    fission: bool,
}

/// For `c = map/map2 (fun ps -> let a = E in G) ..` with `G` reading none
/// of `ps` nor `E`'s binders: the `let` node.
fn fission_let(m: &Module, c: ExprId) -> Option<ExprId> {
    let Expr::Prim {
        op: Prim::Map | Prim::Map2,
        args,
    } = m.expr(c)
    else {
        return None;
    };
    let Expr::Lambda { params, body } = m.expr(args[0]) else {
        return None;
    };
    let Expr::Let {
        pat: Pat::Var(_),
        value,
        body: g,
        ..
    } = m.expr(*body)
    else {
        return None;
    };
    let mut inner: FxHashSet<Name> = params.iter().map(|p| p.name.clone()).collect();
    super::binders(m, *value, &mut inner);
    let mut used = FxHashSet::default();
    super::vars(m, *g, &mut used);
    (used.is_disjoint(&inner) && costly(m, *value)).then_some(*body)
}

fn find_match(m: &Module, l1: &Loop, l2: &Loop) -> Option<Match> {
    let mut cmp = Cmp {
        m,
        l1,
        l2,
        ren: FxHashMap::default(),
        same_defs: FxHashSet::default(),
        budget: 200_000,
    };
    for &c1 in &l1.cands {
        let fl = fission_let(m, c1);
        for &c2 in &l2.cands {
            let (Expr::Prim { op: o1, args: a1 }, Expr::Prim { op: o2, args: a2 }) =
                (m.expr(c1), m.expr(c2))
            else {
                continue;
            };
            if o1 != o2 || a1.len() != a2.len() {
                continue;
            }
            cmp.ren.clear();
            if cmp.eq(c1, c2) {
                return Some(Match {
                    c1,
                    c2,
                    fission: false,
                });
            }
            // `map2 (fun ps -> let a = E in G) arrays` against
            // `map2 (fun ps' -> E') arrays'`.
            let Some(flet) = fl else { continue };
            let Expr::Let { value: e1, .. } = m.expr(flet) else {
                continue;
            };
            let (
                Expr::Lambda { params: p1, .. },
                Expr::Lambda {
                    params: p2,
                    body: e2,
                },
            ) = (m.expr(a1[0]), m.expr(a2[0]))
            else {
                continue;
            };
            if p1.len() != p2.len() {
                continue;
            }
            cmp.ren.clear();
            p1.iter()
                .zip(p2)
                .for_each(|(x, y)| cmp.bind(&x.name, &y.name));
            if cmp.all(&a1[1..], &a2[1..]) && cmp.eq(*e1, *e2) {
                return Some(Match {
                    c1,
                    c2,
                    fission: true,
                });
            }
        }
    }
    None
}

/// The names read under `id` and bound outside it.
fn free(m: &Module, id: ExprId) -> FxHashSet<Name> {
    let (mut vs, mut bs) = (FxHashSet::default(), FxHashSet::default());
    super::vars(m, id, &mut vs);
    super::binders(m, id, &mut bs);
    vs.retain(|v| !bs.contains(v));
    vs
}

/// `share-inner-loop` for one definition, if some chain has such loops.
pub(super) fn plan_inner(
    m: &mut Module,
    names: &mut Option<NameGen>,
    root: ExprId,
) -> Option<Plan> {
    for chain in chains(m, root) {
        let mut loops = Vec::new();
        for (at, &c) in chain.iter().enumerate() {
            let top = match m.expr(c) {
                Expr::Let { value, .. } => *value,
                _ => c,
            };
            find_loops(m, top, at, &mut loops);
        }
        for (i, l1) in loops.iter().enumerate() {
            if l1.cands.is_empty() {
                continue;
            }
            for l2 in &loops[i + 1..] {
                if l2.at <= l1.at || l2.cands.is_empty() || l1.sources.is_disjoint(&l2.sources) {
                    continue;
                }
                let Some(mt) = find_match(m, l1, l2) else {
                    continue;
                };
                if let Some(plan) = build(m, names, &chain, l1, l2, &mt) {
                    return Some(plan);
                }
            }
        }
    }
    None
}

/// The loops under `id`, not entering lambdas or branches.
fn find_loops(m: &Module, id: ExprId, at: usize, out: &mut Vec<Loop>) {
    let mut todo = vec![id];
    while let Some(i) = todo.pop() {
        match m.expr(i) {
            Expr::Lambda { .. } => continue,
            Expr::If { cond, .. } => {
                todo.push(*cond);
                continue;
            }
            Expr::Prim {
                op: Prim::Map | Prim::Map2,
                args,
            } => {
                if let Some(lp) = analyse(m, at, i) {
                    out.push(lp);
                }
                args[1..].iter().for_each(|&a| todo.push(a));
                continue;
            }
            _ => {}
        }
        m.expr(i).for_each_child(|c| todo.push(c));
    }
}

/// A copy of the tree under `id` with fresh binders, renaming free names
/// by `ren`.
fn copy_fresh(
    m: &mut Module,
    names: &mut Option<NameGen>,
    id: ExprId,
    ren: &mut FxHashMap<Name, Name>,
) -> ExprId {
    stack::guard(|| {
        let (ty, span) = (m.types[id.index()].clone(), m.span(id));
        let node = match m.expr(id).clone() {
            Expr::Var(x) => Expr::Var(ren.get(&x).cloned().unwrap_or(x)),
            Expr::Let {
                pat,
                ty: ann,
                value,
                body,
            } => {
                let value = copy_fresh(m, names, value, ren);
                let pat = match pat {
                    Pat::Var(x) => Pat::Var(rename(m, names, &x, ren)),
                    Pat::Tuple(xs) => {
                        Pat::Tuple(xs.iter().map(|x| rename(m, names, x, ren)).collect())
                    }
                };
                let body = copy_fresh(m, names, body, ren);
                Expr::Let {
                    pat,
                    ty: ann,
                    value,
                    body,
                }
            }
            Expr::Lambda { params, body } => {
                let params = params
                    .iter()
                    .map(|p| Param {
                        name: rename(m, names, &p.name, ren),
                        ..p.clone()
                    })
                    .collect();
                let body = copy_fresh(m, names, body, ren);
                Expr::Lambda { params, body }
            }
            e => e.map_children(|c| copy_fresh(m, names, c, ren)),
        };
        add(m, node, ty, span)
    })
}

fn rename(
    m: &Module,
    names: &mut Option<NameGen>,
    x: &Name,
    ren: &mut FxHashMap<Name, Name>,
) -> Name {
    let n = fresh(m, names, x.as_str());
    ren.insert(x.clone(), n.clone());
    n
}

/// The rewrite for a match, if what `S` needs is bound before `L1`.
fn build(
    m: &mut Module,
    names: &mut Option<NameGen>,
    chain: &[ExprId],
    l1: &Loop,
    l2: &Loop,
    mt: &Match,
) -> Option<Plan> {
    let Expr::Prim { op, args } = m.expr(l1.node).clone() else {
        return None;
    };
    let Expr::Lambda { params, .. } = m.expr(args[0]).clone() else {
        return None;
    };
    // What S computes: c1, or c1 with its lambda's body cut to E.
    let flet = if mt.fission {
        Some(fission_let(m, mt.c1)?)
    } else {
        None
    };
    // The body `let`s it reads, transitively, in chain order.
    let mut need: FxHashSet<ExprId> = FxHashSet::default();
    let mut outer: FxHashSet<Name> = FxHashSet::default();
    let mut todo: Vec<ExprId> = vec![mt.c1];
    let pnames: FxHashSet<Name> = params.iter().map(|p| p.name.clone()).collect();
    while let Some(e) = todo.pop() {
        for v in free(m, e) {
            if pnames.contains(&v) {
                continue;
            }
            match l1.bound_by.get(&v) {
                Some(&letn) => {
                    if need.insert(letn)
                        && let Expr::Let { value, .. } = m.expr(letn)
                    {
                        todo.push(*value);
                    }
                }
                None => {
                    outer.insert(v);
                }
            }
        }
    }
    for &a in &args[1..] {
        outer.extend(free(m, a));
    }
    // Everything from outside is bound before L1's chain element.
    let mut after = FxHashSet::default();
    for &c in &chain[l1.at..] {
        match m.expr(c) {
            Expr::Let { pat, value, .. } => {
                match pat {
                    Pat::Var(y) => {
                        after.insert(y.clone());
                    }
                    Pat::Tuple(ys) => after.extend(ys.iter().cloned()),
                }
                super::binders(m, *value, &mut after);
            }
            _ => super::binders(m, c, &mut after),
        }
    }
    if outer.iter().any(|v| after.contains(v)) {
        return None;
    }
    let span = m.span(mt.c1);
    // S = map/map2 (fun ps' -> let <need> in c1') <L1's arrays>
    let mut ren = FxHashMap::default();
    let new_params: Vec<Param> = params
        .iter()
        .map(|p| Param {
            name: rename(m, names, &p.name, &mut ren),
            ..p.clone()
        })
        .collect();
    let lets: Vec<ExprId> = l1
        .lets
        .iter()
        .copied()
        .filter(|l| need.contains(l))
        .collect();
    let mut copied = Vec::new();
    for &l in &lets {
        let Expr::Let { pat, value, .. } = m.expr(l).clone() else {
            return None;
        };
        let v = copy_fresh(m, names, value, &mut ren);
        let pat = match pat {
            Pat::Var(x) => Pat::Var(rename(m, names, &x, &mut ren)),
            Pat::Tuple(xs) => {
                Pat::Tuple(xs.iter().map(|x| rename(m, names, x, &mut ren)).collect())
            }
        };
        copied.push((pat, v));
    }
    let (result, rty) = match flet {
        None => {
            let r = copy_fresh(m, names, mt.c1, &mut ren);
            (r, m.types[mt.c1.index()].clone())
        }
        Some(fl) => {
            // map2 (fun qs -> E) arrays, copied.
            let Expr::Prim {
                op: iop,
                args: iargs,
            } = m.expr(mt.c1).clone()
            else {
                return None;
            };
            let Expr::Lambda { params: ips, .. } = m.expr(iargs[0]).clone() else {
                return None;
            };
            let Expr::Let { value: e, .. } = m.expr(fl).clone() else {
                return None;
            };
            let arrays: Vec<ExprId> = iargs[1..]
                .iter()
                .map(|&a| copy_fresh(m, names, a, &mut ren))
                .collect();
            let ips: Vec<Param> = ips
                .iter()
                .map(|p| Param {
                    name: rename(m, names, &p.name, &mut ren),
                    ..p.clone()
                })
                .collect();
            let ety = m.types[e.index()].clone();
            let body = copy_fresh(m, names, e, &mut ren);
            let ptys = ips
                .iter()
                .map(|p| p.ty.clone().unwrap_or(Ty::Tuple(Vec::new())))
                .collect();
            let lam = add(
                m,
                Expr::Lambda { params: ips, body },
                Ty::Func(ptys, Box::new(ety.clone())),
                span,
            );
            let (size, _) = elem_ty(&m.types[mt.c1.index()])?;
            let ty = Ty::Array(size, Box::new(ety));
            let mut all = vec![lam];
            all.extend(arrays);
            (
                add(m, Expr::Prim { op: iop, args: all }, ty.clone(), span),
                ty,
            )
        }
    };
    let mut body = result;
    for (pat, v) in copied.into_iter().rev() {
        body = add(
            m,
            Expr::Let {
                pat,
                ty: None,
                value: v,
                body,
            },
            rty.clone(),
            span,
        );
    }
    let ptys: Vec<Ty> = new_params
        .iter()
        .map(|p| p.ty.clone().unwrap_or(Ty::Tuple(Vec::new())))
        .collect();
    let lam = add(
        m,
        Expr::Lambda {
            params: new_params,
            body,
        },
        Ty::Func(ptys, Box::new(rty.clone())),
        span,
    );
    let mut sargs = vec![lam];
    for &a in &args[1..] {
        let c = copy_fresh(m, names, a, &mut FxHashMap::default());
        sargs.push(c);
    }
    let (size, _) = elem_ty(&m.types[l1.node.index()])?;
    let sty = Ty::Array(size, Box::new(rty.clone()));
    let svalue = add(m, Expr::Prim { op, args: sargs }, sty.clone(), span);
    let big_s = fresh(m, names, "s");
    // L1 reads S where it computed c1 (or maps G over it).
    let q1 = fresh(m, names, "s");
    let q1v = add(m, Expr::Var(q1.clone()), rty.clone(), span);
    let mut inner1 = Plan::default();
    let r1 = match flet {
        None => q1v,
        Some(fl) => {
            let Expr::Let {
                pat: Pat::Var(a),
                body: g,
                ..
            } = m.expr(fl).clone()
            else {
                return None;
            };
            let Ty::Array(_, ref ety) = rty else {
                return None;
            };
            let gty = m.types[g.index()].clone();
            let lam = add(
                m,
                Expr::Lambda {
                    params: vec![Param {
                        name: a,
                        ty: Some((**ety).clone()),
                        span,
                    }],
                    body: g,
                },
                Ty::Func(vec![(**ety).clone()], Box::new(gty)),
                span,
            );
            let cty = m.types[mt.c1.index()].clone();
            add(
                m,
                Expr::Prim {
                    op: Prim::Map,
                    args: vec![lam, q1v],
                },
                cty,
                span,
            )
        }
    };
    inner1.replace.insert(mt.c1, r1);
    let new1 = read_alongside(
        m,
        names,
        l1.node,
        1,
        &inner1,
        (q1, rty.clone()),
        (&big_s, &sty),
        span,
    )?;
    // L2 reads S where it computed c2.
    let q2 = fresh(m, names, "s");
    let q2v = add(m, Expr::Var(q2.clone()), rty.clone(), span);
    let mut inner2 = Plan::default();
    inner2.replace.insert(mt.c2, q2v);
    let new2 = read_alongside(
        m,
        names,
        l2.node,
        1,
        &inner2,
        (q2, rty),
        (&big_s, &sty),
        span,
    )?;
    let mut plan = Plan::default();
    plan.replace.insert(l1.node, new1);
    plan.replace.insert(l2.node, new2);
    plan.insert = Some((chain[l1.at], Pat::Var(big_s), svalue));
    Some(plan)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn projections_of_zips_and_elements_compose() {
        let z = Alias::Tuple(vec![
            Some(Alias::Elem(Name::new("c"), Vec::new())),
            Some(Alias::Elem(Name::new("mu"), Vec::new())),
        ]);
        let c2 = z.proj(1).and_then(|a| a.proj(2));
        assert!(matches!(c2, Some(Alias::Elem(ref x, ref p)) if x.as_str() == "c" && p == &[2]));
        assert!(z.proj(3).is_none());
    }
}
