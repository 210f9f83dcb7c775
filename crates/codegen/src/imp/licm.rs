//! Loop-invariant code motion on the loop IR: the rules of the text pass
//! `hoist.rs` (docs/codegen.md, "Loop-invariant code motion"), on
//! statements instead of lines. The lowering does not build the IR yet,
//! so this pass runs in its tests only; once it does, it replaces
//! `hoist.rs`.
//!
//! Loops innermost first, so what leaves an inner loop may leave the
//! enclosing one too. For a counted loop from 0 (or from a variable `L`,
//! a parallel thread's chunk; `N > L` below then instead of `N > 0`) by 1
//! whose bound `N` is a variable or a literal, with `W` the variables written anywhere in it
//! (its index included; element stores do not count), and its body's top
//! level taken to include the body of a region there:
//!
//! - a constant `Let` of an `I64` made of variables, literals and
//!   `ad_mulc` (no arithmetic that could overflow when evaluated early),
//!   reading nothing in `W`, moves before the loop;
//! - an `Alloc` in a region at the top of the body (or in a conditional
//!   there, not in a nested loop) whose count is such an expression
//!   reading nothing in `W` moves before the loop as `alloc .. if N > 0`:
//!   one block for all iterations, none if the loop does not run. Nothing
//!   allocated in the region outlives the iteration, so no iteration sees
//!   another's block; its null check stays where it was (and may move by
//!   the next rule);
//! - a `Fail` reading nothing in `W`, with no load and no call but
//!   `ad_mulc`, before anything in the body that can fail or break, moves before
//!   the loop as `fail .. if N > 0 && C`: the evaluator's error exactly,
//!   since an invariant check fails in the first iteration or never;
//! - a region at the top of the body left with nothing that uses the
//!   arena is dissolved into the body.

use std::collections::HashSet;

use super::ir::*;

/// Moves loop invariants out of every loop of `f` (`p` names its calls).
pub fn hoist(p: &Program, f: &mut Func) {
    let mulc = p
        .externs
        .iter()
        .position(|e| e.name == "ad_mulc")
        .map(|i| ExternId(i as u32));
    let body = std::mem::take(&mut f.body);
    f.body = block(
        &Cx {
            mulc,
            vars: &f.vars,
        },
        body,
    );
}

struct Cx<'a> {
    /// The function's variables.
    vars: &'a [Var],
    /// The saturating product of sizes, the one call a moved expression
    /// may make.
    mulc: Option<ExternId>,
}

impl Cx<'_> {
    /// Whether `v` is a constant `I64`.
    fn is_size(&self, v: VarId) -> bool {
        self.vars
            .get(v.0 as usize)
            .is_some_and(|x| !x.mutable && x.ty == Ty::Scalar(Scalar::I64))
    }
}

fn block(cx: &Cx<'_>, b: Block) -> Block {
    syntax::stack::guard(|| {
        let mut out = Vec::with_capacity(b.len());
        for s in b {
            match s {
                Stmt::For(mut l) => {
                    l.body = block(cx, std::mem::take(&mut l.body));
                    let pre = hoist_loop(cx, &mut l);
                    out.extend(pre);
                    out.push(Stmt::For(l));
                }
                Stmt::Loop { body } => out.push(Stmt::Loop {
                    body: block(cx, body),
                }),
                Stmt::If { cond, then, els } => out.push(Stmt::If {
                    cond,
                    then: block(cx, then),
                    els: block(cx, els),
                }),
                Stmt::Region {
                    mark,
                    body,
                    reset_if,
                } => out.push(Stmt::Region {
                    mark,
                    body: block(cx, body),
                    reset_if,
                }),
                Stmt::Parallel {
                    threads,
                    body,
                    workers,
                } => out.push(Stmt::Parallel {
                    threads,
                    body: block(cx, body),
                    workers,
                }),
                s => out.push(s),
            }
        }
        out
    })
}

/// The statements to put before the loop, taken out of its body.
fn hoist_loop(cx: &Cx<'_>, l: &mut For) -> Vec<Stmt> {
    // From 0, or from a variable: a thread's chunk `lo ..< hi` of a
    // parallel loop (note [parallel loops]), whose scratch blocks are
    // then the thread's, in its own arena.
    let from_var = matches!(l.lo, Some(Expr::Var(_)));
    if !(l.lo == Some(Expr::I64(0)) || from_var)
        || l.step != 1
        || !matches!(l.hi, Expr::Var(_) | Expr::I64(_))
    {
        return Vec::new();
    }
    let mut w = HashSet::new();
    w.insert(l.index);
    writes(&l.body, &mut w);
    let lo = l.lo.clone().unwrap_or(Expr::I64(0));
    if reads_any(&l.hi, &w) || reads_any(&lo, &w) {
        return Vec::new();
    }
    let guard = Expr::bin(BinOp::Gt, l.hi.clone(), lo);
    let mut pre = Vec::new();

    // Sizes and scratch blocks.
    take_invariants(cx, &mut l.body, &mut w, &guard, &mut pre, false);

    // Checks, up to the first statement that may fail and stays.
    let mut stop = false;
    take_checks(cx, &mut l.body, &w, &guard, &mut pre, &mut stop, true);

    // Regions with nothing left to release.
    let body = std::mem::take(&mut l.body);
    for s in body {
        match s {
            Stmt::Region { body, .. } if !uses_arena(&body) => l.body.extend(body),
            s => l.body.push(s),
        }
    }
    pre
}

/// Moves the invariant sizes of a body's top level and the scratch
/// blocks of its regions (`in_region`: `b` is inside one) to `pre`.
fn take_invariants(
    cx: &Cx<'_>,
    b: &mut Block,
    w: &mut HashSet<VarId>,
    guard: &Expr,
    pre: &mut Vec<Stmt>,
    in_region: bool,
) {
    let mut k = 0;
    while k < b.len() {
        match &mut b[k] {
            Stmt::Let { var, init: Some(e) }
                if cx.is_size(*var) && plain(cx, e) && !reads_any(e, w) =>
            {
                let v = *var;
                // A constant is written once, here: now before the loop.
                w.remove(&v);
                pre.push(b.remove(k));
                continue;
            }
            s @ Stmt::Alloc { .. } if in_region => {
                if let Some(moved) = movable_alloc(cx, s, w, guard) {
                    pre.push(moved);
                    b.remove(k);
                    continue;
                }
            }
            Stmt::Region { body, .. } if !in_region => {
                take_invariants(cx, body, w, guard, pre, true)
            }
            Stmt::If { then, els, .. } if in_region => {
                take_allocs(cx, then, w, guard, pre);
                take_allocs(cx, els, w, guard, pre);
            }
            _ => {}
        }
        k += 1;
    }
}

/// The scratch blocks of a conditional's branch inside a region: moved
/// before the loop, allocated even when the branch is not taken.
fn take_allocs(
    cx: &Cx<'_>,
    b: &mut Block,
    w: &mut HashSet<VarId>,
    guard: &Expr,
    pre: &mut Vec<Stmt>,
) {
    let mut k = 0;
    while k < b.len() {
        match &mut b[k] {
            s @ Stmt::Alloc { .. } => {
                if let Some(moved) = movable_alloc(cx, s, w, guard) {
                    pre.push(moved);
                    b.remove(k);
                    continue;
                }
            }
            Stmt::If { then, els, .. } => {
                take_allocs(cx, then, w, guard, pre);
                take_allocs(cx, els, w, guard, pre);
            }
            _ => {}
        }
        k += 1;
    }
}

/// The allocation `s` guarded to run before the loop, if its count and
/// condition are invariant sizes (its variable is then no longer written
/// in the loop).
fn movable_alloc(cx: &Cx<'_>, s: &Stmt, w: &mut HashSet<VarId>, guard: &Expr) -> Option<Stmt> {
    let Stmt::Alloc { var, count, when } = s else {
        return None;
    };
    let invariant =
        plain(cx, count) && !reads_any(count, w) && when.as_ref().is_none_or(|c| !reads_any(c, w));
    if !invariant {
        return None;
    }
    w.remove(var);
    Some(Stmt::Alloc {
        var: *var,
        count: count.clone(),
        when: Some(match when {
            Some(c) => Expr::bin(BinOp::And, guard.clone(), c.clone()),
            None => guard.clone(),
        }),
    })
}

/// Moves the invariant checks at the top of a body (and of a region
/// there, `top`) to `pre`, until a statement that may fail stays.
fn take_checks(
    cx: &Cx<'_>,
    b: &mut Block,
    w: &HashSet<VarId>,
    guard: &Expr,
    pre: &mut Vec<Stmt>,
    stop: &mut bool,
    top: bool,
) {
    let mut k = 0;
    while k < b.len() && !*stop {
        match &mut b[k] {
            Stmt::Fail { cond, a, b: d, .. }
                if [&*cond, &*a, &*d]
                    .iter()
                    .all(|e| pure(cx, e) && !reads_any(e, w)) =>
            {
                let Stmt::Fail {
                    cond,
                    site,
                    a,
                    b: d,
                } = b.remove(k)
                else {
                    continue;
                };
                pre.push(Stmt::Fail {
                    cond: Expr::bin(BinOp::And, guard.clone(), cond),
                    site,
                    a,
                    b: d,
                });
                continue;
            }
            Stmt::Region { body, .. } if top => take_checks(cx, body, w, guard, pre, stop, false),
            // Nothing moves past what may fail or leave the loop.
            s => {
                let s = std::slice::from_ref(s);
                *stop = may_fail(s) || super::verify::contains_break(s);
            }
        }
        k += 1;
    }
}

/// Every variable a block declares or assigns as a whole.
fn writes(b: &Block, w: &mut HashSet<VarId>) {
    for s in b {
        match s {
            Stmt::Let { var, .. } | Stmt::Alloc { var, .. } | Stmt::Checked { var, .. } => {
                w.insert(*var);
            }
            Stmt::Set {
                place: Place::Var(v),
                ..
            } => {
                w.insert(*v);
            }
            Stmt::Set { .. } | Stmt::Fail { .. } | Stmt::Break => {}
            Stmt::For(l) => {
                w.insert(l.index);
                writes(&l.body, w);
            }
            Stmt::Loop { body } | Stmt::Parallel { body, .. } => writes(body, w),
            Stmt::If { then, els, .. } => {
                writes(then, w);
                writes(els, w);
            }
            Stmt::Region { mark, body, .. } => {
                w.insert(*mark);
                writes(body, w);
            }
        }
    }
}

fn reads_any(e: &Expr, w: &HashSet<VarId>) -> bool {
    let mut r = Vec::new();
    e.reads(&mut r);
    r.iter().any(|v| w.contains(v))
}

/// Variables, integer literals and `ad_mulc` of such: no effect and no
/// arithmetic that could overflow when evaluated earlier than written.
fn plain(cx: &Cx<'_>, e: &Expr) -> bool {
    match e {
        Expr::Var(_) | Expr::I64(_) => true,
        Expr::Call(f, args) => Some(*f) == cx.mulc && args.iter().all(|a| plain(cx, a)),
        _ => false,
    }
}

/// No load and no call but `ad_mulc`: the same value wherever it is
/// evaluated, once what it reads is.
fn pure(cx: &Cx<'_>, e: &Expr) -> bool {
    match e {
        Expr::Var(_)
        | Expr::F64(_)
        | Expr::I64(_)
        | Expr::I32(_)
        | Expr::Bool(_)
        | Expr::Null(_)
        | Expr::Table(_) => true,
        Expr::Load(..) => false,
        Expr::Call(f, args) => Some(*f) == cx.mulc && args.iter().all(|a| pure(cx, a)),
        Expr::Unary(_, a) | Expr::Cast(_, a) | Expr::IsNull(a) => pure(cx, a),
        Expr::Binary(_, a, b) => pure(cx, a) && pure(cx, b),
        Expr::Select(c, a, b) => pure(cx, c) && pure(cx, a) && pure(cx, b),
    }
}

/// Whether some statement can stop the call.
pub(super) fn may_fail(b: &[Stmt]) -> bool {
    b.iter().any(|s| match s {
        Stmt::Fail { .. } | Stmt::Checked { .. } => true,
        Stmt::For(l) => may_fail(&l.body),
        Stmt::Loop { body } | Stmt::Region { body, .. } | Stmt::Parallel { body, .. } => {
            may_fail(body)
        }
        Stmt::If { then, els, .. } => may_fail(then) || may_fail(els),
        Stmt::Let { .. } | Stmt::Set { .. } | Stmt::Alloc { .. } | Stmt::Break => false,
    })
}

/// Whether some statement allocates or opens a region.
fn uses_arena(b: &[Stmt]) -> bool {
    b.iter().any(|s| match s {
        Stmt::Alloc { .. } | Stmt::Region { .. } => true,
        Stmt::For(l) => uses_arena(&l.body),
        Stmt::Loop { body } | Stmt::Parallel { body, .. } => uses_arena(body),
        Stmt::If { then, els, .. } => uses_arena(then) || uses_arena(els),
        Stmt::Let { .. }
        | Stmt::Set { .. }
        | Stmt::Fail { .. }
        | Stmt::Checked { .. }
        | Stmt::Break => false,
    })
}
