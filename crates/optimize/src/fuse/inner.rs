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
//! `L1` may also be `scanr (fun (q, c) -> ..) z A`, reverse mode's
//! backward pass over a fold, whose per-element map `L2` evaluates the
//! fold's body at the same elements: `e` then reads `q` and never the
//! carry `c` (a value per step, not per element), `S` maps over A, and the
//! scan iterates `zip A S` (`rewrite.rs`'s `scanr_alongside`).
//!
//! Why it is safe: `e` sits in `L1`'s body outside lambdas and branches, so
//! `L1` computed it for every element; `S` computes the same values (the
//! same operations on the same operands), once, ahead of `L1`. What `e`
//! reads from outside `L1` is bound before it (checked). The one
//! difference is the order of two failures, as with `reduce-fusion`.

use syntax::ir::NameGen;
use syntax::{Expr, ExprId, Module, Name, Param, Pat, Prim, stack};

use super::Plan;
use super::share::chains;
use crate::hash::{FxHashMap, FxHashSet};
use crate::simplify::{arithmetic, cheap};

mod compare;
mod rewrite;

use compare::Cmp;
use rewrite::build;

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
    /// A `scanr (fun (q, c) -> ..) z A` (only as the first loop): `q` is
    /// A's element, `c` the carry, which the shared loop must not read.
    scan: bool,
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
    stack::guard(|| match m.expr(a) {
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
    })
}

fn collect_sources(a: &Alias, out: &mut FxHashSet<Name>) {
    stack::guard(|| match a {
        Alias::Elem(x, _) => {
            out.insert(x.clone());
        }
        Alias::Tuple(cs) => cs.iter().flatten().for_each(|c| collect_sources(c, out)),
        Alias::Def(..) => {}
    })
}

/// The alias of a variable or projection chain, in `lp`.
fn path(m: &Module, lp: &Loop, id: ExprId) -> Option<Alias> {
    stack::guard(|| match m.expr(id) {
        Expr::Var(x) => match lp.alias.get(x) {
            Some(a @ (Alias::Elem(..) | Alias::Tuple(_))) => Some(a.clone()),
            _ => None,
        },
        Expr::Proj { tuple, index } => path(m, lp, *tuple)?.proj(*index),
        _ => None,
    })
}

/// Whether the tree under `id` does more than arithmetic on what it reads:
/// a reduction, scan, fold, indexing, division or a transcendental function;
/// and is not what `recompute-cheap` calls cheap (`simplify::cheap`): the
/// map it would share would be copied back into both loops, and the two
/// rules would undo each other round after round (a `build` of
/// arithmetic, found by `rules::optimize_preserves_values_and_removes_lambdas`).
fn costly(m: &Module, id: ExprId) -> bool {
    if cheap(m, id) {
        return false;
    }
    let mut todo = vec![id];
    while let Some(i) = todo.pop() {
        match m.expr(i) {
            Expr::Index { .. } | Expr::App { .. } => return true,
            Expr::Prim { op, .. } if !matches!(op, Prim::Map | Prim::Map2) && !arithmetic(*op) => {
                return true;
            }
            _ => {}
        }
        m.expr(i).for_each_child(|c| todo.push(c));
    }
    false
}

/// `map f A` or `map2 f A B` with `f` a lambda of one parameter per array:
/// its parameters, its body and the builtin's arguments.
fn map_of_lambda(m: &Module, id: ExprId) -> Option<(&[Param], ExprId, &[ExprId])> {
    let Expr::Prim {
        op: Prim::Map | Prim::Map2,
        args,
    } = m.expr(id)
    else {
        return None;
    };
    let Expr::Lambda { params, body } = m.expr(args[0]) else {
        return None;
    };
    (params.len() == args.len() - 1).then_some((params.as_slice(), *body, args.as_slice()))
}

/// `scanr f z A` with `f` a lambda `fun (q, c) -> ..`: its element
/// parameter `q`, its body and A.
pub(super) fn scanr_of_lambda(m: &Module, id: ExprId) -> Option<(&Param, ExprId, ExprId)> {
    let Expr::Prim {
        op: Prim::Scanr,
        args,
    } = m.expr(id)
    else {
        return None;
    };
    let Expr::Lambda { params, body } = m.expr(args[0]) else {
        return None;
    };
    (params.len() == 2).then_some((&params[0], *body, args[2]))
}

/// The loop of `node`, if it is `map`/`map2` of a lambda over variables or
/// zips of them, or a `scanr` of a lambda over one (reverse mode's
/// backward pass over a fold, whose per-element map recomputes what the
/// scan's body computes from the same element).
fn analyse(m: &Module, at: usize, node: ExprId) -> Option<Loop> {
    let scanr = scanr_of_lambda(m, node);
    let (params, body, args): (&[Param], ExprId, Vec<ExprId>) = match scanr {
        Some((q, body, a)) => (std::slice::from_ref(q), body, vec![a, a]),
        None => {
            let (params, body, args) = map_of_lambda(m, node)?;
            (params, body, args.to_vec())
        }
    };
    let mut lp = Loop {
        at,
        node,
        scan: scanr.is_some(),
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
    let mut cur = body;
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
    unconditional(m, body, |i| {
        if let Expr::Prim { op, args } = m.expr(i)
            && let Some(f) = op.function_arg()
            && matches!(m.expr(args[f]), Expr::Lambda { .. })
            && !op.is_derivative_construct()
            && costly(m, i)
        {
            lp.cands.push(i);
        }
    });
    lp.cands.sort_unstable();
    Some(lp)
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
    let (params, body, _) = map_of_lambda(m, c)?;
    let Expr::Let {
        pat: Pat::Var(_),
        value,
        body: g,
        ..
    } = m.expr(body)
    else {
        return None;
    };
    let mut inner: FxHashSet<Name> = params.iter().map(|p| p.name.clone()).collect();
    super::binders(m, *value, &mut inner);
    let mut used = FxHashSet::default();
    super::vars(m, *g, &mut used);
    (used.is_disjoint(&inner) && costly(m, *value)).then_some(body)
}

fn find_match(m: &Module, l1: &Loop, l2: &Loop) -> Option<Match> {
    let mut cmp = Cmp {
        l1,
        l2,
        ren: Default::default(),
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
            if cmp.eq(m, c1, c2) {
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
            if cmp.all(m, &a1[1..], &a2[1..]) && cmp.eq(m, *e1, *e2) {
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
                if l2.scan
                    || l2.at <= l1.at
                    || l2.cands.is_empty()
                    || l1.sources.is_disjoint(&l2.sources)
                {
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
    unconditional(m, id, |i| {
        if let Some(lp) = analyse(m, at, i) {
            out.push(lp);
        }
    });
}

/// Visits the nodes under `root` that every evaluation of it evaluates:
/// not inside a lambda, nor in a branch of a conditional (the condition
/// is visited).
fn unconditional(m: &Module, root: ExprId, mut visit: impl FnMut(ExprId)) {
    let mut todo = vec![root];
    while let Some(i) = todo.pop() {
        match m.expr(i) {
            Expr::Lambda { .. } => continue,
            Expr::If { cond, .. } => {
                todo.push(*cond);
                continue;
            }
            _ => visit(i),
        }
        m.expr(i).for_each_child(|c| todo.push(c));
    }
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
