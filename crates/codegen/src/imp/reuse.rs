//! Elementwise loops write into a block that dies in them (docs/codegen.md,
//! "A dead block reused"), run by `emit` on every function after fusion
//! and code motion.
//!
//! In a block `.. alloc A[c] .. alloc B[c]; check B; .. for i { S1; ..;
//! B[i] := e; .. } ..` the loop may store its results in `A` instead of a
//! new `B` when, in each iteration, it reads `A` only at `A[i]` before it
//! first touches `B`, and nothing reads `A` after the loop: element `i`
//! of `A` is then dead once iteration `i` has read it, which is exactly
//! when `B[i]` is written. So `B` becomes `A` (its allocation and its null
//! check go), and the loop reads and writes one block where it read one
//! and wrote another. Reverse mode makes this shape everywhere: lse's
//! softmax `map (fun e -> e * d) e`, fused with the sum beside it, reads
//! the `exp`s once and writes the gradient, and with the block reused its
//! derivative at 1,280,000 elements went from 3.4-3.5 to 2.6-2.9 ms
//! (docs/codegen.md has the measurement).
//!
//! The conditions, all local to the block that declares both:
//! - `A` and `B` are allocated in it (so in one region, with one
//!   lifetime), unconditionally, with the same count (an expression of
//!   constants, so the same number at both places) and element type;
//! - every use of `A` in the block is an element loaded or stored through
//!   the variable itself, or its null check: no view or copy of its
//!   address, which could read it later;
//! - between its allocation and the loop `B` is only null-checked, and the
//!   loop (a counted loop by 1) stores into `B` only at its own index;
//! - in the loop's body `A` is only loaded at the loop's index, in
//!   statements before the first that uses `B`; after the loop nothing
//!   uses `A`.
//!
//! The values computed are the same bit for bit: only where they are
//! stored changes.

use super::fuse::{rename_block, visit_exprs};
use super::ir::*;

/// Reuses dead blocks everywhere in `f`.
pub fn reuse(f: &mut Func) {
    let mut body = std::mem::take(&mut f.body);
    block(f, &mut body);
    f.body = body;
}

fn block(f: &Func, b: &mut Block) {
    syntax::stack::guard(|| {
        for s in b.iter_mut() {
            match s {
                Stmt::For(l) => block(f, &mut l.body),
                Stmt::Loop { body } | Stmt::Region { body, .. } | Stmt::Parallel { body, .. } => {
                    block(f, body)
                }
                Stmt::If { then, els, .. } => {
                    block(f, then);
                    block(f, els);
                }
                _ => {}
            }
        }
        while let Some((dead, fresh)) = find(f, b) {
            b.retain(|s| !allocates(s, fresh) && !null_check_of(s, fresh));
            rename_block(b, fresh, dead);
        }
    })
}

/// A block `dead` whose loop may write what it would write into `fresh`.
fn find(f: &Func, b: &[Stmt]) -> Option<(VarId, VarId)> {
    for (p, s) in b.iter().enumerate() {
        let Stmt::For(l) = s else { continue };
        if l.step != 1 {
            continue;
        }
        for fresh in stored_at_index(&l.body, l.index) {
            if f.var(fresh).mutable {
                continue;
            }
            let Some(q) = b[..p].iter().position(|s| allocates(s, fresh)) else {
                continue;
            };
            if !b[q + 1..p]
                .iter()
                .all(|s| !uses(s, fresh) || null_check_of(s, fresh))
            {
                continue;
            }
            let Stmt::Alloc { count, .. } = &b[q] else {
                continue;
            };
            let found = b[..p].iter().enumerate().find_map(|(r, s)| match s {
                Stmt::Alloc {
                    var,
                    count: c,
                    when: None,
                } if r != q
                    && !f.var(*var).mutable
                    && c == count
                    && constant(f, c)
                    && f.var(*var).ty == f.var(fresh).ty
                    && plain(b, *var)
                    && read_first(&l.body, *var, fresh, l.index)
                    && !b[p + 1..].iter().any(|s| uses(s, *var)) =>
                {
                    Some(*var)
                }
                _ => None,
            });
            if let Some(dead) = found {
                return Some((dead, fresh));
            }
        }
    }
    None
}

/// The blocks the body stores into, each only ever at `index` (at any
/// depth) and allocated unconditionally somewhere: the candidates for
/// `B`.
fn stored_at_index(body: &[Stmt], index: VarId) -> Vec<VarId> {
    let mut stored = Vec::new();
    let mut elsewhere = Vec::new();
    stores(body, &mut |mem, at| {
        if let Expr::Var(m) = mem {
            if *at == Expr::Var(index) {
                stored.push(*m);
            } else {
                elsewhere.push(*m);
            }
        }
    });
    stored.sort();
    stored.dedup();
    stored.retain(|m| !elsewhere.contains(m));
    stored
}

/// Calls `f` with the memory and index of every store in some statements.
fn stores(b: &[Stmt], f: &mut dyn FnMut(&Expr, &Expr)) {
    for s in b {
        match s {
            Stmt::Set {
                place: Place::Elem { mem, index },
                ..
            } => f(mem, index),
            Stmt::For(l) => stores(&l.body, f),
            Stmt::Loop { body } | Stmt::Region { body, .. } | Stmt::Parallel { body, .. } => {
                stores(body, f)
            }
            Stmt::If { then, els, .. } => {
                stores(then, f);
                stores(els, f);
            }
            _ => {}
        }
    }
}

/// In a loop's body: `dead` is only loaded, at `index`, and only in
/// statements before the first that uses `fresh`.
fn read_first(body: &[Stmt], dead: VarId, fresh: VarId, index: VarId) -> bool {
    let first = body
        .iter()
        .position(|s| uses(s, fresh))
        .unwrap_or(body.len());
    let mut stored = false;
    stores(body, &mut |mem, _| stored |= *mem == Expr::Var(dead));
    let mut ok = !stored;
    for (k, s) in body.iter().enumerate() {
        visit_exprs(std::slice::from_ref(s), &mut |e, at| {
            if *e == Expr::Var(dead) {
                ok &= k < first && at == Some(&Expr::Var(index));
            }
        });
    }
    ok
}

/// Whether every use of `v` in some statements is an element of it
/// (loaded or stored through `v` itself) or its null check.
fn plain(b: &[Stmt], v: VarId) -> bool {
    let mut ok = true;
    for s in b {
        if null_check_of(s, v) {
            continue;
        }
        visit_exprs(std::slice::from_ref(s), &mut |e, at| {
            ok &= *e != Expr::Var(v) || at.is_some();
        });
    }
    ok
}

fn allocates(s: &Stmt, v: VarId) -> bool {
    matches!(s, Stmt::Alloc { var, when: None, .. } if *var == v)
}

/// `fail if v == NULL`, the check after an allocation.
fn null_check_of(s: &Stmt, v: VarId) -> bool {
    matches!(s, Stmt::Fail { cond: Expr::IsNull(x), .. } if **x == Expr::Var(v))
}

/// Whether a statement reads or writes `v` anywhere in it.
fn uses(s: &Stmt, v: VarId) -> bool {
    let mut found = allocates(s, v);
    visit_exprs(std::slice::from_ref(s), &mut |e, _| {
        found |= *e == Expr::Var(v)
    });
    if let Stmt::Set {
        place: Place::Var(x) | Place::Out(x),
        ..
    } = s
    {
        found |= *x == v;
    }
    found
}

/// Whether an expression reads only constants (variables never assigned
/// after their declaration), so it has one value wherever it is read.
fn constant(f: &Func, e: &Expr) -> bool {
    let mut vars = Vec::new();
    e.reads(&mut vars);
    vars.iter().all(|&v| !f.var(v).mutable)
}
