//! The rewrite of `share-inner-loop`: the shared array `S`, computed
//! ahead of the first loop from copies of what it needs, and both loops
//! reading it.

use syntax::ir::NameGen;
use syntax::{Expr, ExprId, Module, Name, Param, Pat, Prim, Ty};

use super::super::share::read_alongside;
use super::super::{Plan, add, elem_ty, fresh};
use super::{Loop, Match, fission_let};
use crate::hash::{FxHashMap, FxHashSet};

/// The names read under `id` and bound outside it.
pub(super) fn free(m: &Module, id: ExprId) -> FxHashSet<Name> {
    syntax::visit::free_names(m, id).into_iter().collect()
}

/// A copy of the tree under `id` with fresh binders, renaming free names
/// by `ren` (`syntax::visit::detach`).
fn copy_fresh(
    m: &mut Module,
    names: &mut Option<NameGen>,
    id: ExprId,
    ren: &mut FxHashMap<Name, Name>,
) -> ExprId {
    let names = names.get_or_insert_with(|| m.name_gen());
    syntax::visit::detach(m, id, names, ren).paste(m, true)
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
pub(super) fn build(
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
    // A scanr's element parameter and its array, as a map's would be
    // (`params[k]` iterates `args[k + 1]`); its carry is read below only
    // to refuse.
    let (params, args, carry) = if l1.scan {
        let carry = params.get(1)?.name.clone();
        (vec![params[0].clone()], vec![args[0], args[2]], Some(carry))
    } else {
        (params, args, None)
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
    let mut pnames: FxHashSet<Name> = params.iter().map(|p| p.name.clone()).collect();
    pnames.extend(carry.clone());
    let mut read: FxHashSet<Name> = FxHashSet::default();
    while let Some(e) = todo.pop() {
        for v in free(m, e) {
            if pnames.contains(&v) {
                read.insert(v);
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
    // The carry differs from step to step: what reads it is not a map.
    if carry.is_some_and(|c| read.contains(&c)) {
        return None;
    }
    // S iterates the arrays whose elements it reads (not the others,
    // which may be expensive to compute again).
    let kept: Vec<usize> = (0..params.len())
        .filter(|&k| read.contains(&params[k].name))
        .collect();
    if kept.is_empty() {
        return None;
    }
    let op = if kept.len() == 1 { Prim::Map } else { op };
    for &k in &kept {
        outer.extend(free(m, args[k + 1]));
    }
    // Everything from outside is bound before L1's chain element.
    let after = super::super::reduce::bound_after(m, chain, l1.at);
    if outer.iter().any(|v| after.contains(v)) {
        return None;
    }
    let span = m.span(mt.c1);
    // S = map/map2 (fun ps' -> let <need> in c1') <L1's arrays>
    let mut ren = FxHashMap::default();
    let new_params: Vec<Param> = kept
        .iter()
        .map(|&k| &params[k])
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
            let ty = Ty::array(size, ety);
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
    for &k in &kept {
        let c = copy_fresh(m, names, args[k + 1], &mut FxHashMap::default());
        sargs.push(c);
    }
    // S has an element per element of the array (a scanr has one more).
    let (size, _) = elem_ty(&m.types[args[1].index()])?;
    let sty = Ty::array(size, rty.clone());
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
    let new1 = if l1.scan {
        scanr_alongside(
            m,
            names,
            l1.node,
            &inner1,
            (q1, rty.clone()),
            (&big_s, &sty),
            span,
        )?
    } else {
        read_alongside(
            m,
            names,
            l1.node,
            1,
            &inner1,
            (q1, rty.clone()),
            (&big_s, &sty),
            span,
        )?
    };
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

/// `scanr (fun (x, c) -> b) z A ~> scanr (fun (xq, c) -> let (x, q) = xq
/// in b') z (zip A E)`, `b'` the body with `inner` applied.
fn scanr_alongside(
    m: &mut Module,
    names: &mut Option<NameGen>,
    node: ExprId,
    inner: &Plan,
    (q, qty): (Name, Ty),
    (big_e, ety): (&Name, &Ty),
    span: syntax::Span,
) -> Option<ExprId> {
    let Expr::Prim { args, .. } = m.expr(node).clone() else {
        return None;
    };
    let Expr::Lambda { params, body } = m.expr(args[0]).clone() else {
        return None;
    };
    let [xparam, cparam] = params.as_slice() else {
        return None;
    };
    let ret = m.types[body.index()].clone();
    let body = super::super::rebuild(m, body, inner);
    let xty = xparam.ty.clone()?;
    let cty = cparam.ty.clone()?;
    let pair = Ty::Tuple(vec![xty.clone(), qty.clone()]);
    let xq = fresh(m, names, "xq");
    let xqv = add(m, Expr::Var(xq.clone()), pair.clone(), span);
    let body = add(
        m,
        Expr::Let {
            pat: Pat::Tuple(vec![xparam.name.clone(), q]),
            ty: None,
            value: xqv,
            body,
        },
        ret.clone(),
        span,
    );
    let lam = add(
        m,
        Expr::Lambda {
            params: vec![
                Param {
                    name: xq,
                    ty: Some(pair.clone()),
                    span,
                },
                cparam.clone(),
            ],
            body,
        },
        Ty::Func(vec![pair.clone(), cty], Box::new(ret)),
        span,
    );
    // zip A E
    let (za, zq) = (fresh(m, names, "a"), fresh(m, names, "e"));
    let zav = add(m, Expr::Var(za.clone()), xty.clone(), span);
    let zqv = add(m, Expr::Var(zq.clone()), qty.clone(), span);
    let zbody = add(m, Expr::Tuple(vec![zav, zqv]), pair.clone(), span);
    let zlam = add(
        m,
        Expr::Lambda {
            params: vec![
                Param {
                    name: za,
                    ty: Some(xty.clone()),
                    span,
                },
                Param {
                    name: zq,
                    ty: Some(qty.clone()),
                    span,
                },
            ],
            body: zbody,
        },
        Ty::Func(vec![xty, qty], Box::new(pair.clone())),
        span,
    );
    let ev = add(m, Expr::Var(big_e.clone()), ety.clone(), span);
    let (size, _) = elem_ty(&m.types[args[2].index()])?;
    let zipped = add(
        m,
        Expr::Prim {
            op: Prim::Map2,
            args: vec![zlam, args[2], ev],
        },
        Ty::array(size, pair),
        span,
    );
    let node_ty = m.types[node.index()].clone();
    Some(add(
        m,
        Expr::Prim {
            op: Prim::Scanr,
            args: vec![lam, args[1], zipped],
        },
        node_ty,
        span,
    ))
}
