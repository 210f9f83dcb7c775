//! The final compaction of the optimizer's arena: keeps the nodes the
//! definitions reach, in arena order (children stay before parents, as
//! they were created), renumbered densely, with spans and types in step.
//!
//! `Module::compact` does the same in depth-first post-order; this version
//! avoids a temporary vector per node (children are renumbered in place),
//! which matters because the optimizer's arena holds every round's nodes
//! and compaction would otherwise cost as much as a round.

use syntax::{Expr, ExprId, Module};

/// Drops unreachable nodes and renumbers the rest.
pub(crate) fn compact(m: &mut Module) {
    let n = m.exprs.len();
    let mut live = vec![false; n];
    let mut todo: Vec<ExprId> = m.defs.iter().map(|d| d.body).collect();
    while let Some(id) = todo.pop() {
        if live[id.index()] {
            continue;
        }
        live[id.index()] = true;
        m.exprs[id.index()].for_each_child(|c| {
            if !live[c.index()] {
                todo.push(c);
            }
        });
    }
    let mut new_id = vec![ExprId(u32::MAX); n];
    let mut next = 0u32;
    for (i, &l) in live.iter().enumerate() {
        if l {
            new_id[i] = ExprId(next);
            next += 1;
        }
    }
    let typed = m.is_typed();
    let exprs = std::mem::take(&mut m.exprs);
    let spans = std::mem::take(&mut m.spans);
    let types = std::mem::take(&mut m.types);
    let kept = next as usize;
    let mut out_exprs = Vec::with_capacity(kept);
    let mut out_spans = Vec::with_capacity(kept);
    let mut out_types = Vec::with_capacity(if typed { kept } else { 0 });
    let mut types = types.into_iter();
    for ((i, mut e), span) in exprs.into_iter().enumerate().zip(spans) {
        let ty = if typed { types.next() } else { None };
        if !live[i] {
            continue;
        }
        renumber(&mut e, &new_id);
        out_exprs.push(e);
        out_spans.push(span);
        if let Some(t) = ty {
            out_types.push(t);
        }
    }
    for def in &mut m.defs {
        def.body = new_id[def.body.index()];
    }
    m.exprs = out_exprs;
    m.spans = out_spans;
    m.types = out_types;
}

/// Renumbers the children of `e` in place.
fn renumber(e: &mut Expr, new_id: &[ExprId]) {
    e.for_each_child_mut(|id| *id = new_id[id.index()]);
}
