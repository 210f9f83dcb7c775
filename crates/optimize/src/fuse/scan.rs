//! `reduce-from-scan` (see `fuse.rs`): a fold whose value a prefix scan
//! of the same array already computes, read from the scan.
//!
//! `.. reduce f z A .. scanl f' z' A ..` (f' equal to f up to the names of
//! its binders, z' to z) becomes `let S = scanl f z A in .. S[length A] ..
//! S ..`: the last element of `scanl f z A` is `reduce f z A`. The
//! gradient of `prod` has this shape (the value `reduce (*) 1 x` and the
//! prefix products `shift1R (scanl (*) 1 x)` of its adjoint); the reduce
//! is then a second pass over `A` that recomputes what the scan computed.
//! `foldl f z A` likewise (its function has the scan's signature; a
//! `reduce` is a `foldl` whose accumulator is an element), and `ifold f z
//! n` when `A` is `build n (fun i -> i)` (or a name bound to it): `ifold`
//! is `foldl` over the counters 0, .., n - 1, and reverse mode's forward
//! sweep of an `ifold` is a `scanl` over exactly that array (det's
//! elimination: the primal's fold and the sweep each ran every step).
//!
//! Exact in IEEE arithmetic: `reduce` and `foldl` are left folds in the
//! evaluator (`acc = f(acc, A[i])` for i upwards from `z`) and in C
//! (`crates/codegen`, unless `Config::reassociate` or `Config::parallel`
//! reorders a `reduce`, which is then not the evaluator's value anyway),
//! and element `i + 1` of `scanl` is `f(element i, A[i])` from element 0
//! = `z`: the same operations in the same order. `scanr` folds from the
//! right and is not matched.
//!
//! Conditions: the fold and the scan are in one chain of `let`s (the
//! definition's body, a lambda's body or a branch, and the `let`s that
//! follow), reachable from its elements without entering a lambda or a
//! branch (so both run, once, whenever the chain runs); the arrays are
//! equal up to the names of their binders (a variable, or an expression
//! such as a zip of variables, whose copy in the fold is then not
//! computed); `f`, `z` and `A` mention only names bound before the chain
//! element of the first of them (where `S` is bound). A scan that fails
//! (in `f`) then fails before what preceded it in its chain element; the
//! fold it replaces would have failed the same way (the same calls of
//! `f`), so only the order of two failures can differ, as for
//! `reduce-fusion`.

use std::collections::HashMap;

use syntax::ir::NameGen;
use syntax::{Expr, ExprId, Module, Name, Pat, Prim, Ty};

use super::reduce::{bound_after, in_scope};
use super::{Plan, add, contains, fresh};
use crate::hash::FxHashSet;
use crate::local::alpha_eq;

/// A fold or scan over a variable at a chain's level.
#[derive(Debug, Clone, Copy)]
struct Loop {
    /// The chain element it is in.
    at: usize,
    /// The `reduce`/`foldl`/`scanl` node.
    node: ExprId,
    /// Whether it is the scan.
    scan: bool,
}

/// The chains of `let`s of the tree under `root`: each a list of elements
/// (the `let` nodes, then the body), starting at `root`, at each lambda
/// body and at each branch; with the folds and scans over a variable that
/// each element evaluates (not inside a lambda or a branch).
fn chains(m: &Module, root: ExprId) -> Vec<(Vec<ExprId>, Vec<Loop>)> {
    let mut out = Vec::new();
    let mut starts = vec![root];
    while let Some(start) = starts.pop() {
        let mut chain = Vec::new();
        let mut cur = start;
        while let Expr::Let { body, .. } = m.expr(cur) {
            chain.push(cur);
            cur = *body;
        }
        chain.push(cur);
        let mut loops = Vec::new();
        for (at, &c) in chain.iter().enumerate() {
            let mut todo = vec![match m.expr(c) {
                Expr::Let { value, .. } => *value,
                _ => c,
            }];
            while let Some(i) = todo.pop() {
                match m.expr(i) {
                    Expr::Lambda { body, .. } => {
                        starts.push(*body);
                        continue;
                    }
                    Expr::If {
                        cond,
                        then_branch,
                        else_branch,
                    } => {
                        todo.push(*cond);
                        starts.push(*then_branch);
                        starts.push(*else_branch);
                        continue;
                    }
                    Expr::Prim {
                        op: op @ (Prim::Reduce | Prim::Foldl | Prim::Scanl | Prim::Ifold),
                        ..
                    } => loops.push(Loop {
                        at,
                        node: i,
                        scan: *op == Prim::Scanl,
                    }),
                    _ => {}
                }
                m.expr(i).for_each_child(|c| todo.push(c));
            }
        }
        loops.sort_by_key(|l| (l.at, l.node));
        out.push((chain, loops));
    }
    out
}

/// Whether the fold or scan `b` has the function, start and array of the
/// scan `s` (the function and start up to the names of their binders); an
/// `ifold`'s counters are the array when it is `build n (fun i -> i)` of
/// the fold's count (`iotas` has the names bound to such builds).
fn same_fold(m: &Module, s: ExprId, b: ExprId, iotas: &HashMap<Name, ExprId>) -> bool {
    let (Expr::Prim { args: sa, .. }, Expr::Prim { op, args: ba }) = (m.expr(s), m.expr(b)) else {
        return false;
    };
    let same_array = if *op == Prim::Ifold {
        let count = match m.expr(sa[2]) {
            Expr::Var(a) => iotas.get(a).copied(),
            _ => iota_count(m, sa[2]),
        };
        count.is_some_and(|n| alpha_eq(m, n, ba[2], &mut HashMap::new()))
    } else {
        // The arrays too up to the names of their binders: reverse mode's
        // forward sweep and the primal's fold each get their own copy of a
        // zip of the inputs, `map2 (fun (x, g) -> (x, g)) X G` (lstm's
        // steps), once `recompute-cheap` has copied the structural map into
        // every use.
        alpha_eq(m, sa[2], ba[2], &mut HashMap::new())
    };
    same_array
        && alpha_eq(m, sa[0], ba[0], &mut HashMap::new())
        && alpha_eq(m, sa[1], ba[1], &mut HashMap::new())
}

/// `n` when `e` is `build n (fun i -> i)`.
fn iota_count(m: &Module, e: ExprId) -> Option<ExprId> {
    let Expr::Prim {
        op: Prim::Build,
        args,
    } = m.expr(e)
    else {
        return None;
    };
    let Expr::Lambda { params, body } = m.expr(args[1]) else {
        return None;
    };
    match (params.as_slice(), m.expr(*body)) {
        ([i], Expr::Var(j)) if i.name == *j => Some(args[0]),
        _ => None,
    }
}

/// The names bound by a `let` under `root` to `build n (fun i -> i)`, with
/// their `n` (binders are unique within a definition).
fn iotas(m: &Module, root: ExprId) -> HashMap<Name, ExprId> {
    let mut out = HashMap::new();
    let mut todo = vec![root];
    while let Some(i) = todo.pop() {
        if let Expr::Let {
            pat: Pat::Var(x),
            value,
            ..
        } = m.expr(i)
            && let Some(n) = iota_count(m, *value)
        {
            out.insert(x.clone(), n);
        }
        m.expr(i).for_each_child(|c| todo.push(c));
    }
    out
}

/// `reduce-from-scan` for one definition, if some chain has a fold and a
/// scan that match.
pub(super) fn plan_reduce_from_scan(
    m: &mut Module,
    names: &mut Option<NameGen>,
    root: ExprId,
) -> Option<Plan> {
    let iotas = iotas(m, root);
    for (chain, loops) in chains(m, root) {
        for s in loops.iter().filter(|l| l.scan) {
            let Ty::Array(_, acc) = &m.types[s.node.index()] else {
                continue;
            };
            // The folds that the scan computes (their value is an
            // accumulator), and the copies of the scan.
            let members: Vec<Loop> = loops
                .iter()
                .copied()
                .filter(|l| {
                    (l.scan || m.types[l.node.index()] == **acc)
                        && same_fold(m, s.node, l.node, &iotas)
                })
                .collect();
            if !members.iter().any(|l| !l.scan) {
                continue;
            }
            // No member inside another's parts (`S` would be used in its
            // own definition, or replaced twice).
            let nodes: FxHashSet<ExprId> = members.iter().map(|l| l.node).collect();
            let nested = members.iter().any(|l| {
                let Expr::Prim { args, .. } = m.expr(l.node) else {
                    return true;
                };
                args.iter().any(|&a| contains(m, a, &nodes))
            });
            if nested {
                continue;
            }
            let first = members.iter().map(|l| l.at).min()?;
            let after = bound_after(m, &chain, first);
            let Expr::Prim { args, .. } = m.expr(s.node).clone() else {
                continue;
            };
            if !args.iter().all(|&a| in_scope(m, a, &after, None)) || nodes.contains(&chain[first])
            {
                continue;
            }
            return build(m, names, &chain, first, s.node, &members);
        }
    }
    None
}

/// `let S = scanl f z A` before `chain[first]`; each member read from `S`.
fn build(
    m: &mut Module,
    names: &mut Option<NameGen>,
    chain: &[ExprId],
    first: usize,
    scan: ExprId,
    members: &[Loop],
) -> Option<Plan> {
    let sty = m.types[scan.index()].clone();
    let Expr::Prim { args, .. } = m.expr(scan).clone() else {
        return None;
    };
    let array = args[2];
    let aty = m.types[array.index()].clone();
    // `length A` when A is a name; otherwise `length S - 1`, which does
    // not copy A's expression.
    let a = match m.expr(array) {
        Expr::Var(a) => Some(a.clone()),
        _ => None,
    };
    let sname = fresh(m, names, "s");
    let mut plan = Plan::default();
    for l in members {
        let span = m.span(l.node);
        let sv = add(m, Expr::Var(sname.clone()), sty.clone(), span);
        let repl = if l.scan {
            sv
        } else {
            // S[length A], or S[length S - 1]
            let of = match &a {
                Some(a) => add(m, Expr::Var(a.clone()), aty.clone(), span),
                None => add(m, Expr::Var(sname.clone()), sty.clone(), span),
            };
            let mut len = add(
                m,
                Expr::Prim {
                    op: Prim::Length,
                    args: vec![of],
                },
                Ty::Int,
                span,
            );
            if a.is_none() {
                let one = add(m, Expr::Int(1), Ty::Int, span);
                len = add(
                    m,
                    Expr::Prim {
                        op: Prim::Sub,
                        args: vec![len, one],
                    },
                    Ty::Int,
                    span,
                );
            }
            let ty = m.types[l.node.index()].clone();
            add(
                m,
                Expr::Index {
                    array: sv,
                    index: len,
                },
                ty,
                span,
            )
        };
        plan.replace.insert(l.node, repl);
    }
    // The scan moves into the `let`; its old place reads `S`.
    plan.insert = Some((chain[first], Pat::Var(sname), scan));
    Some(plan)
}
