//! A loop fused into a multi-lane one (docs/codegen.md, "Sibling loop
//! fusion"): `for (; i + S <= n; i += S) B; for (; i < n; i++) R; ..;
//! for j in 0 ..< n L` becomes
//!
//! ```text
//! for (; i + S <= n; i += S) { B; for j in i ..< i + S L }
//! for j' in i ..< n L'        // L with fresh names
//! for (; i < n; i++) R
//! ```
//!
//! when the loops share nothing (neither reads a variable or block the
//! other writes): the second loop's iterations still run in order, each
//! once, and the first's are unchanged, so only their interleaving
//! differs, which nothing observes. The statements between split as for
//! two plain loops (`split_between`), and not both loops may fail. A
//! `reduce` of the `reassociate` configuration is such a pair of loops;
//! reverse mode's `reduce max` (lse) needs the argmax, an `ifold` over
//! the same array, which then reads each element in the same pass.

use std::collections::HashMap;

use super::*;

/// `b[k]`, `b[k + 1]`: the lanes of a multi-lane loop and its remainder,
/// without pragmas.
fn lane_pair(b: &[Stmt], k: usize) -> Option<(&For, &For)> {
    match (b.get(k), b.get(k + 1)) {
        (Some(Stmt::For(m)), Some(Stmt::For(r)))
            if m.lo.is_none()
                && r.lo.is_none()
                && m.index == r.index
                && m.step > 1
                && r.step == 1
                && m.dir == Dir::Up
                && r.dir == Dir::Up
                && m.hi == r.hi
                && m.pragma.is_none()
                && r.pragma.is_none() =>
        {
            Some((m, r))
        }
        _ => None,
    }
}

/// Fuses the lanes at `b[k]` with one of the next loops of their bound.
pub(super) fn try_fuse_lanes(r: &Roots, vars: &mut Vec<Var>, b: &mut Block, k: usize) -> bool {
    let Some((m, _)) = lane_pair(b, k) else {
        return false;
    };
    let hi = m.hi.clone();
    let mut tried = 0;
    for j in k + 2..b.len() {
        if !simple(b.get(j)).is_some_and(|l2| l2.hi == hi && l2.dir == Dir::Up) {
            continue;
        }
        if fuse_lanes(r, vars, b, k, j) {
            return true;
        }
        tried += 1;
        if tried == CANDIDATES {
            break;
        }
    }
    false
}

fn fuse_lanes(r: &Roots, vars: &mut Vec<Var>, b: &mut Block, k: usize, j: usize) -> bool {
    let (Some((m, rem)), Some(l2)) = (lane_pair(b, k), simple(b.get(j))) else {
        return false;
    };
    let brk = super::super::verify::contains_break;
    if l2.pragma.is_some()
        || brk(&m.body)
        || brk(&rem.body)
        || brk(&l2.body)
        || contains_loop(&l2.body)
    {
        return false;
    }
    let (i1, i2) = (m.index, l2.index);
    let body1: Vec<Stmt> = m.body.iter().chain(&rem.body).cloned().collect();
    let e1 = Effects::of(r, &body1, i1);
    let e2 = Effects::of(r, &l2.body, i2);
    let mut bound = Vec::new();
    m.hi.reads(&mut bound);
    let may_fail = super::super::licm::may_fail;
    let l1_fails = may_fail(&body1);
    let shared = e1
        .writes
        .iter()
        .any(|v| e2.reads.contains(v) || e2.writes.contains(v))
        || e2.writes.iter().any(|v| e1.reads.contains(v));
    if shared
        || e2.reads.contains(&i1)
        || bound.iter().any(|v| e1.writes.contains(v))
        || (l1_fails && may_fail(&l2.body))
        || !declares_scalars_only(vars, &l2.body)
    {
        return false;
    }
    let Some((before, rest)) = split_between(
        r,
        &b[k + 2..j],
        (&e1, l1_fails, i1),
        (&e2, &l2.body),
        &bound,
    ) else {
        return false;
    };
    let (mut main, rem) = (Box::new(m.clone()), Box::new(rem.clone()));
    let mut inner = Box::new(l2.clone());
    inner.lo = Some(Expr::Var(i1));
    inner.hi = Expr::bin(BinOp::Add, Expr::Var(i1), Expr::I64(i64::from(m.step)));
    let mut tail = vec![Stmt::For(Box::new(l2.clone()))];
    freshen(vars, &mut tail);
    if let Some(Stmt::For(t)) = tail.first_mut() {
        t.lo = Some(Expr::Var(i1));
    }
    main.body.push(Stmt::For(inner));
    let mut replacement = before;
    replacement.push(Stmt::For(main));
    replacement.extend(tail);
    replacement.push(Stmt::For(rem));
    replacement.extend(rest);
    b.splice(k..=j, replacement);
    true
}

/// Whether `b` runs a loop of its own, at any depth. Such a loop would be
/// written twice, in the lanes and in the copy after them: gmm's objective
/// grew from 82 to 108 KB of C, its `define` from 1.5-1.8 to 2.3-2.5 s,
/// for no measured gain (3 December 2026), where a loop of scalar
/// statements (lse's argmax) costs a few lines.
pub(super) fn contains_loop(b: &[Stmt]) -> bool {
    b.iter().any(|s| match s {
        Stmt::For(_) | Stmt::Loop { .. } => true,
        Stmt::If { then, els, .. } => contains_loop(then) || contains_loop(els),
        Stmt::Region { body, .. } | Stmt::Parallel { body, .. } => contains_loop(body),
        _ => false,
    })
}

/// Whether every variable `b` declares (its loops' indices too) is a
/// scalar: fresh copies of them need no entry in the roots of memory.
pub(super) fn declares_scalars_only(vars: &[Var], b: &[Stmt]) -> bool {
    let mut ok = true;
    declared(b, &mut |v| {
        ok &= matches!(vars[v.0 as usize].ty, Ty::Scalar(_))
    });
    ok
}

/// Calls `f` on every variable `b` declares, at any depth.
fn declared(b: &[Stmt], f: &mut dyn FnMut(VarId)) {
    for s in b {
        match s {
            Stmt::Let { var, .. } | Stmt::Alloc { var, .. } | Stmt::Checked { var, .. } => f(*var),
            Stmt::For(l) => {
                if l.lo.is_some() {
                    f(l.index);
                }
                declared(&l.body, f);
            }
            Stmt::Loop { body } | Stmt::Parallel { body, .. } => declared(body, f),
            Stmt::Region { mark, body, .. } => {
                f(*mark);
                declared(body, f);
            }
            Stmt::If { then, els, .. } => {
                declared(then, f);
                declared(els, f);
            }
            Stmt::Set { .. } | Stmt::Fail { .. } | Stmt::Break => {}
        }
    }
}

/// Gives every variable `b` declares a new name (a copy of its entry),
/// at its declaration, its assignments and its reads.
pub(super) fn freshen(vars: &mut Vec<Var>, b: &mut [Stmt]) {
    let mut map = HashMap::new();
    declared(b, &mut |v| {
        map.insert(v, VarId(0));
    });
    let mut olds: Vec<VarId> = map.keys().copied().collect();
    olds.sort_by_key(|v| v.0);
    for old in olds {
        let mut var = vars[old.0 as usize].clone();
        let id = VarId(vars.len() as u32);
        var.name = format!("{}_f{}", var.name, id.0);
        vars.push(var);
        map.insert(old, id);
        rename_block(b, old, id);
    }
    rename_places(b, &map);
}

/// The declarations and assignments of `b` renamed by `map`, and the
/// accumulators its vector loops list (its reads are `rename_block`'s).
fn rename_places(b: &mut [Stmt], map: &HashMap<VarId, VarId>) {
    let to = |v: &mut VarId| {
        if let Some(n) = map.get(v) {
            *v = *n;
        }
    };
    for s in b {
        match s {
            Stmt::Let { var, .. } | Stmt::Alloc { var, .. } | Stmt::Checked { var, .. } => to(var),
            Stmt::Set { place, .. } => {
                if let Place::Var(v) = place {
                    to(v);
                }
            }
            Stmt::For(l) => {
                to(&mut l.index);
                if let Some(Pragma::SimdReduction { reductions, .. }) = &mut l.pragma {
                    reductions.iter_mut().for_each(|r| to(&mut r.acc));
                }
                rename_places(&mut l.body, map);
            }
            Stmt::Loop { body } | Stmt::Parallel { body, .. } => rename_places(body, map),
            Stmt::Region { mark, body, .. } => {
                to(mark);
                rename_places(body, map);
            }
            Stmt::If { then, els, .. } => {
                rename_places(then, map);
                rename_places(els, map);
            }
            Stmt::Fail { .. } | Stmt::Break => {}
        }
    }
}
