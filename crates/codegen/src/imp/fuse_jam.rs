//! Unroll and jam (docs/codegen.md, "Sibling loop fusion"): a loop whose
//! body is scalar statements around one inner loop,
//!
//! ```text
//! for i in 0 ..< n { S(i); for j in 0 ..< m L(i, j); T(i) }
//! ```
//!
//! runs [`JAM`] of its iterations per trip when their inner loops fuse
//! into one:
//!
//! ```text
//! var i = 0
//! for (; i + 2 <= n; i += 2) { S(i); S(i + 1); for j in 0 ..< m { L(i, j); L(i + 1, j) }; T(i); T(i + 1) }
//! for (; i < n; i++) { S(i); for j in 0 ..< m L(i, j); T(i) }
//! ```
//!
//! Unrolling alone changes nothing (the same statements in the same
//! order, the copies' variables renamed); the fusion of the copies' inner
//! loops is sibling fusion's, with its conditions (an element another copy
//! touches only as `p[j]`, not both copies failing, ...), so every element
//! still sees its operations in the original order and the results are
//! bit for bit the same. When the copies' loops do not all fuse, the loop
//! is left as it was. What it buys: each element the inner loop reads once
//! for both rows (GMM's `Q (x - mu)`: the two rows' dot products share
//! the loads of `x - mu`), and a row accumulated into the same
//! vector by every outer iteration (GMM's reverse `Q^T z`: `acc[j] +=
//! L[i][j] z_i`) loaded and stored once per two rows instead of once per
//! row, where the store-to-load chain from one row to the next was the
//! loop's cost.

use super::*;

/// How many iterations of the outer loop run per trip: 2, since GMM's
/// gradient at d = 64 (k = 100) was about 10% slower with 4 (its forward
/// and reverse row loops both; at d = 10 the two gain the same), and
/// no slower than before with 2 (3 December 2026).
pub(super) const JAM: usize = 2;

/// The loop unrolled and jammed (the index's declaration, the jammed
/// loop, the remainder), or `None` when it does not have the form or its
/// copies' inner loops do not fuse.
pub(super) fn try_jam(r: &Roots, vars: &mut Vec<Var>, l: &For) -> Option<Vec<Stmt>> {
    if !jammable(r, vars, l) {
        return None;
    }
    // A failed attempt leaves the table as it was (its copies' fresh
    // names would otherwise be taken again by the next round's attempt).
    let before = vars.len();
    let index = VarId(vars.len() as u32);
    let mut var = vars[l.index.0 as usize].clone();
    var.name = format!("{}_j", var.name);
    var.mutable = true;
    vars.push(var);
    let mut body = Vec::new();
    for lane in 0..JAM {
        let il = VarId(vars.len() as u32);
        vars.push(Var {
            name: format!("{}_il{lane}", vars[l.index.0 as usize].name),
            ty: Ty::Scalar(Scalar::I64),
            mutable: false,
        });
        body.push(Stmt::Let {
            var: il,
            init: Some(Expr::bin(
                BinOp::Add,
                Expr::Var(index),
                Expr::I64(lane as i64),
            )),
        });
        let mut copy = l.body.clone();
        lanes::freshen(vars, &mut copy);
        rename_block(&mut copy, l.index, il);
        body.extend(copy);
    }
    let body = block(r, vars, body);
    let loops = body.iter().filter(|s| matches!(s, Stmt::For(_))).count();
    if loops != 1 {
        vars.truncate(before);
        return None;
    }
    let mut rem = l.body.clone();
    rename_block(&mut rem, l.index, index);
    let main = For {
        index,
        lo: None,
        hi: l.hi.clone(),
        dir: Dir::Up,
        step: JAM as u32,
        pragma: None,
        body,
    };
    let rem = For {
        index,
        lo: None,
        hi: l.hi.clone(),
        dir: Dir::Up,
        step: 1,
        pragma: None,
        body: rem,
    };
    Some(vec![
        Stmt::Let {
            var: index,
            init: Some(Expr::I64(0)),
        },
        Stmt::For(Box::new(main)),
        Stmt::For(Box::new(rem)),
    ])
}

/// Whether `body` writes an element of memory: the inner loop of a row
/// accumulated into a vector (`acc[j] += L[i][j] z_i`), whose
/// store-to-load chain from one row to the next jamming halves. Inner
/// loops of scalar sums only (a dot product per row) are left alone:
/// jammed, ht's 4 x 4 matrix products (two short `omp simd` reductions
/// per trip instead of one) made its objectives 12-17% slower (3 December
/// 2026, `gbtime ht`, side by side), for no gain in their gradients.
fn stores_to_memory(body: &Block) -> bool {
    body.iter().any(|s| {
        matches!(
            s,
            Stmt::Set {
                place: Place::Elem { .. },
                ..
            }
        )
    })
}

/// Whether `l` counts from 0 by 1 without a pragma over a bound its body
/// does not assign, and its body is declarations and stores of scalars around
/// exactly one inner loop from 0 by 1 that runs no loop of its own and
/// does not break.
fn jammable(r: &Roots, vars: &[Var], l: &For) -> bool {
    let mut bound = Vec::new();
    l.hi.reads(&mut bound);
    let plain = |s: &Stmt| match s {
        Stmt::Let { .. } | Stmt::Set { .. } => true,
        Stmt::For(inner) => {
            inner.lo == Some(Expr::I64(0))
                && inner.step == 1
                && stores_to_memory(&inner.body)
                && !lanes::contains_loop(&inner.body)
                && !super::super::verify::contains_break(&inner.body)
        }
        _ => false,
    };
    l.lo == Some(Expr::I64(0))
        && l.step == 1
        && l.dir == Dir::Up
        && l.pragma.is_none()
        && !bound
            .iter()
            .any(|v| Effects::of(r, &l.body, l.index).writes.contains(v))
        && l.body.iter().filter(|s| matches!(s, Stmt::For(_))).count() == 1
        && l.body.iter().all(plain)
        && lanes::declares_scalars_only(vars, &l.body)
}
