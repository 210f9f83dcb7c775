//! `reduce-fusion` (see `fuse.rs`): several reductions over one array
//! become one reduction of tuples.
//!
//! Two ways of finding them:
//! - [`plan_fusion`]: `let X = map f A` whose every use is a reduction
//!   (`reduce g z X` or `reduce g z (map p X)`); the fused reduction maps
//!   over `map f A` itself and the `let` goes.
//! - [`plan_source_fusion`]: reductions at the definition's own level over
//!   one variable `A`, directly (`reduce g z (map p A)`) or through a
//!   `let X = map f A` used by that reduction alone (the primal's value
//!   and the gradient's sum over the same points, in reverse mode's
//!   output).
//!
//! Both build the same thing ([`build`]): `let (r1, .., rm) = reduce (fun
//! (u, v) -> (g1 u.1 v.1, ..)) (z1, ..) (map (fun a -> (p1 a, ..)) S)` in
//! front of the first `let` of the chain that holds a use, or, for two
//! lifted reductions (`fun (u, v) -> map2 h u v`) over arrays of one
//! length, one accumulator of pairs ([`zipped`]).

use syntax::ir::NameGen;
use syntax::{Expr, ExprId, Module, Name, Param, Pat, Prim, Span, Ty};

use super::{Binding, Plan, Site, Use, add, binders, contains, elem_ty, fresh, vars};
use crate::hash::{FxHashMap, FxHashSet};

/// The most reductions fused into one. The fused reduction's accumulator
/// is a tuple with a component per reduction, and every node that carries
/// it is typed with the whole tuple: without a bound, n reductions over one
/// array (a program summing n maps of it) give a program of size n^2 (2,000
/// such maps: a 520 MB optimized file). Sixteen keep every fusion reverse
/// mode's programs need (GMM fuses four); more groups fuse in later rounds.
const MAX_FUSED: usize = 16;

/// One reduction to fuse: its function `g`, initial value `z`, the
/// functions applied to each element of the common source, innermost
/// first, and the reduction node.
struct Part {
    g: ExprId,
    z: ExprId,
    fs: Vec<ExprId>,
    node: ExprId,
}

/// A reduction over the common source, with the single-use `let X = map
/// f A` it reads through, if any: (X, its binding, f).
type Member = (Site, Option<(Name, Binding, ExprId)>);

/// The chain of `let`s starting at `id`: the `let` nodes, then the body.
fn chain(m: &Module, mut cur: ExprId) -> Vec<ExprId> {
    let mut out = Vec::new();
    while let Expr::Let { body, .. } = m.expr(cur) {
        out.push(cur);
        cur = *body;
    }
    out.push(cur);
    out
}

/// The index of the element of `chain` whose value (or, for the last, the
/// whole) holds `node`.
fn position(m: &Module, chain: &[ExprId], nodes: &FxHashSet<ExprId>) -> Option<usize> {
    chain.iter().position(|&c| match m.expr(c) {
        Expr::Let { value, .. } => contains(m, *value, nodes),
        _ => contains(m, c, nodes),
    })
}

/// The names bound from chain element `from` on (patterns and every
/// binder inside).
pub(super) fn bound_after(m: &Module, chain: &[ExprId], from: usize) -> FxHashSet<Name> {
    let mut after = FxHashSet::default();
    for &c in &chain[from..] {
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
    after
}

/// Whether `part` mentions only names in scope before chain element
/// `from` (and not `x`).
pub(super) fn in_scope(
    m: &Module,
    part: ExprId,
    after: &FxHashSet<Name>,
    x: Option<&Name>,
) -> bool {
    let (mut vs, mut own) = (FxHashSet::default(), FxHashSet::default());
    vars(m, part, &mut vs);
    binders(m, part, &mut own);
    !(x.is_some_and(|x| vs.contains(x)) || vs.iter().any(|n| after.contains(n) && !own.contains(n)))
}

/// The `g`, `z` and `p` of a reduction site, `p` a one-parameter lambda
/// and `g` a two-parameter one.
fn site_parts(m: &Module, s: &Site) -> Option<(ExprId, ExprId, Option<ExprId>)> {
    let Expr::Prim { args, .. } = m.expr(s.node) else {
        return None;
    };
    let (g, z) = (args[0], args[1]);
    if !matches!(m.expr(g), Expr::Lambda { params, .. } if params.len() == 2) {
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
    Some((g, z, p))
}

/// `reduce-fusion` for `X`, if its uses allow it.
pub(super) fn plan_fusion(
    m: &mut Module,
    names: &mut Option<NameGen>,
    x: &Name,
    b: Binding,
    uses: &[Use],
) -> Option<Plan> {
    if uses.len() < 2
        || uses.len() > MAX_FUSED
        || uses.iter().any(|u| u.guarded || u.site.is_none())
    {
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
    let site_nodes: FxHashSet<ExprId> = sites.iter().map(|s| s.node).collect();
    let chain = chain(m, body);
    let first = position(m, &chain, &site_nodes)?;
    let after = bound_after(m, &chain, first);
    let mut parts = Vec::new();
    for s in &sites {
        let (g, z, p) = site_parts(m, s)?;
        for part in [Some(g), Some(z), p].into_iter().flatten() {
            // Another reduction inside this one's parts: a dependency.
            if !in_scope(m, part, &after, Some(x)) || contains(m, part, &site_nodes) {
                return None;
            }
        }
        parts.push(Part {
            g,
            z,
            fs: p.into_iter().collect(),
            node: s.node,
        });
    }
    let mut plan = build(m, names, b.let_node, chain[first], v, op, &parts)?;
    plan.drop_lets.insert(b.let_node);
    Some(plan)
}

/// `reduce-fusion` of reductions over one variable at the definition's
/// own level (`root`'s chain): `single` are the `let X = map f A` whose
/// only use is one of `sites`.
pub(super) fn plan_source_fusion(
    m: &mut Module,
    names: &mut Option<NameGen>,
    root: ExprId,
    sites: &[(Site, Name)],
    single: &FxHashMap<Name, Binding>,
) -> Option<Plan> {
    // Each site's source variable, through a single-use `map` binding.
    let mut groups: Vec<(Name, Prim, Vec<Member>)> = Vec::new();
    for (s, x) in sites {
        let (src, pre) = match single.get(x) {
            Some(b) => match m.expr(b.let_node) {
                Expr::Let { value, .. } => match m.expr(*value) {
                    Expr::Prim {
                        op: Prim::Map,
                        args,
                    } => match (m.expr(args[0]), m.expr(args[1])) {
                        (Expr::Lambda { params, .. }, Expr::Var(a)) if params.len() == 1 => {
                            (a.clone(), Some((x.clone(), *b, args[0])))
                        }
                        _ => (x.clone(), None),
                    },
                    _ => (x.clone(), None),
                },
                _ => (x.clone(), None),
            },
            None => (x.clone(), None),
        };
        match groups
            .iter_mut()
            .find(|g| g.0 == src && g.1 == s.op && g.2.len() < MAX_FUSED)
        {
            Some(g) => g.2.push((*s, pre)),
            None => groups.push((src, s.op, vec![(*s, pre)])),
        }
    }
    let chain = chain(m, root);
    for (src, op, members) in groups {
        if members.len() < 2 {
            continue;
        }
        // Each use's place in the chain (every use must be in it).
        let pos: Option<Vec<usize>> = members
            .iter()
            .map(|(s, _)| {
                let one: FxHashSet<ExprId> = [s.node].into_iter().collect();
                position(m, &chain, &one)
            })
            .collect();
        let Some(pos) = pos else {
            continue;
        };
        // The insertion point with the most uses that can move there: the
        // uses from that point on whose parts are in scope before it.
        let mut best: Option<(usize, Vec<usize>)> = None;
        let mut starts = pos.clone();
        starts.sort_unstable();
        starts.dedup();
        // A reduction whose own parts hold another member (`foldl g
        // (foldl h z A).1 A`) depends on that member's result: the two
        // cannot run as one pass.
        let nodes: Vec<ExprId> = members.iter().map(|(s, _)| s.node).collect();
        let independent: Vec<bool> = members
            .iter()
            .enumerate()
            .map(|(i, (s, pre))| {
                let others: FxHashSet<ExprId> = nodes
                    .iter()
                    .enumerate()
                    .filter(|&(j, _)| j != i)
                    .map(|(_, &n)| n)
                    .collect();
                let Some((g, z, p)) = site_parts(m, s) else {
                    return false;
                };
                let f = pre.as_ref().map(|(_, _, f)| *f);
                [Some(g), Some(z), p, f]
                    .into_iter()
                    .flatten()
                    .all(|part| !contains(m, part, &others))
            })
            .collect();
        for &first in &starts {
            let after = bound_after(m, &chain, first);
            if after.contains(&src) {
                continue;
            }
            let chosen: Vec<usize> = (0..members.len())
                .filter(|&i| pos[i] >= first && independent[i])
                .filter(|&i| {
                    let (s, pre) = &members[i];
                    let Some((g, z, p)) = site_parts(m, s) else {
                        return false;
                    };
                    let f = pre.as_ref().map(|(_, _, f)| *f);
                    [Some(g), Some(z), p, f]
                        .into_iter()
                        .flatten()
                        .all(|part| in_scope(m, part, &after, None))
                })
                .collect();
            if chosen.len() >= 2
                && chosen.iter().any(|&i| pos[i] == first)
                && best.as_ref().is_none_or(|(_, b)| chosen.len() >= b.len())
            {
                best = Some((first, chosen));
            }
        }
        let Some((first, chosen)) = best else {
            continue;
        };
        let members: Vec<Member> = chosen.iter().map(|&i| members[i].clone()).collect();
        let mut parts = Vec::new();
        let mut drops = Vec::new();
        let mut elem: Option<Ty> = None;
        for (s, pre) in &members {
            let (g, z, p) = site_parts(m, s)?;
            let mut fs = Vec::new();
            if let Some((_, b, f)) = pre {
                fs.push(*f);
                drops.push(b.let_node);
                if let Ty::Func(ps, _) = &m.types[f.index()] {
                    elem = ps.first().cloned();
                }
            }
            fs.extend(p);
            parts.push(Part {
                g,
                z,
                fs,
                node: s.node,
            });
        }
        // The source's type, from a use of it.
        let src_ty = members.iter().find_map(|(s, pre)| {
            if pre.is_some() {
                return None;
            }
            let Expr::Prim { args, .. } = m.expr(s.node) else {
                return None;
            };
            let arr = match s.map {
                Some(mp) => match m.expr(mp) {
                    Expr::Prim { args: margs, .. } => margs[1],
                    _ => return None,
                },
                None => args[2],
            };
            Some(m.types[arr.index()].clone())
        });
        let src_ty = match (src_ty, members.iter().find_map(|(_, pre)| pre.as_ref())) {
            (Some(t), _) => t,
            (None, Some((_, b, _))) => match m.expr(b.let_node) {
                Expr::Let { value, .. } => match m.expr(*value) {
                    Expr::Prim { args, .. } => m.types[args[1].index()].clone(),
                    _ => continue,
                },
                _ => continue,
            },
            _ => continue,
        };
        if let (Some(e), Some((_, t))) = (&elem, elem_ty(&src_ty))
            && *e != t
        {
            continue;
        }
        let span = m.span(parts[0].node);
        let sv = add(m, Expr::Var(src.clone()), src_ty, span);
        let Some(mut plan) = build(m, names, parts[0].node, chain[first], sv, op, &parts) else {
            continue;
        };
        plan.drop_lets.extend(drops);
        return Some(plan);
    }
    None
}

/// Applies the functions `fs` (innermost first) to `a`.
fn apply_all(m: &mut Module, fs: &[ExprId], mut a: ExprId, span: Span) -> Option<ExprId> {
    for &f in fs {
        let Ty::Func(_, r) = m.types[f.index()].clone() else {
            return None;
        };
        a = add(
            m,
            Expr::App {
                func: f,
                args: vec![a],
            },
            *r,
            span,
        );
    }
    Some(a)
}

/// The type of the element of the source after `fs`.
fn result_ty(m: &Module, fs: &[ExprId], elem: &Ty) -> Option<Ty> {
    match fs.last() {
        Some(&f) => match &m.types[f.index()] {
            Ty::Func(_, r) => Some((**r).clone()),
            _ => None,
        },
        None => Some(elem.clone()),
    }
}

/// The fused reduction of `parts` over the array `src`, bound in front
/// of chain element `at`, every use replaced by its component.
fn build(
    m: &mut Module,
    names: &mut Option<NameGen>,
    span_of: ExprId,
    at: ExprId,
    src: ExprId,
    op: Prim,
    parts: &[Part],
) -> Option<Plan> {
    let span = m.span(span_of);
    let (size, xelem) = elem_ty(&m.types[src.index()])?;
    let acc_tys: Vec<Ty> = parts
        .iter()
        .map(|p| m.types[p.node.index()].clone())
        .collect();
    let el_tys: Vec<Ty> = parts
        .iter()
        .map(|p| result_ty(m, &p.fs, &xelem))
        .collect::<Option<_>>()?;
    if let Some(plan) = zipped(
        m, names, at, src, op, parts, &acc_tys, &el_tys, &xelem, &size,
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
    for (j, p) in parts.iter().enumerate() {
        let uv = add(m, Expr::Var(u.clone()), acc_t.clone(), span);
        let uj = proj(m, uv, j, &acc_tys[j], span);
        let vv = add(m, Expr::Var(w.clone()), el_t.clone(), span);
        let vj = proj(m, vv, j, &el_tys[j], span);
        comps.push(add(
            m,
            Expr::App {
                func: p.g,
                args: vec![uj, vj],
            },
            acc_tys[j].clone(),
            span,
        ));
    }
    let fbody = add(m, Expr::Tuple(comps), acc_t.clone(), span);
    let flam = lambda(
        m,
        &[(u, acc_t.clone()), (w, el_t.clone())],
        fbody,
        &acc_t,
        span,
    );
    let zs: Vec<ExprId> = parts.iter().map(|p| p.z).collect();
    let ztup = add(m, Expr::Tuple(zs), acc_t.clone(), span);
    let mut items = Vec::new();
    for p in parts {
        let av = add(m, Expr::Var(a.clone()), xelem.clone(), span);
        items.push(apply_all(m, &p.fs, av, span)?);
    }
    let mbody = add(m, Expr::Tuple(items), el_t.clone(), span);
    let mlam = lambda(m, &[(a, xelem)], mbody, &el_t, span);
    let mapped = add(
        m,
        Expr::Prim {
            op: Prim::Map,
            args: vec![mlam, src],
        },
        Ty::array(size, el_t),
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
    let mut plan = Plan::default();
    let mut rs = Vec::new();
    for (j, p) in parts.iter().enumerate() {
        let r = fresh(m, names, "r");
        let rv = add(m, Expr::Var(r.clone()), acc_tys[j].clone(), m.span(p.node));
        plan.replace.insert(p.node, rv);
        rs.push(r);
    }
    plan.insert = Some((at, Pat::Tuple(rs), fused));
    Some(plan)
}

fn proj(m: &mut Module, t: ExprId, j: usize, ty: &Ty, span: Span) -> ExprId {
    add(
        m,
        Expr::Proj {
            tuple: t,
            index: j as u32 + 1,
        },
        ty.clone(),
        span,
    )
}

/// `fun (x1 : T1, ..) -> body`.
fn lambda(m: &mut Module, params: &[(Name, Ty)], body: ExprId, ret: &Ty, span: Span) -> ExprId {
    add(
        m,
        Expr::Lambda {
            params: params
                .iter()
                .map(|(n, t)| Param {
                    name: n.clone(),
                    ty: Some(t.clone()),
                    span,
                })
                .collect(),
            body,
        },
        Ty::Func(
            params.iter().map(|(_, t)| t.clone()).collect(),
            Box::new(ret.clone()),
        ),
        span,
    )
}

/// The function `h` when `g` is `fun (u, v) -> map2 h u v`.
fn lifted(m: &Module, g: ExprId) -> Option<ExprId> {
    let Expr::Lambda { params, body } = m.expr(g) else {
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

/// `zip x y = map2 (fun (a, b) -> (a, b)) x y`.
fn zip(
    m: &mut Module,
    names: &mut Option<NameGen>,
    x: ExprId,
    y: ExprId,
    tys: &[Ty],
    out: &Ty,
    span: Span,
) -> ExprId {
    let (a, c) = (fresh(m, names, "a"), fresh(m, names, "b"));
    let av = add(m, Expr::Var(a.clone()), tys[0].clone(), span);
    let cv = add(m, Expr::Var(c.clone()), tys[1].clone(), span);
    let pair = Ty::Tuple(tys.to_vec());
    let body = add(m, Expr::Tuple(vec![av, cv]), pair.clone(), span);
    let lam = lambda(
        m,
        &[(a, tys[0].clone()), (c, tys[1].clone())],
        body,
        &pair,
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
}

/// Two lifted reductions (`fun (u, v) -> map2 h u v`) over arrays of one
/// length (by their types): one accumulator of pairs, `reduce (fun (u,
/// v) -> map2 (fun (a, b) -> (h1 a.1 b.1, h2 a.2 b.2)) u v) (zip z1 z2)
/// (map (fun a -> zip (p1 a) (p2 a)) S)`, so that each element's two
/// parts are computed in one loop (in the backend, one pass over the
/// element instead of writing it out); each use is `map (fun t -> t.j) r`.
#[allow(clippy::too_many_arguments)]
fn zipped(
    m: &mut Module,
    names: &mut Option<NameGen>,
    at: ExprId,
    src: ExprId,
    op: Prim,
    parts: &[Part],
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
        .map(|p| lifted(m, p.g))
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
    let span = m.span(at);
    let pair_s = Ty::Tuple(accs.clone());
    let pair_e = Ty::Tuple(els.clone());
    let acc_z = Ty::array(size.clone(), pair_s.clone());
    let el_z = Ty::array(size.clone(), pair_e.clone());
    let (u, w, a, c) = (
        fresh(m, names, "u"),
        fresh(m, names, "v"),
        fresh(m, names, "a"),
        fresh(m, names, "b"),
    );
    let mut comps = Vec::new();
    for j in 0..2 {
        let av = add(m, Expr::Var(a.clone()), pair_s.clone(), span);
        let aj = proj(m, av, j, &accs[j], span);
        let cv = add(m, Expr::Var(c.clone()), pair_e.clone(), span);
        let cj = proj(m, cv, j, &els[j], span);
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
    let inner = lambda(
        m,
        &[(a, pair_s.clone()), (c, pair_e.clone())],
        inner_body,
        &pair_s,
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
    let flam = lambda(
        m,
        &[(u, acc_z.clone()), (w, el_z.clone())],
        fbody,
        &acc_z,
        span,
    );
    let z = zip(m, names, parts[0].z, parts[1].z, &accs, &acc_z, span);
    let x = fresh(m, names, "a");
    let mut ps = Vec::new();
    for p in parts {
        let xv = add(m, Expr::Var(x.clone()), xelem.clone(), span);
        ps.push(apply_all(m, &p.fs, xv, span)?);
    }
    let mbody = zip(m, names, ps[0], ps[1], &els, &el_z, span);
    let mlam = lambda(m, &[(x, xelem.clone())], mbody, &el_z, span);
    let mapped = add(
        m,
        Expr::Prim {
            op: Prim::Map,
            args: vec![mlam, src],
        },
        Ty::array(xsize.clone(), el_z),
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
    let r = fresh(m, names, "r");
    let mut plan = Plan::default();
    for (j, p) in parts.iter().enumerate() {
        let nspan = m.span(p.node);
        let t = fresh(m, names, "t");
        let tv = add(m, Expr::Var(t.clone()), pair_s.clone(), nspan);
        let pr = proj(m, tv, j, &accs[j], nspan);
        let lam = lambda(m, &[(t, pair_s.clone())], pr, &accs[j], nspan);
        let rv = add(m, Expr::Var(r.clone()), acc_z.clone(), nspan);
        let pm = add(
            m,
            Expr::Prim {
                op: Prim::Map,
                args: vec![lam, rv],
            },
            acc_tys[j].clone(),
            nspan,
        );
        plan.replace.insert(p.node, pm);
    }
    plan.insert = Some((at, Pat::Var(r), fused));
    Some(plan)
}
