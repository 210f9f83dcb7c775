//! `share-elementwise` (see `fuse.rs`): an expensive function of the
//! elements of an array, computed by several loops over it, computed once.
//!
//! `let r = reduce (+) 0 (map (fun a -> exp (a - m)) A) in .. map (fun x ->
//! exp (x - m) * d) A ..` becomes `let E = map (fun a -> exp (a - m)) A in
//! let r = reduce (+) 0 (map (fun a -> e) (map2 (fun (a, e) -> ..) A E))
//! ..`: each loop reads `E` where it computed the subexpression. The
//! subexpressions shared are real-valued, contain a transcendental
//! function (`exp`, `log`, `sin`, `cos`, `tan`, `tanh`, `sqrt`, `pow`),
//! and mention only the element, literals and names bound before the
//! first loop (no indexing, call or loop inside: nothing that can fail, so
//! computing it for every element ahead of time changes no error). The
//! loops are `map f A` and `map2 f A B` (either side) reachable from one
//! chain of `let`s without entering a lambda or a branch (nor is the
//! subexpression inside a branch of `f`), and a later loop reads a name
//! the chain binds after the first loop: independent loops are left to
//! the backend, which fuses them into one loop where the C compiler
//! shares the computation anyway; dependent ones (reverse mode's
//! `logsumexp`: the sum, then each element divided by it) cannot be
//! fused, so the array is worth writing.

use syntax::derivatives::{self, Sig};
use syntax::ir::NameGen;
use syntax::{Expr, ExprId, Module, Name, Pat, Prim, Span, Ty, stack};

use super::{Plan, add, elem_ty, fresh, rebuild};
use crate::hash::{FxHashMap, FxHashSet};

/// A loop over a variable and the subexpressions of its function that
/// could be shared.
struct Found {
    /// The chain element the loop is in.
    at: usize,
    /// The loop node.
    node: ExprId,
    /// The subexpression nodes, by key.
    subs: Vec<(u64, ExprId)>,
    /// The element parameter.
    param: Name,
}

/// Whether `op` is a function worth computing once: a real function of
/// the table (`sin`, `pow`, `lgamma`, ...), not one of the cheap ones.
fn expensive(op: Prim) -> bool {
    !op.is_target_only()
        && derivatives::sig(op) == Some(Sig::Real)
        && !matches!(op, Prim::Abs | Prim::Max | Prim::Min | Prim::Sign)
}

/// Whether the tree under `id` is a real-valued expression of `p`,
/// literals and names not bound in `local`, without indexing, calls or
/// loops; and whether it contains an expensive function.
fn shareable(m: &Module, id: ExprId, p: &Name, local: &FxHashSet<Name>) -> Option<bool> {
    stack::guard(|| {
        Some(match m.expr(id) {
            Expr::Var(x) => {
                if x != p && local.contains(x) {
                    return None;
                }
                false
            }
            Expr::Real(_) | Expr::Int(_) | Expr::Bool(_) => false,
            Expr::Prim { op, args }
                if op.function_arg().is_none() && !matches!(op, Prim::Length) =>
            {
                let mut any = expensive(*op);
                for &a in args {
                    any |= shareable(m, a, p, local)?;
                }
                any
            }
            _ => return None,
        })
    })
}

/// Whether `p` occurs under `id`.
fn mentions(m: &Module, id: ExprId, p: &Name) -> bool {
    let mut todo = vec![id];
    while let Some(i) = todo.pop() {
        if matches!(m.expr(i), Expr::Var(x) if x == p) {
            return true;
        }
        m.expr(i).for_each_child(|c| todo.push(c));
    }
    false
}

/// A hash of `id` with `p` as a fixed marker.
fn key(m: &Module, id: ExprId, p: &Name) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = crate::hash::FxHasher::default();
    let mut todo = vec![id];
    while let Some(i) = todo.pop() {
        let e = m.expr(i);
        std::mem::discriminant(e).hash(&mut h);
        match e {
            Expr::Var(x) if x == p => 0u8.hash(&mut h),
            Expr::Var(x) => x.hash(&mut h),
            Expr::Real(r) => r.to_bits().hash(&mut h),
            Expr::Int(k) => k.hash(&mut h),
            Expr::Bool(b) => b.hash(&mut h),
            Expr::Prim { op, .. } => op.hash(&mut h),
            _ => {}
        }
        e.for_each_child(|c| todo.push(c));
    }
    h.finish()
}

/// Whether `a` (with `pa`) and `b` (with `pb`) are the same expression.
fn same(m: &Module, a: ExprId, pa: &Name, b: ExprId, pb: &Name) -> bool {
    stack::guard(|| match (m.expr(a), m.expr(b)) {
        (Expr::Var(x), Expr::Var(y)) => (x == pa && y == pb) || (x != pa && y != pb && x == y),
        (Expr::Real(x), Expr::Real(y)) => x.to_bits() == y.to_bits(),
        (Expr::Int(x), Expr::Int(y)) => x == y,
        (Expr::Bool(x), Expr::Bool(y)) => x == y,
        (Expr::Prim { op: o1, args: a1 }, Expr::Prim { op: o2, args: a2 }) => {
            o1 == o2
                && a1.len() == a2.len()
                && a1.iter().zip(a2).all(|(&x, &y)| same(m, x, pa, y, pb))
        }
        _ => false,
    })
}

/// The shareable subexpressions of a loop body that apply an expensive
/// function (the outermost such; not entering lambdas).
fn subs(m: &Module, body: ExprId, p: &Name, local: &FxHashSet<Name>, out: &mut Vec<(u64, ExprId)>) {
    let mut todo = vec![body];
    while let Some(i) = todo.pop() {
        if matches!(m.expr(i), Expr::Prim { op, .. } if expensive(*op))
            && m.types[i.index()] == Ty::Real
            && mentions(m, i, p)
            && shareable(m, i, p, local) == Some(true)
        {
            out.push((key(m, i, p), i));
            continue;
        }
        match m.expr(i) {
            Expr::Lambda { .. } => {}
            // Only what every element computes: not inside a branch.
            Expr::If { cond, .. } => todo.push(*cond),
            e => e.for_each_child(|c| todo.push(c)),
        }
    }
}

/// The names bound under `id`.
fn bound(m: &Module, id: ExprId, out: &mut FxHashSet<Name>) {
    super::binders(m, id, out);
}

/// The loops over a variable under `id`, not entering lambdas or branches.
fn loops(m: &Module, id: ExprId, at: usize, out: &mut Vec<Found>) {
    let mut todo = vec![id];
    while let Some(i) = todo.pop() {
        match m.expr(i) {
            Expr::Lambda { .. } => continue,
            Expr::If { cond, .. } => {
                todo.push(*cond);
                continue;
            }
            Expr::Prim {
                op: op @ (Prim::Map | Prim::Map2),
                args,
            } => {
                if let Expr::Lambda { params, body } = m.expr(args[0]) {
                    let pos = (1..args.len()).find(|&k| matches!(m.expr(args[k]), Expr::Var(_)));
                    if let Some(k) = pos
                        && params.len() == args.len() - 1
                        && (*op == Prim::Map || k == 1 || k == 2)
                    {
                        let param = params[k - 1].name.clone();
                        let mut local = FxHashSet::default();
                        bound(m, *body, &mut local);
                        local.extend(params.iter().map(|p| p.name.clone()));
                        let mut found = Vec::new();
                        subs(m, *body, &param, &local, &mut found);
                        if !found.is_empty() {
                            out.push(Found {
                                at,
                                node: i,
                                subs: found,
                                param,
                            });
                        }
                    }
                }
                // The arrays may hold loops too; the function is a lambda.
                for &a in &args[1..] {
                    todo.push(a);
                }
                continue;
            }
            _ => {}
        }
        m.expr(i).for_each_child(|c| todo.push(c));
    }
}

/// The chains of `let`s in the tree under `root`: each a list of
/// elements (the `let` nodes, then the body).
pub(super) fn chains(m: &Module, root: ExprId) -> Vec<Vec<ExprId>> {
    let mut out = Vec::new();
    let mut todo = vec![(root, true)];
    while let Some((i, starts)) = todo.pop() {
        if starts && matches!(m.expr(i), Expr::Let { .. }) {
            let mut chain = Vec::new();
            let mut cur = i;
            while let Expr::Let { value, body, .. } = m.expr(cur) {
                chain.push(cur);
                todo.push((*value, true));
                cur = *body;
            }
            chain.push(cur);
            todo.push((cur, true));
            out.push(chain);
            continue;
        }
        m.expr(i).for_each_child(|c| todo.push((c, true)));
    }
    out
}

/// `share-elementwise` for one definition, if some chain has such loops.
pub(super) fn plan_share(
    m: &mut Module,
    names: &mut Option<NameGen>,
    root: ExprId,
) -> Option<Plan> {
    for chain in chains(m, root) {
        let mut found = Vec::new();
        for (at, &c) in chain.iter().enumerate() {
            match m.expr(c) {
                Expr::Let { value, .. } => loops(m, *value, at, &mut found),
                _ => loops(m, c, at, &mut found),
            }
        }
        // Group the subexpressions by array and key; the first group met
        // in two chain elements wins.
        let array_of = |m: &Module, f: &Found| -> Option<(Name, usize)> {
            let Expr::Prim { args, .. } = m.expr(f.node) else {
                return None;
            };
            (1..args.len()).find_map(|k| match m.expr(args[k]) {
                Expr::Var(a) => Some((a.clone(), k)),
                _ => None,
            })
        };
        let mut groups: FxHashMap<(Name, u64), Vec<(usize, ExprId)>> = FxHashMap::default();
        let mut order = Vec::new();
        for (fi, f) in found.iter().enumerate() {
            let Some((a, _)) = array_of(m, f) else {
                continue;
            };
            for &(k, e) in &f.subs {
                let g = groups.entry((a.clone(), k)).or_default();
                if g.is_empty() {
                    order.push((a.clone(), k));
                }
                g.push((fi, e));
            }
        }
        for gk in order {
            let members = &groups[&gk];
            let (f0, e0) = members[0];
            let p0 = found[f0].param.clone();
            // The same expression in every member (hashes can collide).
            let members: Vec<(usize, ExprId)> = members
                .iter()
                .copied()
                .filter(|&(fi, e)| same(m, e0, &p0, e, &found[fi].param))
                .collect();
            let mut ats: Vec<usize> = members.iter().map(|&(fi, _)| found[fi].at).collect();
            ats.sort_unstable();
            ats.dedup();
            if ats.len() < 2 {
                continue;
            }
            let first = ats[0];
            // A later loop must depend on what the chain computes after
            // the first one (else the backend fuses them, and writing the
            // array out only costs).
            let pats: Vec<FxHashSet<Name>> = chain
                .iter()
                .map(|&c| {
                    let mut ns = FxHashSet::default();
                    if let Expr::Let { pat, .. } = m.expr(c) {
                        match pat {
                            Pat::Var(y) => {
                                ns.insert(y.clone());
                            }
                            Pat::Tuple(ys) => ns.extend(ys.iter().cloned()),
                        }
                    }
                    ns
                })
                .collect();
            // The names computed from the first loop's `let`, transitively.
            let mut from_first: FxHashSet<Name> = pats[first].clone();
            for (j, &c) in chain.iter().enumerate().skip(first + 1) {
                if let Expr::Let { value, .. } = m.expr(c) {
                    let mut vs = FxHashSet::default();
                    super::vars(m, *value, &mut vs);
                    if vs.iter().any(|v| from_first.contains(v)) {
                        from_first.extend(pats[j].iter().cloned());
                    }
                }
            }
            let depends = members.iter().any(|&(fi, _)| {
                if found[fi].at == first {
                    return false;
                }
                let mut vs = FxHashSet::default();
                super::vars(m, found[fi].node, &mut vs);
                vs.iter().any(|n| from_first.contains(n))
            });
            if !depends {
                continue;
            }
            // Every name the expression mentions is bound before the first
            // loop's chain element.
            let after = super::reduce::bound_after(m, &chain, first);
            let mut vs = FxHashSet::default();
            super::vars(m, e0, &mut vs);
            if vs.iter().any(|v| *v != p0 && after.contains(v)) || after.contains(&gk.0) {
                continue;
            }
            return build(m, names, &chain, first, &gk.0, &found, &members, e0, &p0);
        }
    }
    None
}

/// A copy of `e` (builtins, variables, literals) with `p` renamed `a`.
fn copy_renamed(m: &mut Module, e: ExprId, p: &Name, a: &Name) -> ExprId {
    stack::guard(|| {
        let (ty, span) = (m.types[e.index()].clone(), m.span(e));
        let node = match m.expr(e).clone() {
            Expr::Var(x) if x == *p => Expr::Var(a.clone()),
            Expr::Prim { op, args } => {
                let args = args.iter().map(|&x| copy_renamed(m, x, p, a)).collect();
                Expr::Prim { op, args }
            }
            other => other,
        };
        add(m, node, ty, span)
    })
}

#[allow(clippy::too_many_arguments)]
fn build(
    m: &mut Module,
    names: &mut Option<NameGen>,
    chain: &[ExprId],
    first: usize,
    array: &Name,
    found: &[Found],
    members: &[(usize, ExprId)],
    e0: ExprId,
    p0: &Name,
) -> Option<Plan> {
    let span = m.span(e0);
    // The array's type, from the first loop.
    let (f0, _) = members[0];
    let Expr::Prim { args, .. } = m.expr(found[f0].node).clone() else {
        return None;
    };
    let k0 = (1..args.len()).find(|&k| matches!(m.expr(args[k]), Expr::Var(x) if x == array))?;
    let aty = m.types[args[k0].index()].clone();
    let (size, elem) = elem_ty(&aty)?;
    // E = map (fun a -> e[a/p]) A
    let a = fresh(m, names, "a");
    let body = copy_renamed(m, e0, p0, &a);
    let lam = add(
        m,
        Expr::Lambda {
            params: vec![syntax::Param {
                name: a,
                ty: Some(elem.clone()),
                span,
            }],
            body,
        },
        Ty::Func(vec![elem.clone()], Box::new(Ty::Real)),
        span,
    );
    let av = add(m, Expr::Var(array.clone()), aty.clone(), span);
    let ety = Ty::array(size.clone(), Ty::Real);
    let value = add(
        m,
        Expr::Prim {
            op: Prim::Map,
            args: vec![lam, av],
        },
        ety.clone(),
        span,
    );
    let big_e = fresh(m, names, "e");
    let mut plan = Plan::default();
    // Each loop reads E where it computed the expression.
    let mut loops_done: Vec<usize> = Vec::new();
    for &(fi, _) in members {
        if loops_done.contains(&fi) {
            continue;
        }
        loops_done.push(fi);
        let f = &found[fi];
        let occ: Vec<ExprId> = members
            .iter()
            .filter(|&&(g, _)| g == fi)
            .map(|&(_, e)| e)
            .collect();
        let q = fresh(m, names, "e");
        let mut inner = Plan::default();
        for &e in &occ {
            let qv = add(m, Expr::Var(q.clone()), Ty::Real, span);
            inner.replace.insert(e, qv);
        }
        let Expr::Prim { args, .. } = m.expr(f.node) else {
            return None;
        };
        let k = (1..args.len()).find(|&k| matches!(m.expr(args[k]), Expr::Var(x) if x == array))?;
        let new = read_alongside(
            m,
            names,
            f.node,
            k,
            &inner,
            (q, Ty::Real),
            (&big_e, &ety),
            span,
        )?;
        plan.replace.insert(f.node, new);
    }
    plan.insert = Some((chain[first], Pat::Var(big_e), value));
    Some(plan)
}

/// The loop `node` (`map f A` or `map2 f A B`) reading the array `E` (the
/// name and type in `big_e`) alongside its `k`-th array, element by element,
/// as the parameter `q` (name and element type): `inner` rewrites the
/// loop's body (where it computed what `E` holds, it reads `q`).
#[allow(clippy::too_many_arguments)]
pub(super) fn read_alongside(
    m: &mut Module,
    names: &mut Option<NameGen>,
    node: ExprId,
    k: usize,
    inner: &Plan,
    (q, qty): (Name, Ty),
    (big_e, ety): (&Name, &Ty),
    span: Span,
) -> Option<ExprId> {
    let Expr::Prim { op, args } = m.expr(node).clone() else {
        return None;
    };
    let Expr::Lambda { params, body } = m.expr(args[0]).clone() else {
        return None;
    };
    if !(1..args.len()).contains(&k) || params.len() != args.len() - 1 {
        return None;
    }
    let ret = m.types[body.index()].clone();
    let body = rebuild(m, body, inner);
    let ev = add(m, Expr::Var(big_e.clone()), ety.clone(), span);
    let aparam = params[k - 1].clone();
    let aty = aparam.ty.clone().unwrap_or(Ty::Tuple(Vec::new()));
    let qparam = syntax::Param {
        name: q.clone(),
        ty: Some(qty.clone()),
        span,
    };
    let node_ty = m.types[node.index()].clone();
    if op == Prim::Map {
        // map (fun x -> b) A ~> map2 (fun (x, q) -> b') A E
        let lam = add(
            m,
            Expr::Lambda {
                params: vec![aparam, qparam],
                body,
            },
            Ty::Func(vec![aty, qty.clone()], Box::new(ret)),
            span,
        );
        return Some(add(
            m,
            Expr::Prim {
                op: Prim::Map2,
                args: vec![lam, args[1], ev],
            },
            node_ty,
            span,
        ));
    }
    // map2 (fun (x, y) -> b) A B ~> map2 (fun (xq, y) -> let (x, q) = xq in b') (zip A E) B
    let pair = Ty::Tuple(vec![aty.clone(), qty.clone()]);
    let (za, zq) = (fresh(m, names, "a"), fresh(m, names, "e"));
    let zav = add(m, Expr::Var(za.clone()), aty.clone(), span);
    let zqv = add(m, Expr::Var(zq.clone()), qty.clone(), span);
    let zbody = add(m, Expr::Tuple(vec![zav, zqv]), pair.clone(), span);
    let zlam = add(
        m,
        Expr::Lambda {
            params: vec![
                syntax::Param {
                    name: za,
                    ty: Some(aty.clone()),
                    span,
                },
                syntax::Param {
                    name: zq,
                    ty: Some(qty.clone()),
                    span,
                },
            ],
            body: zbody,
        },
        Ty::Func(vec![aty.clone(), qty], Box::new(pair.clone())),
        span,
    );
    let (asize, _) = elem_ty(&m.types[args[k].index()])?;
    let zipped = add(
        m,
        Expr::Prim {
            op: Prim::Map2,
            args: vec![zlam, args[k], ev],
        },
        Ty::array(asize, pair.clone()),
        span,
    );
    let xq = fresh(m, names, "a");
    let xqv = add(m, Expr::Var(xq.clone()), pair.clone(), span);
    let lbody = add(
        m,
        Expr::Let {
            pat: Pat::Tuple(vec![aparam.name.clone(), q]),
            ty: None,
            value: xqv,
            body,
        },
        ret.clone(),
        span,
    );
    let xqparam = syntax::Param {
        name: xq,
        ty: Some(pair.clone()),
        span,
    };
    let other = params[2 - k].clone();
    let oty = other.ty.clone().unwrap_or(Ty::Tuple(Vec::new()));
    let (ps, ptys, arrays) = if k == 1 {
        (vec![xqparam, other], vec![pair, oty], vec![zipped, args[2]])
    } else {
        (vec![other, xqparam], vec![oty, pair], vec![args[1], zipped])
    };
    let lam = add(
        m,
        Expr::Lambda {
            params: ps,
            body: lbody,
        },
        Ty::Func(ptys, Box::new(ret)),
        span,
    );
    Some(add(
        m,
        Expr::Prim {
            op: Prim::Map2,
            args: vec![lam, arrays[0], arrays[1]],
        },
        node_ty,
        span,
    ))
}
